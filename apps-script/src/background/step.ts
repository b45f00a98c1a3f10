// One background step in one spreadsheet, under its step lease: look once at what it needs (its state, the key, a
// scheduled refresh now due, the job, the formulas), drive its run (run.ts) with the window's room, carry out the
// checks the run asks for, refresh what the formulas can show, and write the step's one outcome. The dispatcher (a
// trigger) and the open sidebar both run steps here; an execution's turn sets the budget.
import { outcomeText, roomIn, type WindowSnapshot } from '../../../shared';
import { checkValues, reuseOf } from '../checks/check';
import { type FormulaCell, formulaWork, keepShown } from '../checks/formulas';
import { refreshSlots } from '../checks/formula-versions';
import { advanceJob, startRefreshJob } from '../checks/job-run';
import { now, sleep } from '../platform/gas';
import { activeSpreadsheet } from '../stores/session';
import {
  type BackgroundState,
  type BackgroundStatus,
  backgroundStatus,
  dayOf,
  type DispatcherState,
  goesOn,
  loadBackground,
  loadDispatcher,
  updateBackground,
  whenNext,
} from '../stores/background-store';
import { nextMonthAt } from '../stores/credit-ledger';
import { loadJob } from '../stores/job-store';
import { moveQueue } from '../stores/check-books';
import { readQueue } from '../stores/formula-queue';
import { loadWindow } from '../stores/plan-store';
import { claimDueSchedule, readSchedule } from '../stores/schedule';
import { currentBaseUrl, storedApiKey } from '../stores/settings';
import { returnStepLease, takeStepLease } from '../stores/step-lease';
import { stepUpkeep, upkeep } from '../stores/store-compaction';
import { NO_KEY, SERVICE_KEPT_FAILING } from '../messages';
import { markStep } from '../formula/turn';
import type { Cadence } from './planner';
import { sleepBudget } from './planner';
import { BackgroundRun, type Checked, type FormulaCheck, MAX_FAILURES, type StepOutcome } from './run';

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/**
 * Each kind of turn's budget: no new check starts after `startMs`, and checks stop by `deadlineMs` (an execution may
 * run 6 minutes). A trigger's step (`minute`); an hourly step works longer, the next one is an hour away; a call of
 * the open sidebar is shorter, so the sidebar shows progress.
 */
const BUDGETS: Record<Cadence, [startMs: number, deadlineMs: number]> = {
  minute: [240_000, 300_000],
  hourly: [290_000, 330_000],
  sidebar: [20_000, 45_000],
};
/** A step this soon after one whose checks were answered sends its window in one check (its first request alone). */
const ANSWERED_LATELY_MS = 5 * 60_000;
/** A step's lease outlasts its deadline by this much (then it runs out by itself). */
const LEASE_MARGIN_MS = 60_000;

/** One execution's budget for the spreadsheets it works on, and the user's trigger as it found it. */
export interface Turn {
  cadence: Cadence;
  executionStartedAt: number;
  endsAt: number;
  deadline: number;
  dispatcher: DispatcherState;
}

/** A turn of this kind starting now; `dispatcher`: the user's trigger when the caller has just read it. */
export function turnOf(cadence: Cadence, dispatcher?: DispatcherState): Turn {
  const at = now();
  const [startMs, deadlineMs] = BUDGETS[cadence];
  return {
    cadence,
    executionStartedAt: at,
    endsAt: at + startMs,
    deadline: at + deadlineMs,
    dispatcher: dispatcher ?? loadDispatcher(),
  };
}

/** What a step works with besides the spreadsheet: the user's key, the service, the execution's turn. */
interface Context {
  turn: Turn;
  apiKey: string;
  baseUrl: string;
  startedAt: number;
}

/** What a step read of its spreadsheet once: its state, the formulas and the job. */
interface Look {
  spreadsheet: Spreadsheet;
  state: BackgroundState;
  cells: FormulaCell[];
  pending: string[];
  jobRunning: boolean;
  jobLeft: number;
  /** The step's refresh looked at every formula and none reads the legacy version columns. */
  legacyFree?: boolean;
  upkept?: boolean; // closeStep did the step's upkeep
}

/** How a step ended, as its callers read it: its outcome, the spreadsheet's status and when its next step comes. */
export interface StepResult extends StepOutcome {
  status: BackgroundStatus;
  nextAt?: number;
}

/**
 * A scheduled refresh that is due starts before the step that works on it: a range's refresh as a job, the formulas'
 * as "checked before now is checked again". Trigger steps only (the open sidebar never claims a schedule).
 */
export function startDueRefresh(spreadsheet: Spreadsheet): void {
  const at = now();
  const due = claimDueSchedule(at);
  if (due?.target === 'range' && due.range) startRefreshJob(spreadsheet, due.range, at);
  else if (due) updateBackground(spreadsheet.getId(), (s) => (s.refreshSince = at));
}

/** Reads what a step needs of its spreadsheet once (undefined: background checks are off there). */
function lookAt(spreadsheet: Spreadsheet, context: Context): Look | undefined {
  const state = loadBackground(spreadsheet.getId());
  const on = goesOn(backgroundStatus(state, context.turn.dispatcher));
  if (context.turn.cadence !== 'sidebar' && !on) return undefined;
  const job = loadJob(spreadsheet.getId());
  // The formulas not up to date, and their domains not kept yet (or checked before a refresh began).
  const { cells, pending, unkept } = formulaWork(spreadsheet, context.baseUrl, state.refreshSince);
  keepShown(context.baseUrl, unkept); // on the grid already: kept for free, never paid again
  return {
    spreadsheet,
    state,
    cells,
    pending,
    // With background checks off, the open sidebar's own loop (continueJob) runs its job, not this step.
    jobRunning: on && job?.status === 'running',
    jobLeft: job ? job.total - job.done : 0,
  };
}

/** Trigger runtime spent today, this execution's so far included. */
function usedToday(turn: Turn): number {
  const d = turn.dispatcher;
  const day = d.day === dayOf(turn.executionStartedAt) ? (d.dayRuntimeMs ?? 0) : 0;
  return day + now() - turn.executionStartedAt;
}

/**
 * Runs the step: carries out what its run asks until it ends (the window is read once per decision and handed to the
 * check), and answers the run's outcome.
 */
function drive(run: BackgroundRun, context: Context): StepOutcome {
  for (;;) {
    const window = loadWindow(context.baseUrl);
    const action = run.next(now(), roomIn(window, now(), run.left), sleepBudget(usedToday(context.turn)));
    if (action.kind === 'end') return run.outcome(now(), nextMonthAt(now()));
    if (action.kind === 'wait') sleep(action.until - now());
    else if (action.work === 'formulas') run.checked(now(), checkFormulas(action, context, window));
    else run.checked(now(), checkJob(action.n, context));
  }
}

/** Checks n of the formulas' domains (those the window allows now, side by side, no waiting). */
function checkFormulas(action: FormulaCheck, context: Context, window?: WindowSnapshot): Checked {
  const { n, since } = action;
  // What a =DAPA cell's round has in flight now is not sent beside it (the queue is the document's: a dispatcher in a
  // spreadsheet it opened by id cannot read it, and the result store is what it goes by there).
  const queue = readQueue(context.baseUrl);
  const inFlight = new Set(queue.sender && queue.sender.until > now() ? (queue.sending ?? []) : []);
  const keys = action.keys.filter((k) => !inFlight.has(k));
  markInFlight(context.baseUrl, keys.slice(0, 2 * n + 50), context.turn.deadline); // what it may send, and some
  try {
    const { apiKey, baseUrl, turn } = context;
    const mode = { kind: 'background', maxSend: n, reuse: reuseOf(false, since), left: keys.length } as const;
    return checkedOf(checkValues(keys, { mode, apiKey, baseUrl, deadline: turn.deadline, window }));
  } finally {
    markInFlight(context.baseUrl, [], 0);
  }
}

/**
 * Tells the spreadsheet's =DAPA cells what this step may send (they leave it out of their rounds), where the step
 * can reach the formulas' queue (the document's cache: not from a dispatcher in a spreadsheet it opened by id).
 */
function markInFlight(baseUrl: string, keys: readonly string[], until: number): void {
  moveQueue(baseUrl, (queue) => markStep(queue, keys, until)); // a busy lock: a domain sent twice at most
}

/** What a check of formula domains moved, for the run. */
function checkedOf(report: ReturnType<typeof checkValues>): Checked {
  const done = report.outcomes.filter((o) => o.kind === 'record' || !o.retryable).flatMap((o) => o.key ?? []);
  const final = report.outcomes.filter((o) => o.kind === 'record' || (o.kind === 'skip' && !o.retryable));
  const past = report.outcomes.filter((o) => o.kind === 'skip' && o.reason === 'credit_budget');
  return {
    billed: report.totals.billed,
    done,
    answered: final.flatMap((o) => o.key ?? []),
    past: past.flatMap((o) => o.key ?? []),
    moved: done.length + past.length > 0,
    fatal: report.fatal && { code: report.fatal.code, message: outcomeText(report.fatal) },
  };
}

/** One slice of the job in the spreadsheet the execution works in, sending at most n new domains. */
function checkJob(n: number, { apiKey, turn }: Context): Checked {
  const job = advanceJob(activeSpreadsheet(), {
    apiKey,
    pace: { kind: 'background', maxSend: n, startBy: turn.endsAt, deadline: turn.deadline },
  });
  return {
    billed: 0,
    job: { running: job.remaining, left: job.state ? job.state.total - job.state.done : 0 },
    moved: !job.remaining || job.progressed,
    fatal: job.fatal,
  };
}

/**
 * Formulas are refreshed through their version cells: those whose domains are all in (after a refresh, all); and,
 * marked not complete, those that show more than before (this step answered some of their domains) or whose rest
 * waits for the budget, so results already paid for are never held back for the rest. Nothing after a stop: a
 * recalculation would only meet the same error.
 */
function refreshShown(look: Look, outcome: StepOutcome): void {
  if (outcome.stopped) return;
  const pending = new Set(outcome.pending);
  const waiting = new Set(outcome.waiting);
  const answered = new Set(outcome.answered);
  if (pending.size === 0 && waiting.size === 0) look.state.refreshSince = undefined;
  const cells = look.cells.filter((c) => c.keys);
  const complete = new Set(cells.filter((c) => c.keys?.every((k) => !pending.has(k) && !waiting.has(k))));
  const partly = cells.filter(
    (c) => !complete.has(c) && c.keys?.some((k) => answered.has(k) || waiting.has(k)),
  );
  look.legacyFree = refreshSlots(look.spreadsheet, [...complete], partly);
}

/** Shows what the step brought (refreshShown) and writes its one outcome: counts, why it stopped, the wanted table. */
function closeStep(look: Look, outcome: StepOutcome, context: Context, holder: string): StepResult {
  const [{ spreadsheet }, { turn, startedAt }] = [look, context];
  try {
    refreshShown(look, outcome);
  } catch (error) {
    // The formulas show it at their next recalculation; the step's outcome is written whatever happens here.
    console.warn(`DAPA: formulas not refreshed (${error instanceof Error ? error.message : String(error)})`);
  }
  const { dueAt: upkeepAt } = stepUpkeep(spreadsheet, { lease: holder, legacyFree: look.legacyFree }); // one look
  look.upkept = true;
  const name = spreadsheet.getName();
  let result: StepResult | undefined;
  updateBackground(spreadsheet.getId(), (s) => {
    if (turn.cadence !== 'sidebar') {
      s.steps += 1;
      s.lastStepAt = startedAt;
      s.runtimeMs += now() - startedAt;
      if (outcome.sent > 0 && !outcome.failed && !outcome.stopped) s.answeredAt = now();
    }
    s.name = name;
    s.billed = (s.billed ?? 0) + outcome.billed;
    s.refreshSince = look.state.refreshSince;
    s.failures = outcome.failed ? (s.failures ?? 0) + 1 : 0;
    const stopped = outcome.stopped ?? (s.failures >= MAX_FAILURES ? SERVICE_KEPT_FAILING : undefined);
    if (stopped) s.stopped = stopped;
    const status = backgroundStatus(s, turn.dispatcher);
    const wanted = { ...outcome.wanted, schedule: readSchedule()?.nextAt, upkeep: upkeepAt };
    s.wanted = goesOn(status) ? wanted : {};
    result = { ...outcome, stopped, status, nextAt: whenNext(wanted)?.at };
  });
  return result as StepResult;
}

/**
 * Runs one step in a spreadsheet under its step lease (no other user's step, and no open sidebar, works it at the
 * same time); answers undefined when the lease is held elsewhere or there is nothing to do.
 */
export function runStep(spreadsheet: Spreadsheet, turn: Turn): StepResult | undefined {
  const holder = takeStepLease(turn.deadline + LEASE_MARGIN_MS);
  if (!holder) return undefined; // a step is running; it makes the next one due
  let look: Look | undefined;
  try {
    const apiKey = storedApiKey();
    const context: Context = { turn, apiKey: apiKey ?? '', baseUrl: currentBaseUrl(), startedAt: now() };
    look = lookAt(spreadsheet, context);
    if (!look || (!apiKey && turn.cadence === 'sidebar')) return undefined; // the sidebar says it itself
    const run = new BackgroundRun({
      cadence: turn.cadence,
      endsAt: turn.endsAt,
      lateness: turn.dispatcher.lateness ?? {},
      pending: look.pending,
      since: look.state.refreshSince,
      jobRunning: look.jobRunning,
      jobLeft: look.jobLeft,
      stopped: apiKey ? undefined : NO_KEY,
      answeredLately: (look.state.answeredAt ?? -Infinity) > now() - ANSWERED_LATELY_MS,
    });
    return closeStep(look, drive(run, context), context, holder);
  } finally {
    if (!look?.upkept) upkeep(spreadsheet, { lease: holder, legacyFree: look?.legacyFree }); // closeStep did not
    returnStepLease(holder);
  }
}
