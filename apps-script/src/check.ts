// One check of a list of cell values against the service, as one Apps Script execution runs it: cached records
// first, then the core's CheckRun driven synchronously (UrlFetchApp + Utilities.sleep) until its deadline.
import {
  CheckRun,
  type HttpAnswer,
  type NetworkFailure,
  type Report,
  runSync,
  type SyncIo,
} from '../../shared';
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
  const io: SyncIo = { send: (request) => fetchAnswer(request, apiKey), sleep, now };
  const report = options.cancelled ? runCancellable(run, io, options.cancelled) : runSync(run, io);
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

/**
 * The core's synchronous driver loop with a cancellation check between steps (its `SyncIo` has no `cancelled`,
 * unlike `AsyncIo`): the sidebar's Cancel stops a running step before its next request.
 */
function runCancellable(run: CheckRun, io: SyncIo, cancelled: () => boolean): Report {
  for (;;) {
    if (cancelled()) run.cancel();
    const step = run.next(io.now());
    if (step.type === 'done') return run.report();
    if (step.type === 'wait') {
      // A long wait (a rate limit) is slept in slices so that Cancel is seen within a couple of seconds.
      const until = io.now() + step.ms;
      for (let left = step.ms; left > 0 && !cancelled(); left = until - io.now())
        io.sleep(Math.min(left, 2000));
      continue;
    }
    let answer: HttpAnswer | NetworkFailure;
    try {
      answer = io.send(step.request);
    } catch (error) {
      answer = { error: error instanceof Error ? error.message : String(error) };
    }
    run.receive(step.id, answer, io.now());
  }
}
