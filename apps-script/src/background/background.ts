// Background checks: steps that finish unfinished =DAPA formulas, the sidebar's job and scheduled refreshes with
// nobody at the sheet (the user's one time-driven trigger, a dispatcher that opens each spreadsheet with work by
// id: a published add-on's trigger has no active spreadsheet) or with the sidebar open (the sidebar calls
// driveBackground). What a step does next is the planner's decision (planner.ts); this module only carries it out.
/// <reference types="google-apps-script" />
import type { BackgroundInfo, ScheduleChange } from '../../sidebar/contract';
import {
  armDispatcher,
  type BackgroundState,
  deleteTriggers,
  type DispatcherState,
  EDIT_HANDLER,
  editTriggers,
  forgetBackground,
  installMode,
  listBackgrounds,
  loadBackground,
  loadDispatcher,
  noteDropped,
  running,
  STEP_HANDLER,
  updateBackground,
  updateDispatcher,
  wakeBackground,
  WATCH_HANDLER,
} from '../stores/background-state';
import { checkValues } from '../checks/check';
import { missingFor, requireFor } from '../platform/consent';
import {
  dapaFormulaCells,
  type FormulaCell,
  isDapaFormula,
  refreshFormulas,
  upToDate,
} from '../checks/formulas';
import { currentSpreadsheet, inSpreadsheet, now, sleep } from '../platform/gas';
import { advanceJob, loadJob } from '../sidebar/job';
import { accessText, MENU_NAME, NO_KEY, spreadsheetGone } from '../messages';
import {
  aheadMs,
  type Cadence,
  observeLateness,
  type PlanRoom,
  planStep,
  sleepBudget,
  type StepPlan,
} from './planner';
import { loadWindow } from '../stores/plan-store';
import { locked } from '../stores/storage';
import { outcomeText, roomIn } from '../../../shared';
import { readStoredRecords, retentionDays, savedCredits, setRetentionDays } from '../stores/result-store';
import { claimDueSchedule, readSchedule, saveSchedule } from '../stores/schedule';
import { currentBaseUrl, storedApiKey } from '../stores/settings';
import { returnStepLease, takeStepLease } from '../stores/step-lease';

/** A trigger's step starts no new check after this long, and its checks stop by STEP_DEADLINE_MS (limit 6 min). */
const STEP_START_MS = 240_000;
const STEP_DEADLINE_MS = 300_000;
/** An hourly step works longer (the limit is 6 minutes): the next one is an hour away. */
const HOURLY_START_MS = 290_000;
const HOURLY_DEADLINE_MS = 330_000;
/** A call of the open sidebar: shorter, so the sidebar shows progress. */
const DRIVE_START_MS = 20_000;
const DRIVE_DEADLINE_MS = 45_000;
/** After an edit, the first step waits for the formulas' own 30 seconds. */
const AFTER_EDIT_MS = 31_000;
const DAY_MS = 86_400_000;
/** Error codes after which background work stops and says why, instead of trying again in a loop. */
const STOPPING = [
  'bad_key',
  'not_premium',
  'network_blocked',
  'validation',
  'not_found',
  'plan_limit',
  'error',
];
const RETRY_FAILURE_MS = 300_000;
const MAX_FAILURES = 5;
/** A spreadsheet whose step is wanted this soon is worked on by the dispatcher now (its planner waits if early). */
const DUE_SLACK_MS = 60_000;
/** A step's lease outlasts its deadline by this much (then it runs out by itself). */
const LEASE_MARGIN_MS = 60_000;

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** One spreadsheet's turn in an execution: what it reads once, what it learns, and how it ends. */
interface Step {
  spreadsheet: Spreadsheet;
  state: BackgroundState;
  /** The user's trigger as the execution found it (lateness, runtime today). */
  dispatcher: DispatcherState;
  /** When the execution started (the day's trigger runtime counts from there). */
  executionStartedAt: number;
  apiKey: string;
  baseUrl: string;
  cadence: Cadence;
  startedAt: number;
  endsAt: number;
  deadline: number;
  cells: FormulaCell[];
  pending: string[];
  jobRunning: boolean;
  /** Rows of the job not done yet. */
  jobLeft: number;
  sent: number;
  billed: number;
  firstLook?: number;
  /** The latest time the core said it may send again (a 429's Retry-After): the next step is not due before. */
  resumeAt?: number;
  next?: number;
  stopped?: string;
  failed?: boolean;
}

/** The active spreadsheet (menu, sidebar, edit trigger), or a clear error where there is none. */
function activeSpreadsheet(): Spreadsheet {
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) throw new Error('Open a spreadsheet first: background checks are set per spreadsheet.');
  return spreadsheet;
}

function spreadsheetId(): string {
  return activeSpreadsheet().getId();
}

/** What the plan's window allows now, for work of `left` URLs. */
function roomNow(baseUrl: string, left?: number): PlanRoom {
  return roomIn(loadWindow(baseUrl), now(), left);
}

/** Work left: the formulas' domains first, then the job's rows. */
function workLeft(step: Step): number {
  return step.pending.length > 0 ? step.pending.length : step.jobRunning ? step.jobLeft : 0;
}

/**
 * Nothing came back (the window was spent elsewhere, or a probe above a guessed limit was refused): wait for the
 * window to empty, here when the step lasts that long.
 */
function waitForWindow(step: Step): void {
  const emptyAt = Math.max(now() + 1000, roomNow(step.baseUrl).emptyAt);
  if (emptyAt <= step.endsAt && step.cadence !== 'sidebar') sleep(emptyAt - now());
  else step.next ??= aheadOf(step, emptyAt);
}

/** When the step that is to work at `at` is due: ahead of it by the triggers' lateness (it sleeps if early). */
function aheadOf(step: Step, at: number): number {
  if (step.cadence !== 'minute') return at;
  return Math.max(now(), at - aheadMs(step.dispatcher.lateness ?? {}, sleepBudget(usedToday(step)) > 0));
}

/** The formulas not up to date, and their domains not kept yet (or checked before a refresh began). */
function formulaWork(step: Step): void {
  const all = dapaFormulaCells(step.spreadsheet);
  const refresh = step.state.refreshSince;
  step.cells = refresh !== undefined ? all : all.filter((c) => !upToDate(step.spreadsheet, c));
  const keys = [...new Set(step.cells.flatMap((c) => c.keys ?? []))];
  const kept = readStoredRecords(step.baseUrl, keys, refresh);
  step.pending = keys.filter((k) => !kept.has(k));
}

/** Checks n domains (formulas first, then the job); returns the fatal error, if any. */
function check(step: Step, n: number): { code: string; message: string } | undefined {
  step.sent += n;
  if (step.pending.length === 0) {
    let given = false;
    const turn = advanceJob(
      step.spreadsheet,
      step.apiKey,
      () => (given ? 0 : ((given = true), n)),
      step.endsAt,
    );
    step.jobRunning = turn.remaining;
    step.jobLeft = turn.state ? turn.state.total - turn.state.done : 0;
    if (turn.remaining && !turn.progressed && !turn.fatal) waitForWindow(step);
    return turn.fatal;
  }
  const report = checkValues(step.pending, {
    apiKey: step.apiKey,
    baseUrl: step.baseUrl,
    deadline: step.deadline,
    waitForRateLimits: false,
    maxSend: n,
    keep: true,
    since: step.state.refreshSince,
    parallel: true,
    left: step.pending.length,
  });
  step.billed += report.totals.billed;
  const done = new Set(report.outcomes.filter((o) => o.kind === 'record' || !o.retryable).map((o) => o.key));
  step.pending = step.pending.filter((k) => !done.has(k));
  step.resumeAt = Math.max(step.resumeAt ?? 0, report.resumeAt ?? 0);
  if (!report.fatal && done.size === 0) waitForWindow(step);
  return report.fatal && { code: report.fatal.code, message: outcomeText(report.fatal) };
}

/** Trigger runtime spent today, this execution's so far included. */
function usedToday(step: Step): number {
  const d = step.dispatcher;
  const day = d.day === Math.floor(step.executionStartedAt / DAY_MS) ? (d.dayRuntimeMs ?? 0) : 0;
  return day + now() - step.executionStartedAt;
}

/** What the window allows now; nothing before a Retry-After the server gave an earlier step. */
function roomFor(step: Step, left: number): PlanRoom {
  const room = roomNow(step.baseUrl, left);
  const resumeAt = step.state.resumeAt ?? 0;
  if (resumeAt <= now()) return room;
  return { ...room, urls: 0, requests: 0, emptyAt: Math.max(room.emptyAt, resumeAt) };
}

function decide(step: Step, first: boolean, probed: boolean): StepPlan {
  const left = workLeft(step);
  return planStep({
    now: now(),
    room: roomFor(step, left),
    left,
    endsAt: step.endsAt,
    cadence: step.cadence,
    lateness: step.dispatcher.lateness ?? {},
    waitBudgetMs: step.cadence === 'sidebar' ? Infinity : sleepBudget(usedToday(step)),
    first,
    probed,
  });
}

/** The step's loop: carries out the planner's decisions until it says schedule or idle. */
function work(step: Step): void {
  let probed = false;
  while (step.next === undefined && !step.stopped) {
    const plan = decide(step, step.sent === 0, probed);
    step.firstLook ??= now();
    probed = step.sent === 0 && plan.kind === 'check';
    if (plan.kind === 'wait') sleep(plan.until - now());
    else if (plan.kind === 'schedule') step.next = plan.at;
    else if (plan.kind === 'idle') return;
    else {
      const fatal = check(step, plan.n);
      if (fatal && STOPPING.includes(fatal.code)) step.stopped = fatal.message;
      else if (fatal) {
        step.failed = true;
        step.next = now() + RETRY_FAILURE_MS;
      }
    }
  }
}

/** Formulas whose domains are all in are refreshed through their version cells; after a refresh, all. */
function refreshDone(step: Step): void {
  const pending = new Set(step.pending);
  const refreshed = step.pending.length === 0 && step.state.refreshSince !== undefined;
  if (refreshed) step.state.refreshSince = undefined;
  refreshFormulas(
    step.spreadsheet,
    step.cells.filter((c) => c.keys && c.keys.every((k) => !pending.has(k))),
  );
}

/** One execution's budget for the spreadsheets it works on, and the user's trigger as it found it. */
interface Turn {
  cadence: Cadence;
  executionStartedAt: number;
  endsAt: number;
  deadline: number;
  dispatcher: DispatcherState;
}

function turnOf(cadence: Cadence, startMs: number, deadlineMs: number): Turn {
  const at = now();
  return {
    cadence,
    executionStartedAt: at,
    endsAt: at + startMs,
    deadline: at + deadlineMs,
    dispatcher: loadDispatcher(),
  };
}

/** Reads what a step needs, or says why it cannot run. */
function openStep(spreadsheet: Spreadsheet, turn: Turn): Step | string | undefined {
  const startedAt = now();
  const state = loadBackground(spreadsheet.getId());
  if (turn.cadence !== 'sidebar' && !running(state)) return undefined;
  const apiKey = storedApiKey();
  if (!apiKey) return NO_KEY;
  if (turn.cadence !== 'sidebar')
    claimDueSchedule(startedAt, spreadsheet, (since) => (state.refreshSince = since));
  const job = loadJob(spreadsheet.getId());
  const step: Step = {
    spreadsheet,
    state,
    dispatcher: turn.dispatcher,
    executionStartedAt: turn.executionStartedAt,
    apiKey,
    baseUrl: currentBaseUrl(),
    cadence: turn.cadence,
    startedAt,
    endsAt: turn.endsAt,
    deadline: turn.deadline,
    cells: [],
    pending: [],
    // With background checks off, the open sidebar's own loop (continueJob) runs its job, not this step.
    jobRunning: running(state) && job?.status === 'running',
    jobLeft: job ? job.total - job.done : 0,
    sent: 0,
    billed: 0,
  };
  formulaWork(step);
  return step;
}

/** Stores what the step learned and when this spreadsheet wants its next step (or none). */
function closeStep(step: Step): void {
  const { state } = step;
  const left = step.pending.length > 0 || step.jobRunning;
  if (step.next === undefined && left) step.next = now() + 1000;
  // The server's word wins: no check before a Retry-After later than the window's guess (state.resumeAt). The step
  // that waits for it is still due ahead of it by the triggers' lateness, like one that waits for the window.
  if (step.next !== undefined && (step.resumeAt ?? 0) > step.next)
    step.next = Math.max(step.next, aheadOf(step, step.resumeAt as number));
  const name = step.spreadsheet.getName();
  updateBackground(step.spreadsheet.getId(), (s) => {
    if (step.cadence !== 'sidebar') {
      s.steps += 1;
      s.lastStepAt = step.startedAt;
      s.runtimeMs += now() - step.startedAt;
    }
    s.name = name;
    s.billed = (s.billed ?? 0) + step.billed;
    const resumeAt = Math.max(s.resumeAt ?? 0, step.resumeAt ?? 0);
    s.resumeAt = resumeAt > now() ? resumeAt : undefined;
    s.refreshSince = state.refreshSince;
    s.failures = step.failed ? (s.failures ?? 0) + 1 : 0;
    if (s.failures >= MAX_FAILURES) step.stopped = 'The DAPA service kept failing; background checks paused.';
    if (step.stopped) s.stopped = step.stopped;
    if (!running(s)) {
      s.wantAt = undefined;
      return;
    }
    const scheduleNext = readSchedule()?.nextAt;
    const at = Math.min(step.next ?? Infinity, scheduleNext ?? Infinity);
    s.forWindow = step.next !== undefined && at === step.next;
    s.wantAt = Number.isFinite(at) ? at : undefined;
  });
}

/**
 * Runs one step in a spreadsheet under its step lease (no other user's step, and no open sidebar, works it at the
 * same time); answers undefined when the lease is held elsewhere or there is nothing to do.
 */
function runStep(spreadsheet: Spreadsheet, turn: Turn): Step | undefined {
  const holder = takeStepLease(turn.deadline + LEASE_MARGIN_MS);
  if (!holder) return undefined; // a step is running; it makes the next one due
  try {
    const step = openStep(spreadsheet, turn);
    if (typeof step === 'string') {
      if (turn.cadence !== 'sidebar') updateBackground(spreadsheet.getId(), (s) => (s.stopped = step));
      return undefined;
    }
    if (!step) return undefined;
    work(step);
    refreshDone(step);
    closeStep(step);
    return step;
  } finally {
    returnStepLease(holder);
  }
}

/** Adds the execution's runtime to the day's, learns the triggers' lateness, and sets the user's trigger again. */
function finishTurn(turn: Turn, firstLook: number | undefined, fired: boolean): void {
  updateDispatcher((d) => {
    const day = Math.floor(turn.executionStartedAt / DAY_MS);
    d.dayRuntimeMs = (d.day === day ? (d.dayRuntimeMs ?? 0) : 0) + now() - turn.executionStartedAt;
    d.day = day;
    if (
      fired &&
      firstLook !== undefined &&
      d.dueAt !== undefined &&
      d.forWindow &&
      d.hourlySince === undefined
    )
      d.lateness = observeLateness(d.lateness ?? {}, firstLook - d.dueAt);
  });
  armDispatcher(fired);
}

/** The spreadsheets whose step is wanted now (or within DUE_SLACK_MS), the longest-waiting first. */
function dueSpreadsheets(at: number): Array<{ id: string; state: BackgroundState }> {
  return listBackgrounds()
    .filter(({ state }) => running(state) && state.wantAt !== undefined && state.wantAt <= at + DUE_SLACK_MS)
    .sort((a, b) => (a.state.wantAt as number) - (b.state.wantAt as number));
}

/** Errors that mean the spreadsheet is gone for this user (deleted, or its access lost), not a passing failure. */
const GONE =
  /not found|does not exist|no longer exists|deleted|access|permission to access|Requested entity/i;

/**
 * Opens a spreadsheet of the list: the script's own document when it is that one (a bound script), else by id (a
 * published add-on's trigger has none). One that is gone is dropped from the list with a note; another failure
 * counts like a service failure and is tried again later.
 */
function openSpreadsheet(id: string, state: BackgroundState): Spreadsheet | undefined {
  try {
    const active = SpreadsheetApp.getActiveSpreadsheet();
    if (active && active.getId() === id) return active;
    return SpreadsheetApp.openById(id);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (GONE.test(why) && !/Required permissions/i.test(why)) {
      locked(() => forgetBackground(id));
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
    s.wantAt = now() + RETRY_FAILURE_MS;
    if (s.failures >= MAX_FAILURES) s.stopped = `Background checks paused after repeated failures: ${why}`;
  });
}

/** Background checks need scopes the user has not granted (Google's granular consent): each spreadsheet says so. */
function stopForConsent(missing: readonly string[]): void {
  const why = accessText(missing);
  for (const { id, state } of listBackgrounds())
    if (running(state)) updateBackground(id, (s) => (s.stopped = why));
}

/**
 * The user's time-driven trigger: works through the spreadsheets with background work, each opened by id (a
 * published add-on is a standalone project: its trigger has no active spreadsheet), within one execution's
 * runtime, then sets the trigger for the next wanted step. Never fails the trigger: a spreadsheet's failure is
 * counted in its own state.
 */
export function dapaBackgroundStep(_event?: unknown): void {
  const hourly = loadDispatcher().hourlySince !== undefined;
  const turn = hourly
    ? turnOf('hourly', HOURLY_START_MS, HOURLY_DEADLINE_MS)
    : turnOf('minute', STEP_START_MS, STEP_DEADLINE_MS);
  const missing = missingFor('background');
  if (missing.length > 0) return stopForConsent(missing);
  let firstLook: number | undefined;
  for (const { id, state } of dueSpreadsheets(turn.executionStartedAt)) {
    if (now() >= turn.endsAt) break;
    const spreadsheet = openSpreadsheet(id, state);
    if (!spreadsheet) continue;
    try {
      const step = inSpreadsheet(spreadsheet, () => runStep(spreadsheet, turn));
      firstLook ??= step?.firstLook;
    } catch (error) {
      failedTurn(id, error instanceof Error ? error.message : String(error));
    }
  }
  finishTurn(turn, firstLook, true);
}

/** The open sidebar's call: one short step at the plan's pace; the answer says when to call again. */
export function driveBackground(): BackgroundInfo {
  const spreadsheet = activeSpreadsheet();
  const step = runStep(spreadsheet, turnOf('sidebar', DRIVE_START_MS, DRIVE_DEADLINE_MS));
  if (step && running(loadBackground(spreadsheet.getId()))) armDispatcher(true);
  const info = getBackground();
  if (step && (step.pending.length > 0 || step.jobRunning)) info.driveAt = step.next ?? now();
  else if (!step) info.driveAt = now() + 5_000;
  return info;
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
  const spreadsheet = activeSpreadsheet();
  const id = spreadsheet.getId();
  if (!running(loadBackground(id))) return;
  if (loadDispatcher().hourlySince === undefined || !dapaEdit(event)) {
    wakeBackground(id, now() + AFTER_EDIT_MS);
    return;
  }
  sleep(AFTER_EDIT_MS);
  const turn = turnOf('hourly', HOURLY_START_MS, HOURLY_DEADLINE_MS);
  const step = runStep(spreadsheet, turn);
  finishTurn(turn, step?.firstLook, false);
}

/**
 * The bound script's hourly watch: revives the steps when a due one never ran (the day's trigger runtime was
 * spent, or Google dropped the trigger), so work resumes by itself, the next day at worst.
 */
export function dapaBackgroundWatch(_event?: unknown): void {
  const d = loadDispatcher();
  const stale = d.dueAt === undefined || d.dueAt < now() - 600_000;
  if (stale && listBackgrounds().some(({ state }) => running(state) && state.wantAt !== undefined))
    armDispatcher(true);
}

/**
 * Creates what background checks in this spreadsheet need: its edit trigger (one per user per document), the
 * bound script's hourly watch, and the user's one step trigger. On any refusal removes what it created and says
 * what to do.
 */
function installTriggers(spreadsheet: Spreadsheet): void {
  const madeEdit = editTriggers(spreadsheet).length === 0;
  try {
    if (madeEdit) ScriptApp.newTrigger(EDIT_HANDLER).forSpreadsheet(spreadsheet).onEdit().create();
    const watched = ScriptApp.getProjectTriggers().some((t) => t.getHandlerFunction() === WATCH_HANDLER);
    if (installMode() === 'bound' && !watched)
      ScriptApp.newTrigger(WATCH_HANDLER).timeBased().everyHours(1).create();
    armDispatcher(true);
  } catch {
    if (madeEdit) for (const t of editTriggers(spreadsheet)) ScriptApp.deleteTrigger(t);
    const others = listBackgrounds().some(({ id, state }) => id !== spreadsheet.getId() && running(state));
    if (!others) deleteTriggers(STEP_HANDLER, WATCH_HANDLER);
    throw new Error(
      'Background checks could not start: Google refused a trigger in this spreadsheet, and none was left ' +
        'installed. Keep the sidebar open to finish formulas and checks, or remove other triggers of this ' +
        'add-on (Extensions › Apps Script › Triggers) and turn background checks on again.',
    );
  }
}

/**
 * Turns background checks on (menu or sidebar: a user action, where Google's authorization prompt belongs: the
 * scopes background checks need are asked for here when the user has not granted them) and starts a step.
 */
export function startBackground(): BackgroundInfo {
  if (!storedApiKey()) throw new Error(NO_KEY);
  requireFor('background');
  const spreadsheet = activeSpreadsheet();
  const id = spreadsheet.getId();
  const name = spreadsheet.getName();
  updateBackground(id, (state) => {
    state.on = true;
    state.stopped = undefined;
    state.failures = 0;
    state.wantAt = now() + 1000;
    state.forWindow = false;
    state.name = name;
  });
  try {
    installTriggers(spreadsheet);
  } catch (error) {
    updateBackground(id, (state) => {
      state.on = false;
      state.wantAt = undefined;
    });
    throw error;
  }
  const hourly = loadDispatcher().hourlySince !== undefined;
  spreadsheet.toast(
    hourly
      ? 'Background checks are on, hourly (Google’s rule for add-ons): keep the sidebar open for the plan’s pace.'
      : 'Background checks are on: unfinished formulas and sidebar checks go on with the sheet closed.',
    MENU_NAME,
  );
  return getBackground();
}

export function stopBackground(): BackgroundInfo {
  const spreadsheet = activeSpreadsheet();
  updateBackground(spreadsheet.getId(), (state) => {
    state.on = false;
    state.wantAt = undefined;
  });
  try {
    for (const t of editTriggers(spreadsheet)) ScriptApp.deleteTrigger(t);
    armDispatcher(true);
  } catch {
    // Without the triggers scope nothing of ours can be listed; the step finds background checks off.
  }
  return getBackground();
}

/** "Check again": every formula's domains are checked anew in the background, ignoring kept results. */
export function checkFormulasAgain(): BackgroundInfo {
  const id = spreadsheetId();
  updateBackground(id, (state) => (state.refreshSince = now()));
  wakeBackground(id, now());
  return getBackground();
}

/** When this spreadsheet's next step comes: the user's trigger, or a later one when that serves another sheet. */
function nextStepAt(state: BackgroundState, d: DispatcherState): number | undefined {
  if (!running(state)) return undefined;
  if (state.wantAt === undefined) return d.hourlySince !== undefined ? d.dueAt : undefined;
  return d.dueAt !== undefined && d.dueAt >= state.wantAt ? d.dueAt : state.wantAt;
}

export function getBackground(): BackgroundInfo {
  const state = loadBackground(spreadsheetId());
  const d = loadDispatcher();
  const mode = installMode();
  const info: BackgroundInfo = {
    on: state.on,
    mode,
    cadence: mode === 'addon' && (d.hourlySince !== undefined || !state.on) ? 'hourly' : 'minute',
    steps: state.steps,
    runtimeMs: state.runtimeMs,
    creditsUsed: state.billed ?? 0,
    savedCredits: savedCredits(),
    retentionDays: retentionDays(),
    ...rowsLeft(),
  };
  const next = nextStepAt(state, d);
  if (next !== undefined) info.nextStepAt = next;
  if (state.stopped) info.stopped = state.stopped;
  const missing = missingFor('background');
  if (missing.length > 0) info.access = { missing, message: accessText(missing) };
  if (d.dropped?.length) info.dropped = d.dropped.map((n) => n.why);
  const schedule = readSchedule();
  if (schedule) info.schedule = { every: schedule.every, target: schedule.target, nextAt: schedule.nextAt };
  return info;
}

/** Rows (domains) the formulas and the job still wait for, and how long they take at the plan's pace. */
function rowsLeft(): { rowsLeft: number; leftMs?: number } {
  const spreadsheet = activeSpreadsheet();
  const baseUrl = currentBaseUrl();
  const cells = dapaFormulaCells(spreadsheet).filter((c) => !upToDate(spreadsheet, c));
  const keys = [...new Set(cells.flatMap((c) => c.keys ?? []))];
  const kept = readStoredRecords(baseUrl, keys);
  const job = loadJob(spreadsheet.getId());
  const rows =
    keys.filter((k) => !kept.has(k)).length + (job?.status === 'running' ? job.total - job.done : 0);
  const perMinute = loadWindow(baseUrl)?.limits.urlsPerMinute?.value;
  return perMinute ? { rowsLeft: rows, leftMs: Math.round((rows / perMinute) * 60_000) } : { rowsLeft: rows };
}

export function setKeepDays(days: unknown): BackgroundInfo {
  setRetentionDays(days);
  return getBackground();
}

export function setSchedule(change: ScheduleChange | null): BackgroundInfo {
  saveSchedule(change);
  const next = readSchedule()?.nextAt;
  if (next !== undefined) wakeBackground(spreadsheetId(), next);
  return getBackground();
}
