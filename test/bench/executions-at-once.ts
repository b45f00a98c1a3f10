// Executions held at once, as Google counts them against a script's simultaneous executions (30 per user, about
// 1,000 for the script across all its users): a sweep over the start and end of every execution in a time window.
import type { ExecutionRecord } from '../apps-script/harness';

/** What the sweep reads of an execution (gas.executions gives these). */
export type ExecutionSpan = Pick<ExecutionRecord, 'startedAt' | 'elapsedMs' | 'user'>;

export interface AtOnce {
  /** Execution-milliseconds inside the window divided by the window's length. */
  average: number;
  /** The most executions running at one moment of the window. */
  most: number;
  /** The executions' milliseconds inside the window. */
  busyMs: number;
}

/**
 * The executions of `user` (default: everyone) over the window [from, to): each is clipped to the window, and one
 * still running (no elapsedMs) counts until `to`. An execution that ends at t and one that starts at t are not at
 * once (as Apps Script counts them: the first no longer runs); an execution of 0 ms counts at its moment.
 */
export function executionsAtOnce(
  list: readonly ExecutionSpan[],
  window: { from: number; to: number; user?: string },
): AtOnce {
  const { from, to, user } = window;
  if (to <= from) return { average: 0, most: 0, busyMs: 0 };
  const events = new Map<number, { starts: number; ends: number; instants: number }>();
  const at = (t: number) => {
    let e = events.get(t);
    if (!e) events.set(t, (e = { starts: 0, ends: 0, instants: 0 }));
    return e;
  };
  let busyMs = 0;
  for (const e of list) {
    if (user !== undefined && e.user !== user) continue;
    const realEnd = e.elapsedMs === undefined ? Infinity : e.startedAt + e.elapsedMs;
    // Outside the window: started at its end or later, or ended before it began (one of 0 ms at `from` is inside).
    if (e.startedAt >= to || realEnd < from || (realEnd === from && realEnd > e.startedAt)) continue;
    const start = Math.max(from, e.startedAt);
    const end = Math.min(to, realEnd);
    busyMs += end - start;
    if (end === start) at(start).instants += 1;
    else {
      at(start).starts += 1;
      at(end).ends += 1;
    }
  }
  let running = 0;
  let most = 0;
  for (const t of [...events.keys()].sort((a, b) => a - b)) {
    const e = events.get(t) as { starts: number; ends: number; instants: number };
    running -= e.ends;
    most = Math.max(most, running + e.starts + e.instants);
    running += e.starts;
  }
  return { average: busyMs / (to - from), most, busyMs };
}
