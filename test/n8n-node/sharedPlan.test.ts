// The plan's limits in the shared store when two workers write them at the same time, on virtual time (jest's fake
// timers; each store command takes its worker's latency each way): the minute's URL limit one worker learned from
// the service's refusal stays, whichever order the two workers' commands reach the store in. A lesson lost there
// let the next request go alone into a full minute (the second request refused whole).
import type { WindowSnapshot } from '../../shared/index';
import { RedisShare } from '../../n8n-node/nodes/DapaChecker/sharing/redisShare';
import {
  memoryRedis,
  memoryWebdis,
  type MemoryRedis,
  STORE_TEST_SECRET,
  STORE_TEST_NODE,
} from './fakeWebdis';

const node = STORE_TEST_NODE;
const BASE = 'http://webdis.test';

beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
afterEach(() => jest.useRealTimers());

/** A worker's view of the store, each of its commands taking `tripMs` each way. */
function worker(redis: MemoryRedis, tripMs: number): RedisShare {
  return new RedisShare(
    node,
    memoryWebdis(redis, BASE, () => tripMs),
    BASE,
    'dapa:plan',
    STORE_TEST_SECRET,
  );
}

/** Lets the virtual clock run until `work` is done. */
async function settle<T>(work: Promise<T>): Promise<T> {
  let done = false;
  void work.finally(() => (done = true)).catch(() => undefined);
  while (!done) await jest.advanceTimersByTimeAsync(5);
  return await work;
}

const plan = (at: number, limits: WindowSnapshot['limits'], pressure?: WindowSnapshot['pressure']) => ({
  v: 1 as const,
  at,
  sends: [],
  limits,
  pressure,
});

// The other worker's commands take 40 ms each way; the learner's 1 ms. Its lesson is written 0 to 300 ms after the
// other worker began writing: before, in the middle of and after the other's commands.
test.each([0, 60, 130, 150, 170, 190, 300])(
  'the URL limit a worker learned stays when another writes its plan at the same time (learned %i ms in)',
  async (offset) => {
    const redis = memoryRedis();
    const learner = worker(redis, 1);
    const other = worker(redis, 40);
    const t0 = Date.now();
    const maximum = { maxUrlsPerRequest: { value: 5, exact: true, at: t0 - 10_000 } };
    await settle(learner.keepPlan(plan(t0, maximum)));

    // A worker whose execution started before the refusal writes what it knows: the per-request maximum only.
    const writing = other.keepPlan(plan(t0, maximum));
    // The learner, refused for the minute, writes the URL limit it learned.
    const learning = new Promise<void>((resolve) => setTimeout(resolve, offset)).then(async () => {
      const at = Date.now();
      await learner.keepPlan(
        plan(at, { ...maximum, urlsPerMinute: { value: 60, exact: false, at } }, { urls: at }),
      );
    });
    await settle(Promise.all([writing, learning]));

    const window = await settle(other.window(Date.now()));
    expect(window?.limits.urlsPerMinute?.value).toBe(60);
    expect(window?.limits.maxUrlsPerRequest).toEqual(maximum.maxUrlsPerRequest);
    expect(window?.pressure?.urls).toBeDefined();
  },
);

test('unreadable lessons in the store are passed over, the others merged', async () => {
  const redis = memoryRedis();
  const share = worker(redis, 1);
  const t0 = Date.now();
  redis.run(['RPUSH', 'dapa:plan:plans', 'not json', 'null', '[]']);
  await settle(share.keepPlan(plan(t0, { urlsPerMinute: { value: 40, exact: false, at: t0 - 5000 } })));
  await settle(share.keepPlan(plan(t0, { urlsPerMinute: { value: 60, exact: false, at: t0 } })));
  await settle(share.keepPlan(plan(t0, { urlsPerMinute: { value: 50, exact: false, at: t0 - 1000 } })));
  const window = await settle(share.window(t0));
  // The newest guess wins, whatever order the lessons were added in.
  expect(window?.limits.urlsPerMinute?.value).toBe(60);
});
