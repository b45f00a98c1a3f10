// The window's holds: "no request before" kept per cause, so that a later hold never hides why an earlier one was
// set. The latest entry says when the next request may go; when it is the server's Retry-After, it alone decides.

/**
 * Why no request goes before a time: `retry_after`, the server named it (a 429's Retry-After; it wins over every
 * guess of the window); `rate_limit`, a backoff after a 429 or a spent minute without the server's word;
 * `failure`, a backoff after failed answers (5xx, network, unreadable).
 */
export type HoldCause = 'retry_after' | 'rate_limit' | 'failure';

/** A time before which no request goes, and why. */
export interface Hold {
  until: number;
  cause: HoldCause;
}

/** The holds by cause: each cause's own "no request before". */
export type Holds = Partial<Record<HoldCause, number>>;

/** The causes in the order that breaks a tie: the server's word first. */
const CAUSES: readonly HoldCause[] = ['retry_after', 'failure', 'rate_limit'];

export const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** Adds a hold: a cause's later time wins over its earlier one; the other causes keep theirs. */
export function addHold(holds: Holds, until: number, cause: HoldCause): void {
  if (!(until <= (holds[cause] ?? -Infinity))) holds[cause] = until;
}

/** The hold that decides "no request before": the latest (on a tie, the server's word). */
export function latestHold(holds: Holds): Hold | undefined {
  let latest: Hold | undefined;
  for (const cause of CAUSES) {
    const until = holds[cause];
    if (until !== undefined && !(latest && until <= latest.until)) latest = { until, cause };
  }
  return latest;
}

/**
 * The holds of stored snapshots in one table, each cause's latest, read with plain checks: their tables (`holds`),
 * and the single `hold` that snapshots stored before the table carry (an unknown cause there is honoured as a
 * backoff of our own). Only holds that still hold after `after` are kept.
 */
export function readHolds(after: number, ...stored: Array<{ holds?: unknown; hold?: unknown }>): Holds {
  const holds: Holds = {};
  const add = (until: unknown, cause: string) => {
    if (isNum(until) && until > after)
      addHold(holds, until, CAUSES.includes(cause as HoldCause) ? (cause as HoldCause) : 'rate_limit');
  };
  for (const s of stored) {
    const table = (s.holds || {}) as Record<string, unknown>;
    for (const cause of CAUSES) add(table[cause], cause);
    const single = s.hold as { until?: unknown; cause?: unknown } | undefined;
    if (single && typeof single.cause === 'string') add(single.until, single.cause);
  }
  return holds;
}

/**
 * The holds of stored snapshots that still hold after `after` (see readHolds), as a snapshot stores them: the table,
 * and its latest entry as `hold` for a reader of the format before the table.
 */
export function storedHolds(
  after: number,
  ...stored: Array<{ holds?: unknown; hold?: unknown }>
): {
  holds?: Holds;
  hold?: Hold;
} {
  const holds = readHolds(after, ...stored);
  const hold = latestHold(holds);
  return hold ? { holds, hold } : {};
}
