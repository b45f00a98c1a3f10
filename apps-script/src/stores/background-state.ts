// Background checks' state and triggers. Per spreadsheet (user property dapa.bg.<id>): on/off, when its next step
// is wanted, why it stopped; these keys are also the list of spreadsheets the dispatcher opens by id. Per user
// (dapa.dispatcher): the ONE time-driven trigger that serves all of them (a published add-on is a standalone
// project: its trigger has no document, and Google allows one time-driven trigger per user per document, or per
// user; one per user keeps both readings), plus what the trigger learned (lateness, runtime today). A bound script
// keeps a one-off trigger plus an hourly watch; an add-on a one-off when Google accepts it, else the hourly
// dispatcher. Every change happens under the shared lock; a refused trigger is caught, and nothing half-installed
// is left behind.
/// <reference types="google-apps-script" />
import { installMode, now, userProperties } from '../platform/gas';

export { installMode };
import type { Lateness } from '../background/planner';
import { isRecord, locked, readValue, writeValue } from './storage';
import { USER_PROPERTY } from './storage-keys';

/** The trigger handlers (top-level functions, see main.ts and build.mjs). */
export const STEP_HANDLER = 'dapaBackgroundStep';
export const EDIT_HANDLER = 'dapaOnEdit';
export const WATCH_HANDLER = 'dapaBackgroundWatch';

const HOUR_MS = 3_600_000;
/** After Google refused a one-off trigger in an add-on, it is tried again after this long. */
const RETRY_ONE_OFF_MS = 24 * HOUR_MS;
/** Notes about dropped spreadsheets are kept this long (the sidebar shows them). */
const NOTE_DAYS_MS = 30 * 24 * HOUR_MS;

/** Background checks in one spreadsheet, for one user. */
export interface BackgroundState {
  on: boolean;
  /** When this spreadsheet's next step is wanted (undefined: nothing until an edit, a check or a schedule). */
  wantAt?: number;
  /** The spreadsheet's name when last seen (for the note if it is dropped). */
  name?: string;
  /** Why background work stopped and will not go on by itself (a blocked network, a wrong key, ...). */
  stopped?: string;
  /** Steps run, their runtime (ms) and when the last one ran. */
  steps: number;
  runtimeMs: number;
  lastStepAt?: number;
  /** Credits the background's checks were billed in this spreadsheet. */
  billed?: number;
  /** Formula results checked before this time are checked again (Check again, a scheduled refresh). */
  refreshSince?: number;
  /** No check before this (the service's Retry-After, or the window's word when a step stopped at it). */
  resumeAt?: number;
  /** Server failures in a row; the background gives up after a few. */
  failures?: number;
  /** The wanted step waits for the plan's window to free (only such steps measure the triggers' lateness). */
  forWindow?: boolean;
}

/** A spreadsheet the dispatcher could not open, and why: shown to the user, then forgotten. */
export interface DroppedNote {
  id: string;
  name?: string;
  why: string;
  at: number;
}

/** The user's one background trigger and what it learned. */
export interface DispatcherState {
  /** The pending trigger and when it is due. */
  triggerId?: string;
  dueAt?: number;
  /** The pending trigger is the add-on's hourly dispatcher (Google refused a one-off trigger at hourlySince). */
  hourlySince?: number;
  /** The day (ms / 86,400,000) and the trigger runtime spent on it, for the sleep budget. */
  day?: number;
  dayRuntimeMs?: number;
  /** How late steps got to work after their due time. */
  lateness?: Lateness;
  /** The pending trigger was set for the plan's window to free. */
  forWindow?: boolean;
  dropped?: DroppedNote[];
}

// ---- stored state -------------------------------------------------------------------------------------

function propertyName(spreadsheetId: string): string {
  return USER_PROPERTY.backgroundPrefix + spreadsheetId;
}

const parseBackground = (raw: unknown): BackgroundState | undefined =>
  isRecord(raw) && typeof raw.on === 'boolean' ? (raw as unknown as BackgroundState) : undefined;

const parseDispatcher = (raw: unknown): DispatcherState | undefined =>
  isRecord(raw) ? (raw as DispatcherState) : undefined;

export function loadBackground(spreadsheetId: string): BackgroundState {
  return (
    readValue('user', propertyName(spreadsheetId), parseBackground) ?? { on: false, steps: 0, runtimeMs: 0 }
  );
}

/** Runs `change` on the stored state under the shared lock (read again there) and stores the result. */
export function updateBackground(
  spreadsheetId: string,
  change: (state: BackgroundState) => void,
): BackgroundState {
  return locked(() => {
    const state = loadBackground(spreadsheetId);
    change(state);
    writeValue('user', propertyName(spreadsheetId), state);
    return state;
  });
}

/** Forgets a spreadsheet's background state (it was deleted, or its access lost). */
export function forgetBackground(spreadsheetId: string): void {
  writeValue('user', propertyName(spreadsheetId), undefined);
}

/** Every spreadsheet this user has background state for: the dispatcher's list. */
export function listBackgrounds(): Array<{ id: string; state: BackgroundState }> {
  const prefix = USER_PROPERTY.backgroundPrefix;
  return userProperties()
    .getKeys()
    .filter((key) => key.startsWith(prefix) && !key.includes('#'))
    .map((key) => ({ id: key.slice(prefix.length), state: loadBackground(key.slice(prefix.length)) }));
}

/** Whether a spreadsheet's background checks are on and not stopped. */
export function running(state: BackgroundState): boolean {
  return state.on && !state.stopped;
}

export function loadDispatcher(): DispatcherState {
  return readValue('user', USER_PROPERTY.dispatcher, parseDispatcher) ?? {};
}

export function updateDispatcher(change: (state: DispatcherState) => void): DispatcherState {
  return locked(() => {
    const state = loadDispatcher();
    change(state);
    writeValue('user', USER_PROPERTY.dispatcher, state);
    return state;
  });
}

/** Notes a spreadsheet dropped from the list (kept 30 days, newest first, at most 10). */
export function noteDropped(note: DroppedNote): void {
  updateDispatcher((d) => {
    d.dropped = [
      note,
      ...(d.dropped ?? []).filter((n) => n.id !== note.id && n.at > now() - NOTE_DAYS_MS),
    ].slice(0, 10);
  });
}

// ---- triggers -------------------------------------------------------------------------------------------

/** This user's triggers of this project (every document's: the dispatcher serves them all). */
function ownTriggers(): GoogleAppsScript.Script.Trigger[] {
  return ScriptApp.getProjectTriggers();
}

/** Deletes this user's triggers of these handlers (the pending step, fired one-off triggers that stay listed). */
export function deleteTriggers(...handlers: string[]): void {
  for (const trigger of ownTriggers()) {
    if (handlers.includes(trigger.getHandlerFunction())) ScriptApp.deleteTrigger(trigger);
  }
}

/** This user's edit trigger in this spreadsheet (Google: one per user per document), if any. */
export function editTriggers(
  spreadsheet: GoogleAppsScript.Spreadsheet.Spreadsheet,
): GoogleAppsScript.Script.Trigger[] {
  const script = ScriptApp as unknown as {
    getUserTriggers?: (s: GoogleAppsScript.Spreadsheet.Spreadsheet) => GoogleAppsScript.Script.Trigger[];
  };
  const all =
    typeof script.getUserTriggers === 'function' ? script.getUserTriggers(spreadsheet) : ownTriggers();
  return all.filter((t) => t.getHandlerFunction() === EDIT_HANDLER);
}

function hasTrigger(id: string | undefined): boolean {
  return id !== undefined && ownTriggers().some((t) => t.getUniqueId() === id);
}

function oneOff(state: DispatcherState, at: number): void {
  const wait = Math.max(1000, Math.ceil(at - now()));
  const trigger = ScriptApp.newTrigger(STEP_HANDLER).timeBased().after(wait).create();
  state.triggerId = trigger.getUniqueId();
  state.dueAt = now() + wait;
  state.hourlySince = undefined;
}

/** The add-on's hourly dispatcher (kept when it is already the pending trigger). */
function hourly(state: DispatcherState): void {
  if (state.hourlySince !== undefined && hasTrigger(state.triggerId)) return;
  deleteTriggers(STEP_HANDLER);
  const trigger = ScriptApp.newTrigger(STEP_HANDLER).timeBased().everyHours(1).create();
  state.triggerId = trigger.getUniqueId();
  state.dueAt = now() + HOUR_MS;
  state.hourlySince ??= now();
}

/**
 * Makes the user's trigger due at `at` (at least a second from now). A bound script and an add-on whose one-off
 * trigger Google accepts get a one-off trigger; an add-on Google refuses gets the hourly dispatcher. Throws only
 * when no trigger at all could be created.
 */
function scheduleStep(state: DispatcherState, at: number): void {
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
function settleTriggers(state: DispatcherState, anyOn: boolean): void {
  if (installMode() === 'addon' && anyOn) {
    if (state.hourlySince === undefined) state.hourlySince = now() - RETRY_ONE_OFF_MS; // idle: no hurry
    hourly(state);
    return;
  }
  deleteTriggers(STEP_HANDLER);
  if (!anyOn) deleteTriggers(WATCH_HANDLER);
  state.triggerId = state.dueAt = state.hourlySince = undefined;
}

/** The earliest wanted step over this user's spreadsheets with background checks on, and whether any is on. */
function wanted(): { at?: number; anyOn: boolean; forWindow: boolean } {
  let at: number | undefined;
  let forWindow = false;
  let anyOn = false;
  for (const { state } of listBackgrounds()) {
    if (!running(state)) continue;
    anyOn = true;
    if (state.wantAt !== undefined && (at === undefined || state.wantAt < at)) {
      at = state.wantAt;
      forWindow = state.forWindow === true;
    }
  }
  return { at, anyOn, forWindow };
}

/**
 * Makes the user's one trigger due when the earliest spreadsheet wants its step. `fired`: the trigger that was due
 * has just run (a dispatcher at its end), so it is set anew even when it looks pending. Throws only when no trigger
 * at all could be created.
 */
export function armDispatcher(fired = false): DispatcherState {
  return updateDispatcher((d) => {
    const { at, anyOn, forWindow } = wanted();
    if (at === undefined) return settleTriggers(d, anyOn);
    const pending = !fired && d.dueAt !== undefined && d.dueAt > now() - 60_000 && hasTrigger(d.triggerId);
    if (pending && (d.dueAt as number) <= Math.max(at, now())) return;
    if (pending && d.hourlySince !== undefined && now() - d.hourlySince < RETRY_ONE_OFF_MS) return;
    scheduleStep(d, at);
    d.forWindow = forWindow;
  });
}

/**
 * Makes sure a step is wanted in this spreadsheet when its background checks are on (and not stopped): by `by`
 * when given, else now; the user's trigger follows. Returns whether background checks will go on.
 */
export function wakeBackground(spreadsheetId: string, by?: number): boolean {
  const state = loadBackground(spreadsheetId);
  if (!running(state)) return false;
  const at = by ?? now();
  if (state.wantAt === undefined || state.wantAt > at)
    updateBackground(spreadsheetId, (s) => {
      if (s.wantAt === undefined || s.wantAt > at) {
        s.wantAt = at;
        s.forWindow = false;
      }
    });
  armDispatcher();
  return true;
}
