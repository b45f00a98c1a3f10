// The background's triggers, in one module: the dispatcher (the trigger's handler), the user's triggers by handler,
// and the one time-driven step trigger. Each section below says its part.
// Over 300 lines: the handler, the triggers it keeps and how they are made due are one trigger's life.
/// <reference types="google-apps-script" />
import { isDapaFormula } from '../checks/formulas';
import { type DailyLimit, dailyLimitOf, missingFor, now, sleep } from '../platform/gas';
import {
  activeSpreadsheet,
  currentSpreadsheet,
  idOf,
  inSpreadsheet,
  installMode,
  noteDailyLimit,
} from '../stores/session';
import {
  type BackgroundState,
  backgroundStatus,
  dayOf,
  dispatcherMarks,
  type DispatcherState,
  forgetBackground,
  goesOn,
  keepTurnOns,
  listBackgrounds,
  listGoingOn,
  listUpkeep,
  loadBackground,
  loadDispatcher,
  loadStatus,
  noteDispatcherAtWork,
  noteDropped,
  noteLimitedForTheDay,
  resumeAfterDailyLimit,
  setUpkeepDue,
  triggerCadence,
  updateBackground,
  updateDispatcher,
  wantBy,
  whenNext,
} from '../stores/background-store';
import { upkeep } from '../stores/results';
import {
  EXECUTION_UNSEEN_MS,
  keepTheRetention,
  MAX_FAILURES,
  observeLateness,
  observeStepWork,
  RETRY_FAILURE_MS,
  runStep,
  startDueRefresh,
  type Turn,
  turnOf,
} from './step';
import { accessText, PAUSED_AFTER_FAILURES, spreadsheetGone, TRIGGER_REFUSED } from '../messages';

// ─── dispatcher ────────────────────────────────────────────────────────────────────────────────────────────────────
// The trigger handlers of background checks: the user's time-driven trigger (a dispatcher that opens each spreadsheet
// with work by id, since a published add-on's trigger has no active spreadsheet, and runs its step within one
// execution's runtime), the edit trigger, and the bound script's hourly watch. None of them ever fails the trigger:
// a spreadsheet's failure is counted in its own state.
/** After an edit, the first step waits for the formulas' own 30 seconds. */
const AFTER_EDIT_MS = 31_000;
/** The at-work note outlasts the turn's deadline by this much (an execution Google stopped leaves it to run out). */
const AT_WORK_MARGIN_MS = 60_000;
/** A spreadsheet whose step is wanted this soon is worked on by the dispatcher now (its planner waits if early). */
const DUE_SLACK_MS = 60_000;

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/**
 * Adds the execution's runtime to the day's, learns the triggers' lateness, and sets the user's trigger again; not
 * `rearm`: a trigger that found its step already running (its twin's, WINDOW_TRIGGERS) leaves the trigger to the
 * running step, which sets it at its end.
 */
export function finishTurn(turn: Turn, firstLook: number | undefined, fired: boolean, rearm = true): void {
  const note = (d: DispatcherState) => {
    const day = dayOf(turn.executionStartedAt);
    // Google counts the whole execution: what runs before the turn starts and after this note is written too.
    const spent = now() - turn.executionStartedAt + EXECUTION_UNSEEN_MS;
    d.dayRuntimeMs = (d.day === day ? (d.dayRuntimeMs ?? 0) : 0) + spent;
    d.daySleptMs = (d.day === day ? (d.daySleptMs ?? 0) : 0) + turn.sleptMs;
    d.day = day;
    // What a window works: its step, with what the executions beside it since the last step worked (a twin that found
    // the step running, a trigger with nothing due); averaged over steps only, so those never pull it down.
    if (fired && firstLook !== undefined && triggerCadence(d) === 'minute') {
      d.stepWorkMs = observeStepWork(d.stepWorkMs, spent - turn.sleptMs + (d.besideStepMs ?? 0));
      delete d.besideStepMs;
    } else if (fired) d.besideStepMs = (d.besideStepMs ?? 0) + spent - turn.sleptMs;
    if (
      fired &&
      firstLook !== undefined &&
      d.dueAt !== undefined &&
      d.forWindow &&
      triggerCadence(d) === 'minute'
    )
      d.lateness = observeLateness(d.lateness ?? {}, firstLook - d.dueAt);
  };
  if (rearm) armDispatcher(fired, note);
  else updateDispatcher(note);
}

/**
 * The spreadsheets of `goingOn` whose step is wanted now (or within DUE_SLACK_MS), the longest-waiting first (whether
 * checks go on does not depend on the trigger's cadence: the list may be read before the trigger's state).
 */
function dueSpreadsheets(
  turn: Turn,
  goingOn: Array<{ id: string; state: BackgroundState }>,
): Array<{ id: string; state: BackgroundState }> {
  const at = turn.executionStartedAt;
  return goingOn
    .map(({ id, state }) => ({ id, state, next: whenNext(state.wanted) }))
    .filter(({ next }) => next !== undefined && next.at <= at + DUE_SLACK_MS)
    .sort((a, b) => (a.next?.at as number) - (b.next?.at as number));
}

/** Errors that mean the spreadsheet is gone for this user (deleted, or its access lost), not a passing failure. */
const GONE =
  /is missing|not found|does not exist|no longer exists|was deleted|(don't|do not) have (read )?access|permission to access/i;
/** Google's passing failures ("Service Spreadsheets failed while accessing document ..."): tried again, never dropped. */
const PASSING = /Service .* failed|timed out|try again|Required permissions/i;

/**
 * Opens a spreadsheet of the list: the script's own document when it is that one (a bound script), else by id (a
 * published add-on's trigger has none). One that is gone is dropped from the list with a note; another failure
 * counts like a service failure and is tried again later.
 */
function openSpreadsheet(id: string, state: BackgroundState): Spreadsheet | undefined {
  try {
    const active = SpreadsheetApp.getActiveSpreadsheet();
    if (active && idOf(active) === id) return active;
    return SpreadsheetApp.openById(id);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (GONE.test(why) && !PASSING.test(why)) {
      forgetBackground(id);
      noteDropped({ id, name: state.name, why: spreadsheetGone(state.name, why), at: now() });
    } else failedTurn(id, why);
    return undefined;
  }
}

/** A step that failed outright: counted, tried again in 5 minutes, given up after a few. */
function failedTurn(id: string, why: string): void {
  console.warn(`DAPA background step failed: ${why}`);
  updateBackground(id, (s) => {
    s.failures = (s.failures ?? 0) + 1;
    s.wanted.retry = now() + RETRY_FAILURE_MS;
    if (s.failures >= MAX_FAILURES) s.stopped = PAUSED_AFTER_FAILURES + why;
  });
}

/** Background checks need scopes the user has not granted (Google's granular consent): each spreadsheet says so. */
function stopForConsent(missing: readonly string[], dispatcher: DispatcherState): void {
  const why = accessText(missing);
  for (const { id } of listGoingOn(dispatcher)) updateBackground(id, (s) => (s.stopped = why));
}

/**
 * The user's time-driven trigger: works through the spreadsheets with background work, each opened by id (a
 * published add-on is a standalone project: its trigger has no active spreadsheet), within one execution's
 * runtime, then sets the trigger for the next wanted step. Never fails the trigger: a spreadsheet's failure is
 * counted in its own state.
 */
export function dapaBackgroundStep(_event?: unknown): void {
  try {
    dispatch();
  } catch (error) {
    const limit = noteDailyLimit(error);
    if (!limit) throw error;
    throughDailyLimit(limit);
  }
}

/** Google refused the background for the day: noted, and a trigger kept that resumes it after Google's reset. */
function throughDailyLimit(limit: DailyLimit): void {
  console.warn("DAPA background: one of Google's daily quotas is used up; resuming after Google's reset.");
  noteLimitedForTheDay(limit);
  keepTurnOns();
  keepTriggerThroughDailyLimit();
}

function dispatch(): void {
  const marks = dispatcherMarks(now());
  if (marks.atWork) {
    // A trigger due with the one at work (WINDOW_TRIGGERS): it ends at once, its runtime noted; the one at work sets
    // the next triggers at its end.
    const turn = turnOf('minute');
    turn.leaseTaken = true;
    return finishTurn(turn, undefined, true, false);
  }
  if (marks.limit !== undefined || marks.turnOns) resumeAfterDailyLimit(marks.limit);
  // The list first (a listing reads the user's properties afresh), then the trigger's state from that same read.
  const all = listBackgrounds(); // one listing for the steps and the retention
  const goingOn = listGoingOn({}, all);
  const dispatcher = loadDispatcher();
  const turn = turnOf(triggerCadence(dispatcher), dispatcher);
  const missing = missingFor('background');
  if (missing.length > 0) return stopForConsent(missing, turn.dispatcher);
  noteDispatcherAtWork(turn.deadline + AT_WORK_MARGIN_MS);
  try {
    workThrough(turn, goingOn, all);
  } finally {
    noteDispatcherAtWork(undefined);
  }
}

/** The dispatcher's turn through the user's spreadsheets whose step is due, then its trigger set again. */
function workThrough(
  turn: Turn,
  goingOn: ReturnType<typeof listGoingOn>,
  all: ReturnType<typeof listBackgrounds>,
): void {
  let firstLook: number | undefined;
  let stepped = false;
  const served = new Set<string>();
  for (const { id, state } of dueSpreadsheets(turn, goingOn)) {
    if (now() >= turn.endsAt) break;
    const spreadsheet = openSpreadsheet(id, state);
    if (!spreadsheet) continue;
    try {
      const step = inSpreadsheet(spreadsheet, () => {
        startDueRefresh(spreadsheet);
        return runStep(spreadsheet, turn);
      });
      firstLook ??= step?.firstLook;
      stepped ||= step !== undefined;
      if (step) served.add(id);
    } catch (error) {
      if (dailyLimitOf(error)) throw error; // not the spreadsheet's failure: Google's, for the day
      failedTurn(id, error instanceof Error ? error.message : String(error));
    }
  }
  keepTheRetention(turn, served, openSpreadsheet, all);
  finishTurn(turn, firstLook, true, stepped || !turn.leaseTaken);
}

/** Whether an edit entered a DAPA formula (the edit event's range, or its value). */
function dapaEdit(event: unknown): boolean {
  const e = (event ?? {}) as { range?: GoogleAppsScript.Spreadsheet.Range; value?: unknown };
  return isDapaFormula(e.range?.getFormula?.() ?? String(e.value ?? ''));
}

/**
 * The installable onEdit trigger: a new or changed formula gets a background step once its own run is over. Where
 * steps come only hourly, this execution is the step: it waits out the formula's own run and works for 5 minutes.
 */
export function dapaOnEdit(event?: unknown): void {
  try {
    onEditStep(event);
  } catch (error) {
    const limit = noteDailyLimit(error);
    if (!limit) throw error;
    throughDailyLimit(limit);
  }
}

function onEditStep(event: unknown): void {
  const spreadsheet = activeSpreadsheet();
  const id = idOf(spreadsheet);
  const status = loadStatus(id);
  if (!goesOn(status)) return;
  if (status !== 'hourly' || !dapaEdit(event)) {
    wakeBackground(id, now() + AFTER_EDIT_MS);
    return;
  }
  sleep(AFTER_EDIT_MS);
  const turn = turnOf('hourly');
  startDueRefresh(spreadsheet);
  const step = runStep(spreadsheet, turn);
  finishTurn(turn, step?.firstLook, false);
}

/**
 * The bound script's hourly watch: revives the steps when a due one never ran (the day's trigger runtime was
 * spent, or Google dropped the trigger), so work resumes by itself, the next day at worst.
 */
export function dapaBackgroundWatch(_event?: unknown): void {
  try {
    // A bound script's store has its upkeep here too (nobody may open the spreadsheet; no step may be wanted).
    const here = currentSpreadsheet();
    if (here) upkeep(here);
    const resumed = resumeAfterDailyLimit();
    const d = loadDispatcher();
    const stale = d.dueAt === undefined || d.dueAt < now() - 600_000;
    if ((resumed || stale) && listGoingOn(d).some(({ state }) => whenNext(state.wanted) !== undefined))
      armDispatcher(true);
  } catch (error) {
    const limit = noteDailyLimit(error);
    if (!limit) throw error;
    throughDailyLimit(limit);
  }
}

// ─── handlers ──────────────────────────────────────────────────────────────────────────────────────────────────────
// The user's triggers of this project, by handler: the one time-driven step trigger (the dispatcher), the edit trigger
// of each spreadsheet with background checks (Google: one per user per document) and the bound script's hourly watch;
// installing them for a spreadsheet, and removing them, with nothing half-installed left behind on a refusal.
/** The trigger handlers (top-level functions, see main.ts and build.mjs). */
export const STEP_HANDLER = 'dapaBackgroundStep';
export const EDIT_HANDLER = 'dapaOnEdit';
export const WATCH_HANDLER = 'dapaBackgroundWatch';

/** This user's triggers of this project (every document's: the dispatcher serves them all). */
export function ownTriggers(): GoogleAppsScript.Script.Trigger[] {
  return ScriptApp.getProjectTriggers();
}

/** Deletes this user's triggers of these handlers (the pending step, fired one-off triggers that stay listed). */
export function deleteTriggers(...handlers: string[]): void {
  for (const trigger of ownTriggers()) {
    if (handlers.includes(trigger.getHandlerFunction())) ScriptApp.deleteTrigger(trigger);
  }
}

/** This user's edit trigger in this spreadsheet (Google: one per user per document), if any. */
function editTriggers(spreadsheet: Spreadsheet): GoogleAppsScript.Script.Trigger[] {
  const script = ScriptApp as unknown as {
    getUserTriggers?: (s: Spreadsheet) => GoogleAppsScript.Script.Trigger[];
  };
  const all =
    typeof script.getUserTriggers === 'function' ? script.getUserTriggers(spreadsheet) : ownTriggers();
  return all.filter((t) => t.getHandlerFunction() === EDIT_HANDLER);
}

/** Removes this user's edit trigger of the spreadsheet. */
export function removeEditTrigger(spreadsheet: Spreadsheet): void {
  for (const t of editTriggers(spreadsheet)) ScriptApp.deleteTrigger(t);
}

/**
 * Google allows 20 triggers per user per script, an add-on's too; this user's edit triggers are held to
 * MAX_EDIT_TRIGGERS, beside the one time-driven trigger (a bound script: its watch and up to three one-off steps).
 */
export const MAX_EDIT_TRIGGERS = 15;

/**
 * Before an edit trigger is made, keeps this user's edit triggers under MAX_EDIT_TRIGGERS: those of spreadsheets whose
 * background checks no longer go on go first, then the one of the spreadsheet whose last step is oldest. A spreadsheet
 * without its edit trigger still has its background checks: its steps come with the user's time-driven trigger (an
 * add-on: hourly at most) rather than 31 seconds after an edit.
 */
function makeRoomForEditTrigger(spreadsheetId: string): void {
  const edits = ownTriggers().filter((t) => t.getHandlerFunction() === EDIT_HANDLER);
  if (edits.length < MAX_EDIT_TRIGGERS) return;
  const goingOn = listGoingOn(loadDispatcher()).filter(({ id }) => id !== spreadsheetId);
  const lastStep = new Map(goingOn.map(({ id, state }) => [id, state.lastStepAt ?? 0]));
  const byNeed = [...edits].sort(
    (a, b) =>
      (lastStep.get(a.getTriggerSourceId() ?? '') ?? -1) - (lastStep.get(b.getTriggerSourceId() ?? '') ?? -1),
  );
  for (const trigger of byNeed.slice(0, edits.length - MAX_EDIT_TRIGGERS + 1))
    ScriptApp.deleteTrigger(trigger);
}

/**
 * Creates what background checks in this spreadsheet need: its edit trigger (one per user per document), the
 * bound script's hourly watch, and (`armStep`) the user's one step trigger. On any refusal removes what it created
 * and says what to do.
 */
export function installTriggers(spreadsheet: Spreadsheet, armStep: () => void): void {
  const madeEdit = editTriggers(spreadsheet).length === 0;
  if (madeEdit) makeRoomForEditTrigger(idOf(spreadsheet));
  try {
    if (madeEdit) ScriptApp.newTrigger(EDIT_HANDLER).forSpreadsheet(spreadsheet).onEdit().create();
    const watched = ownTriggers().some((t) => t.getHandlerFunction() === WATCH_HANDLER);
    if (installMode() === 'bound' && !watched)
      ScriptApp.newTrigger(WATCH_HANDLER).timeBased().everyHours(1).create();
    armStep();
  } catch {
    if (madeEdit) removeEditTrigger(spreadsheet);
    const others = listGoingOn(loadDispatcher()).some(({ id }) => id !== idOf(spreadsheet));
    if (!others) deleteTriggers(STEP_HANDLER, WATCH_HANDLER);
    throw new Error(TRIGGER_REFUSED);
  }
}

// ─── step trigger ──────────────────────────────────────────────────────────────────────────────────────────────────
// The user's ONE time-driven trigger that serves all of the user's spreadsheets with background checks (a published
// add-on is a standalone project: its trigger has no document, and Google allows one time-driven trigger per user per
// document, or per user; one per user keeps both readings), made due when the earliest spreadsheet wants its step. A
// bound script keeps a one-off trigger (set three times over for a window: WINDOW_TRIGGERS) plus an hourly watch; an
// add-on a one-off when Google accepts it, else the hourly dispatcher. Every change happens under the shared lock; a
// refused trigger is caught.
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
 * sleeps through the rest (step.ts: minuteSleepCap). Twelve, the watch and the edit trigger stay under Google's 20
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
