// Background checks' state (user property dapa.bg.<spreadsheet id>) and their one pending time-driven trigger:
// never more than one step is scheduled; every change happens under the user's lock.
/// <reference types="google-apps-script" />
import { now, userLock, userProperties } from './gas';
import { USER_PROPERTY } from './storage-keys';

/** The trigger handlers (top-level functions, see main.ts and build.mjs). */
export const STEP_HANDLER = 'dapaBackgroundStep';
export const EDIT_HANDLER = 'dapaOnEdit';
export const WATCH_HANDLER = 'dapaBackgroundWatch';

export interface BackgroundState {
  on: boolean;
  /** The pending step's trigger and when it is due. */
  triggerId?: string;
  dueAt?: number;
  /** Why background work stopped and will not go on by itself (a blocked network, a wrong key, ...). */
  stopped?: string;
  /** Steps run, their runtime (ms) and when the last one ran. */
  steps: number;
  runtimeMs: number;
  lastStepAt?: number;
  /** Formula results checked before this time are checked again (Check again, a scheduled refresh). */
  refreshSince?: number;
  /** How late (ms) steps usually get to work after their due time; the next is scheduled that much early. */
  slackMs?: number;
  /** The least of that lateness lately (rises slowly): the part every step has. */
  slackLowMs?: number;
  /** The pending step was scheduled for the plan's window to free (only such steps measure the lateness). */
  forWindow?: boolean;
  /** Server failures in a row; the background gives up after a few. */
  failures?: number;
}

function propertyName(spreadsheetId: string): string {
  return USER_PROPERTY.backgroundPrefix + spreadsheetId;
}

export function loadBackground(spreadsheetId: string): BackgroundState {
  try {
    const state = JSON.parse(
      userProperties().getProperty(propertyName(spreadsheetId)) ?? 'null',
    ) as BackgroundState;
    if (state && typeof state.on === 'boolean') return state;
  } catch {
    // a damaged state starts afresh
  }
  return { on: false, steps: 0, runtimeMs: 0 };
}

export function saveBackground(spreadsheetId: string, state: BackgroundState): void {
  userProperties().setProperty(propertyName(spreadsheetId), JSON.stringify(state));
}

/** Runs `change` on the stored state under the user lock and stores the result. */
export function updateBackground(
  spreadsheetId: string,
  change: (state: BackgroundState) => void,
): BackgroundState {
  const lock = userLock();
  if (!lock.tryLock(10_000))
    throw new Error('Another DAPA step is saving its state; try again in a few seconds.');
  try {
    const state = loadBackground(spreadsheetId);
    change(state);
    saveBackground(spreadsheetId, state);
    return state;
  } finally {
    lock.releaseLock();
  }
}

/** Deletes this user's triggers of a handler (the pending step, fired one-off triggers that stay listed). */
export function deleteTriggers(handler: string): void {
  for (const trigger of ScriptApp.getProjectTriggers()) {
    if (trigger.getHandlerFunction() === handler) ScriptApp.deleteTrigger(trigger);
  }
}

/** Replaces any pending step with one due at `at` (at least a second from now). */
export function scheduleStep(state: BackgroundState, at: number): void {
  deleteTriggers(STEP_HANDLER);
  const wait = Math.max(1000, Math.ceil(at - now()));
  const trigger = ScriptApp.newTrigger(STEP_HANDLER).timeBased().after(wait).create();
  state.triggerId = trigger.getUniqueId();
  state.dueAt = now() + wait;
}

/**
 * Makes sure a step is pending when background checks are on (and not stopped): due by `by` when given, else at
 * whatever time it is already due. Returns whether background checks will go on.
 */
export function wakeBackground(spreadsheetId: string, by?: number): boolean {
  const current = loadBackground(spreadsheetId);
  if (!current.on || current.stopped) return false;
  const pending = current.dueAt !== undefined && current.dueAt > now() - 60_000;
  if (pending && (by === undefined || (current.dueAt as number) <= by)) return true;
  updateBackground(spreadsheetId, (state) => scheduleStep(state, by ?? now()));
  return true;
}
