// What the shared store costs per request to the service, on virtual time (virtualCluster.ts): two workers, each
// running one execution, two lists of N domains overlapping by half, on a plan of 100 URLs a request and 6,000 a
// minute, at N = 10, 300 and 5,000. The Redis commands sent through webdis are counted, per request the service
// answered and per distinct domain, and printed; they must not grow with the list (issue 44: at most 20 a request
// and 3 a domain at 5,000).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { overlapping, runCluster } from './virtualCluster';

jest.setTimeout(300_000);
beforeEach(() => jest.useFakeTimers({ now: 1_700_000_000_000 }));
afterEach(() => jest.useRealTimers());

const PLAN = { maxUrlsPerRequest: 100, requestsPerMinute: 60, urlsPerMinute: 6000 };
const rows: string[] = [];
afterAll(() =>
  console.log(`store commands through webdis, 2 workers, two lists overlapping by half:\n${rows.join('\n')}`),
);

test.each([10, 300, 5000])(
  'lists of %i: each domain billed once, a constant number of store commands per request',
  async (size) => {
    const run = await runCluster({
      workers: 2,
      slots: 1,
      lists: overlapping(2, size, `cost${size}-`),
      key: 'store-cost-key',
      plan: PLAN,
      seed: 7,
      up: [5, 60],
      down: [5, 60],
      store: [1, 5],
      start: [0, 200],
    });
    const distinct = size * 1.5;
    const commands = Object.values(run.storeCommands).reduce((a, b) => a + b, 0);
    const perRequest = commands / run.stats.requests;
    const perDomain = commands / distinct;
    const detail = Object.entries(run.storeCommands)
      .sort((a, b) => b[1] - a[1])
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
    rows.push(
      `  lists of ${size}: ${distinct} domains, ${run.stats.requests} requests, ${commands} commands: ` +
        `${perRequest.toFixed(1)} a request, ${perDomain.toFixed(2)} a domain (${detail}); ` +
        `done in ${(run.lastMs / 1000).toFixed(1)} s` +
        (distinct >= 1000
          ? `, ${(run.lastMs / ((distinct / 6000) * 60_000)).toFixed(2)} x the plan's bound`
          : ''),
    );
    expect(run.storeNotes).toEqual([]);
    expect(run.items).toBe(2 * size);
    expect(run.stats.billed).toBe(distinct);
    expect(perDomain).toBeLessThanOrEqual(3);
    if (size < 300) return; // two requests: an execution's fixed few calls weigh on each
    expect(perRequest).toBeLessThanOrEqual(20);
    // The README's figure is this run's (seeded virtual time: the same on every machine).
    if (size === 5000)
      expect(
        readFileSync(path.join(__dirname, '../../n8n-node/README.md'), 'utf8').replace(/\s+/g, ' '),
      ).toContain(`about ${Math.round(perRequest)} calls a request, ${perDomain.toFixed(2)} a domain`);
  },
);
