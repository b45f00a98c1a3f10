// Background checks: steps that finish unfinished =DAPA formulas, the sidebar's job and scheduled refreshes with
// nobody at the sheet (time-driven triggers) or with the sidebar open (the sidebar calls driveBackground). What a
// step does next is the planner's decision (planner.ts); this module only carries it out: reads, checks, writes.
/// <reference types="google-apps-script" />
import type { BackgroundInfo, ScheduleChange } from '../sidebar/contract';
import {
  type BackgroundState,
  deleteTriggers,
  EDIT_HANDLER,
  installMode,
  loadBackground,
  scheduleStep,
  settleTriggers,
  STEP_HANDLER,
  updateBackground,
  wakeBackground,
  WATCH_HANDLER,
} from './background-state';
import { checkValues } from './check';
import { dapaFormulaCells, type FormulaCell, isDapaFormula, refreshFormulas, upToDate } from './formulas';
import { now, sleep } from './gas';
import { advanceJob, loadJob } from './job';
import { MENU_NAME, NO_KEY } from './messages';
import {
  aheadMs,
  type Cadence,
  observeLateness,
  type PlanRoom,
  planStep,
  sleepBudget,
  type StepPlan,
} from './planner';
import { loadWindow } from './plan-store';
import { outcomeText, roomIn } from '../../shared';
import { readStoredRecords, retentionDays, savedCredits, setRetentionDays } from './result-store';
import { dueSchedule, readSchedule, saveSchedule, startScheduledRun } from './schedule';
import { currentBaseUrl, storedApiKey } from './settings';

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

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** One execution's work: what it reads once, what it learns, and how it ends. */
interface Step {
  spreadsheet: Spreadsheet;
  state: BackgroundState;
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

function spreadsheetId(): string {
  return SpreadsheetApp.getActiveSpreadsheet().getId();
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
  return Math.max(now(), at - aheadMs(step.state.lateness ?? {}, sleepBudget(usedToday(step)) > 0));
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

/** Trigger runtime spent today, this step's so far included. */
function usedToday(step: Step): number {
  const day = step.state.day === Math.floor(step.startedAt / DAY_MS) ? (step.state.dayRuntimeMs ?? 0) : 0;
  return day + now() - step.startedAt;
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
    lateness: step.state.lateness ?? {},
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

/** Reads what a step needs, or says why it cannot run. */
function openStep(cadence: Cadence, startMs: number, deadlineMs: number): Step | string | undefined {
  const startedAt = now();
  const spreadsheet = SpreadsheetApp.getActiveSpreadsheet();
  const state = loadBackground(spreadsheet.getId());
  if (cadence !== 'sidebar' && (!state.on || state.stopped)) return undefined;
  const apiKey = storedApiKey();
  if (!apiKey) return NO_KEY;
  const schedule = cadence === 'sidebar' ? undefined : dueSchedule(startedAt);
  if (schedule) startScheduledRun(spreadsheet, schedule, (since) => (state.refreshSince = since));
  const job = loadJob(spreadsheet.getId());
  const step: Step = {
    spreadsheet,
    state,
    apiKey,
    baseUrl: currentBaseUrl(),
    cadence,
    startedAt,
    endsAt: startedAt + startMs,
    deadline: startedAt + deadlineMs,
    cells: [],
    pending: [],
    // With background checks off, the open sidebar's own loop (continueJob) runs its job, not this step.
    jobRunning: state.on && !state.stopped && job?.status === 'running',
    jobLeft: job ? job.total - job.done : 0,
    sent: 0,
    billed: 0,
  };
  formulaWork(step);
  return step;
}

/** Stores what the step learned and makes the next one due (or none). */
function closeStep(step: Step): void {
  const { state } = step;
  const left = step.pending.length > 0 || step.jobRunning;
  if (step.next === undefined && left) step.next = now() + 1000;
  // The server's word wins: no check before a Retry-After later than the window's guess (state.resumeAt). The step
  // that waits for it is still due ahead of it by the triggers' lateness, like one that waits for the window.
  if (step.next !== undefined && (step.resumeAt ?? 0) > step.next)
    step.next = Math.max(step.next, aheadOf(step, step.resumeAt as number));
  updateBackground(step.spreadsheet.getId(), (s) => {
    const day = Math.floor(step.startedAt / DAY_MS);
    const ran = now() - step.startedAt;
    if (step.cadence !== 'sidebar') {
      s.steps += 1;
      s.lastStepAt = step.startedAt;
      s.runtimeMs += ran;
      s.dayRuntimeMs = (s.day === day ? (s.dayRuntimeMs ?? 0) : 0) + ran;
      s.day = day;
      if (step.firstLook !== undefined && s.dueAt !== undefined && s.forWindow && s.hourlySince === undefined)
        s.lateness = observeLateness(s.lateness ?? {}, step.firstLook - s.dueAt);
    }
    s.billed = (s.billed ?? 0) + step.billed;
    const resumeAt = Math.max(s.resumeAt ?? 0, step.resumeAt ?? 0);
    s.resumeAt = resumeAt > now() ? resumeAt : undefined;
    s.refreshSince = state.refreshSince;
    s.failures = step.failed ? (s.failures ?? 0) + 1 : 0;
    if (s.failures >= MAX_FAILURES) step.stopped = 'The DAPA service kept failing; background checks paused.';
    if (step.stopped) s.stopped = step.stopped;
    if (!s.on || s.stopped) return;
    const scheduleNext = readSchedule()?.nextAt;
    const at = Math.min(step.next ?? Infinity, scheduleNext ?? Infinity);
    s.forWindow = step.next !== undefined && at === step.next;
    if (Number.isFinite(at)) scheduleStep(s, at);
    else settleTriggers(s);
  });
  if (step.stopped) stopTriggers(step.spreadsheet.getId());
}

/** Runs one step under the document lock; answers whether the lock was had. */
function runStep(cadence: Cadence, startMs: number, deadlineMs: number): Step | undefined {
  const lock = LockService.getDocumentLock();
  if (!lock.tryLock(10_000)) return undefined; // a step is running; it makes the next one due
  try {
    const step = openStep(cadence, startMs, deadlineMs);
    if (typeof step === 'string') {
      if (cadence !== 'sidebar') updateBackground(spreadsheetId(), (s) => (s.stopped = step));
      return undefined;
    }
    if (!step) return undefined;
    work(step);
    refreshDone(step);
    closeStep(step);
    return step;
  } finally {
    lock.releaseLock();
  }
}

/** Whether steps come hourly here (an add-on whose one-off triggers Google refused). */
function hourlyHere(): boolean {
  return loadBackground(spreadsheetId()).hourlySince !== undefined;
}

/** Runs one background step: the time-driven trigger's handler (the add-on's hourly dispatcher too). */
export function dapaBackgroundStep(_event?: unknown): void {
  if (hourlyHere()) runStep('hourly', HOURLY_START_MS, HOURLY_DEADLINE_MS);
  else runStep('minute', STEP_START_MS, STEP_DEADLINE_MS);
}

/** The open sidebar's call: one short step at the plan's pace; the answer says when to call again. */
export function driveBackground(): BackgroundInfo {
  const step = runStep('sidebar', DRIVE_START_MS, DRIVE_DEADLINE_MS);
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
  if (!hourlyHere() || !dapaEdit(event)) {
    wakeBackground(spreadsheetId(), now() + AFTER_EDIT_MS);
    return;
  }
  sleep(AFTER_EDIT_MS);
  runStep('hourly', HOURLY_START_MS, HOURLY_DEADLINE_MS);
}

/**
 * The bound script's hourly watch: revives the steps when a due one never ran (the day's trigger runtime was
 * spent, or Google dropped the trigger), so work resumes by itself, the next day at worst.
 */
export function dapaBackgroundWatch(_event?: unknown): void {
  const id = spreadsheetId();
  const state = loadBackground(id);
  if (state.on && !state.stopped && state.dueAt !== undefined && state.dueAt < now() - 600_000)
    wakeBackground(id, now());
}

function stopTriggers(id: string): void {
  updateBackground(id, (s) => {
    deleteTriggers(STEP_HANDLER, WATCH_HANDLER, EDIT_HANDLER);
    s.triggerId = s.dueAt = s.hourlySince = undefined;
  });
}

/** Creates the triggers of background checks; on any refusal removes what it created and says what to do. */
function installTriggers(state: BackgroundState): void {
  deleteTriggers(STEP_HANDLER, WATCH_HANDLER, EDIT_HANDLER);
  try {
    ScriptApp.newTrigger(EDIT_HANDLER)
      .forSpreadsheet(SpreadsheetApp.getActiveSpreadsheet())
      .onEdit()
      .create();
    if (installMode() === 'bound') ScriptApp.newTrigger(WATCH_HANDLER).timeBased().everyHours(1).create();
    state.hourlySince = undefined;
    scheduleStep(state, now() + 1000);
  } catch {
    deleteTriggers(STEP_HANDLER, WATCH_HANDLER, EDIT_HANDLER);
    state.on = false;
    state.triggerId = state.dueAt = undefined;
    throw new Error(
      'Background checks could not start: Google refused a trigger in this spreadsheet, and none was left ' +
        'installed. Keep the sidebar open to finish formulas and checks, or remove other triggers of this ' +
        'add-on (Extensions › Apps Script › Triggers) and turn background checks on again.',
    );
  }
}

/** Turns background checks on (menu or sidebar: where the authorization prompt belongs) and starts a step. */
export function startBackground(): BackgroundInfo {
  if (!storedApiKey()) throw new Error(NO_KEY);
  let failure: Error | undefined;
  updateBackground(spreadsheetId(), (state) => {
    state.on = true;
    state.stopped = undefined;
    state.failures = 0;
    try {
      installTriggers(state);
    } catch (error) {
      failure = error as Error;
    }
  });
  if (failure) throw failure;
  const hourly = loadBackground(spreadsheetId()).hourlySince !== undefined;
  SpreadsheetApp.getActiveSpreadsheet().toast(
    hourly
      ? 'Background checks are on, hourly (Google’s rule for add-ons): keep the sidebar open for the plan’s pace.'
      : 'Background checks are on: unfinished formulas and sidebar checks go on with the sheet closed.',
    MENU_NAME,
  );
  return getBackground();
}

export function stopBackground(): BackgroundInfo {
  const id = spreadsheetId();
  updateBackground(id, (state) => (state.on = false));
  stopTriggers(id);
  return getBackground();
}

/** "Check again": every formula's domains are checked anew in the background, ignoring kept results. */
export function checkFormulasAgain(): BackgroundInfo {
  const id = spreadsheetId();
  updateBackground(id, (state) => (state.refreshSince = now()));
  wakeBackground(id, now());
  return getBackground();
}

export function getBackground(): BackgroundInfo {
  const state = loadBackground(spreadsheetId());
  const mode = installMode();
  const info: BackgroundInfo = {
    on: state.on,
    mode,
    cadence: mode === 'addon' && (state.hourlySince !== undefined || !state.on) ? 'hourly' : 'minute',
    steps: state.steps,
    runtimeMs: state.runtimeMs,
    creditsUsed: state.billed ?? 0,
    savedCredits: savedCredits(),
    retentionDays: retentionDays(),
    ...rowsLeft(),
  };
  if (state.dueAt !== undefined && state.on) info.nextStepAt = state.dueAt;
  if (state.stopped) info.stopped = state.stopped;
  const schedule = readSchedule();
  if (schedule) info.schedule = { every: schedule.every, target: schedule.target, nextAt: schedule.nextAt };
  return info;
}

/** Rows (domains) the formulas and the job still wait for, and how long they take at the plan's pace. */
function rowsLeft(): { rowsLeft: number; leftMs?: number } {
  const spreadsheet = SpreadsheetApp.getActiveSpreadsheet();
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
