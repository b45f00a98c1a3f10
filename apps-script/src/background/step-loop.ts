// One background step's loop in one spreadsheet: it asks the planner (planner.ts) what to do next and carries that
// out: check n domains (the unfinished formulas' first, then the sidebar job's rows), sleep until a time, or end and
// say when the next step is wanted. What a step reads and learns is its Step record (step.ts opens and closes it).
import { outcomeText, roomIn } from '../../../shared';
import { checkValues, reuseOf } from '../checks/check';
import type { FormulaCell } from '../checks/formulas';
import { advanceJob } from '../checks/job-run';
import { now, sleep } from '../platform/gas';
import {
  type BackgroundState,
  type BackgroundStatus,
  dayOf,
  type DispatcherState,
} from '../stores/background-store';
import { loadWindow } from '../stores/plan-store';
import { aheadMs, type Cadence, type PlanRoom, planStep, sleepBudget, type StepPlan } from './planner';

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
/** A step that failed is tried again after this long, and background checks pause after this many failures. */
export const RETRY_FAILURE_MS = 300_000;
export const MAX_FAILURES = 5;

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** One spreadsheet's turn in an execution: what it reads once, what it learns, and how it ends. */
export interface Step {
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
  /** Formula domains past the monthly credit budget: they wait for it to be raised or for the month to turn. */
  waiting: string[];
  /** Formula domains this step got a record (or a final answer) for: their formulas show more once refreshed. */
  answered: string[];
  jobRunning: boolean;
  /** Rows of the job not done yet. */
  jobLeft: number;
  sent: number;
  billed: number;
  firstLook?: number;
  next?: number;
  stopped?: string;
  failed?: boolean;
  /** Where the spreadsheet's background checks stand once the step is closed. */
  status?: BackgroundStatus;
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
export function aheadOf(step: Step, at: number): number {
  if (step.cadence !== 'minute') return at;
  return Math.max(now(), at - aheadMs(step.dispatcher.lateness ?? {}, sleepBudget(usedToday(step)) > 0));
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
    mode: {
      kind: 'background',
      maxSend: n,
      reuse: reuseOf(false, step.state.refreshSince),
      left: step.pending.length,
    },
    apiKey: step.apiKey,
    baseUrl: step.baseUrl,
    deadline: step.deadline,
  });
  step.billed += report.totals.billed;
  const done = new Set(report.outcomes.filter((o) => o.kind === 'record' || !o.retryable).map((o) => o.key));
  for (const o of report.outcomes)
    if (o.key && (o.kind === 'record' || (o.kind === 'skip' && !o.retryable))) step.answered.push(o.key);
  const past = new Set(
    report.outcomes.flatMap((o) =>
      o.kind === 'skip' && o.reason === 'credit_budget' && o.key ? [o.key] : [],
    ),
  );
  for (const key of past) done.add(key);
  step.waiting.push(...past);
  step.pending = step.pending.filter((k) => !done.has(k));
  if (!report.fatal && done.size === 0) waitForWindow(step);
  return report.fatal && { code: report.fatal.code, message: outcomeText(report.fatal) };
}

/** Trigger runtime spent today, this execution's so far included. */
function usedToday(step: Step): number {
  const d = step.dispatcher;
  const day = d.day === dayOf(step.executionStartedAt) ? (d.dayRuntimeMs ?? 0) : 0;
  return day + now() - step.executionStartedAt;
}

function decide(step: Step, first: boolean, probed: boolean): StepPlan {
  const left = workLeft(step);
  return planStep({
    now: now(),
    room: roomNow(step.baseUrl, left),
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
export function work(step: Step): void {
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
