// One check of a list of cell values against the service, as one Apps Script execution runs it: cached and kept
// results first, then the core's CheckRun driven synchronously (UrlFetchApp + Utilities.sleep) until its deadline.
import {
  CheckRun,
  type DomainRecord,
  type HttpAnswer,
  type HttpRequest,
  mergeReports,
  type NetworkFailure,
  type Outcome,
  type Report,
  runSync,
  toEntry,
  type WindowSnapshot,
} from '../../../shared';
import { fetchAnswer, fetchAnswers, now, sleep } from '../platform/gas';
import { loadWindow, saveWindow } from '../stores/plan-store';
import { cacheRecords, readCachedRecords } from '../stores/result-cache';
import { addSavedCredits, readStoredRecords, storeRecords } from '../stores/result-store';

export interface CheckOptions {
  apiKey: string;
  baseUrl: string;
  /** Absolute time (ms since epoch) by which the run stops and reports what is unfinished. */
  deadline: number;
  /** Polled between requests; when it says so, the run is cancelled (the sidebar's Cancel). */
  cancelled?: () => boolean;
  /** false: end at the plan's first rate-limit wait instead of sleeping through it (background steps). */
  waitForRateLimits?: boolean;
  /** Send at most this many distinct domains; the others come back `unfinished` (what the window allows). */
  maxSend?: number;
  /** Keep fresh results in the result store (not from a custom function: it cannot write). */
  keep?: boolean;
  /** "Check again": ignore the cache and the store. */
  fresh?: boolean;
  /** Reuse only results checked since then (a scheduled refresh); the cache is skipped. */
  since?: number;
  /** Send one request per plan-sized group of domains, side by side (UrlFetchApp.fetchAll). */
  parallel?: boolean;
  /** URLs left in the whole work (a background step's): judges whether a probe is worth it, as the planner did. */
  left?: number;
}

const LEFT: Outcome = { kind: 'error', code: 'unfinished', retryable: true, detail: { why: 'not_run' } };

/** Checks the values (one per input position) and returns one outcome per position. Never throws for the server. */
export function checkValues(values: readonly unknown[], options: CheckOptions): Report {
  const { baseUrl } = options;
  const keyOf = values.map((v) => {
    const entry = toEntry(v);
    return entry.kind === 'candidate' ? entry.key : undefined;
  });
  const distinct = [...new Set(keyOf.filter((k): k is string => k !== undefined))];
  const kept = readKnown(baseUrl, distinct, options);
  const positions = admittedPositions(keyOf, distinct, kept.known, options.maxSend);
  const window = loadWindow(baseUrl);
  const perRequest = window?.limits.maxUrlsPerRequest?.value;
  // Side by side (background steps): one run per request's worth of new domains, their requests sent together.
  const groups =
    options.parallel && perRequest ? groupByRequest(positions, keyOf, kept.known, perRequest) : [positions];
  const reports = driveRuns(startRuns(values, groups, kept.known, window, options), options);
  const report =
    reports.length === 1 && groups[0].length === values.length
      ? reports[0]
      : mergeReports(
          reports.map((r, g) => ({ report: r, positions: groups[g] })),
          values.length,
          LEFT,
          window,
        );
  saveLearned(baseUrl, report, kept, options.keep);
  return report;
}

/** What is already known before sending: kept results, cached ones, and how many credits the kept ones saved. */
interface Known {
  known: Map<string, DomainRecord>;
  /** The records found in the cache (kept in the store too when the check keeps its results). */
  fromCache: Array<{ key: string; record: DomainRecord }>;
  saved: number;
}

/** Reads the kept, then the cached results for the distinct keys (none for "Check again"). */
function readKnown(baseUrl: string, distinct: readonly string[], options: CheckOptions): Known {
  const kept: Known = { known: new Map(), fromCache: [], saved: 0 };
  if (options.fresh || distinct.length === 0) return kept;
  try {
    const stored = readStoredRecords(baseUrl, distinct, options.since);
    for (const [k, r] of stored) kept.known.set(k, r);
    kept.saved = countSaved(baseUrl, stored);
    const rest = distinct.filter((k) => !kept.known.has(k));
    if (options.since === undefined && rest.length > 0)
      for (const [key, record] of readCachedRecords(baseUrl, rest)) {
        kept.known.set(key, record);
        kept.fromCache.push({ key, record });
      }
  } catch {
    // An unavailable cache or store only costs requests; the check goes on without it.
  }
  return kept;
}

/** The positions that go into the run: at most maxSend new domains; the rest wait for a later one. */
function admittedPositions(
  keyOf: ReadonlyArray<string | undefined>,
  distinct: readonly string[],
  known: ReadonlyMap<string, DomainRecord>,
  maxSend: number | undefined,
): number[] {
  let allowed = Infinity;
  const admitted = new Set<string>();
  if (maxSend !== undefined) {
    allowed = Math.max(0, Math.floor(maxSend));
    for (const k of distinct) if (!known.has(k) && admitted.size < allowed) admitted.add(k);
  }
  const inRun = (k: string | undefined) =>
    k === undefined || known.has(k) || allowed === Infinity || admitted.has(k);
  return keyOf.map((_, i) => i).filter((i) => inRun(keyOf[i]));
}

/** Groups the positions by request: each group holds at most perRequest new domains (known ones go with the first). */
function groupByRequest(
  positions: readonly number[],
  keyOf: ReadonlyArray<string | undefined>,
  known: ReadonlyMap<string, DomainRecord>,
  perRequest: number,
): number[][] {
  const fresh = [...new Set(positions.map((i) => keyOf[i]).filter((k) => k !== undefined && !known.has(k)))];
  const groupOf = new Map(fresh.map((k, j) => [k, Math.floor(j / perRequest)]));
  const groups: number[][] = [];
  for (let g = 0; g <= Math.floor((fresh.length - 1) / perRequest); g++) groups.push([]);
  if (groups.length === 0) groups.push([]);
  for (const i of positions) groups[groupOf.get(keyOf[i] as string) ?? 0].push(i);
  return groups;
}

/** One CheckRun per group of positions, all starting from the same window and the known results. */
function startRuns(
  values: readonly unknown[],
  groups: readonly number[][],
  known: ReadonlyMap<string, DomainRecord>,
  window: WindowSnapshot | undefined,
  options: CheckOptions,
): CheckRun[] {
  return groups.map((group) => {
    const run = new CheckRun(
      group.map((i) => values[i]),
      {
        baseUrl: options.baseUrl,
        deadline: options.deadline,
        window,
        waitForRateLimits: options.waitForRateLimits,
        seed: now() % 2147483647,
        left: options.left,
      },
    );
    if (known.size > 0) run.addCached(known);
    return run;
  });
}

/** Drives the runs to their reports: one run alone (cancellable), several side by side. */
function driveRuns(runs: CheckRun[], options: CheckOptions): Report[] {
  if (runs.length !== 1) return runSideBySide(runs, options.apiKey);
  const send = (request: HttpRequest) => fetchAnswer(request, options.apiKey);
  return [runSync(runs[0], { send, sleep, now, cancelled: options.cancelled })];
}

/** Saves what the run learned (cache, result store, window, saved credits); each failure is tolerated on its own. */
function saveLearned(baseUrl: string, report: Report, kept: Known, keep: boolean | undefined): void {
  try {
    cacheRecords(baseUrl, report.fresh);
  } catch {
    // The records are in the report; only a later recalculation would pay for them again.
  }
  try {
    if (keep) storeRecords(baseUrl, [...kept.fromCache, ...report.fresh]);
  } catch (error) {
    // Not kept: a later check pays for them again. Said in the execution log, never with the key.
    console.warn(`DAPA: results not kept (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    saveWindow(baseUrl, report.window);
  } catch {
    // The window is an optimisation (a non-owner editor's formula may not save it).
  }
  try {
    addSavedCredits(kept.saved);
  } catch {
    // So is the count.
  }
}

/**
 * Kept results the cache had let go would have been billed again: they count as saved once, and are cached again
 * (a recalculation within 6 hours finds them there and does not count them twice).
 */
function countSaved(baseUrl: string, stored: Map<string, DomainRecord>): number {
  if (stored.size === 0) return 0;
  const cached = readCachedRecords(baseUrl, [...stored.keys()]);
  const gone = [...stored].filter(([key]) => !cached.has(key)).map(([key, record]) => ({ key, record }));
  cacheRecords(baseUrl, gone);
  return gone.length;
}

/** Drives several runs at once: each round, every run's next request goes out in one fetchAll. */
function runSideBySide(runs: CheckRun[], apiKey: string): Report[] {
  for (;;) {
    const at = now();
    const sends: Array<{ run: CheckRun; id: number; request: HttpRequest }> = [];
    let wait = Infinity;
    for (const run of runs) {
      const step = run.next(at);
      if (step.type === 'send') sends.push({ run, id: step.id, request: step.request });
      else if (step.type === 'wait') wait = Math.min(wait, step.ms);
    }
    if (sends.length === 0 && wait === Infinity) return runs.map((r) => r.report());
    if (sends.length === 0) {
      sleep(wait);
      continue;
    }
    let answers: Array<HttpAnswer | NetworkFailure>;
    try {
      answers = fetchAnswers(
        sends.map((s) => s.request),
        apiKey,
      );
    } catch (error) {
      answers = sends.map(() => ({ error: error instanceof Error ? error.message : String(error) }));
    }
    const answeredAt = now();
    sends.forEach((s, i) => s.run.receive(s.id, answers[i], answeredAt));
  }
}
