// The window between executions: the snapshot a shell stores as it is, read back with plain checks (JSON text or the
// parsed value, older formats included), and two snapshots of executions that started from one stored one merged.
import { type Hold, type Holds, isNum, storedHolds } from './holds';
import {
  LIMIT_NAMES,
  type Limit,
  PLAN_MEMORY_MS,
  type PlanLimits,
  PRESSURE_NAMES,
  WINDOW_MS,
} from './window';

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
  /** No request before these times, whatever the sends allow, one per cause (see holds.ts): kept until they pass. */
  holds?: Holds;
  /**
   * The latest of `holds`: the one "no request before" that snapshots stored before the table carried (they are
   * still read), written as well for a reader of that format.
   */
  hold?: Hold;
}

export interface Pressure {
  urls?: number;
  requests?: number;
  failedProbes?: number;
  /** When an inferred limit last rose (a probe or a window went past it): it was low, so probing goes on. */
  rose?: number;
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
  return Object.assign(merged, storedHolds(at, a, b));
}

/** Exact beats inferred; between two of a kind, the newer. */
function better(x: Limit | undefined, y: Limit | undefined): Limit | undefined {
  if (!x || !y) return x ?? y;
  if (x.exact !== y.exact) return x.exact ? x : y;
  return y.at > x.at ? y : x;
}

// The stored snapshot is this project's own JSON, read back with a few plain checks (a zod schema of it would add
// 10 KB to every bundle for data no server shapes).

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
  // The holds' table, or the single hold of a snapshot stored before it: each kept while it holds.
  return Object.assign(snapshot, storedHolds(now, s));
}
