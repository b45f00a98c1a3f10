// The user's ONE time-driven trigger that serves all of the user's spreadsheets with background checks (a published
// add-on is a standalone project: its trigger has no document, and Google allows one time-driven trigger per user per
// document, or per user; one per user keeps both readings), made due when the earliest spreadsheet wants its step. A
// bound script keeps a one-off trigger (set three times over for a window: WINDOW_TRIGGERS) plus an hourly watch; an add-on a
// one-off when Google accepts it, else the hourly dispatcher. Every change happens under the shared lock; a refused
// trigger is caught.
import { now } from '../platform/gas';
import { installMode } from '../stores/session';
import {
  backgroundStatus,
  type DispatcherState,
  goesOn,
  listBackgrounds,
  listGoingOn,
  listUpkeep,
  loadBackground,
  loadDispatcher,
  setUpkeepDue,
  triggerCadence,
  updateBackground,
  updateDispatcher,
  wantBy,
  whenNext,
} from '../stores/background-store';
import { deleteTriggers, ownTriggers, STEP_HANDLER, WATCH_HANDLER } from './handlers';

const HOUR_MS = 3_600_000;
/** After Google refused a one-off trigger in an add-on, it is tried again after this long. */
const RETRY_ONE_OFF_MS = 24 * HOUR_MS;

function hasTrigger(id: string | undefined): boolean {
  return id !== undefined && ownTriggers().some((t) => t.getUniqueId() === id);
}

/**
 * A bound script's step set for the plan's window gets twelve one-off triggers due at once: each fires late by its own
 * 0–60 s, and the first to come works (the others find the dispatcher at work and end at once, or are deleted before
 * they fire), so a window waits for the earliest of twelve latenesses (about 5 s on average instead of 30) and no step
 * sleeps through the rest (planner.ts: minuteSleepCap). Twelve, the watch and the edit trigger stay under Google's 20
 * triggers per user per script. Should Google fire triggers due at once together instead, the window waits for that
 * one lateness, and each of the others costs about 0.4 s of the day's runtime, which the sleep budget counts
 * (dispatcher.ts). An add-on keeps one (Google: one trigger of each type per user per document).
 */
export const WINDOW_TRIGGERS = 12;

function oneOff(state: DispatcherState, at: number, copies = 1): void {
  const wait = Math.max(1000, Math.ceil(at - now()));
  const trigger = ScriptApp.newTrigger(STEP_HANDLER).timeBased().after(wait).create();
  for (let i = 1; i < copies; i++) ScriptApp.newTrigger(STEP_HANDLER).timeBased().after(wait).create();
  state.triggerId = trigger.getUniqueId();
  state.dueAt = now() + wait;
  state.hourlySince = undefined;
}

/** The add-on's hourly dispatcher (kept when it is already the pending trigger). */
function hourly(state: DispatcherState): void {
  if (triggerCadence(state) === 'hourly' && hasTrigger(state.triggerId)) return;
  deleteTriggers(STEP_HANDLER);
  const trigger = ScriptApp.newTrigger(STEP_HANDLER).timeBased().everyHours(1).create();
  state.triggerId = trigger.getUniqueId();
  state.dueAt = now() + HOUR_MS;
  state.hourlySince ??= now();
}

/** The add-on's hourly dispatcher replaced a refused one-off trigger less than a day ago. */
function refusedLately(state: DispatcherState): boolean {
  return triggerCadence(state) === 'hourly' && now() - (state.hourlySince as number) < RETRY_ONE_OFF_MS;
}

/**
 * Makes the user's trigger due at `at` (at least a second from now). A bound script and an add-on whose one-off
 * trigger Google accepts get a one-off trigger; an add-on Google refuses gets the hourly dispatcher. Throws only
 * when no trigger at all could be created.
 */
function scheduleStep(state: DispatcherState, at: number, forWindow = false): void {
  const addon = installMode() === 'addon';
  if (addon && refusedLately(state)) return hourly(state);
  deleteTriggers(STEP_HANDLER);
  if (!addon) return oneOff(state, at, forWindow ? WINDOW_TRIGGERS : 1);
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
    if (triggerCadence(state) === 'minute') state.hourlySince = now() - RETRY_ONE_OFF_MS; // idle: no hurry
    hourly(state);
    return;
  }
  deleteTriggers(STEP_HANDLER);
  if (!anyOn) deleteTriggers(WATCH_HANDLER);
  state.triggerId = state.dueAt = state.hourlySince = undefined;
}

/** The earliest wanted step over this user's spreadsheets whose checks go on, and whether any does. */
function wanted(dispatcher: DispatcherState): { at?: number; anyOn: boolean; forWindow: boolean } {
  let at: number | undefined;
  let forWindow = false;
  const all = listBackgrounds();
  const goingOn = listGoingOn(dispatcher, all);
  for (const { state } of goingOn) {
    const next = whenNext(state.wanted);
    if (next && (at === undefined || next.at < at)) {
      at = next.at;
      forWindow = next.cause === 'window';
    }
  }
  // The store's upkeep of every spreadsheet that keeps results, background checks on or not (the retention's promise);
  // a bound script whose checks go on keeps its hourly watch, which does that upkeep itself.
  const watched = installMode() === 'bound' && goingOn.length > 0;
  for (const upkeep of watched ? [] : listUpkeep(all))
    if (at === undefined || upkeep.at < at) {
      at = upkeep.at;
      forWindow = false;
    }
  return { at, anyOn: goingOn.length > 0, forWindow };
}

/**
 * Makes the user's one trigger due when the earliest spreadsheet wants its step. `fired`: the trigger that was due
 * has just run (a dispatcher at its end), so it is set anew even when it looks pending. `note`: a change of the
 * dispatcher's state made in the same section (a turn's runtime; one read and one write of the user's properties
 * for both), kept even when arming fails. Throws only when no trigger at all could be created.
 */
export function armDispatcher(fired = false, note?: (d: DispatcherState) => void): DispatcherState {
  let failed: { error: unknown } | undefined;
  const state = updateDispatcher((d) => {
    if (!note) return arm(d, fired);
    note(d);
    const noted = JSON.stringify(d);
    try {
      arm(d, fired);
    } catch (error) {
      failed = { error };
      for (const key of Object.keys(d)) delete (d as Record<string, unknown>)[key];
      Object.assign(d, JSON.parse(noted) as DispatcherState);
    }
  });
  if (failed) throw failed.error;
  return state;
}

/** Sets the user's trigger for the earliest wanted step (armDispatcher's section). */
function arm(d: DispatcherState, fired: boolean): void {
  const { at, anyOn, forWindow } = wanted(d);
  if (at === undefined) return settleTriggers(d, anyOn);
  if (!anyOn) deleteTriggers(WATCH_HANDLER); // the watch serves background checks; the store's upkeep has the step
  const pending = !fired && d.dueAt !== undefined && d.dueAt > now() - 60_000 && hasTrigger(d.triggerId);
  if (pending && (d.dueAt as number) <= Math.max(at, now())) return;
  if (pending && refusedLately(d)) return;
  scheduleStep(d, at, forWindow);
  d.forWindow = forWindow;
}

/**
 * Makes sure a step is wanted in this spreadsheet when its background checks go on by themselves: by `by` when
 * given, else now; the user's trigger follows. Returns whether background checks will go on.
 */
export function wakeBackground(spreadsheetId: string, by?: number): boolean {
  const state = loadBackground(spreadsheetId);
  if (!goesOn(backgroundStatus(state, loadDispatcher()))) return false;
  const at = by ?? now();
  if ((whenNext(state.wanted)?.at ?? Infinity) > at)
    updateBackground(spreadsheetId, (s) => wantBy(s, 'work', at));
  armDispatcher();
  return true;
}

/**
 * Google refused this user's work for the day (one of its daily quotas): keeps a trigger that comes back by itself
 * without reading any stored state (Properties may be what is used up): a bound script's hourly watch, an add-on's
 * hourly dispatcher. The first of them after Google's reset resumes the work.
 */
export function keepTriggerThroughDailyLimit(): void {
  try {
    if (installMode() === 'bound') {
      if (!ownTriggers().some((t) => t.getHandlerFunction() === WATCH_HANDLER))
        ScriptApp.newTrigger(WATCH_HANDLER).timeBased().everyHours(1).create();
      return;
    }
    deleteTriggers(STEP_HANDLER);
    ScriptApp.newTrigger(STEP_HANDLER).timeBased().everyHours(1).create();
  } catch {
    // Google refused the trigger too: the next menu item, sidebar call or edit sets it again
  }
}

/**
 * The result store of this spreadsheet wants its upkeep at `at` (when its oldest result passes the retention;
 * undefined: it keeps nothing), whatever its background checks' status: its entry in the wanted table, and the user's
 * one time-driven trigger due by then, so that the retention holds with nobody opening the spreadsheet. Called by
 * every execution that kept results and may create triggers (a sidebar check, a menu item, a step). Never throws:
 * where Google refuses the trigger (the triggers box unticked), the next such execution tries again.
 */
export function wantUpkeep(spreadsheetId: string, at: number | undefined, name?: () => string): void {
  try {
    const changed = setUpkeepDue(spreadsheetId, at, name);
    if (at === undefined && !changed) return;
    const d = loadDispatcher();
    const covered =
      d.dueAt !== undefined &&
      at !== undefined &&
      d.dueAt <= at &&
      d.dueAt > now() - 60_000 &&
      hasTrigger(d.triggerId);
    if (!covered) armDispatcher();
  } catch (error) {
    console.warn(
      `DAPA: the store's upkeep not scheduled (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}
