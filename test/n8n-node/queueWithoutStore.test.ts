// The end-to-end queue case "4 x 30" (test/n8n-e2e/queue.ts) on virtual time (virtualCluster.ts): four executions
// of 30 domains at once (half of them common to all, a repeat spelled differently and a non-domain), two workers
// running two each, one entry-plan key, and no shared store, so each worker sees only its own process's sends. The
// CI once took 1.34 x the bound there, billing 60, 15, 15 URLs a minute: a worker that found the first minute spent
// by the other learned a quarter of the plan from what it saw and kept to it after the other had finished. Each case
// is one fixed ordering of answers, drawn from its seed and latencies.
import { runCluster, type Latency } from './virtualCluster';

// Virtual minutes; every case takes well under a second of real time.
jest.setTimeout(120_000);
beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
afterEach(() => jest.useRealTimers());

/** The entry plan (the sandbox's `sandbox-basic`). */
const PLAN = { maxUrlsPerRequest: 5, requestsPerMinute: 60, urlsPerMinute: 60 };
const EXECUTIONS = 4;
const URLS = 30;
/** queue.ts's target: the last execution done within this many times the bound of the URLs the key billed. */
const BOUND_FACTOR = 1.25;

/** Execution `e`'s items as queue.ts builds them: the common half, its own half, a repeat and a non-domain. */
function itemsFor(e: number): string[] {
  const half = URLS / 2;
  const common = Array.from({ length: half }, (_v, i) => `common${i}.org`);
  const own = Array.from({ length: URLS - half }, (_v, i) => `own${e}-${i}.org`);
  return [...common, ...own, `WWW.Common${e % half}.org`, 'not a domain'];
}

interface Case {
  seed: number;
  service: Latency;
  start: Latency;
}

// Orderings that billed 60, 15, 15 (or 60, 25, 5; 60, 20, 10; 60, 10, 10, 10) and ended at 1.34 to 2.09 x the
// bound before the fix; then a sweep of seeds and start spreads.
const NAMED: Array<[string, Case]> = [
  ['60, 15, 15: one worker done in the first minute', { seed: 5, service: [2, 40], start: [0, 2000] }],
  ['60, 15, 15: slower answers', { seed: 1, service: [5, 300], start: [0, 2000] }],
  ['60, 15, 15: executions starting up to 20 s apart', { seed: 11, service: [5, 300], start: [0, 20_000] }],
  ['60, 25, 5: executions starting together', { seed: 5, service: [2, 40], start: [0, 0] }],
  ['60, 20, 10', { seed: 4, service: [5, 300], start: [0, 2000] }],
  ['60, 10, 10, 10', { seed: 5, service: [5, 300], start: [0, 8000] }],
];
const STARTS: Latency[] = [
  [0, 0],
  [0, 2000],
  [0, 8000],
];
const SWEEP = STARTS.flatMap((start) =>
  Array.from({ length: 8 }, (_v, i): [string, Case] => [
    `seed ${i + 1}, starts within ${start[1]} ms`,
    { seed: i + 1, service: [5, 300], start },
  ]),
);

test.each<[string, Case]>([...NAMED, ...SWEEP])(
  'queue mode without a store, 4 x 30 (%s): the last execution done within 1.25 x the bound',
  async (_name, c) => {
    const run = await runCluster({
      workers: 2,
      slots: 2,
      lists: Array.from({ length: EXECUTIONS }, (_v, e) => itemsFor(e)),
      key: 'virtual-queue-no-store-key',
      plan: PLAN,
      seed: c.seed,
      up: c.service,
      down: c.service,
      store: [1, 10],
      start: c.start,
      shareAcrossWorkers: false,
    });
    expect(run.items).toBe(EXECUTIONS * (URLS + 2));
    // Each worker pays once for each of its domains: the common ones once per worker, each execution's own once.
    expect(run.stats.billed).toBe(2 * (URLS / 2) + EXECUTIONS * (URLS / 2));
    const byDomain = run.stats.billedByDomain;
    expect(Object.entries(byDomain).filter(([d, n]) => n > (d.startsWith('common') ? 2 : 1))).toEqual([]);
    expect(run.stats.responsesByStatus['429'] ?? 0).toBe(0);
    // At most one request refused whole per execution (the one that finds the minute spent).
    expect(run.stats.allRateLimited).toBeLessThanOrEqual(EXECUTIONS);
    const boundMs = (run.stats.billed / PLAN.urlsPerMinute) * 60_000;
    const summary = `${(run.lastMs / 1000).toFixed(1)} s = ${(run.lastMs / boundMs).toFixed(2)} x the bound; URLs billed per minute ${run.perMinute.join(', ')}`;
    // The figures are in the failure's message: how long, and what the key billed each minute.
    expect(run.lastMs <= BOUND_FACTOR * boundMs ? 'within' : summary).toBe('within');
  },
);
