// A slow store, on virtual time (virtualCluster.ts): a proxy in front of webdis holds every call 300 ms, then 2 s, then
// stalls 30 s mid-run, then 300 ms again, while 5 workers x 2 run issue 35's 40 executions of lists of 10 overlapping
// by half on the entry plan. Calls held 300 ms or 2 s go on; a call past the budget of one store call (5 s) makes its
// execution treat the store as down and say so on its items. Whatever the phase: nothing lost, no domain billed twice
// (the domains another worker held when the store went down end as retryable `unfinished`, not sent a second time).
import { STORE_CALL_BUDGET_MS } from '../../n8n-node/nodes/DapaChecker/sharing/open';
import { overlapping, runCluster } from './virtualCluster';

jest.setTimeout(300_000);
beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
afterEach(() => jest.useRealTimers());

const PLAN = { maxUrlsPerRequest: 5, requestsPerMinute: 60, urlsPerMinute: 60 };

/** The proxy's hold by the time a call is sent (ms from the first start). */
const phases = (ms: number) => (ms < 60_000 ? 300 : ms < 120_000 ? 2_000 : ms < 150_000 ? 30_000 : 300);

test('held 300 ms, then 2 s, then stalled 30 s: nothing lost, nothing billed twice, the stall said on the items', async () => {
  const lists = overlapping(40, 10, 'slow-store-');
  const distinct = new Set(lists.flat()).size;
  const run = await runCluster({
    workers: 5,
    slots: 2,
    lists,
    key: 'slow-store-key',
    plan: PLAN,
    seed: 3,
    up: [20, 200],
    down: [20, 200],
    store: [1, 10],
    start: [0, 500],
    hold: phases,
  });
  const twice = Object.entries(run.stats.billedByDomain).filter(([, n]) => n > 1);
  console.log(
    `slow store: ${run.stats.billed} billed for ${distinct} domains, ${twice.length} twice, ${run.items} items, ` +
      `skipped ${JSON.stringify(run.skippedReasons)}, done in ${(run.lastMs / 1000).toFixed(0)} s ` +
      `(${(run.lastMs / ((distinct / 60) * 60_000)).toFixed(2)} x the plan's bound); notes: ${run.storeNotes.join(' | ')}`,
  );
  expect(run.items).toBe(400);
  expect(twice).toEqual([]);
  expect(run.stats.billed).toBeLessThanOrEqual(distinct);
  // The stall was met, and said: past the budget of one call, the store was treated as down.
  expect(run.storeNotes.length).toBeGreaterThan(0);
  for (const note of run.storeNotes)
    expect(note).toContain(`no answer within ${STORE_CALL_BUDGET_MS / 1000} s, the budget of one store call`);
  // Whatever was not checked can be checked by running again (no other reason).
  expect(Object.keys(run.skippedReasons).every((reason) => reason === 'unfinished')).toBe(true);
});
