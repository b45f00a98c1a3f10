// One background step in one spreadsheet, under its step lease: its books (step-books.ts) look once at what it needs
// (its state, the job, the formulas), it drives its run (run.ts) with the window's room and carries out the checks the
// run asks for, and its books close once (the formulas refreshed, the upkeep, the step's one outcome). The dispatcher (a
// trigger) and the open sidebar both run steps here; an execution's turn sets the budget.
import { outcomeText, roomIn, type WindowSnapshot } from '../../../shared';
import { checkValues, reuseOf } from '../checks/check';
import { advanceJob, startRefreshJob } from '../checks/job-run';
import { now, sleep } from '../platform/gas';
import { activeSpreadsheet, idOf } from '../stores/session';
import {
  type BackgroundStatus,
  dayOf,
  type DispatcherState,
  loadDispatcher,
  updateBackground,
} from '../stores/background-store';
import { nextMonthAt } from '../stores/credit-ledger';
import { moveQueue } from '../stores/check-books';
import { readQueue } from '../stores/formula-queue';
import { loadWindow } from '../stores/plan-store';
import { claimDueSchedule } from '../stores/schedule';
import { currentBaseUrl, storedApiKey } from '../stores/settings';
import { returnStepLease, takeStepLease } from '../stores/step-lease';
import { NO_KEY } from '../messages';
import { markStep } from '../formula/turn';
import type { Cadence } from './planner';
import { CHUNK, minuteSleepCap, sleepBudget, workAhead } from './planner';
import { BackgroundRun, type Checked, type FormulaCheck, type StepOutcome } from './run';
import { StepBooks } from './step-books';

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
  /** What the execution slept so far (the rest of its runtime is work). */
  sleptMs: number;
  /** A step it was due to run was running already (another execution held the step lease). */
  leaseTaken?: boolean;
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
    sleptMs: 0,
  };
}

/** What a step works with besides the spreadsheet: the user's key, the service, the execution's turn. */
interface Context {
  turn: Turn;
  apiKey: string;
  baseUrl: string;
  startedAt: number;
  /** The domains the step told the spreadsheet's =DAPA cells it may send (cleared when its run ends). */
  marked?: Set<string>;
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
  else if (due) updateBackground(idOf(spreadsheet), (s) => (s.refreshSince = at));
}

/** When the trigger that started this execution was due, when it was set ahead of the plan's window (else none). */
function wokenAheadAt(turn: Turn): number | undefined {
  const { dueAt, forWindow } = turn.dispatcher;
  return turn.cadence === 'minute' && forWindow && dueAt !== undefined && dueAt <= turn.executionStartedAt
    ? dueAt
    : undefined;
}

/** Trigger runtime spent today and what of it was sleep, this execution's so far included. */
function usedToday(turn: Turn): { usedMs: number; sleptMs: number } {
  const d = turn.dispatcher;
  const today = d.day === dayOf(turn.executionStartedAt);
  return {
    usedMs: (today ? (d.dayRuntimeMs ?? 0) : 0) + now() - turn.executionStartedAt,
    sleptMs: (today ? (d.daySleptMs ?? 0) : 0) + turn.sleptMs,
  };
}

/**
 * Runs the step: carries out what its run asks until it ends (the window is read once per decision and handed to the
 * check), and answers the run's outcome; what it marked in flight for the =DAPA cells is cleared at the end.
 */
function drive(run: BackgroundRun, context: Context): StepOutcome {
  try {
    return driveRun(run, context);
  } finally {
    if (context.marked) markInFlight(context.baseUrl, [], 0);
  }
}

/** drive's loop: one decision of the run at a time (the sleep budget leaves the day's work its runtime). */
function driveRun(run: BackgroundRun, context: Context): StepOutcome {
  const { turn } = context;
  for (;;) {
    const window = loadWindow(context.baseUrl);
    const room = roomIn(window, now(), run.left);
    const ahead = workAhead(run.left, room.capacity, turn.dispatcher.stepWorkMs, now());
    const { usedMs, sleptMs } = usedToday(turn);
    const budget = sleepBudget(usedMs, ahead, sleptMs);
    const sleepable = turn.cadence === 'minute' ? minuteSleepCap(budget, turn.dispatcher.stepWorkMs) : budget;
    const action = run.next(now(), room, sleepable);
    if (action.kind === 'end') return run.outcome(now(), nextMonthAt(now()));
    if (action.kind === 'wait') {
      const from = now();
      sleep(action.until - from);
      turn.sleptMs += now() - from;
    } else if (action.work === 'formulas') run.checked(now(), checkFormulas(action, context, window));
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
  // What it may send, and some: marked once for the step's checks that stay inside it (the window's probe, then its
  // rest), and cleared when the step's run ends.
  const sending = keys.slice(0, 2 * n + 50);
  if (!context.marked || sending.slice(0, n).some((k) => !context.marked?.has(k))) {
    markInFlight(context.baseUrl, sending, context.turn.deadline);
    context.marked = new Set(sending);
  }
  const { apiKey, baseUrl, turn } = context;
  const mode = { kind: 'background', maxSend: n, reuse: reuseOf(false, since), left: keys.length } as const;
  // The check looks at a slice of what is left, not at all of it: a 50,000-row range would read 46,000 cached
  // entries a step (92 cache calls) to send 60. What the slice finds cached or kept is done here, and the run's
  // next check takes the next slice when the window still has room.
  const slice = keys.slice(0, Math.max(CHUNK, 4 * n));
  return checkedOf(checkValues(slice, { mode, apiKey, baseUrl, deadline: turn.deadline, window }));
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
 * Runs one step in a spreadsheet under its step lease (no other user's step, and no open sidebar, works it at the
 * same time); answers undefined when the lease is held elsewhere or there is nothing to do.
 */
export function runStep(spreadsheet: Spreadsheet, turn: Turn): StepResult | undefined {
  const holder = takeStepLease(turn.deadline + LEASE_MARGIN_MS);
  if (!holder) {
    turn.leaseTaken = true;
    return undefined; // a step is running; it makes the next one due
  }
  const books = new StepBooks(spreadsheet, holder);
  try {
    const apiKey = storedApiKey();
    const context: Context = { turn, apiKey: apiKey ?? '', baseUrl: currentBaseUrl(), startedAt: now() };
    const look = books.open(turn, context.baseUrl);
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
      dueAt: wokenAheadAt(turn),
    });
    return books.close(drive(run, context), turn, context.startedAt);
  } finally {
    books.upkeepLeft(); // when the step did not close
    returnStepLease(holder);
  }
}
