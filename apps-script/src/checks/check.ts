// One check of a list of cell values against the service, as one Apps Script execution runs it: cached and kept
// results first, then the core's CheckRun driven synchronously (UrlFetchApp + Utilities.sleep) until its deadline.
// A check is one of three modes (a formula, a sidebar turn, a background step) whose options are resolved once
// (policyOf), and spends within the user's monthly credit budget.
import {
  CheckRun,
  type DomainRecord,
  type Report,
  type RunOptions,
  runSync,
  runSyncAll,
  toEntry,
  type WindowSnapshot,
} from '../../../shared';
import { DailyLimitError, dailyLimitMet, fetchAnswer, fetchAnswers, now, sleep } from '../platform/gas';
import { holdCredits, settleCredits, type Spend } from '../stores/credit-ledger';
import { loadWindow, saveWindow } from '../stores/plan-store';
import { cacheRecords, readCachedRecords } from '../stores/result-cache';
import { addSavedCredits, readStoredRecords, storeRecords } from '../stores/result-store';
import { locked } from '../stores/storage';

/**
 * Which earlier results a check reuses: every cached and kept one, only those kept since a time (a scheduled
 * refresh; the cache is skipped), or none ("Check again").
 */
export type Reuse = { kind: 'all' } | { kind: 'since'; at: number } | { kind: 'none' };

/** The reuse of a job or a refresh: "Check again" (`fresh`), results since `since`, or all. */
export function reuseOf(fresh?: boolean, since?: number): Reuse {
  if (fresh) return { kind: 'none' };
  return since === undefined ? { kind: 'all' } : { kind: 'since', at: since };
}

/**
 * Where a check runs, which decides what it may do:
 * - `formula`: =DAPA in its 30 seconds: waits out the plan's limits, one request at a time, never keeps results
 *   (a custom function cannot write the store);
 * - `sidebar`: a turn of the sidebar's job: waits out the limits, one request at a time, keeps results, and stops
 *   when `cancelled` says so (the sidebar's Cancel);
 * - `background`: a background step (formulas or the job): sends at most `maxSend` domains (what the plan's window
 *   allows now) together with UrlFetchApp.fetchAll, never waits, keeps results.
 * `left`: URLs left in the whole work (judges whether a probe is worth it, as the planner does).
 */
export type CheckMode =
  | { kind: 'formula' }
  | { kind: 'sidebar'; reuse: Reuse; left: number; cancelled: () => boolean }
  | { kind: 'background'; reuse: Reuse; left: number; maxSend: number; cancelled?: () => boolean };

export interface Check {
  mode: CheckMode;
  apiKey: string;
  baseUrl: string;
  /** Absolute time (ms since epoch) by which the run stops and reports what is unfinished. */
  deadline: number;
  /** The plan's window as the caller just read it (a background step reads it once per decision); else read here. */
  window?: WindowSnapshot;
}

/** A mode's options, resolved once: the core's run options, the reuse and keeping of results, the driver. */
export interface Policy {
  run: Pick<RunOptions, 'waitForRateLimits' | 'maxSend' | 'left' | 'inFlight' | 'firstAlone'>;
  reuse: Reuse;
  keep: boolean;
  /** Every request the window allows goes out together (runSyncAll over fetchAll). */
  parallel: boolean;
  cancelled?: () => boolean;
}

export function policyOf(mode: CheckMode): Policy {
  if (mode.kind === 'formula') return { run: {}, reuse: { kind: 'all' }, keep: false, parallel: false };
  if (mode.kind === 'sidebar')
    return {
      run: { left: mode.left },
      reuse: mode.reuse,
      keep: true,
      parallel: false,
      cancelled: mode.cancelled,
    };
  return {
    // An execution's first request goes alone whatever the last one saw (a block may start between two).
    run: {
      waitForRateLimits: false,
      maxSend: mode.maxSend,
      left: mode.left,
      inFlight: Infinity,
      firstAlone: true,
    },
    reuse: mode.reuse,
    keep: true,
    parallel: true,
    cancelled: mode.cancelled,
  };
}

/** The distinct domain keys among cell values (what a check can be billed for at most). */
export function distinctKeys(values: readonly unknown[]): string[] {
  return [...new Set(values.map(toEntry).flatMap((e) => (e.kind === 'candidate' ? [e.key] : [])))];
}

/**
 * Checks the values (one per input position) and returns one outcome per position. Never throws for the server.
 * The check holds what it may be billed (its new domains, capped by the monthly budget left) and settles it with
 * what the service billed (credit-ledger.ts).
 */
export function checkValues(values: readonly unknown[], check: Check): Report {
  const { baseUrl, apiKey } = check;
  const policy = policyOf(check.mode);
  const distinct = distinctKeys(values);
  const kept = readKnown(baseUrl, distinct, policy.reuse);
  const want = Math.min(distinct.length - kept.known.size, policy.run.maxSend ?? Infinity);
  const spend = want > 0 ? holdCredits(apiKey, want, check.deadline + HOLD_MARGIN_MS) : undefined;
  let report: Report | undefined;
  try {
    report = drive(values, check, policy, kept, spend?.budget);
    saveLearned(baseUrl, report, kept, policy.keep);
  } finally {
    closeCheck(check, report, spend);
  }
  // Google refused a fetch for the day: what came in is kept; the caller stops and says why (never a failure of the
  // service, never retried before Google's reset).
  const limit = dailyLimitMet();
  if (limit) throw new DailyLimitError(limit);
  return report;
}

/** A hold outlives its check's deadline by this much, then counts as spent (the execution ended without settling). */
const HOLD_MARGIN_MS = 60_000;

/**
 * Keeps the window the run learned and settles its credits, in one hold of the lock (every check pays for one). A
 * check that threw before its report was billed at most what it held. A failure costs only an optimisation (the
 * window; a non-owner editor's formula may not save it) or a count: an unsettled hold counts as spent once it ends.
 */
function closeCheck({ baseUrl, apiKey }: Check, report: Report | undefined, spend: Spend | undefined): void {
  try {
    locked('user', () => {
      try {
        if (report) saveWindow(baseUrl, report.window);
      } finally {
        if (spend) settleCredits(apiKey, spend, report?.totals.billed ?? spend.budget ?? 0);
      }
    });
  } catch (error) {
    if (spend)
      console.warn(`DAPA: credits not counted (${error instanceof Error ? error.message : String(error)})`);
  }
}

function drive(
  values: readonly unknown[],
  check: Check,
  policy: Policy,
  kept: Known,
  creditBudget: number | undefined,
): Report {
  const run = new CheckRun(values, {
    baseUrl: check.baseUrl,
    deadline: check.deadline,
    window: check.window ?? loadWindow(check.baseUrl),
    seed: now() % 2147483647,
    creditBudget,
    ...policy.run,
  });
  if (kept.known.size > 0) run.addCached(kept.known);
  // Every record is cached as soon as it is in: an execution stopped later (a formula at 30 s) never pays twice.
  const received = (records: ReadonlyArray<{ key: string; record: DomainRecord }>) => {
    cacheRecords(check.baseUrl, records);
    for (const { key } of records) kept.handed.add(key);
  };
  const cancelled = () => dailyLimitMet() !== undefined || (policy.cancelled?.() ?? false);
  const driver = { sleep, now, cancelled, received };
  return policy.parallel
    ? runSyncAll(run, { ...driver, sendAll: (requests) => fetchAnswers(requests, check.apiKey) })
    : runSync(run, { ...driver, send: (request) => fetchAnswer(request, check.apiKey) });
}

/** What is already known before sending: kept results, cached ones, and how many credits the kept ones saved. */
export interface Known {
  known: Map<string, DomainRecord>;
  /** The records found in the cache (kept in the store too when the check keeps its results). */
  fromCache: Array<{ key: string; record: DomainRecord }>;
  saved: number;
  /** Fresh records already cached as they came in. */
  handed: Set<string>;
}

/** Reads the kept, then the cached results for the distinct keys (none for "Check again"). */
export function readKnown(baseUrl: string, distinct: readonly string[], reuse: Reuse): Known {
  const kept: Known = { known: new Map(), fromCache: [], saved: 0, handed: new Set() };
  if (reuse.kind === 'none' || distinct.length === 0) return kept;
  const since = reuse.kind === 'since' ? reuse.at : undefined;
  try {
    const stored = readStoredRecords(baseUrl, distinct, since);
    for (const [k, r] of stored) kept.known.set(k, r);
    kept.saved = countSaved(baseUrl, stored);
  } catch {
    // An unavailable store (or its retention unreadable today) only costs requests; the cache is still read.
  }
  try {
    const rest = distinct.filter((k) => !kept.known.has(k));
    if (since === undefined && rest.length > 0)
      for (const [key, record] of readCachedRecords(baseUrl, rest)) {
        kept.known.set(key, record);
        kept.fromCache.push({ key, record });
      }
  } catch {
    // An unavailable cache only costs requests; the check goes on without it.
  }
  return kept;
}

/** Saves what the run learned (cache, result store, window, saved credits); each failure is tolerated on its own. */
function saveLearned(baseUrl: string, report: Report, kept: Known, keep: boolean): void {
  try {
    cacheRecords(
      baseUrl,
      report.fresh.filter(({ key }) => !kept.handed.has(key)),
    );
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
