// What the panels draw with: the markup's elements by id, writes that touch the page only where something
// changed, and the page's wording of counts and clock times. Every server string goes in as textContent.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The sidebar markup lacks #${id}.`);
  return element as T;
}

export function setText(id: string, text: string): void {
  const element = byId(id);
  if (element.textContent !== text) element.textContent = text;
}

export function setHidden(id: string, hidden: boolean): void {
  const element = byId(id);
  if (element.hidden !== hidden) element.hidden = hidden;
}

export function setDisabled(id: string, disabled: boolean): void {
  const button = byId<HTMLButtonElement>(id);
  if (button.disabled !== disabled) button.disabled = disabled;
}

export function setClass(id: string, name: string, on: boolean): void {
  byId(id).classList.toggle(name, on);
}

export function setAttribute(element: HTMLElement, name: string, value: string): void {
  if (element.getAttribute(name) !== value) element.setAttribute(name, value);
}

/** A message line: its text, coloured by kind, hidden while empty. */
export function showMessage(id: string, text: string, kind: 'ok' | 'error' | 'info'): void {
  setText(id, text);
  setClass(id, 'ok', kind === 'ok');
  setClass(id, 'error', kind === 'error');
  setHidden(id, text === '');
}

export function formatCount(value: number | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toLocaleString('en-US') : '0';
}

export function plural(count: number, one: string, many: string): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

export function clockTime(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}
