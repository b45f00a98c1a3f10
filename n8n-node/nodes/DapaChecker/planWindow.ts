// The plan's window between executions: the core's snapshot (`report.window`: the key's sends of the last minute and
// the plan's limits, each labelled exact or inferred), kept by the core's own rule (`restoreWindow` on every read,
// `mergeWindows` on every write) in the node's workflow static data and in this process's memory. Each execution
// starts from it; while one runs, its sends are merged into the in-process copy, so that executions in the same n8n
// process (a main instance or a queue-mode worker) start from each other's sends. An inferred rate (one seen while
// other executions shared the key's minute) is kept as the core labels it, and the core probes it upward, so a guess
// from a crowded minute does not slow a later execution. Memory covers queue mode, where n8n saves a worker's static
// data but does not load it into the next new execution (it reloads static data only for resumed ones).
// No secret is kept: in memory the key's name is a keyed digest of the address and the API key (keyedDigest.ts), in
// static data another, salted with a random value kept there.
import type { IDataObject } from 'n8n-workflow';
import { mergeWindows, restoreWindow, type WindowSnapshot } from '../../../shared/index';

const PREFIX = 'dapaWindow:h:';
/** Windows earlier versions kept under a plain SHA-256 of the key: dropped when a window is written. */
const UNSALTED_PREFIX = 'dapaWindow:';
/** What earlier versions of the node kept (the per-request maximum alone); dropped when a window is written. */
const OLD_PREFIX = 'dapaPlan:';
/** At most this many windows (key x address) are kept per node; the oldest goes first. */
const MAX_KEPT = 10;
/** At most this many windows are kept in this process's memory; the oldest goes first. */
const MAX_REMEMBERED = 100;

/** Windows of the executions in this n8n process, by storage key. */
const remembered = new Map<string, WindowSnapshot>();

/** Where one key's window is kept: its name in static data, and in this process's memory (keyedDigest.ts). */
export interface WindowNames {
  stored: string;
  memory: string;
}

/** The window to start from: static data and this process's memory together, as the core restores them. */
export function readWindow(
  staticData: IDataObject,
  names: WindowNames,
  now: number,
): WindowSnapshot | undefined {
  return mergeWindows(
    restoreWindow(staticData[names.stored], now),
    restoreWindow(remembered.get(names.memory), now),
  );
}

/** The window of the executions in this process (their sends of the last minute, the limits they learned). */
export function processWindow(key: string, now: number): WindowSnapshot | undefined {
  return restoreWindow(remembered.get(key), now);
}

/** Merges a running execution's window into this process's memory (cheap: a minute of sends at most). */
export function rememberWindow(key: string, window: WindowSnapshot, now: number): void {
  const merged = mergeWindows(restoreWindow(remembered.get(key), now), restoreWindow(window, now));
  remembered.delete(key);
  if (!merged) return;
  remembered.set(key, merged);
  if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
}

/** The limits' values and labels, without when they were learned: what a next execution's pace depends on. */
function limitsOf(window: WindowSnapshot | undefined): string {
  const limits = window?.limits ?? {};
  return JSON.stringify(
    (['maxUrlsPerRequest', 'requestsPerMinute', 'urlsPerMinute'] as const).map((name) => [
      limits[name]?.value,
      limits[name]?.exact,
    ]),
  );
}

/**
 * Keeps an execution's final window in this process's memory, and in the workflow's static data when its limits
 * changed (sends alone are a minute's worth and live in memory: n8n then does not save the workflow every execution).
 */
export function keepWindow(
  staticData: IDataObject,
  names: WindowNames,
  window: WindowSnapshot,
  now: number,
): void {
  rememberWindow(names.memory, window, now);
  const stored = restoreWindow(staticData[names.stored], now);
  const merged = mergeWindows(stored, remembered.get(names.memory));
  if (!merged || (stored && limitsOf(stored) === limitsOf(merged))) return;
  staticData[names.stored] = JSON.parse(JSON.stringify(merged)) as IDataObject;
  const old = (name: string) =>
    name.startsWith(OLD_PREFIX) || (name.startsWith(UNSALTED_PREFIX) && !name.startsWith(PREFIX));
  for (const name of Object.keys(staticData)) if (old(name)) delete staticData[name];
  const kept = Object.keys(staticData).filter((name) => name.startsWith(PREFIX));
  if (kept.length <= MAX_KEPT) return;
  const atOf = (name: string) => ((staticData[name] as { at?: number } | undefined)?.at ?? 0) as number;
  kept.sort((a, b) => atOf(a) - atOf(b));
  for (const name of kept.slice(0, kept.length - MAX_KEPT)) delete staticData[name];
}

/** Forgets what this process remembers (for tests: a fresh n8n process). */
export function forgetRememberedWindows(): void {
  remembered.clear();
}
