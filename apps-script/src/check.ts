// One check of a list of cell values against the service, as one Apps Script execution runs it: cached and kept
// results first, then the core's CheckRun driven synchronously (UrlFetchApp + Utilities.sleep) until its deadline.
import {
  CheckRun,
  classify,
  type DomainRecord,
  type HttpAnswer,
  type HttpRequest,
  type NetworkFailure,
  type Outcome,
  type Report,
  runSync,
  toEntry,
} from '../../shared';
import { fetchAnswer, fetchAnswers, now, sleep } from './gas';
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
  /** Send one request per plan-sized group of domains, side by side (UrlFetchApp.fetchAll). */
  parallel?: boolean;
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
  let saved = 0;
  if (!options.fresh && distinct.length > 0) {
    try {
      const stored = readStoredRecords(baseUrl, distinct, options.since);
      for (const [k, r] of stored) known.set(k, r);
      saved = countSaved(baseUrl, stored);
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
  // Side by side (background steps): one run per request's worth of new domains, their requests sent together.
  const groups: number[][] = [positions];
  const perRequest = plan.maxUrlsPerRequest;
  if (options.parallel && perRequest) {
    const fresh = [
      ...new Set(positions.map((i) => keyOf[i]).filter((k) => k !== undefined && !known.has(k))),
    ];
    const groupOf = new Map(fresh.map((k, j) => [k, Math.floor(j / perRequest)]));
    groups.length = 0;
    for (let g = 0; g <= Math.floor((fresh.length - 1) / perRequest); g++) groups.push([]);
    if (groups.length === 0) groups.push([]);
    for (const i of positions) groups[groupOf.get(keyOf[i] as string) ?? 0].push(i);
  }
  const runs = groups.map((group) => {
    const run = new CheckRun(
      group.map((i) => values[i]),
      {
        baseUrl,
        deadline,
        maxUrlsPerRequest: perRequest,
        pace: { requestsPerMinute: plan.requestsPerMinute, urlsPerMinute: plan.urlsPerMinute },
        waitForRateLimits: options.waitForRateLimits,
        seed: now() % 2147483647,
      },
    );
    if (known.size > 0) run.addCached(known);
    return run;
  });
  const sends: Send[] = [];
  const note = (request: HttpRequest, answer: HttpAnswer, at: number) => {
    if (answer.status === 429) return;
    const read = classify(answer, (JSON.parse(request.body) as { urls: unknown[] }).urls.length, at);
    sends.push([at, read.kind === 'envelope' ? read.processed : 0]);
  };
  const reports =
    runs.length === 1
      ? [
          runSync(runs[0], {
            send: (request) => {
              const answer = fetchAnswer(request, apiKey);
              note(request, answer, now());
              return answer;
            },
            sleep,
            now,
            cancelled: options.cancelled,
          }),
        ]
      : runSideBySide(runs, apiKey, note);
  const report = merge(reports, groups, values.length);
  try {
    cacheRecords(baseUrl, report.fresh);
  } catch {
    // Same: the records are in the report; only a later recalculation would pay for them again.
  }
  try {
    if (options.keep) storeRecords(baseUrl, [...fromCache, ...report.fresh]);
  } catch (error) {
    // Not kept: a later check pays for them again. Said in the execution log, never with the key.
    console.warn(`DAPA: results not kept (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    saveLearnedPlan(baseUrl, report.learned);
    saveRecentSends(baseUrl, sends);
    addSavedCredits(saved);
  } catch {
    // Learned limits, the window and the count are optimisations.
  }
  return report;
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
function runSideBySide(
  runs: CheckRun[],
  apiKey: string,
  note: (request: HttpRequest, answer: HttpAnswer, at: number) => void,
): Report[] {
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
    sends.forEach((s, i) => {
      const answer = answers[i];
      if (!('error' in answer)) note(s.request, answer, answeredAt);
      s.run.receive(s.id, answer, answeredAt);
    });
  }
}

/** One report for the positions of several runs (group g holds the positions its run checked, in order). */
function merge(reports: Report[], groups: number[][], size: number): Report {
  if (reports.length === 1 && groups[0].length === size) return reports[0];
  const outcomes: Outcome[] = Array.from({ length: size }, () => ({ ...LEFT }));
  groups.forEach((group, g) => group.forEach((p, j) => (outcomes[p] = reports[g].outcomes[j])));
  const totals = { ...reports[0].totals, errorsByCode: {} as Record<string, number> };
  for (const r of reports.slice(1)) {
    totals.requests += r.totals.requests;
    totals.billed += r.totals.billed;
    totals.retries += r.totals.retries;
  }
  for (const o of outcomes)
    if (o.kind === 'error') totals.errorsByCode[o.code] = (totals.errorsByCode[o.code] ?? 0) + 1;
  const learned = { ...reports[0].learned };
  for (const r of reports.slice(1))
    for (const [k, v] of Object.entries(r.learned) as Array<[keyof typeof learned, number]>)
      learned[k] = Math.min(learned[k] ?? Infinity, v);
  const resumes = reports.map((r) => r.resumeAt).filter((t): t is number => t !== undefined);
  return {
    outcomes,
    totals,
    learned,
    fresh: reports.flatMap((r) => r.fresh),
    fatal: reports.find((r) => r.fatal)?.fatal,
    resumeAt: resumes.length > 0 ? Math.max(...resumes) : undefined,
  };
}
