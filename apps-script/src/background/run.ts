// One background step as a run that does no I/O, as CheckRun is for a check: it is told the room the plan's window
// gives, the work (the formulas' domains, the job's rows), the time and the day's runtime left, and answers what to do
// next: check n domains, wait until a time, or end. Its step ends in one outcome (what is wanted next and why, what
// stopped it, what was billed), which the shell writes once. The decisions themselves are the planner's (planner.ts).
import type { Room } from '../../../shared';
import { earliest, type WantCause, type Wanted } from '../stores/wanted';
import { type Cadence, type Lateness, planStep } from './planner';

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
/** Work left at the end of a step without another reason to wait is taken up again this soon. */
const GO_ON_MS = 1_000;

/** What a step starts from. */
export interface RunStart {
  cadence: Cadence;
  /** No check starts after this. */
  endsAt: number;
  lateness: Lateness;
  /** The formulas' domains not kept yet, in the order they are checked. */
  pending: readonly string[];
  /** Formula results kept before this are checked again (Check again, a scheduled refresh). */
  since?: number;
  jobRunning: boolean;
  /** Rows of the job not done yet. */
  jobLeft: number;
  /** Why the step cannot work at all (no key): it ends at once and says so. */
  stopped?: string;
  /** The service answered this spreadsheet's previous step a short while ago: no single-request check first. */
  answeredLately?: boolean;
  /** When the trigger that woke the step was due, when it was set ahead of the plan's window. */
  dueAt?: number;
}

/** A check of the formulas' domains: n of these keys may be sent, reusing results kept since `since`. */
export interface FormulaCheck {
  kind: 'check';
  work: 'formulas';
  keys: string[];
  n: number;
  since?: number;
}

/** What to do next. */
export type Action =
  | FormulaCheck
  | { kind: 'check'; work: 'job'; n: number }
  | { kind: 'wait'; until: number }
  | { kind: 'end' };

/** What a check did, as the shell tells it. */
export interface Checked {
  billed: number;
  /** Formula domains done (a record, or an answer that will not change). */
  done?: readonly string[];
  /** Formula domains with a record or a final skip: their formulas show more once refreshed. */
  answered?: readonly string[];
  /** Formula domains past the monthly credit budget. */
  past?: readonly string[];
  /** The job after its turn. */
  job?: { running: boolean; left: number };
  /** Whether the check moved anything (records, rows); nothing means the window was spent elsewhere. */
  moved: boolean;
  fatal?: { code: string; message: string };
}

/** How a step ended: written once by the shell. */
export interface StepOutcome {
  /** The spreadsheet's wanted table after the step (the schedule's entry is the shell's). */
  wanted: Wanted;
  stopped?: string;
  failed: boolean;
  sent: number;
  billed: number;
  /** Formula domains still to check, past the budget, and answered in this step. */
  pending: string[];
  waiting: string[];
  answered: string[];
  jobRunning: boolean;
  /** When the step first looked at the window (for the triggers' lateness). */
  firstLook?: number;
}

export class BackgroundRun {
  private pending: string[];
  private readonly waiting: string[] = [];
  private readonly answered: string[] = [];
  private jobRunning: boolean;
  private jobLeft: number;
  private sent = 0;
  private billed = 0;
  private probed = false;
  /** The last check moved nothing: the window was spent elsewhere, or a probe was refused. */
  private stalled = false;
  private ended = false;
  private readonly wanted: Wanted = {};
  private stopped?: string;
  private failed = false;
  private firstLook?: number;

  constructor(private readonly start: RunStart) {
    this.pending = [...start.pending];
    this.jobRunning = start.jobRunning;
    this.jobLeft = start.jobLeft;
    if (start.stopped) {
      this.stopped = start.stopped;
      this.ended = true;
    }
  }

  /** Work left: the formulas' domains first, then the job's rows. */
  get left(): number {
    return this.pending.length > 0 ? this.pending.length : this.jobRunning ? this.jobLeft : 0;
  }

  /** What to do at `now`, with the window's room and the runtime the day still lets a step sleep. */
  next(now: number, room: Room, waitBudgetMs: number): Action {
    if (this.ended) return { kind: 'end' };
    this.firstLook ??= now;
    const { cadence, endsAt, lateness } = this.start;
    const budget = cadence === 'sidebar' ? Infinity : waitBudgetMs;
    if (this.stalled) {
      // Nothing came back (the window was spent elsewhere, or a probe was refused): nothing goes before the window
      // has emptied; whether to wait for it here or end is the planner's rule, as for any wait.
      this.stalled = false;
      room = { ...room, urls: 0, requests: 0, emptyAt: Math.max(now + 1000, room.emptyAt) };
    }
    const left = this.left;
    // Every execution's first request goes alone, whatever the last one saw (the address Apps Script fetches from is
    // not fixed, so a block can start between two executions): inside the check (`firstAlone`), so a step whose last
    // one was answered sends its window in one check; a first step, or one after a failure, probes as the planner says.
    const first = this.sent === 0 && !this.start.answeredLately;
    const plan = planStep({
      now,
      room,
      left,
      endsAt,
      cadence,
      lateness,
      waitBudgetMs: budget,
      first,
      probed: this.probed,
      dueAt: this.sent === 0 ? this.start.dueAt : undefined, // its window: the first one it sends
    });
    this.probed = this.sent === 0 && first && plan.kind === 'check';
    if (plan.kind === 'wait') return plan;
    if (plan.kind === 'schedule') return this.end('window', plan.at);
    if (plan.kind === 'idle') return this.end();
    this.sent += plan.n;
    return this.pending.length > 0
      ? { kind: 'check', work: 'formulas', keys: this.pending.slice(), n: plan.n, since: this.start.since }
      : { kind: 'check', work: 'job', n: plan.n };
  }

  /** What the last check did. */
  checked(now: number, result: Checked): void {
    this.billed += result.billed;
    if (result.done) {
      const done = new Set([...result.done, ...(result.past ?? [])]);
      this.pending = this.pending.filter((k) => !done.has(k));
    }
    this.answered.push(...(result.answered ?? []));
    this.waiting.push(...(result.past ?? []));
    if (result.job) {
      this.jobRunning = result.job.running;
      this.jobLeft = result.job.left;
    }
    if (result.fatal) {
      if (STOPPING.includes(result.fatal.code)) this.stopped = result.fatal.message;
      else {
        this.failed = true;
        this.end('retry', now + RETRY_FAILURE_MS);
      }
      this.ended = true;
    } else if (!result.moved) this.stalled = true;
  }

  /** How the step ends: what it wants next, with `monthTurnAt` for domains that wait for the budget. */
  outcome(now: number, monthTurnAt: number): StepOutcome {
    const wanted: Wanted = { ...this.wanted };
    const nothingWanted = earliest(wanted) === undefined;
    if (nothingWanted && !this.stopped && (this.pending.length > 0 || this.jobRunning))
      wanted.work = now + GO_ON_MS;
    else if (nothingWanted && !this.stopped && this.waiting.length > 0) wanted.month = monthTurnAt;
    return {
      wanted,
      stopped: this.stopped,
      failed: this.failed,
      sent: this.sent,
      billed: this.billed,
      pending: this.pending.slice(),
      waiting: this.waiting.slice(),
      answered: this.answered.slice(),
      jobRunning: this.jobRunning,
      firstLook: this.firstLook,
    };
  }

  private end(cause?: WantCause, at?: number): Action {
    if (cause && at !== undefined) this.wanted[cause] = at;
    this.ended = true;
    return { kind: 'end' };
  }
}
