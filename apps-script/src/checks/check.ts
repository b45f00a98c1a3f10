// One check of a list of cell values against the service, as one Apps Script execution runs it: cached and kept
// results first, then the core's CheckRun driven synchronously (UrlFetchApp + Utilities.sleep) until its deadline.
import { CheckRun, type DomainRecord, type Report, runSync, runSyncAll, toEntry } from '../../../shared';
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
  /** Send every request the window allows together (UrlFetchApp.fetchAll), once the plan's maximum is known. */
  parallel?: boolean;
  /** URLs left in the whole work (a background step's): judges whether a probe is worth it, as the planner did. */
  left?: number;
}

/** Checks the values (one per input position) and returns one outcome per position. Never throws for the server. */
export function checkValues(values: readonly unknown[], options: CheckOptions): Report {
  const { baseUrl } = options;
  const distinct = [...new Set(values.map(toEntry).flatMap((e) => (e.kind === 'candidate' ? [e.key] : [])))];
  const kept = readKnown(baseUrl, distinct, options);
  const run = new CheckRun(values, {
    baseUrl,
    deadline: options.deadline,
    window: loadWindow(baseUrl),
    waitForRateLimits: options.waitForRateLimits,
    maxSend: options.maxSend,
    seed: now() % 2147483647,
    left: options.left,
    // Background steps: every request the window allows goes out together (one fetchAll per turn).
    inFlight: options.parallel ? Infinity : 1,
  });
  if (kept.known.size > 0) run.addCached(kept.known);
  const report = options.parallel
    ? runSyncAll(run, {
        sendAll: (requests) => fetchAnswers(requests, options.apiKey),
        sleep,
        now,
        cancelled: options.cancelled,
      })
    : runSync(run, {
        send: (request) => fetchAnswer(request, options.apiKey),
        sleep,
        now,
        cancelled: options.cancelled,
      });
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
