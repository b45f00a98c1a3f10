// The background engine's decisions, with no I/O: given what the plan's window allows now (the core's Room), the
// work left, the time and what earlier steps learned about trigger lateness, it says "check n now", "wait here
// until t" or "schedule the next step at t". The step's run (run.ts) asks it, and the step (step.ts) carries
// the answers out.
import type { Lateness } from '../stores/background-store';

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
 * add-on's are shared by all its users; several triggers due at once (step-trigger.ts) catch the window instead. The
 * hourly add-on run is the exception Google's rules leave (its next trigger is an hour away): it is not capped here.
 */
export function minuteSleepCap(budgetMs: number, stepWorkMs: number | undefined): number {
  return Math.min(budgetMs, Math.max(SHORT_WAIT_MS, stepWorkMs ?? STEP_WORK_PRIOR_MS));
}

/** What steps lately worked (their sleep aside), with this execution's: a moving average. */
export function observeStepWork(lately: number | undefined, workMs: number): number {
  return Math.round(lately === undefined ? workMs : 0.8 * lately + 0.2 * workMs);
}
