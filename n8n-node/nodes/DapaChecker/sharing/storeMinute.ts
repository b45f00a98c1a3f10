// The key's minute across workers as pure transitions (no I/O, no clock: `now` is given), in the style of the core's
// machines: which of the run's sends the store has not been told of, whether a reserved request goes now or waits
// (and how long), what to write to the store after answers (the plan's lessons, the sends, the reservations to free),
// and when the heartbeat of the claims is due. session.ts drives it, the store and the clock.
import { mergeWindows, type WindowSnapshot } from '../../../../shared/index';
import { PlanWindow } from '../../../../shared/window';

/** A request sent: when, and how many URLs. */
export type Send = [number, number];

/** What this execution knows of the shared minute and has still to tell the store. */
export interface SharedMinute {
  /** Every send seen so far (this run's and the store's), to find the run's new ones. */
  seen: Send[];
  /** The run's sends the store has not been told of. */
  unsent: Send[];
  /** The plan last kept in the store (planOf), not to keep it again. */
  keptPlan: string;
  /** How many reservations this execution made: each one's number in its entry. */
  reserved: number;
  /** Requests answered that the run has not taken in yet. */
  untaken: number;
  /** Reservations of answered requests, freed after their sends are in the store (flush). */
  answered: string[];
}

export function emptyMinute(): SharedMinute {
  return { seen: [], unsent: [], keptPlan: '', reserved: 1, untaken: 0, answered: [] };
}

/** The multiset difference a - b of sends. */
export function sendsNotIn(a: ReadonlyArray<Send>, b: ReadonlyArray<Send>): Send[] {
  const count = new Map<string, number>();
  for (const s of b) count.set(s.join(), (count.get(s.join()) ?? 0) + 1);
  return a.filter((s) => {
    const n = count.get(s.join()) ?? 0;
    if (n > 0) count.set(s.join(), n - 1);
    return n === 0;
  });
}

/**
 * The run's window (`mine`) against the others' (`others`): its sends not seen before join those to tell the store
 * (when it is up), and every send of both is seen from now on.
 */
export function noteSends(
  minute: SharedMinute,
  mine: WindowSnapshot,
  others: WindowSnapshot | undefined,
  storeUp: boolean,
): void {
  if (storeUp) minute.unsent.push(...sendsNotIn(mine.sends, minute.seen));
  minute.seen = mergeWindows(mine, others)?.sends ?? mine.sends;
}

/** A new reservation's entry among every worker's requests in flight: unique, with its URLs and its time. */
export function reservation(minute: SharedMinute, owner: string, urls: number, now: number): string {
  return `${owner}:${minute.reserved++}:${urls}:${now}`;
}

/**
 * When the key's minute, as every worker filled it, has room for a request of `urls` URLs after those reserved
 * before it. The run decided what to send; this only waits for room, and never goes above a guessed limit on its
 * own (a probe): the window holds every worker's sends, so the guess is the plan's, and when the calm after a
 * refusal ended, every waiting request of every worker would otherwise go at once into a full minute.
 */
export function roomFor(window: WindowSnapshot | undefined, now: number, urls: number, before: number[]) {
  const plan = new PlanWindow(window && { ...window, pressure: { ...window.pressure, rose: undefined } });
  plan.observedSince = -Infinity;
  return plan.plan(now, urls, 0, before);
}

/** A reserved request goes now, or waits this long (then the store is read again and it asks again). */
export type ReserveStep = { go: true } | { go: false; waitMs: number };

/**
 * Whether a reserved request of `urls` URLs goes now, given the merged window (this run's and every worker's), the
 * URLs of the requests reserved before it, and when it gives up waiting (it then goes: the run's deadline, or a
 * minute). While no execution knows the minute's URL limit, one request at a time goes across workers: the one the
 * service refuses teaches it to all (kept in the store before its reservation is freed), not one per worker. A wait
 * goes in slices of at most `sliceMs` (the claims are renewed between them, or another worker would take them).
 */
export function reserveStep(
  window: WindowSnapshot | undefined,
  now: number,
  urls: number,
  before: number[],
  giveUpAt: number,
  sliceMs: number,
): ReserveStep {
  const slot = roomFor(window, now, urls, before);
  const alone = window?.limits.urlsPerMinute !== undefined || before.length === 0;
  if ((slot.at <= now && slot.urls >= urls && alone) || now >= giveUpAt) return { go: true };
  return { go: false, waitMs: Math.min(Math.max(slot.at - now, 250), giveUpAt - now, sliceMs) };
}

/** A request was answered; the run has not taken it in yet. */
export function requestAnswered(minute: SharedMinute): void {
  minute.untaken += 1;
}

/** The run took in an answer. */
export function requestTaken(minute: SharedMinute): void {
  minute.untaken = Math.max(0, minute.untaken - 1);
}

/** An answered request's reservation: freed at the next flush. */
export function requestBack(minute: SharedMinute, entry: string): void {
  minute.answered.push(entry);
}

/** What a window says of the plan, to compare: each limit's value and label, and how the limits last pushed back. */
export function planOf(window: WindowSnapshot | undefined): string {
  const limits = Object.entries(window?.limits ?? {}).map(([name, l]) => [name, l?.value, l?.exact]);
  return JSON.stringify([limits, window?.pressure?.urls, window?.pressure?.requests]);
}

/**
 * The run's plan to keep in the store, if it changed since last kept and the store (as last read: it only gains
 * lessons) does not hold it already; undefined otherwise.
 */
export function planToKeep(
  minute: SharedMinute,
  run: WindowSnapshot | undefined,
  stored: WindowSnapshot | undefined,
): WindowSnapshot | undefined {
  const plan = planOf(run);
  if (!run || plan === minute.keptPlan) return undefined;
  minute.keptPlan = plan;
  return planOf(mergeWindows(stored, run)) !== planOf(stored) ? run : undefined;
}

/**
 * The sends to add to the store's minute and the reservations to free with them. Until every answered request has
 * been taken in, none is freed: one answered and not yet taken in would be neither in flight nor sent for the other
 * workers (a run may have several requests out at once).
 */
export function toFlush(minute: SharedMinute): { sends: Send[]; freed: string[] } {
  const freed = minute.untaken > 0 ? [] : minute.answered.splice(0);
  return { sends: minute.unsent.splice(0), freed };
}

/** The heartbeat of this execution's claims in the store. */
export interface Heartbeat {
  renewedAt: number;
  /** It holds for a request out (the longer lease) until the next renewal. */
  sendingLease: boolean;
}

/** The heartbeat is due when `every` ms passed since the last; when due, it is renewed now (at the usual lease). */
export function renewalDue(beat: Heartbeat, now: number, every: number): boolean {
  if (now - beat.renewedAt < every) return false;
  beat.renewedAt = now;
  beat.sendingLease = false;
  return true;
}

/** Before a request goes: the longer lease is taken once (when claims are held) until the next renewal. */
export function longerForSend(beat: Heartbeat, now: number, holdsClaims: boolean): boolean {
  if (!holdsClaims || beat.sendingLease) return false;
  beat.renewedAt = now;
  beat.sendingLease = true;
  return true;
}

/** A request is back: the next step renews at the usual lease (a worker that dies then frees them a minute later). */
export function requestReturned(beat: Heartbeat): void {
  beat.renewedAt = -Infinity;
}
