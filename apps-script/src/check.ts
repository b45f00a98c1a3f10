// One check of a list of cell values against the service, as one Apps Script execution runs it: cached records
// first, then the core's CheckRun driven synchronously (UrlFetchApp + Utilities.sleep) until its deadline.
import { CheckRun, type Report, runSync } from '../../shared';
import { fetchAnswer, now, sleep } from './gas';
import { loadLearnedPlan, saveLearnedPlan } from './plan-store';
import { cacheRecords, readCachedRecords } from './result-cache';

export interface CheckOptions {
  apiKey: string;
  baseUrl: string;
  /** Absolute time (ms since epoch) by which the run stops and reports what is unfinished. */
  deadline: number;
  /** Polled between requests; when it says so, the run is cancelled (the sidebar's Cancel). */
  cancelled?: () => boolean;
}

/** Checks the values (one per input position) and returns one outcome per position. Never throws for the server. */
export function checkValues(values: readonly unknown[], options: CheckOptions): Report {
  const { apiKey, baseUrl, deadline } = options;
  const plan = loadLearnedPlan(baseUrl);
  const run = new CheckRun(values, {
    baseUrl,
    deadline,
    maxUrlsPerRequest: plan.maxUrlsPerRequest,
    pace: { requestsPerMinute: plan.requestsPerMinute, urlsPerMinute: plan.urlsPerMinute },
    seed: now() % 2147483647,
  });
  const pending = run.pendingKeys();
  if (pending.length > 0) {
    try {
      run.addCached(readCachedRecords(baseUrl, pending));
    } catch {
      // An unavailable cache only costs requests; the check goes on without it.
    }
  }
  const report = runSync(run, {
    send: (request) => fetchAnswer(request, apiKey),
    sleep,
    now,
    cancelled: options.cancelled,
  });
  try {
    cacheRecords(baseUrl, report.fresh);
  } catch {
    // Same: the records are in the report; only a later recalculation would pay for them again.
  }
  try {
    saveLearnedPlan(baseUrl, report.learned);
  } catch {
    // Learned limits are an optimisation.
  }
  return report;
}
