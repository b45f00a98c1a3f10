// The trigger handlers of background checks: the user's time-driven trigger (a dispatcher that opens each spreadsheet
// with work by id, since a published add-on's trigger has no active spreadsheet, and runs its step within one
// execution's runtime), the edit trigger, and the bound script's hourly watch. None of them ever fails the trigger:
// a spreadsheet's failure is counted in its own state.
/// <reference types="google-apps-script" />
import { isDapaFormula } from '../checks/formula-text';
import { missingFor } from '../platform/consent';
import { type DailyLimit, dailyLimitOf, now, sleep } from '../platform/gas';
import {
  activeSpreadsheet,
  currentSpreadsheet,
  idOf,
  inSpreadsheet,
  noteDailyLimit,
} from '../stores/session';
import {
  type BackgroundState,
  dayOf,
  dispatcherMarks,
  type DispatcherState,
  forgetBackground,
  keepTurnOns,
  goesOn,
  listBackgrounds,
  listGoingOn,
  loadDispatcher,
  loadStatus,
  noteDropped,
  noteDispatcherAtWork,
  noteLimitedForTheDay,
  resumeAfterDailyLimit,
  triggerCadence,
  updateBackground,
  updateDispatcher,
  whenNext,
} from '../stores/background-store';
import { upkeep } from '../stores/store-compaction';
import { keepTheRetention } from './retention-turn';
import { armDispatcher, keepTriggerThroughDailyLimit, wakeBackground } from '../triggers/step-trigger';
import { accessText, PAUSED_AFTER_FAILURES, spreadsheetGone } from '../messages';
import { EXECUTION_UNSEEN_MS, observeLateness, observeStepWork } from './planner';
import { runStep, startDueRefresh, type Turn, turnOf } from './step';
import { MAX_FAILURES, RETRY_FAILURE_MS } from './run';

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
