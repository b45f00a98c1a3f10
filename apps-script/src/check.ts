// One check of a list of cell values against the service, as one Apps Script execution runs it: cached and kept
// results first, then the core's CheckRun driven synchronously (UrlFetchApp + Utilities.sleep) until its deadline.
import {
  CheckRun,
  classify,
  type DomainRecord,
  type Outcome,
  type Report,
  runSync,
  toEntry,
} from '../../shared';
import { fetchAnswer, now, sleep } from './gas';
import { loadLearnedPlan, saveLearnedPlan, saveRecentSends, type Send } from './plan-store';
import { cacheRecords, readCachedRecords } from './result-cache';
import { addSavedCredits, readStoredRecords, storeRecords } from './result-store';

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
}

const LEFT: Outcome = {
  kind: 'error',
  code: 'unfinished',
  message: 'Not checked yet: waiting for the plan to allow more. It will be checked next.',
  retryable: true,
};

/** Checks the values (one per input position) and returns one outcome per position. Never throws for the server. */
export function checkValues(values: readonly unknown[], options: CheckOptions): Report {
  const { apiKey, baseUrl, deadline } = options;
  const known = new Map<string, DomainRecord>();
  const keyOf = values.map((v) => {
    const entry = toEntry(v);
    return entry.kind === 'candidate' ? entry.key : undefined;
  });
  const distinct = [...new Set(keyOf.filter((k): k is string => k !== undefined))];
  const fromCache: Array<{ key: string; record: DomainRecord }> = [];
  if (!options.fresh && distinct.length > 0) {
    try {
      for (const [k, r] of readStoredRecords(baseUrl, distinct, options.since)) known.set(k, r);
      const rest = distinct.filter((k) => !known.has(k));
      if (options.since === undefined && rest.length > 0)
        for (const [key, record] of readCachedRecords(baseUrl, rest)) {
          known.set(key, record);
          fromCache.push({ key, record });
        }
    } catch {
      // An unavailable cache or store only costs requests; the check goes on without it.
    }
  }
  // Only as many new domains as the caller allows go into the run; the rest wait for a later one.
  let allowed = Infinity;
  const admitted = new Set<string>();
  if (options.maxSend !== undefined) {
    allowed = Math.max(0, Math.floor(options.maxSend));
    for (const k of distinct) if (!known.has(k) && admitted.size < allowed) admitted.add(k);
  }
  const inRun = (k: string | undefined) =>
    k === undefined || known.has(k) || allowed === Infinity || admitted.has(k);
  const positions = values.map((_, i) => i).filter((i) => inRun(keyOf[i]));
  const plan = loadLearnedPlan(baseUrl);
  const run = new CheckRun(
    positions.map((i) => values[i]),
    {
      baseUrl,
      deadline,
      maxUrlsPerRequest: plan.maxUrlsPerRequest,
      pace: { requestsPerMinute: plan.requestsPerMinute, urlsPerMinute: plan.urlsPerMinute },
      waitForRateLimits: options.waitForRateLimits,
      seed: now() % 2147483647,
    },
  );
  if (known.size > 0) run.addCached(known);
  const sends: Send[] = [];
  const report = runSync(run, {
    send: (request) => {
      const answer = fetchAnswer(request, apiKey);
      const at = now();
      if (answer.status !== 429) {
        const read = classify(answer, (JSON.parse(request.body) as { urls: unknown[] }).urls.length, at);
        sends.push([at, read.kind === 'envelope' ? read.processed : 0]);
      }
      return answer;
    },
    sleep,
    now,
    cancelled: options.cancelled,
  });
  if (positions.length < values.length) {
    const outcomes: Outcome[] = values.map(() => ({ ...LEFT }));
    positions.forEach((p, j) => (outcomes[p] = report.outcomes[j]));
    report.outcomes = outcomes;
  }
  try {
    cacheRecords(baseUrl, report.fresh);
    if (options.keep) storeRecords(baseUrl, [...fromCache, ...report.fresh]);
  } catch {
    // Same: the records are in the report; only a later recalculation would pay for them again.
  }
  try {
    saveLearnedPlan(baseUrl, report.learned);
    saveRecentSends(baseUrl, sends);
    addSavedCredits(report.totals.cached);
  } catch {
    // Learned limits, the window and the count are optimisations.
  }
  return report;
}
