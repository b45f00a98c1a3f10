// The plan's window: the one place that knows what the last minute of this key's sends used and what the plan allows.
// A run starts from a snapshot of earlier executions' window (a formula, a background step, another n8n execution),
// adds its own sends, learns limits from the server's pushback, and hands its snapshot back for the shell to store.
// Limits are exact (a 422's stated maximum, the server's X-RateLimit-Limit, a value the user set) or inferred (from a
// minute that other runs may have shared): an inferred limit is a guess, so a run held back by it alone sends a probe
// (a rate_limit_reached skip bills nothing) once there has been no pushback for a minute, and the guess rises again.
// A guess learned while the window held other runs' sends, or while the server's request count showed runs it cannot
// see, is labelled shared: it is a share, so it is probed whatever work is left. A guess inherited from an earlier
// run is probed for any work left too when that saves a long wait for the window to slide.
// Which of those rules sends a probe is one decision with a named case per rule (decideProbe).
// The window is the one table of "not before": its sends, the server's word (X-RateLimit-*), the probes' calm, and
// its holds (a Retry-After, or a backoff; one per cause, holds.ts) all travel in the snapshot (window-snapshot.ts),
// so every later run (=DAPA, the sidebar, a background step, an n8n execution) honours them alike. Times are those of
// the answers (never earlier than the server counted), so a server window has always expired when ours has.
import { type HoldCause, type Holds, addHold, latestHold, readHolds, storedHolds } from './holds';
import type { Learned } from './outcome';
import { type ProbeCase, type ProbeDecision, decideProbe } from './probe';
import type { ServerRate } from './wire';
import type { Pressure, WindowSnapshot } from './window-snapshot';

export { decideProbe, type ProbeCase, type ProbeDecision, type ProbeReason } from './probe';
export type { WindowSnapshot } from './window-snapshot';

export const WINDOW_MS = 60_000;
/**
 * Calm (no pushback) before a probe above an inferred limit; it doubles after each failed probe. A URL probe goes
 * after one calm minute (and only when it is worth it: see probe.ts); a 429 probe after three.
 */
const URL_CALM_MS = WINDOW_MS;
const REQUEST_CALM_MS = 3 * WINDOW_MS;
/** Learned limits older than this are learned again: the plan may have changed. */
export const PLAN_MEMORY_MS = 7 * 24 * 3600 * 1000;

/** A limit of the plan and how it is known; `at` is when it was learned (driver clock). */
export interface Limit {
  value: number;
  exact: boolean;
  at: number;
  /**
   * An inferred limit learned from a window that held other runs' sends as well as this run's (known from the
   * snapshot it started from, or from the server's request count): a share of the minute, likely below the plan's
   * rate, so probing it is worth more.
   */
  shared?: true;
}

export interface PlanLimits {
  maxUrlsPerRequest?: Limit;
  requestsPerMinute?: Limit;
  urlsPerMinute?: Limit;
}

/** What the window allows at a time. Infinity where a limit is unknown. */
export interface Room {
  /** URLs that may be sent now (a probe's batch included when one is due). */
  urls: number;
  /** Requests that may be sent now. */
  requests: number;
  /** URLs per request: the plan's maximum, or Infinity when unknown. */
  perRequest: number;
  /** URLs a whole empty window holds. */
  capacity: number;
  /** When the room next grows (the time asked about when there is room then). */
  freeAt: number;
  /** When every send in the window has left it. */
  emptyAt: number;
  /** Whether the room includes a probe above an inferred limit. */
  probe: boolean;
}

/** Rate limits a caller states (tests, benchmarks, a known plan): taken as exact. */
export interface Pace {
  requestsPerMinute?: number;
  urlsPerMinute?: number;
}

/** When the next request may go, how many URLs it carries, and whether it is a probe above an inferred limit. */
export interface Slot {
  at: number;
  urls: number;
  probe: boolean;
}

type LimitName = keyof PlanLimits;
export const LIMIT_NAMES: LimitName[] = ['maxUrlsPerRequest', 'requestsPerMinute', 'urlsPerMinute'];
export const PRESSURE_NAMES = ['urls', 'requests', 'failedProbes', 'rose'] as const;

export class PlanWindow {
  /** Accepted requests: answer time and URLs processed, oldest first. */
  private sends: Array<[number, number]> = [];
  readonly limits: PlanLimits = {};
  /** The server's last word on its request window: requests left, and when it frees if none are. */
  private server?: { remaining: number; freeAt: number };
  private pressure: Pressure = {};
  /**
   * When this run began to see the server's windows (its first request); sends before it are partly unknown. Set by
   * `sent`; tests set it to place a run's first request.
   */
  observedSince?: number;
  /** When the server's request count last showed requests of other runs that this window does not hold. */
  private crowdedAt = -Infinity;
  /** No request before these, one per cause (see holds.ts); a request that goes ends them. */
  private holds: Holds = {};

  constructor(snapshot?: WindowSnapshot, pace: Pace = {}) {
    if (snapshot) {
      this.sends = snapshot.sends.map((s): [number, number] => [s[0], s[1]]);
      for (const name of LIMIT_NAMES) {
        const limit = snapshot.limits[name];
        if (limit) this.limits[name] = { ...limit };
      }
      if (snapshot.server) this.server = { ...snapshot.server };
      this.pressure = { ...snapshot.pressure };
      this.holds = readHolds(-Infinity, snapshot);
    }
    if (pace.requestsPerMinute) this.limits.requestsPerMinute = exact(pace.requestsPerMinute, 0);
    if (pace.urlsPerMinute) this.limits.urlsPerMinute = exact(pace.urlsPerMinute, 0);
  }

  /** No request before `until`, for `cause` (a cause's later hold wins; other causes keep theirs). */
  holdUntil(until: number, cause: HoldCause): void {
    addHold(this.holds, until, cause);
  }

  /** Whether the hold of `cause` lasts until `at` (a wait to `at` is for it). */
  heldFor(cause: HoldCause, at: number): boolean {
    const until = this.holds[cause];
    return until !== undefined && at <= until;
  }

  /** A request goes at `now`: the holds have passed, and the run sees the server's windows from its first request. */
  sent(now: number): void {
    this.holds = {};
    this.observedSince ??= now;
  }

  /** When the sends from before this run's first request (other runs') have all left the window. */
  othersGoneAt(now: number): number {
    return (this.observedSince ?? now) + WINDOW_MS + 1;
  }

  /** What is known of the plan, as plain numbers (for display and for a shell's own batch sizing). */
  learned(): Learned {
    const learned: Learned = {};
    for (const name of LIMIT_NAMES) {
      const limit = this.limits[name];
      if (limit) learned[name] = limit.value;
    }
    return learned;
  }

  /** A request was accepted (not 429) and processed `n` URLs; a window that held more than an inferred limit raises it. */
  accepted(now: number, processed: number): void {
    this.sends.push([now, processed]);
    this.forget(now - WINDOW_MS);
    this.rise('urlsPerMinute', this.urlsIn(now), now);
    this.rise('requestsPerMinute', this.recent(now).length, now);
  }

  /** The plan's maximum URLs per request: from a 422's stated number (exact) or by halving (inferred). */
  learnMaximum(now: number, value: number, stated: boolean): void {
    this.limits.maxUrlsPerRequest = { value, exact: stated, at: now };
  }

  /**
   * A 429: the accepted requests in the last minute are what the plan allows. With a `Retry-After`, that guess
   * holds only if the server's window frees when ours would (within `slack`); a window that frees much sooner is
   * not a per-minute limit of these requests (a shorter window, or other clients), so nothing is learned.
   * Returns the estimate, or 0.
   */
  learnRequestLimit(now: number, retryAt?: number, slack = 5000, probe = false): number {
    this.pushedBack('requests', now, probe);
    if (this.server !== undefined) return 0; // the server states its limit: nothing to guess
    const recent = this.recent(now);
    if (recent.length === 0) return 0;
    if (retryAt !== undefined && Math.abs(recent[0][0] + WINDOW_MS - retryAt) > slack) return 0;
    return this.infer('requestsPerMinute', recent.length, now);
  }

  /**
   * A `rate_limit_reached` skip: the URLs processed in the last minute are what the plan allows. After a failed
   * probe the guess is likelier right, so the next probe waits twice as long (up to 24 minutes).
   */
  learnUrlLimit(now: number, probe = false): number {
    this.pushedBack('urls', now, probe);
    return this.infer('urlsPerMinute', this.urlsIn(now), now);
  }

  /** The server's throttle headers: its limit replaces any guess, and its remaining count gates the next send. */
  heard(now: number, rate: ServerRate): void {
    if (rate.limit !== undefined && rate.limit > 0) this.limits.requestsPerMinute = exact(rate.limit, now);
    if (rate.remaining === undefined) return;
    const ours = this.recent(now);
    const limit = this.limits.requestsPerMinute?.value;
    // With no reset time: our own sliding window frees it when all the window's requests are ours; otherwise
    // (another client shares the key) a whole window from now is the latest it can free.
    const freeAt =
      rate.resetAt ??
      (limit !== undefined && ours.length >= limit
        ? ours[ours.length - limit][0] + WINDOW_MS + 1
        : now + WINDOW_MS);
    this.server = { remaining: rate.remaining, freeAt };
    // The server counts every client of the key: more requests in its window than this run's window holds are
    // other runs' it cannot see (another queue worker, another process), so a URL guess of this minute is a share.
    if (limit !== undefined && limit - rate.remaining > ours.length) {
      this.crowdedAt = now;
      const upm = this.limits.urlsPerMinute;
      if (upm && !upm.exact && upm.at > now - WINDOW_MS) upm.shared = true;
    }
  }

  /**
   * When the next request may go, how many URLs it may carry (at most `wanted`), and whether it is a probe (see
   * decideProbe). A hold comes first (the server's Retry-After alone decides); `inFlight` (the URLs of each request
   * sent and not answered yet) count as sent now.
   */
  plan(now: number, wanted: number, left = Infinity, inFlight: readonly number[] = []): Slot {
    const hold = latestHold(this.holds);
    const start = hold ? Math.max(now, hold.until) : now;
    if (hold && hold.cause === 'retry_after') return { at: start, urls: wanted, probe: false };
    const sends = this.sends.concat(inFlight.map((n): [number, number] => [start, n]));
    let at = start;
    let probe = false;
    const rpm = this.limits.requestsPerMinute;
    if (this.server !== undefined) {
      // The server's count is exact (it includes other clients of the key): it alone decides.
      if (this.server.remaining - inFlight.length <= 0) at = Math.max(at, this.server.freeAt);
    } else if (rpm !== undefined) {
      const recent = sends.filter((s) => s[0] > at - WINDOW_MS);
      if (recent.length >= rpm.value) {
        const slideAt = recent[recent.length - rpm.value][0] + WINDOW_MS + 1;
        probe = this.probeCase('requests', rpm, at, slideAt, left).go;
        if (!probe) at = slideAt;
      }
    }
    const upm = this.limits.urlsPerMinute;
    if (upm === undefined) return { at, urls: wanted, probe };
    // Slide the window forward from `at` until at least one URL fits, then send what fits (up to `wanted`).
    const recent = sends.filter((s) => s[0] > at - WINDOW_MS);
    let used = recent.reduce((sum, s) => sum + s[1], 0);
    const full = used >= upm.value;
    const from = at;
    for (let i = 0; used >= upm.value && i < recent.length; i++) {
      used -= recent[i][1];
      at = Math.max(at, recent[i][0] + WINDOW_MS + 1);
    }
    const urls = full && this.probeCase('urls', upm, from, at, left);
    if (urls && urls.go) return { at: urls.at, urls: wanted, probe: true };
    return { at, urls: Math.max(1, Math.min(wanted, upm.value - used)), probe };
  }

  /** The facts a probe above `limit` is decided on (see decideProbe), for a window full from `start` to `slideAt`. */
  private probeCase(
    kind: ProbeCase['kind'],
    limit: Limit,
    start: number,
    slideAt: number,
    left: number,
  ): ProbeDecision {
    const calm = kind === 'urls' ? URL_CALM_MS : REQUEST_CALM_MS;
    return decideProbe({
      kind,
      limit,
      start,
      slideAt,
      dueAt: this.probeDueAt(limit, this.pressure[kind], calm),
      left,
      rising: (this.pressure.rose ?? -Infinity) > start - WINDOW_MS,
      inherited: limit.at < (this.observedSince ?? start),
    });
  }

  /** What the window allows at `now` (see Room), for work of `left` URLs (whether a probe is worth it). */
  room(now: number, left = Infinity): Room {
    const perRequest = this.limits.maxUrlsPerRequest?.value ?? Infinity;
    const rpm = this.limits.requestsPerMinute?.value ?? Infinity;
    const upm = this.limits.urlsPerMinute?.value ?? Infinity;
    const hold = latestHold(this.holds);
    const recent = this.recent(now);
    const emptyAt = Math.max(
      now,
      recent.length > 0 ? recent[recent.length - 1][0] + WINDOW_MS + 1 : now,
      hold ? hold.until : now,
    );
    const capacity = Math.min(upm, rpm * perRequest);
    const slot = this.plan(now, Number.MAX_SAFE_INTEGER, left);
    if (slot.at > now)
      return { urls: 0, requests: 0, perRequest, capacity, freeAt: slot.at, emptyAt, probe: false };
    // The plan lets one request go now: how many more its limits leave, and a probe's one batch above a guess.
    const slots = this.server !== undefined ? this.server.remaining : rpm - recent.length;
    const requests = Math.max(1, slots);
    const used = this.urlsIn(now);
    const urls = upm === Infinity ? Infinity : used >= upm ? Math.min(perRequest, upm) : upm - used;
    return {
      urls: Math.min(urls, requests * perRequest),
      requests,
      perRequest,
      capacity,
      freeAt: now,
      emptyAt,
      probe: slot.probe,
    };
  }

  /** The window as it stands at `now`, to hand to the next run. */
  snapshot(now: number): WindowSnapshot {
    const snapshot: WindowSnapshot = {
      v: 1,
      at: now,
      sends: this.recent(now).map((s): [number, number] => [s[0], s[1]]),
      limits: {},
    };
    for (const name of LIMIT_NAMES) {
      const limit = this.limits[name];
      if (limit) snapshot.limits[name] = { ...limit };
    }
    if (this.server && this.server.freeAt > now) snapshot.server = { ...this.server };
    if (this.pressure.urls !== undefined || this.pressure.requests !== undefined)
      snapshot.pressure = { ...this.pressure };
    return Object.assign(snapshot, storedHolds(now, { holds: this.holds }));
  }

  /**
   * A guess from what the window held when the server pushed back. An exact limit is never replaced; a known guess
   * is not lowered from a partly seen window (sends from before this run may share it), but it may rise.
   */
  private infer(name: 'requestsPerMinute' | 'urlsPerMinute', seen: number, now: number): number {
    const known = this.limits[name];
    if (seen === 0 || known?.exact) return 0;
    const partial = this.observedSince !== undefined && this.observedSince > now - WINDOW_MS;
    const since = this.observedSince ?? now;
    const shared = this.recent(now).some((s) => s[0] < since) || this.crowdedAt > now - WINDOW_MS;
    if (known && partial && seen < known.value) {
      // Not lowered from a partly seen window; but other runs' sends in it say that the guess is a share.
      if (shared) known.shared = true;
      return 0;
    }
    this.limits[name] = shared
      ? { value: seen, exact: false, at: now, shared }
      : { value: seen, exact: false, at: now };
    return seen;
  }

  /** A limit pushed back at `now`; a failed probe doubles the calm before the next one (up to 8 times). */
  private pushedBack(name: 'urls' | 'requests', now: number, probe: boolean): void {
    this.pressure[name] = now;
    if (probe) this.pressure.failedProbes = Math.min(3, (this.pressure.failedProbes ?? 0) + 1);
  }

  /** An inferred limit that the window has gone past without pushback is raised to what the window held. */
  private rise(name: 'requestsPerMinute' | 'urlsPerMinute', held: number, now: number): void {
    const known = this.limits[name];
    if (!known || known.exact || held <= known.value) return;
    this.limits[name] = { value: held, exact: false, at: now };
    this.pressure.failedProbes = 0;
    this.pressure.rose = now;
  }

  /**
   * When a probe above `limit` is due: after `base` ms with no pushback, doubled per failed probe (-Infinity: now;
   * Infinity: never, the limit is exact).
   */
  private probeDueAt(limit: Limit, pushedBackAt: number | undefined, base: number): number {
    if (limit.exact) return Infinity;
    if (pushedBackAt === undefined) return -Infinity;
    return pushedBackAt + base * 2 ** (this.pressure.failedProbes ?? 0);
  }

  private recent(now: number): Array<[number, number]> {
    return this.sends.filter((s) => s[0] > now - WINDOW_MS);
  }

  private urlsIn(now: number): number {
    return this.recent(now).reduce((sum, s) => sum + s[1], 0);
  }

  private forget(before: number): void {
    while (this.sends.length > 0 && this.sends[0][0] <= before - WINDOW_MS) this.sends.shift();
  }
}

function exact(value: number, at: number): Limit {
  return { value, exact: true, at };
}

/** What the window allows at `now` for work of `left` URLs, from a stored snapshot (nothing known: Infinity). */
export function roomIn(window: WindowSnapshot | undefined, now: number, left = Infinity): Room {
  return new PlanWindow(window).room(now, left);
}
