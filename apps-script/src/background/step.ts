// One background step, in one module: the step that drives it, its books (what it reads and writes), the retention's
// turn, and the run and planner that decide it with no I/O. Each section below says its part.
// Over 300 lines: the step, its books and the run it drives are read together, as one step.
/// <reference types="google-apps-script" />
import { outcomeText, type Room, roomIn, type WindowSnapshot } from '../../../shared';
import { checkValues, reuseOf } from '../checks/check';
import { advanceJob, startRefreshJob } from '../checks/job-run';
import { dailyLimitOf, now, sleep } from '../platform/gas';
import { activeSpreadsheet, idOf, inSpreadsheet } from '../stores/session';
import {
  type BackgroundState,
  type BackgroundStatus,
  backgroundStatus,
  claimDueSchedule,
  dayOf,
  type DispatcherState,
  earliest,
  forgetJob,
  goesOn,
  type Lateness,
  type listBackgrounds,
  listUpkeep,
  loadBackground,
  loadDispatcher,
  loadJob,
  readSchedule,
  setUpkeepDue,
  updateBackground,
  type WantCause,
  type Wanted,
  whenNext,
} from '../stores/background-store';
import { currentBaseUrl, loadWindow, nextMonthAt, storedApiKey } from '../stores/account';
import { moveQueue, readQueue } from '../stores/books';
import { returnStepLease, takeStepLease } from '../stores/store-sheet';
import { NO_KEY, SERVICE_KEPT_FAILING } from '../messages';
import { markStep } from '../formula/turn';
import { BLOCK_ROWS, type FormulaCell, formulaWork, keepShown, refreshSlots } from '../checks/formulas';
import { forgetSaved, stepUpkeep, upkeep } from '../stores/results';

// ─── step ──────────────────────────────────────────────────────────────────────────────────────────────────────────
// One background step in one spreadsheet, under its step lease: its books (the step books section) look once at what it
// needs (its state, the job, the formulas), it drives its run (the run section) with the window's room and carries out
// the checks the run asks for, and its books close once (the formulas refreshed, the upkeep, the step's one outcome).
// The dispatcher (a trigger) and the open sidebar both run steps here; an execution's turn sets the budget.
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

// ─── step books ────────────────────────────────────────────────────────────────────────────────────────────────────
// What one background step reads and writes of its spreadsheet, in one place (one StepBooks a step): it looks once
// (the spreadsheet's background state, the job, the formulas not up to date and their domains not kept; what the
// formulas show and the store lacks is kept at once, free), and closes once: the formulas refreshed through their
// version slots, the upkeep (the step holds the lease), the step's one outcome in the background state. step.ts
// drives the run between the two.

/** A step that asked the relay cell wants the next one this soon (Sheets recalculates it meanwhile). */
const KEPT_AFTER_MS = 10 * 60_000;

/** What a step read of its spreadsheet once: its state, the formulas and the job. */
export interface Look {
  state: BackgroundState;
  cells: FormulaCell[];
  pending: string[];
  jobRunning: boolean;
  jobLeft: number;
}

export class StepBooks {
  private look?: Look;
  /** The step's refresh looked at every formula and none reads the legacy version columns. */
  private legacyFree?: boolean;
  private upkept = false;
  private relayAsked = false;

  constructor(
    private readonly spreadsheet: Spreadsheet,
    private readonly holder: string,
  ) {}

  /** Reads what the step needs of its spreadsheet once (undefined: background checks are off there). */
  open(turn: Turn, baseUrl: string): Look | undefined {
    const state = loadBackground(idOf(this.spreadsheet));
    const on = goesOn(backgroundStatus(state, turn.dispatcher));
    if (turn.cadence !== 'sidebar' && !on) return undefined;
    const job = loadJob(idOf(this.spreadsheet));
    // The formulas not up to date, and their domains not kept yet (or checked before a refresh began).
    const { cells, pending, unkept } = formulaWork(this.spreadsheet, baseUrl, state.refreshSince);
    // On the grid already: kept for free, never paid again (what the relay cell was asked, the next step keeps).
    this.relayAsked = keepShown(this.spreadsheet, baseUrl, unkept);
    return (this.look = {
      state,
      cells,
      pending,
      // With background checks off, the open sidebar's own loop (continueJob) runs its job, not this step.
      jobRunning: on && job?.status === 'running',
      jobLeft: job ? job.total - job.done : 0,
    });
  }

  /**
   * Formulas are refreshed through their version cells: those whose domains are all in (after a refresh, all), once
   * their block's are; and, marked not complete, those that show more than before (this step answered some of their
   * domains) or whose rest waits for the budget, so results already paid for are never held back for the rest. Nothing
   * after a stop: a recalculation would only meet the same error.
   */
  private refreshShown(look: Look, outcome: StepOutcome): void {
    if (outcome.stopped) return;
    const pending = new Set(outcome.pending);
    const waiting = new Set(outcome.waiting);
    const answered = new Set(outcome.answered);
    if (pending.size === 0 && waiting.size === 0) look.state.refreshSince = undefined;
    const cells = look.cells.filter((c) => c.keys);
    // A block of formulas (one version slot) is refreshed once its last domain is in: refreshing it sooner for the
    // formulas this step completed would recalculate them again with the rest, each recalculation an execution.
    const done = (c: (typeof cells)[number]) => c.keys?.every((k) => !pending.has(k) && !waiting.has(k));
    const blockOf = (c: (typeof cells)[number]) => `${c.sheetId}:${Math.floor((c.row - 1) / BLOCK_ROWS)}`;
    const unfinished = new Set(cells.filter((c) => c.keys?.some((k) => pending.has(k))).map(blockOf));
    const complete = new Set(cells.filter((c) => done(c) && !unfinished.has(blockOf(c))));
    // A formula whose domains are all in waits for its block's others (above); one with some in and some still to
    // check (a range) shows what this step answered, so a long range shows its progress.
    const partly = cells.filter((c) => !done(c) && c.keys?.some((k) => answered.has(k) || waiting.has(k)));
    this.legacyFree = refreshSlots(this.spreadsheet, [...complete], partly);
  }

  /**
   * Shows what the step brought (refreshShown), does the step's upkeep and writes its one outcome: counts, why it
   * stopped, the wanted table.
   */
  close(outcome: StepOutcome, turn: Turn, startedAt: number): StepResult {
    const look = this.look as Look;
    try {
      this.refreshShown(look, outcome);
    } catch (error) {
      // The formulas show it at their next recalculation; the step's outcome is written whatever happens here.
      console.warn(
        `DAPA: formulas not refreshed (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    const { dueAt: upkeepAt } = stepUpkeep(this.spreadsheet, {
      lease: this.holder,
      legacyFree: this.legacyFree,
    });
    this.upkept = true;
    const name = this.spreadsheet.getName();
    let result: StepResult | undefined;
    updateBackground(idOf(this.spreadsheet), (s) => {
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
      const kept = this.relayAsked ? now() + KEPT_AFTER_MS : undefined;
      const wanted = { ...outcome.wanted, schedule: readSchedule()?.nextAt, upkeep: upkeepAt, kept };
      // Stopped or off, the store's upkeep stays wanted (the retention holds on every path).
      s.wanted = goesOn(status) ? wanted : upkeepAt === undefined ? {} : { upkeep: upkeepAt };
      result = { ...outcome, stopped, status, nextAt: whenNext(wanted)?.at };
    });
    return result as StepResult;
  }

  /** The upkeep a step owes when it did not close (it ended early or threw): the step holds the lease. */
  upkeepLeft(): void {
    if (!this.upkept) upkeep(this.spreadsheet, { lease: this.holder, legacyFree: this.legacyFree });
  }
}

// ─── retention turn ────────────────────────────────────────────────────────────────────────────────────────────────
// The dispatcher's turn for the retention: the result store's upkeep in every spreadsheet of the user whose oldest
// result passed it, whatever its background checks' status, and the user's state of a spreadsheet that has been quiet
// past it forgotten. The promise of PRIVACY.md needs nobody to open the spreadsheet.

/** A spreadsheet whose upkeep is wanted this soon is served in this turn. */
const DUE_SLACK_MS = 60_000;

/**
 * The store's upkeep in every spreadsheet whose oldest result passed the retention and which no step served in this
 * turn: background checks off (never on, turned off), stopped by the service, or a bound script's (its steps leave the
 * upkeep to the hourly watch). What is left to keep sets the next upkeep; a store that keeps nothing more wants none.
 */
export function keepTheRetention(
  turn: Turn,
  served: ReadonlySet<string>,
  open: (id: string, state: BackgroundState) => Spreadsheet | undefined,
  all: ReturnType<typeof listBackgrounds>,
): void {
  const at = turn.executionStartedAt;
  for (const { id, state, at: due } of listUpkeep(all)) {
    if (served.has(id) || due > at + DUE_SLACK_MS || now() >= turn.endsAt) continue;
    const spreadsheet = open(id, state);
    if (!spreadsheet) continue;
    try {
      const { dueAt } = inSpreadsheet(spreadsheet, () => stepUpkeep(spreadsheet, {}));
      if (dueAt === undefined) forgetQuiet(id);
      setUpkeepDue(id, dueAt); // the user's trigger is set at the turn's end
    } catch (error) {
      if (dailyLimitOf(error)) throw error;
      console.warn(`DAPA: results not compacted (${error instanceof Error ? error.message : String(error)})`);
    }
  }
}

/**
 * A spreadsheet whose store keeps nothing any more has been quiet past the retention (nothing was checked there since):
 * this user's state of it goes too, its finished sidebar check and the rows to retry, and its saved-credit marks (its
 * background state goes with its upkeep entry when its checks are off: setUpkeepDue).
 */
function forgetQuiet(id: string): void {
  if (loadJob(id)?.status !== 'running') forgetJob(id);
  forgetSaved(id);
}

// ─── run ───────────────────────────────────────────────────────────────────────────────────────────────────────────
// One background step as a run that does no I/O, as CheckRun is for a check: it is told the room the plan's window
// gives, the work (the formulas' domains, the job's rows), the time and the day's runtime left, and answers what to do
// next: check n domains, wait until a time, or end. Its step ends in one outcome (what is wanted next and why, what
// stopped it, what was billed), which the shell writes once. The decisions themselves are the planner's (the planner
// section).
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

// ─── planner ───────────────────────────────────────────────────────────────────────────────────────────────────────
// The background engine's decisions, with no I/O: given what the plan's window allows now (the core's Room), the
// work left, the time and what earlier steps learned about trigger lateness, it says "check n now", "wait here
// until t" or "schedule the next step at t". The step's run (the run section) asks it, and the step (step.ts) carries
// the answers out.
/** What the core's window allows at `now` (the fields of shared/window.ts's Room the planner reads). */
export interface PlanRoom {
  urls: number;
  requests: number;
  perRequest: number;
  capacity: number;
  emptyAt: number;
}

/** What earlier steps learned about how late their triggers fired (kept in the user's trigger state). */
export type { Lateness };

/**
 * How the next step can be started: `minute`, a one-off trigger at any time (a bound script, or an add-on whose
 * one-off trigger Google accepted); `hourly`, only the add-on's hourly trigger; `sidebar`, the open sidebar calls
 * again when told (no lateness, no trigger).
 */
export type Cadence = 'minute' | 'hourly' | 'sidebar';

export interface PlanInput {
  now: number;
  room: PlanRoom;
  /** Domains left to check (Infinity when unknown, e.g. a sidebar job's rows). */
  left: number;
  /** No check starts after this (the execution's own budget). */
  endsAt: number;
  cadence: Cadence;
  lateness: Lateness;
  /** Runtime this execution may still spend sleeping (what the day's trigger-runtime budget leaves). */
  waitBudgetMs: number;
  /** Nothing has been sent in this execution yet: the first check is one request (a 403 block costs one). */
  first: boolean;
  /** The first check (one request) has just been answered: the rest of the window goes now. */
  probed?: boolean;
  /** When the trigger that woke this step was due, when it was set ahead of the window (until the step sends). */
  dueAt?: number;
}

export type StepPlan =
  | { kind: 'check'; n: number }
  | { kind: 'wait'; until: number }
  | { kind: 'schedule'; at: number }
  | { kind: 'idle' };

/** Domains handed to one check at most (and the batch while the plan's limits are unknown). */
export const CHUNK = 500;
/** A wait this short is always slept in the step. */
export const SHORT_WAIT_MS = 2_000;
/** Lateness above this is not learned (a trigger that fired minutes late is an outage, not a habit). */
export const MAX_LATENESS_MS = 90_000;

/** Until steps have learned how late their triggers are, they expect what reports say: up to about a minute. */
export const UNKNOWN_LATENESS: Required<Lateness> = { typicalMs: 30_000, lowMs: 0, highMs: 60_000 };

/**
 * How far ahead of the window the next trigger is due, for work that needs `windows` more windows and may still sleep
 * `budgetMs` today. Due early by `a`, a trigger late by L sleeps a − L in the step when early and loses L − a when
 * later. Sleeping is priced as if any lateness from none to the highest seen were as likely, about a² / 2·high a
 * window (the least lateness seen lately rises after each later trigger, and pricing by it spent a long list's budget
 * in its first hours). The budget is spread over the windows left: a short list is never late (a = the highest
 * lateness), a long one as early as the day's sleeping allows; with no budget, none is woken before its window (one
 * that woke early could not wait, and would start again: its work paid twice).
 */
export function aheadMs(known: Lateness, budgetMs: number, windows = 1): number {
  const lateness = known.highMs === undefined ? UNKNOWN_LATENESS : known;
  const high = Math.max(lateness.highMs ?? 0, lateness.typicalMs ?? 0);
  if (budgetMs <= 0) return 0;
  const affordable = Math.sqrt((2 * Math.max(1, high) * budgetMs) / Math.max(1, windows));
  return Math.min(high, affordable, budgetMs);
}

/** Windows the work left still needs at the plan's pace (at least one). */
function windowsLeft(input: PlanInput): number {
  const capacity =
    Number.isFinite(input.room.capacity) && input.room.capacity > 0 ? input.room.capacity : Infinity;
  return Math.max(1, Math.ceil(input.left / capacity));
}

/**
 * The longest wait a step sleeps through rather than ending and being woken by a (late) trigger: what it would sleep
 * anyway, woken that far ahead of the window.
 */
function longestSleep(input: PlanInput): number {
  if (input.cadence === 'sidebar') return 0; // the sidebar calls again on time; it never needs to sleep
  if (input.cadence === 'hourly') return Infinity; // the next trigger is an hour away
  return (
    SHORT_WAIT_MS +
    Math.max(plannedAhead(input), aheadMs(input.lateness, input.waitBudgetMs, windowsLeft(input)))
  );
}

/**
 * How far ahead of the window the trigger that woke the step was set: the step sleeps that much whatever the budget
 * now says of the next one (it was budgeted when the trigger was set; ending would pay the step's work again, and a
 * new trigger would be late again).
 */
function plannedAhead(input: PlanInput): number {
  return input.dueAt !== undefined
    ? Math.max(0, Math.min(MAX_LATENESS_MS, input.room.emptyAt - input.dueAt))
    : 0;
}

/** One decision of a step. */
export function planStep(input: PlanInput): StepPlan {
  const { now, room, left } = input;
  if (left <= 0) return { kind: 'idle' };
  const sendable = Math.max(0, Math.floor(Math.min(room.urls, room.requests * room.perRequest, CHUNK, left)));
  // The whole window at once: sends spread over seconds would free (and be sent again) spread out, every minute.
  const whole = Math.min(room.capacity, CHUNK, left);
  const probe = input.first && Number.isFinite(room.perRequest) ? room.perRequest : Infinity;
  if (sendable > 0 && (sendable >= whole || input.first || input.probed))
    return { kind: 'check', n: Math.min(sendable, probe) };
  const at = Math.max(now, room.emptyAt);
  const wait = at - now;
  const affordable = Math.max(input.waitBudgetMs, SHORT_WAIT_MS + plannedAhead(input));
  const canSleep = wait <= affordable && at <= input.endsAt;
  if (canSleep && (wait <= SHORT_WAIT_MS || wait <= longestSleep(input))) return { kind: 'wait', until: at };
  if (sendable > 0) return { kind: 'check', n: sendable };
  if (input.cadence === 'sidebar') return { kind: 'schedule', at };
  return {
    kind: 'schedule',
    at: Math.max(now, at - aheadMs(input.lateness, input.waitBudgetMs, windowsLeft(input))),
  };
}

/** What a step learns from how late it got to work after its trigger's due time. */
export function observeLateness(lateness: Lateness, lateMs: number): Lateness {
  const late = Math.max(0, Math.min(MAX_LATENESS_MS, lateMs));
  // The first observation moves the reported prior (0 to about a minute) instead of replacing it: one early trigger
  // says little about the next one.
  const typical = lateness.typicalMs ?? UNKNOWN_LATENESS.typicalMs;
  const low = lateness.lowMs ?? UNKNOWN_LATENESS.lowMs;
  const high = lateness.highMs ?? UNKNOWN_LATENESS.highMs;
  return {
    typicalMs: Math.round(0.7 * typical + 0.3 * late),
    lowMs: Math.round(late < low ? late : low + 0.1 * (late - low)),
    highMs: Math.round(late > high ? late : high - 0.1 * (high - late)),
  };
}

/** Google's daily trigger runtime for a consumer account ("Triggers total runtime: 90 min / day"; Workspace: 6 h). */
export const DAY_RUNTIME_MS = 90 * 60_000;

/**
 * The day's trigger runtime a step may spend sleeping: at most two thirds of the consumer quota of 90 min a day (a
 * 10,000-row job's steps spend most of it waking ahead of their windows; the rest of the quota is left to work).
 */
export const SLEEP_BUDGET_MS = 60 * 60_000;
/** Runtime of the day no step sleeps through: for what is not a step of the work left (edits, other spreadsheets). */
export const DAY_RESERVE_MS = 5 * 60_000;
const DAY_MS = 86_400_000;
/** What a step works (its sleep aside) before steps have measured it: a window of requests and a look at the sheet. */
export const STEP_WORK_PRIOR_MS = 5_000;
/**
 * What Google counts of a trigger execution that its turn cannot time: loading the script and reading the user's
 * state before the turn starts, setting the next trigger after its runtime is noted. Measured in the stand-in on the
 * 50,000-row range: 0.27 s an execution (the turns noted 9.47 of 10.21 min); counted at about twice that.
 */
export const EXECUTION_UNSEEN_MS = 500;

/**
 * Runtime left for sleeping today: what the day's trigger executions used so far (`usedTodayMs`, of which they slept
 * `sleptTodayMs`) and what the steps still to come today will take working (`workAheadMs`, workAhead) leave of the
 * quota, and at most SLEEP_BUDGET_MS of sleep a day. The work left is never starved of the quota by sleeping: Google
 * stops every trigger of the user for the rest of the day once it is spent.
 */
export function sleepBudget(usedTodayMs: number, workAheadMs = 0, sleptTodayMs = usedTodayMs): number {
  const quotaLeft = DAY_RUNTIME_MS - DAY_RESERVE_MS - usedTodayMs - workAheadMs;
  return Math.max(0, Math.min(SLEEP_BUDGET_MS - sleptTodayMs, quotaLeft));
}

/**
 * The trigger runtime the work left takes before the day's end: one step a window (`left` domains, `capacity` a
 * window, one window a minute at most), each as long as steps lately worked (`stepWorkMs`, their sleep aside; before
 * any was measured, STEP_WORK_PRIOR_MS; a window's step with what executions beside it worked: dispatcher.ts).
 */
export function workAhead(
  left: number,
  capacity: number,
  stepWorkMs: number | undefined,
  now: number,
): number {
  if (!(left > 0)) return 0;
  const each = stepWorkMs ?? STEP_WORK_PRIOR_MS;
  const windows = Number.isFinite(capacity) && capacity > 0 ? Math.ceil(left / capacity) : Infinity;
  const minutesToday = Math.ceil((DAY_MS - (now % DAY_MS)) / 60_000);
  return Math.min(windows, minutesToday) * each;
}

/**
 * The runtime a step woken by a one-off trigger may sleep: no more than a window's step works (`stepWorkMs`, as steps
 * lately measured it). A trigger execution holds one of the script's executions while it sleeps, and a published
 * add-on's are shared by all its users; several triggers due at once (dispatcher.ts) catch the window instead. The
 * hourly add-on run is the exception Google's rules leave (its next trigger is an hour away): it is not capped here.
 */
export function minuteSleepCap(budgetMs: number, stepWorkMs: number | undefined): number {
  return Math.min(budgetMs, Math.max(SHORT_WAIT_MS, stepWorkMs ?? STEP_WORK_PRIOR_MS));
}

/** What steps lately worked (their sleep aside), with this execution's: a moving average. */
export function observeStepWork(lately: number | undefined, workMs: number): number {
  return Math.round(lately === undefined ? workMs : 0.8 * lately + 0.2 * workMs);
}
