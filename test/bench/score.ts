// What a user ends up with in each row, and whether it is right: the sandbox's metrics are a pure function of the
// domain, so a record shown in a row can be checked against that row's own domain (a wrong mapping is caught).
import type { Outcome } from '../../shared';
import { metricsFor } from '../sandbox/handler';

export interface Metrics {
  site_da: unknown;
  site_pa: unknown;
  site_mr: unknown;
  spam_score: unknown;
}

/** One row's result: a record, a final reason (blank, invalid), or nothing usable (an error cell). */
export type RowResult =
  { kind: 'record'; metrics: Metrics } | { kind: 'reason'; reason: string } | { kind: 'lost'; why: string };

/** Skip reasons that are the final answer for a row; the others (lookup_failed, rate_limit_reached) leave it empty. */
export const FINAL_REASONS: ReadonlySet<string> = new Set(['invalid_url_format', 'empty_url']);

export interface RowScore {
  rows: number;
  /** Rows showing the right record for their own domain. */
  records: number;
  /** Rows with a final reason (blank, not a domain). */
  reasons: number;
  /** Rows showing a record of another domain (mapped by order when the server answered in another order). */
  wrong: number;
  /** Rows left with an error or nothing. */
  empty: number;
  /** wrong + empty: rows the user has to do again. */
  lost: number;
}

function sameMetrics(shown: Metrics, row: unknown): boolean {
  if (typeof row !== 'string') return false;
  const expected = metricsFor(row);
  return (
    Number(shown.site_da) === expected.site_da &&
    Number(shown.site_pa) === expected.site_pa &&
    Number(shown.site_mr) === expected.site_mr &&
    Number(shown.spam_score) === expected.spam_score
  );
}

export function scoreRows(rows: readonly unknown[], results: readonly RowResult[]): RowScore {
  if (results.length !== rows.length) {
    throw new Error(`scoreRows: ${results.length} results for ${rows.length} rows`);
  }
  const score: RowScore = { rows: rows.length, records: 0, reasons: 0, wrong: 0, empty: 0, lost: 0 };
  results.forEach((result, i) => {
    if (result.kind === 'record') {
      if (sameMetrics(result.metrics, rows[i])) score.records += 1;
      else score.wrong += 1;
    } else if (result.kind === 'reason') score.reasons += 1;
    else score.empty += 1;
  });
  score.lost = score.wrong + score.empty;
  return score;
}

/** The core's outcome as a row shows it: retryable skips and errors leave the row without a value. */
export function rowOfOutcome(outcome: Outcome): RowResult {
  if (outcome.kind === 'record') return { kind: 'record', metrics: outcome.record };
  if (outcome.kind === 'skip' && !outcome.retryable) return { kind: 'reason', reason: outcome.reason };
  return { kind: 'lost', why: outcome.kind === 'skip' ? outcome.reason : outcome.code };
}
