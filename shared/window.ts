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
// The window is the one table of "not before": its sends, the server's word (X-RateLimit-*), the probes' calm, and a
// hold (a Retry-After, or a backoff) all travel in the snapshot, so every later run (=DAPA, the sidebar, a background
// step, an n8n execution) honours them alike. Times are those of the answers (never earlier than the server counted),
// so a server window has always expired when ours has.
import type { ServerRate } from './wire';

export const WINDOW_MS = 60_000;
/**
 * Calm (no pushback) before a probe above an inferred limit; it doubles after each failed probe. A URL probe goes
 * after one calm minute, and only for a run whose work left would take more than PROBE_WORTH_MINUTES at the guessed
 * rate (a short run gains little from a higher rate and would pay the probe); a 429 probe after three.
 */
const URL_CALM_MS = WINDOW_MS;
const REQUEST_CALM_MS = 3 * WINDOW_MS;
const PROBE_WORTH_MINUTES = 1.5;
/** A guess from an earlier run is probed for any work left when that saves waiting this long for a slide. */
const PROBE_WORTH_WAIT_MS = 15_000;
/** For a guess from a window seen shared with other runs (likely a share of the plan), any work left is worth it. */
const SHARED_PROBE_WORTH_MINUTES = 0;
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

/** Plain JSON. A shell stores it as it is and hands it to the next run; it never recounts it. */
export interface WindowSnapshot {
  v: 1;
  /** When it was taken (driver clock, ms). */
  at: number;
  /** Accepted requests answered in the last minute, by any run that shared this window: [answer time, URLs billed]. */
  sends: Array<[number, number]>;
  limits: PlanLimits;
  /** The server's last word on its request window (X-RateLimit-Remaining and -Reset), while it holds. */
  server?: { remaining: number; freeAt: number };
  /** When a limit last pushed back: a rate_limit_reached skip (urls) or a 429 (requests); probes that failed in a row. */
  pressure?: Pressure;
  /** No request before this time, whatever the sends allow (see Hold): kept until it has passed. */
  hold?: Hold;
}

/**
 * A time before which no request goes, and why: `retry_after`, the server named it (a 429's Retry-After; it wins over
 * every guess of the window); `rate_limit`, a backoff after a 429 or a spent minute without the server's word;
 * `failure`, a backoff after failed answers (5xx, network, unreadable).
 */
export interface Hold {
  until: number;
  cause: 'retry_after' | 'rate_limit' | 'failure';
}

interface Pressure {
  urls?: number;
  requests?: number;
  failedProbes?: number;
  /** When an inferred limit last rose (a probe or a window went past it): it was low, so probing goes on. */
  rose?: number;
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

/** The facts a probe above an inferred limit is decided on. */
export interface ProbeCase {
  /** Which limit is full: the URLs of the minute, or its requests. */
  kind: 'urls' | 'requests';
  limit: Limit;
  /** When the window is full (the time asked about). */
  start: number;
  /** When the window slides enough to send without a probe. */
  slideAt: number;
  /** When the calm after the last pushback is over (-Infinity: no pushback yet; Infinity: exact limit). */
  dueAt: number;
  /** URLs left in the work. */
  left: number;
  /** The guess rose within the last minute. */
  rising: boolean;
  /** The guess was learned before this run began to send (an earlier run's). */
  inherited: boolean;
}

/**
 * Why a probe goes or waits, one case per rule: `exact`, an exact limit is never probed; `not_calm`, the calm after
 * the last pushback ends after the slide (for a request limit: not now); `calm`, a request limit's calm is over;
 * `rising`, the guess rose within the last minute (it was low); `shared`, a guess from a minute shared with other
 * runs (a share of the plan) is probed for any work; `worth`, the work left takes longer than PROBE_WORTH_MINUTES at
 * the guess; `inherited`, an earlier run's guess is probed when that saves PROBE_WORTH_WAIT_MS of waiting for the
 * slide; `slide_near`, it would save less; `trusted`, a guess this run learned alone, with little work left.
 */
export type ProbeReason =
  'exact' | 'not_calm' | 'calm' | 'rising' | 'shared' | 'worth' | 'inherited' | 'slide_near' | 'trusted';

export interface ProbeDecision {
  go: boolean;
  because: ProbeReason;
  /** When the probe goes (go), or when the window slides (wait). */
  at: number;
}

/** Whether a probe above an inferred limit goes, and why: the first rule that applies decides. */
export function decideProbe(c: ProbeCase): ProbeDecision {
  const at = Math.max(c.start, c.dueAt);
  const go = (because: ProbeReason): ProbeDecision => ({ go: true, because, at });
  const wait = (because: ProbeReason): ProbeDecision => ({ go: false, because, at: c.slideAt });
  if (c.limit.exact) return wait('exact');
  if (c.kind === 'requests') return c.dueAt <= c.start ? go('calm') : wait('not_calm');
  if (c.dueAt >= c.slideAt) return wait('not_calm');
  if (c.rising) return go('rising');
  if (c.limit.shared && c.left > SHARED_PROBE_WORTH_MINUTES * c.limit.value) return go('shared');
  if (c.left > PROBE_WORTH_MINUTES * c.limit.value) return go('worth');
  if (!c.inherited) return wait('trusted');
  return c.slideAt - at >= PROBE_WORTH_WAIT_MS ? go('inherited') : wait('slide_near');
}

type LimitName = keyof PlanLimits;
const LIMIT_NAMES: LimitName[] = ['maxUrlsPerRequest', 'requestsPerMinute', 'urlsPerMinute'];
const PRESSURE_NAMES = ['urls', 'requests', 'failedProbes', 'rose'] as const;

export class PlanWindow {
  /** Accepted requests: answer time and URLs processed, oldest first. */
  private sends: Array<[number, number]> = [];
  readonly limits: PlanLimits = {};
  /** The server's last word on its request window: requests left, and when it frees if none are. */
  private server?: { remaining: number; freeAt: number };
  private pressure: Pressure = {};
  /** When this run began to see the server's windows (its first request); sends before it are partly unknown. */
  observedSince?: number;
  /** When the server's request count last showed requests of other runs that this window does not hold. */
  private crowdedAt = -Infinity;
  /** No request before this (see Hold); a request that goes ends it. */
  hold?: Hold;

  constructor(snapshot?: WindowSnapshot, pace: Pace = {}) {
    if (snapshot) {
      this.sends = snapshot.sends.map((s): [number, number] => [s[0], s[1]]);
      for (const name of LIMIT_NAMES) {
        const limit = snapshot.limits[name];
        if (limit) this.limits[name] = { ...limit };
      }
      if (snapshot.server) this.server = { ...snapshot.server };
      this.pressure = { ...snapshot.pressure };
      if (snapshot.hold) this.hold = { ...snapshot.hold };
    }
    if (pace.requestsPerMinute) this.limits.requestsPerMinute = exact(pace.requestsPerMinute, 0);
    if (pace.urlsPerMinute) this.limits.urlsPerMinute = exact(pace.urlsPerMinute, 0);
  }

  /** No request before `until` (the later of two holds wins). */
  holdUntil(until: number, cause: Hold['cause']): void {
    if (!this.hold || until >= this.hold.until) this.hold = { until, cause };
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
    const hold = this.hold;
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
    const recent = this.recent(now);
    const emptyAt = Math.max(
      now,
      recent.length > 0 ? recent[recent.length - 1][0] + WINDOW_MS + 1 : now,
      this.hold ? this.hold.until : now,
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
    if (this.hold && this.hold.until > now) snapshot.hold = { ...this.hold };
    return snapshot;
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

/**
 * The sends of `b` that `a` does not hold, each counted as often as it appears: a snapshot may hold equal sends
 * (requests sent together and answered at the same moment), and those are distinct sends, not one seen twice.
 */
function sendsNotIn(
  a: ReadonlyArray<readonly [number, number]>,
  b: ReadonlyArray<[number, number]>,
): Array<[number, number]> {
  const inA = new Map<string, number>();
  for (const s of a) inA.set(s.join(), (inA.get(s.join()) ?? 0) + 1);
  const extra: Array<[number, number]> = [];
  for (const s of b) {
    const n = inA.get(s.join()) ?? 0;
    if (n > 0) inA.set(s.join(), n - 1);
    else extra.push(s);
  }
  return extra;
}

/** One window from two that may overlap (two executions that started from the same stored one). */
export function mergeWindows(
  a: WindowSnapshot | undefined,
  b: WindowSnapshot | undefined,
): WindowSnapshot | undefined {
  if (!a || !b) return a ?? b;
  const at = Math.max(a.at, b.at);
  // The same history seen twice counts once: each send as often as the snapshot that has it more often.
  const sends = [...a.sends, ...sendsNotIn(a.sends, b.sends)]
    .filter((s) => s[0] > at - WINDOW_MS)
    .sort((x, y) => x[0] - y[0]);
  const limits: PlanLimits = {};
  for (const name of LIMIT_NAMES) {
    const best = better(a.limits[name], b.limits[name]);
    if (best) limits[name] = { ...best };
  }
  const merged: WindowSnapshot = { v: 1, at, sends, limits };
  const server = (a.at >= b.at ? a : b).server ?? (a.at >= b.at ? b : a).server;
  if (server && server.freeAt > at) merged.server = { ...server };
  const pressure: Pressure = {};
  for (const name of PRESSURE_NAMES) {
    const latest = Math.max(a.pressure?.[name] ?? -Infinity, b.pressure?.[name] ?? -Infinity);
    if (Number.isFinite(latest)) pressure[name] = latest;
  }
  if (Object.keys(pressure).length > 0) merged.pressure = pressure;
  const hold = !a.hold || (b.hold && b.hold.until > a.hold.until) ? b.hold : a.hold;
  if (hold && hold.until > at) merged.hold = { ...hold };
  return merged;
}

/** Exact beats inferred; between two of a kind, the newer. */
function better(x: Limit | undefined, y: Limit | undefined): Limit | undefined {
  if (!x || !y) return x ?? y;
  if (x.exact !== y.exact) return x.exact ? x : y;
  return y.at > x.at ? y : x;
}

// The stored snapshot is this project's own JSON, read back with a few plain checks (a zod schema of it would add
// 10 KB to every bundle for data no server shapes).
const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

function readLimit(x: unknown): Limit | undefined {
  const l = x as Partial<Limit> | undefined;
  if (!l || !isNum(l.value) || !isNum(l.at) || typeof l.exact !== 'boolean') return undefined;
  const limit: Limit = { value: l.value, exact: l.exact, at: l.at };
  if (l.shared === true && !l.exact) limit.shared = true;
  return limit;
}

/**
 * What a shell keeps between executions, by one rule for every shell: a stored snapshot (JSON text or the parsed
 * value) is read back with sends older than a minute dropped and limits older than PLAN_MEMORY_MS (or from the
 * future) forgotten. Exact and inferred limits are both kept, labelled; an inferred one is probed upward by the next
 * run, so a guess from a shared minute does not slow later runs. Anything unreadable is no snapshot.
 */
export function restoreWindow(stored: unknown, now: number): WindowSnapshot | undefined {
  let value = stored;
  if (typeof stored === 'string') {
    try {
      value = JSON.parse(stored);
    } catch {
      return undefined;
    }
  }
  const s = value as Partial<WindowSnapshot> | null;
  if (!s || s.v !== 1 || !isNum(s.at) || !Array.isArray(s.sends) || typeof s.limits !== 'object')
    return undefined;
  const limits: PlanLimits = {};
  for (const name of LIMIT_NAMES) {
    const limit = readLimit((s.limits as Record<string, unknown> | null)?.[name]);
    if (limit && limit.value >= 1 && limit.at > now - PLAN_MEMORY_MS && limit.at <= now + WINDOW_MS)
      limits[name] = { ...limit, value: Math.floor(limit.value) };
  }
  const snapshot: WindowSnapshot = {
    v: 1,
    at: Math.min(s.at, now),
    sends: s.sends
      .filter((x) => Array.isArray(x) && isNum(x[0]) && isNum(x[1]))
      .filter((x) => x[0] > now - WINDOW_MS && x[0] <= now + WINDOW_MS && x[1] >= 0)
      .map((x): [number, number] => [x[0], x[1]]),
    limits,
  };
  const server = s.server;
  if (server && isNum(server.remaining) && isNum(server.freeAt) && server.freeAt > now)
    snapshot.server = { remaining: server.remaining, freeAt: server.freeAt };
  const pressure: Pressure = {};
  for (const name of PRESSURE_NAMES) {
    const t = s.pressure?.[name];
    if (isNum(t)) pressure[name] = t;
  }
  if (Object.keys(pressure).length > 0) snapshot.pressure = pressure;
  const hold = s.hold;
  if (hold && isNum(hold.until) && hold.until > now && typeof hold.cause === 'string')
    snapshot.hold = { until: hold.until, cause: hold.cause };
  return snapshot;
}
