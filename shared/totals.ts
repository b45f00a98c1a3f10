// The report's counts: what a run did (requests, billed queries, retries, waits, answers that were not an envelope)
// and what its outcomes add up to, one per input position.
import type { Outcome, Totals } from './outcome';

/** What a run counts as it goes; the outcomes' own counts are added when the report is made. */
export interface RunCounts {
  requests: number;
  billed: number;
  retries: number;
  waitedMs: number;
  cached: number;
  rateLimited: number;
  limitExceeded: number;
  transient: number;
}

export function newCounts(): RunCounts {
  return {
    requests: 0,
    billed: 0,
    retries: 0,
    waitedMs: 0,
    cached: 0,
    rateLimited: 0,
    limitExceeded: 0,
    transient: 0,
  };
}

/** The totals of a run: its outcomes (one per input position), its `distinct` domain keys and its counts. */
export function totalsOf(outcomes: readonly Outcome[], distinct: number, c: RunCounts): Totals {
  const skippedByReason: Record<string, number> = {};
  const errorsByCode: Record<string, number> = {};
  let records = 0;
  let blanks = 0;
  for (const o of outcomes) {
    if (o.kind === 'record') records += 1;
    else if (o.kind === 'skip') {
      skippedByReason[o.reason] = (skippedByReason[o.reason] ?? 0) + 1;
      if (o.blank) blanks += 1;
    } else errorsByCode[o.code] = (errorsByCode[o.code] ?? 0) + 1;
  }
  const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
  return {
    inputs: outcomes.length,
    records,
    skips: sum(skippedByReason),
    errors: sum(errorsByCode),
    blanks,
    distinct,
    cached: c.cached,
    requests: c.requests,
    billed: c.billed,
    retries: c.retries,
    waitedMs: c.waitedMs,
    skippedByReason,
    errorsByCode,
    responses: { rateLimited: c.rateLimited, limitExceeded: c.limitExceeded, transient: c.transient },
  };
}
