// Issue 44's scaling targets on virtual time (virtualCluster.ts: the node's code on jest's fake timers, the sandbox's
// handler, the webdis stand-in's in-memory Redis, seeded latencies). The rows of the real-n8n scaling bench are the
// proof on real components; these hold the same shapes to the targets on every run: billed = distinct, at most one
// Limit Exceeded, the last execution within 1.10 x the time the plan needs for the distinct domains.
import { overlapping, runCluster } from './virtualCluster';

jest.setTimeout(300_000);
beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
afterEach(() => jest.useRealTimers());

const FACTOR = 1.1;

test('a plan of 100 URLs a request and 6,000 a minute, 2 workers x 2, two lists of 5,000 overlapping by half', async () => {
  const run = await runCluster({
    workers: 2,
    slots: 2,
    lists: overlapping(2, 5000, 'big-'),
    key: 'scale-big-key',
    plan: { maxUrlsPerRequest: 100, requestsPerMinute: 60, urlsPerMinute: 6000 },
    seed: 11,
    up: [5, 80],
    down: [5, 80],
    store: [1, 10],
    start: [0, 500],
  });
  const needMs = (7500 / 6000) * 60_000;
  console.log(
    `2 workers x 2, 2 x 5,000: ${run.stats.billed} billed, ${(run.lastMs / needMs).toFixed(2)} x the bound`,
  );
  expect(run.storeNotes).toEqual([]);
  expect(run.items).toBe(10_000);
  expect(run.stats.billed).toBe(7500);
  expect(run.lastMs).toBeLessThanOrEqual(FACTOR * needMs);
});

test('the entry plan, 10 workers x 2, 100 executions of lists of 10 overlapping by half', async () => {
  const run = await runCluster({
    workers: 10,
    slots: 2,
    lists: overlapping(100, 10, 'entry-'),
    key: 'scale-entry-key',
    plan: { maxUrlsPerRequest: 5, requestsPerMinute: 60, urlsPerMinute: 60 },
    seed: 12,
    up: [5, 200],
    down: [5, 200],
    store: [1, 10],
    start: [0, 2000],
  });
  const needMs = (505 / 60) * 60_000;
  console.log(
    `10 workers x 2, 100 x 10: ${run.stats.billed} billed, ${run.stats.limitExceeded} Limit Exceeded, ` +
      `${(run.lastMs / needMs).toFixed(2)} x the bound, ` +
      `${(Object.values(run.storeCommands).reduce((a, b) => a + b, 0) / run.stats.requests).toFixed(1)} store commands a request ${JSON.stringify(run.storeCommands)}`,
  );
  expect(run.storeNotes).toEqual([]);
  expect(run.items).toBe(1000);
  expect(run.stats.billed).toBe(505);
  expect(run.stats.limitExceeded).toBeLessThanOrEqual(1);
  expect(run.lastMs).toBeLessThanOrEqual(FACTOR * needMs);
});
