// The spreadsheet's UI as a script drives it (menus, sidebar, dialogs, alerts, prompts, toasts) and HtmlService:
// everything shown is recorded for tests; prompts and alerts answer from a queue of scripted responses.
import fs from 'node:fs';
import path from 'node:path';
import { AppsScriptException } from './errors';
import { AppsScriptObject } from './execution';

export type MenuItem = { caption: string; functionName: string } | { separator: true } | { submenu: string };

export type UiEvent =
  | { type: 'menu'; title: string; items: MenuItem[] }
  | { type: 'sidebar'; title: string; html: string }
  | { type: 'dialog'; title: string; html: string; modal: boolean }
  | { type: 'alert'; title: string; message: string; buttons: string; answer: string }
  | { type: 'prompt'; title: string; message: string; buttons: string; answer: string; typedChars: number }
  | { type: 'toast'; title: string; message: string };

export interface ScriptedResponse {
  button: 'OK' | 'CANCEL' | 'YES' | 'NO' | 'CLOSE';
  text?: string;
}

export class UiRecorder {
  readonly events: UiEvent[] = [];
  readonly responses: ScriptedResponse[] = [];

  /** The next scripted answer, or the default one (OK for an alert, CLOSE for a prompt). */
  answer(fallback: ScriptedResponse): ScriptedResponse {
    return this.responses.shift() ?? fallback;
  }
}

const BUTTON_SETS = ['OK', 'OK_CANCEL', 'YES_NO', 'YES_NO_CANCEL'];

/** alert/prompt take (prompt), (prompt, buttons) or (title, prompt, buttons). */
function dialogArgs(args: unknown[]): { title: string; message: string; buttons: string } {
  if (args.length >= 3) return { title: String(args[0]), message: String(args[1]), buttons: String(args[2]) };
  if (args.length === 2 && BUTTON_SETS.includes(String(args[1]))) {
    return { title: '', message: String(args[0]), buttons: String(args[1]) };
  }
  return { title: '', message: String(args[0] ?? ''), buttons: 'OK' };
}

export class HtmlOutput extends AppsScriptObject {
  readonly kind = 'HtmlOutput';
  private title = '';
  private width = 0;
  private height = 0;

  constructor(private content: string) {
    super();
  }

  getContent(): string {
    return this.content;
  }
  setContent(content: unknown): this {
    this.content = String(content);
    return this;
  }
  append(addedContent: unknown): this {
    this.content += String(addedContent);
    return this;
  }
  appendUntrusted(addedContent: unknown): this {
    this.content += String(addedContent).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
    return this;
  }
  getTitle(): string {
    return this.title;
  }
  setTitle(title: unknown): this {
    this.title = String(title);
    return this;
  }
  getWidth(): number {
    return this.width;
  }
  setWidth(width: unknown): this {
    this.width = Number(width);
    return this;
  }
  getHeight(): number {
    return this.height;
  }
  setHeight(height: unknown): this {
    this.height = Number(height);
    return this;
  }
  setSandboxMode(): this {
    return this;
  }
  setXFrameOptionsMode(): this {
    return this;
  }
  addMetaTag(): this {
    return this;
  }
  setFaviconUrl(): this {
    return this;
  }
}

export class HtmlService extends AppsScriptObject {
  readonly kind = 'HtmlService';

  constructor(private readonly projectDir: string) {
    super();
  }

  createHtmlOutput(html?: unknown): HtmlOutput {
    return new HtmlOutput(html === undefined ? '' : String(html));
  }

  /** Reads `<name>.html` of the pushed project (apps-script/dist), like a file of the script project. */
  createHtmlOutputFromFile(filename: unknown): HtmlOutput {
    const name = String(filename).replace(/\.html$/, '');
    const file = path.join(this.projectDir, `${name}.html`);
    if (name.includes('/') || name.includes('\\') || !fs.existsSync(file)) {
      throw new AppsScriptException(`No HTML file named ${name} was found.`);
    }
    return new HtmlOutput(fs.readFileSync(file, 'utf8'));
  }
}

export class Menu extends AppsScriptObject {
  readonly kind = 'Menu';
  private readonly items: MenuItem[] = [];

  constructor(
    private readonly recorder: UiRecorder,
    private readonly title: string,
  ) {
    super();
  }

  addItem(caption: unknown, functionName: unknown): this {
    if (typeof functionName !== 'string' || functionName === '')
      throw new AppsScriptException('Invalid argument: functionName');
    this.items.push({ caption: String(caption), functionName });
    return this;
  }
  addSeparator(): this {
    this.items.push({ separator: true });
    return this;
  }
  addSubMenu(menu: unknown): this {
    this.items.push({ submenu: menu instanceof Menu ? menu.title : String(menu) });
    return this;
  }
  addToUi(): void {
    this.recorder.events.push({ type: 'menu', title: this.title, items: this.items.slice() });
  }
}

export class PromptResponse extends AppsScriptObject {
  readonly kind = 'PromptResponse';

  constructor(private readonly response: ScriptedResponse) {
    super();
  }

  getResponseText(): string {
    return this.response.text ?? '';
  }
  getSelectedButton(): string {
    return this.response.button;
  }
}

export class Ui extends AppsScriptObject {
  readonly kind = 'Ui';

  constructor(private readonly recorder: UiRecorder) {
    super();
  }

  createAddonMenu(): Menu {
    return new Menu(this.recorder, '(add-on menu)');
  }
  createMenu(caption: unknown): Menu {
    return new Menu(this.recorder, String(caption));
  }
  showSidebar(userInterface: unknown): void {
    if (!(userInterface instanceof HtmlOutput))
      throw new AppsScriptException('Invalid argument: userInterface');
    this.recorder.events.push({
      type: 'sidebar',
      title: userInterface.getTitle(),
      html: userInterface.getContent(),
    });
  }
  showModalDialog(userInterface: unknown, title: unknown): void {
    if (!(userInterface instanceof HtmlOutput))
      throw new AppsScriptException('Invalid argument: userInterface');
    this.recorder.events.push({
      type: 'dialog',
      title: String(title),
      html: userInterface.getContent(),
      modal: true,
    });
  }
  showModelessDialog(userInterface: unknown, title: unknown): void {
    if (!(userInterface instanceof HtmlOutput))
      throw new AppsScriptException('Invalid argument: userInterface');
    this.recorder.events.push({
      type: 'dialog',
      title: String(title),
      html: userInterface.getContent(),
      modal: false,
    });
  }
  alert(...args: unknown[]): string {
    const { title, message, buttons } = dialogArgs(args);
    const answer = this.recorder.answer({ button: buttons.startsWith('YES') ? 'YES' : 'OK' }).button;
    this.recorder.events.push({ type: 'alert', title, message, buttons, answer });
    return answer;
  }
  prompt(...args: unknown[]): PromptResponse {
    const { title, message, buttons } = dialogArgs(args);
    const response = this.recorder.answer({ button: 'CLOSE', text: '' });
    this.recorder.events.push({
      type: 'prompt',
      title,
      message,
      buttons,
      answer: response.button,
      typedChars: (response.text ?? '').length, // what was typed may be a key: only its length is recorded
    });
    return new PromptResponse(response);
  }
}
