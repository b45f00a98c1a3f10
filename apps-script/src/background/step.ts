// One background step in one spreadsheet, under its step lease: read what it needs (its state, the key, a scheduled
// refresh now due, the job), run the step's loop (step-loop.ts), refresh the formulas whose domains are all in, and
// store what it learned and when the spreadsheet wants its next step. An execution's turn sets the budget.
import { formulaWork, refreshFormulas } from '../checks/formulas';
import { startRefreshJob } from '../checks/job-run';
import { now } from '../platform/gas';
import {
  backgroundStatus,
  type DispatcherState,
  goesOn,
  loadBackground,
  loadDispatcher,
  updateBackground,
} from '../stores/background-store';
import { nextMonthAt } from '../stores/credit-ledger';
import { loadJob } from '../stores/job-store';
import { claimDueSchedule, readSchedule } from '../stores/schedule';
import { currentBaseUrl, storedApiKey } from '../stores/settings';
import { returnStepLease, takeStepLease } from '../stores/step-lease';
import { NO_KEY, SERVICE_KEPT_FAILING } from '../messages';
import type { Cadence } from './planner';
import { MAX_FAILURES, type Step, work } from './step-loop';

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

/** Reads what a step needs, or says why it cannot run. */
function openStep(spreadsheet: Spreadsheet, turn: Turn): Step | string | undefined {
  const startedAt = now();
  const state = loadBackground(spreadsheet.getId());
  const on = goesOn(backgroundStatus(state, turn.dispatcher));
  if (turn.cadence !== 'sidebar' && !on) return undefined;
  const apiKey = storedApiKey();
  if (!apiKey) return NO_KEY;
  if (turn.cadence !== 'sidebar') {
    const due = claimDueSchedule(startedAt);
    if (due?.target === 'range' && due.range) startRefreshJob(spreadsheet, due.range, startedAt);
    else if (due) state.refreshSince = startedAt;
  }
  const job = loadJob(spreadsheet.getId());
  const baseUrl = currentBaseUrl();
  const step: Step = {
    spreadsheet,
    state,
    dispatcher: turn.dispatcher,
    executionStartedAt: turn.executionStartedAt,
    apiKey,
    baseUrl,
    cadence: turn.cadence,
    startedAt,
    endsAt: turn.endsAt,
    deadline: turn.deadline,
    // The formulas not up to date, and their domains not kept yet (or checked before a refresh began).
    ...formulaWork(spreadsheet, baseUrl, state.refreshSince),
    // With background checks off, the open sidebar's own loop (continueJob) runs its job, not this step.
    jobRunning: on && job?.status === 'running',
    jobLeft: job ? job.total - job.done : 0,
    waiting: [],
    answered: [],
    sent: 0,
    billed: 0,
  };
  return step;
}

/**
 * Formulas are refreshed through their version cells: those whose domains are all in (after a refresh, all); and,
 * marked not complete, those that show more than before (this step answered some of their domains) or whose rest can
 * only wait (for the budget or the month's turn), so that results already paid for are never held back for the rest.
 */
function refreshDone(step: Step): void {
  if (step.stopped) return; // stopped on an error retrying cannot fix: a recalculation would only meet it again
  const pending = new Set(step.pending);
  const waiting = new Set(step.waiting);
  const answered = new Set(step.answered);
  const refreshed = pending.size === 0 && waiting.size === 0 && step.state.refreshSince !== undefined;
  if (refreshed) step.state.refreshSince = undefined;
  const withKeys = step.cells.filter((c) => c.keys);
  const complete = withKeys.filter((c) => c.keys?.every((k) => !pending.has(k) && !waiting.has(k)));
  const partly = withKeys.filter(
    (c) => !complete.includes(c) && c.keys?.some((k) => answered.has(k) || waiting.has(k)),
  );
  refreshFormulas(step.spreadsheet, complete);
  refreshFormulas(step.spreadsheet, partly, false);
}

/** Stores what the step learned and when this spreadsheet wants its next step (or none). */
function closeStep(step: Step): void {
  const { state } = step;
  const left = step.pending.length > 0 || step.jobRunning;
  if (step.next === undefined && left) step.next = now() + 1000;
  // Domains past the budget wait for the month to turn (raising the budget wakes the step sooner).
  if (step.next === undefined && step.waiting.length > 0) step.next = nextMonthAt(now());
  const name = step.spreadsheet.getName();
  updateBackground(step.spreadsheet.getId(), (s) => {
    if (step.cadence !== 'sidebar') {
      s.steps += 1;
      s.lastStepAt = step.startedAt;
      s.runtimeMs += now() - step.startedAt;
    }
    s.name = name;
    s.billed = (s.billed ?? 0) + step.billed;
    s.refreshSince = state.refreshSince;
    s.failures = step.failed ? (s.failures ?? 0) + 1 : 0;
    if (s.failures >= MAX_FAILURES) step.stopped = SERVICE_KEPT_FAILING;
    if (step.stopped) s.stopped = step.stopped;
    step.status = backgroundStatus(s, step.dispatcher);
    if (!goesOn(step.status)) {
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
export function runStep(spreadsheet: Spreadsheet, turn: Turn): Step | undefined {
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
