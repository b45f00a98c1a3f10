// Background checks' state (user property dapa.bg.<spreadsheet id>) and their triggers, in both install modes:
// a bound script (clasp or copy-paste) keeps a one-off step trigger plus an hourly watch; an Editor add-on keeps
// at most ONE time-driven trigger per user per document (Google's rule), a one-off step when Google accepts it,
// else the hourly dispatcher that serves the step, the watch and the scheduled refresh. Every change happens under
// the user's lock; a refused trigger is caught (never read), and nothing half-installed is left behind.
/// <reference types="google-apps-script" />
import { now, userLock, userProperties } from './gas';
import type { Lateness } from './planner';
import { USER_PROPERTY } from './storage-keys';

/** The trigger handlers (top-level functions, see main.ts and build.mjs). */
export const STEP_HANDLER = 'dapaBackgroundStep';
export const EDIT_HANDLER = 'dapaOnEdit';
export const WATCH_HANDLER = 'dapaBackgroundWatch';

const HOUR_MS = 3_600_000;
/** After Google refused a one-off trigger in an add-on, it is tried again after this long. */
const RETRY_ONE_OFF_MS = 24 * HOUR_MS;

export type InstallMode = 'bound' | 'addon';

export interface BackgroundState {
  on: boolean;
  /** The pending step's trigger and when it is due. */
  triggerId?: string;
  dueAt?: number;
  /** The pending trigger is the add-on's hourly dispatcher (Google refused a one-off trigger at hourlySince). */
  hourlySince?: number;
  /** Why background work stopped and will not go on by itself (a blocked network, a wrong key, ...). */
  stopped?: string;
  /** Steps run, their runtime (ms) and when the last one ran. */
  steps: number;
  runtimeMs: number;
  lastStepAt?: number;
  /** The day (ms / 86,400,000) and the trigger runtime spent on it, for the sleep budget. */
  day?: number;
  dayRuntimeMs?: number;
  /** Credits the background's checks were billed in this spreadsheet. */
  billed?: number;
  /** Formula results checked before this time are checked again (Check again, a scheduled refresh). */
  refreshSince?: number;
  /** How late steps got to work after their due time. */
  lateness?: Lateness;
  /** The pending step was scheduled for the plan's window to free (only such steps measure the lateness). */
  forWindow?: boolean;
  /** No check before this (the service's Retry-After, or the window's word when a step stopped at it). */
  resumeAt?: number;
  /** Server failures in a row; the background gives up after a few. */
  failures?: number;
}

/** How the add-on was installed: an Editor add-on (Marketplace or test deployment) or a bound script. */
export function installMode(): InstallMode {
  try {
    return ScriptApp.getInstallationSource() === ScriptApp.InstallationSource.NONE ? 'bound' : 'addon';
  } catch {
    return 'bound';
  }
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

/** This user's triggers of this script in this document (an add-on's other documents keep theirs). */
function ownTriggers(): GoogleAppsScript.Script.Trigger[] {
  const script = ScriptApp as unknown as {
    getUserTriggers?: (s: GoogleAppsScript.Spreadsheet.Spreadsheet) => GoogleAppsScript.Script.Trigger[];
  };
  if (installMode() === 'addon' && typeof script.getUserTriggers === 'function')
    return script.getUserTriggers(SpreadsheetApp.getActiveSpreadsheet());
  return ScriptApp.getProjectTriggers();
}

/** Deletes this user's triggers of these handlers (the pending step, fired one-off triggers that stay listed). */
export function deleteTriggers(...handlers: string[]): void {
  for (const trigger of ownTriggers()) {
    if (handlers.includes(trigger.getHandlerFunction())) ScriptApp.deleteTrigger(trigger);
  }
}

function hasTrigger(id: string | undefined): boolean {
  return id !== undefined && ownTriggers().some((t) => t.getUniqueId() === id);
}

function oneOff(state: BackgroundState, at: number): void {
  const wait = Math.max(1000, Math.ceil(at - now()));
  const trigger = ScriptApp.newTrigger(STEP_HANDLER).timeBased().after(wait).create();
  state.triggerId = trigger.getUniqueId();
  state.dueAt = now() + wait;
  state.hourlySince = undefined;
}

/** The add-on's hourly dispatcher (kept when it is already the pending trigger). */
function hourly(state: BackgroundState): void {
  if (state.hourlySince !== undefined && hasTrigger(state.triggerId)) return;
  deleteTriggers(STEP_HANDLER);
  const trigger = ScriptApp.newTrigger(STEP_HANDLER).timeBased().everyHours(1).create();
  state.triggerId = trigger.getUniqueId();
  state.dueAt = now() + HOUR_MS;
  state.hourlySince ??= now();
}

/**
 * Makes the next step due at `at` (at least a second from now). A bound script and an add-on whose one-off
 * trigger Google accepts get a one-off trigger; an add-on Google refuses gets the hourly dispatcher. Throws only
 * when no trigger at all could be created.
 */
export function scheduleStep(state: BackgroundState, at: number): void {
  const addon = installMode() === 'addon';
  const refusedLately =
    addon && state.hourlySince !== undefined && now() - state.hourlySince < RETRY_ONE_OFF_MS;
  if (refusedLately) return hourly(state);
  deleteTriggers(STEP_HANDLER);
  if (!addon) return oneOff(state, at);
  try {
    oneOff(state, at);
  } catch {
    // Google did not accept a one-off trigger here: the hourly cadence is the one the rules allow.
    state.hourlySince = undefined;
    hourly(state);
  }
}

/** With nothing due: a bound script keeps no step (its hourly watch stays); an add-on keeps its hourly dispatcher. */
export function settleTriggers(state: BackgroundState): void {
  if (installMode() === 'addon' && state.on && !state.stopped) {
    if (state.hourlySince === undefined) state.hourlySince = now() - RETRY_ONE_OFF_MS; // idle: no hurry
    hourly(state);
    return;
  }
  deleteTriggers(STEP_HANDLER);
  state.triggerId = state.dueAt = state.hourlySince = undefined;
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
  if (pending && current.hourlySince !== undefined && now() - current.hourlySince < RETRY_ONE_OFF_MS)
    return true;
  updateBackground(spreadsheetId, (state) => scheduleStep(state, by ?? now()));
  return true;
}
