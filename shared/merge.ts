// One report for positions that several runs checked side by side (each run a part of the positions): every
// outcome in its place, every total kept (records + skips + errors = inputs), the windows merged into one.
import type { Learned, Outcome, Report, Totals } from './outcome';
import { mergeWindows, sendsNotIn, WINDOW_MS, type WindowSnapshot } from './window';

export interface ReportPart {
  report: Report;
  /** The input positions this run checked, in the order of its own outcomes. */
  positions: readonly number[];
}

function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/** Sums the totals of the runs, then recounts what depends on the positions: outcomes per kind, reason and code. */
function mergeTotals(parts: readonly ReportPart[], outcomes: readonly Outcome[]): Totals {
  const totals: Totals = {
    inputs: outcomes.length,
    records: 0,
    skips: 0,
    errors: 0,
    blanks: 0,
    distinct: 0,
    cached: 0,
    requests: 0,
    billed: 0,
    retries: 0,
    waitedMs: 0,
    skippedByReason: {},
    errorsByCode: {},
    responses: { rateLimited: 0, limitExceeded: 0, transient: 0 },
  };
  const keys = new Set<string>();
  for (const { report } of parts) {
    const t = report.totals;
    totals.cached += t.cached;
    totals.requests += t.requests;
    totals.billed += t.billed;
    totals.retries += t.retries;
    totals.waitedMs = Math.max(totals.waitedMs, t.waitedMs); // side by side: the waits overlap
    add(totals.responses, t.responses);
  }
  for (const o of outcomes) {
    if (o.kind === 'record') totals.records += 1;
    else if (o.kind === 'skip') {
      totals.skippedByReason[o.reason] = (totals.skippedByReason[o.reason] ?? 0) + 1;
      if (o.blank) totals.blanks += 1;
    } else totals.errorsByCode[o.code] = (totals.errorsByCode[o.code] ?? 0) + 1;
    if (o.key !== undefined) keys.add(o.key);
  }
  totals.skips = Object.values(totals.skippedByReason).reduce((a, b) => a + b, 0);
  totals.errors = Object.values(totals.errorsByCode).reduce((a, b) => a + b, 0);
  totals.distinct = keys.size;
  return totals;
}

/**
 * The window after runs that each started from `base` went side by side: the base's sends once, then every run's
 * own sends, even where two runs sent as many URLs at the same moment (a plain merge would see one send there).
 */
function sideBySide(windows: readonly WindowSnapshot[], base: WindowSnapshot | undefined) {
  const merged = windows.reduce<WindowSnapshot | undefined>((w, next) => mergeWindows(w, next), base);
  if (!merged) return undefined;
  const baseSends = base?.sends ?? [];
  const sends = [...baseSends, ...windows.flatMap((w) => sendsNotIn(baseSends, w.sends))];
  merged.sends = sends.filter((s) => s[0] > merged.at - WINDOW_MS).sort((x, y) => x[0] - y[0]);
  return merged;
}

/**
 * Merges the reports of runs that checked parts of `size` positions, each run started from the window `base`; a
 * position no run checked gets `filler` (for example "unfinished: not sent yet"). A limit learned by any run holds
 * for all (the smallest wins).
 */
export function mergeReports(
  parts: readonly ReportPart[],
  size: number,
  filler: Outcome,
  base?: WindowSnapshot,
): Report {
  if (parts.length === 1 && parts[0].positions.length === size && parts[0].positions.every((p, i) => p === i))
    return parts[0].report;
  const outcomes: Outcome[] = Array.from({ length: size }, () => ({ ...filler }));
  for (const { report, positions } of parts) positions.forEach((p, j) => (outcomes[p] = report.outcomes[j]));
  const learned: Learned = {};
  for (const { report } of parts)
    for (const [k, v] of Object.entries(report.learned) as Array<[keyof Learned, number]>)
      learned[k] = Math.min(learned[k] ?? Infinity, v);
  const resumes = parts.map((p) => p.report.resumeAt).filter((t): t is number => t !== undefined);
  const window = sideBySide(
    parts.map((p) => p.report.window),
    base,
  );
  const merged: Report = {
    outcomes,
    totals: mergeTotals(parts, outcomes),
    learned,
    fresh: parts.flatMap((p) => p.report.fresh),
    window: window ?? { v: 1, at: 0, sends: [], limits: {} },
  };
  const fatal = parts.find((p) => p.report.fatal)?.report.fatal;
  if (fatal) merged.fatal = fatal;
  else if (resumes.length > 0) merged.resumeAt = Math.max(...resumes);
  return merged;
}
