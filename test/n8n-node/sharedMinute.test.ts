// Issue 35's queue-mode scenario on virtual time (virtualCluster.ts): 40 executions of lists of 10 overlapping by
// half (205 distinct domains), 5 workers x 2, one entry-plan key (5 URLs a request, 60 a minute) shared through the
// store, against the sandbox's own counts. Each case is one fixed ordering of answers, drawn from its seed: the
// second one had two requests refused whole before the plan's lessons were appended (a worker's plan written back
// over the learner's lost the minute's URL limit, and the next request went alone into the full minute).
import { overlapping, runCluster, type Latency } from './virtualCluster';

// Virtual minutes, but several thousand store commands and 40 executions of the node's code: seconds of real time.
jest.setTimeout(120_000);
beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
afterEach(() => jest.useRealTimers());

/** The entry plan (the sandbox's `sandbox-basic`). */
const PLAN = { maxUrlsPerRequest: 5, requestsPerMinute: 60, urlsPerMinute: 60 };
const DISTINCT = 205;
/** The time the distinct domains need at 60 a minute, and the factor on it. */
const NEED_MS = (DISTINCT / 60) * 60_000;
const FACTOR = 1.1;

interface Case {
  seed: number;
  /** The service's latencies each way, a store command's, and an execution's start after it is handed out. */
  service: Latency;
  store: Latency;
  start: Latency;
}

test.each<[string, Case]>([
  ['quick answers', { seed: 1, service: [2, 40], store: [1, 10], start: [0, 0] }],
  ['slow, uneven answers and store', { seed: 16, service: [1, 800], store: [1, 80], start: [0, 5000] }],
])('%s: each domain billed once, one Limit Exceeded, at most one request refused whole', async (_name, c) => {
  const run = await runCluster({
    workers: 5,
    slots: 2,
    lists: overlapping(40, 10, 'shared-minute-'),
    key: 'virtual-cluster-key',
    plan: PLAN,
    seed: c.seed,
    up: c.service,
    down: c.service,
    store: c.store,
    start: c.start,
  });
  expect(run.storeNotes).toEqual([]);
  expect(run.items).toBe(400);
  expect(run.stats.billed).toBe(DISTINCT);
  expect(Object.values(run.stats.billedByDomain).filter((n) => n > 1)).toEqual([]);
  expect(run.stats.limitExceeded).toBeLessThanOrEqual(1);
  // The one request that learns the minute's 60 URLs, and no other.
  expect(run.stats.allRateLimited).toBeLessThanOrEqual(1);
  expect(run.lastMs).toBeLessThanOrEqual(FACTOR * NEED_MS);
});
