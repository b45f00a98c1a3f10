// The DAPA Checker node on a key that other executions share (queue mode: other workers; one workflow run twice at
// once), against the sandbox over real HTTP, on a skipping clock: the node's waits move Date.now() forward (for the
// node and the sandbox alike, both in this process) instead of passing, so the plan's minutes take milliseconds.
import { createHash } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { forgetRememberedWindows } from '../../n8n-node/nodes/DapaChecker/planWindow';
import { forgetShares } from '../../n8n-node/nodes/DapaChecker/sharing/registry';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import { startSandbox, type RunningSandbox } from '../sandbox/server';
import { createExecuteContext } from './executeContext';

let skipped = 0;
jest.mock('n8n-workflow', () => {
  const actual = jest.requireActual<typeof import('n8n-workflow')>('n8n-workflow');
  const skip = async (ms: number) => {
    skipped += Math.max(0, ms);
    await Promise.resolve();
  };
  return { ...actual, sleep: skip, sleepWithAbort: skip };
});

const realNow = Date.now.bind(Date);
/** What a new n8n process starts with: nothing in memory (neither the windows nor the shared answers). */
function freshProcess() {
  forgetRememberedWindows();
  forgetShares();
}
let server: RunningSandbox;
/** A plan of 5 URLs per request and 20 URLs a minute. */
const KEY = 'twenty-per-minute';
const MINUTE = 60_000;

beforeAll(async () => {
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skipped);
  server = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await server.close();
  jest.restoreAllMocks();
});
beforeEach(() => {
  server.sandbox.configure({
    ...DEFAULT_CONFIG,
    keys: { ...DEFAULT_CONFIG.keys, [KEY]: { maxUrlsPerRequest: 5, urlsPerMinute: 20 } },
  });
  freshProcess();
});

async function execute(tag: string, count: number, staticData: IDataObject = {}, options: IDataObject = {}) {
  const started = Date.now();
  const double = createExecuteContext({
    items: Array.from({ length: count }, (_v, i) => ({ url: `${tag}${i}.org` })),
    credentials: { apiKey: KEY, environment: 'custom', baseUrl: server.url },
    staticData,
    options,
  });
  const [results, skippedItems] = await new DapaChecker().execute.call(double.context);
  return { results, skipped: skippedItems, sent: double.sent, ms: Date.now() - started };
}

/** The stored window of the one key the tests use. */
function storedWindow(staticData: IDataObject) {
  const names = Object.keys(staticData).filter((name) => name.startsWith('dapaWindow:'));
  expect(names).toHaveLength(1);
  return staticData[names[0]] as { limits: Record<string, { value: number; exact: boolean }> };
}

describe('DAPA Checker node: a key shared with other executions', () => {
  test('an execution squeezed into a minute another worker spent is not slower than the plan: it does not crawl at its share', async () => {
    // Another worker (another process: nothing of it is in this one's memory) spends 15 of the minute's 20 URLs.
    await execute('other', 15);
    freshProcess();
    // This execution gets the minute's last 5 URLs, meets the limit, and sees only its own 5 in its window.
    const squeezed = await execute('squeezed', 25);
    expect(squeezed.results).toHaveLength(25);
    // The plan's pace: 5 now, the other 20 once the other worker's minute has passed (a minute from now).
    // Kept as a rate, its own share of the crowded minute (5 a minute) would have taken four minutes more.
    expect(squeezed.ms).toBeLessThanOrEqual(1.25 * MINUTE);
    const stats = server.sandbox.stats()[KEY];
    expect(stats.billed).toBe(40);
    expect(Object.values(stats.billedByDomain).every((times) => times === 1)).toBe(true);
  });

  test('an inferred rate is kept, labelled inferred; a later lone execution probes it up and keeps the plan’s pace', async () => {
    const staticData: IDataObject = {};
    await execute('other', 15);
    freshProcess();
    // Waiting off: this execution stops at the limit, having seen only its own 5 URLs in the crowded minute.
    const squeezed = await execute('squeezed', 6, staticData, { waitForRateLimits: false });
    expect(squeezed.results).toHaveLength(5);
    const kept = storedWindow(staticData);
    expect(kept.limits.maxUrlsPerRequest).toMatchObject({ value: 5, exact: true });
    expect(kept.limits.urlsPerMinute).toMatchObject({ exact: false });
    expect(JSON.stringify(staticData)).not.toContain(KEY);

    skipped += MINUTE; // a minute later, alone (in a restarted process: only the static data is left)
    freshProcess();
    const alone = await execute('alone', 40, staticData);
    expect(alone.results).toHaveLength(40);
    // The plan's pace for 40 URLs on a free key: 20 now, 20 a minute later.
    expect(alone.ms).toBeLessThanOrEqual(1.25 * MINUTE);
    // The exact maximum came back from the static data: no request over it (no 422 Limit Exceeded to learn it again).
    expect(alone.sent.every((request) => JSON.parse(request.body).urls.length <= 5)).toBe(true);
  });

  test('executions in the same process start from each other’s window: the second waits instead of hitting the limit', async () => {
    const first = await execute('first', 25, {}, { waitForRateLimits: false });
    expect(first.results).toHaveLength(20);
    const before = server.sandbox.stats()[KEY];
    const second = await execute('second', 10);
    expect(second.results).toHaveLength(10);
    const after = server.sandbox.stats()[KEY];
    // The first execution's sends and the limit it met are in this process's window: the second one knows the
    // minute is spent and the maximum per request, so it waits for the minute and sends 2 requests of 5, none refused.
    expect(after.rateLimitSkips - before.rateLimitSkips).toBe(0);
    expect(second.sent.map((request) => JSON.parse(request.body).urls.length)).toEqual([5, 5]);
    expect(second.ms).toBeGreaterThanOrEqual(MINUTE - 5_000);
    expect(second.ms).toBeLessThanOrEqual(1.25 * MINUTE);
  });
});

describe('DAPA Checker node: what static data keeps of the key', () => {
  test('no plain digest of the key: the window is kept under an HMAC salted with a random value kept beside it', async () => {
    const staticData: IDataObject = {};
    await execute('salted', 5, staticData);
    const plain = createHash('sha256').update(`${server.url}\n${KEY}`).digest('hex').slice(0, 24);
    const names = Object.keys(staticData);
    expect(names.some((name) => name.startsWith('dapaWindow:h:'))).toBe(true);
    expect(JSON.stringify(staticData)).not.toContain(plain);
    expect(JSON.stringify(staticData)).not.toContain(KEY);
    // Another workflow draws another salt: the same key gets another name there.
    const other: IDataObject = {};
    await execute('salted', 5, other);
    expect(other.dapaSalt).not.toBe(staticData.dapaSalt);
    expect(Object.keys(other).find((n) => n.startsWith('dapaWindow:h:'))).not.toBe(
      names.find((n) => n.startsWith('dapaWindow:h:')),
    );
    // The same workflow keeps its name from one execution to the next.
    await execute('salted-again', 5, staticData);
    expect(Object.keys(staticData).filter((n) => n.startsWith('dapaWindow:'))).toHaveLength(1);
  });

  test('a window an earlier version kept under a plain digest is dropped when a window is written', async () => {
    const staticData: IDataObject = {
      'dapaWindow:0123456789abcdef01234567': { v: 1, at: 0, sends: [], limits: {} },
    };
    await execute('upgrade', 5, staticData);
    expect(Object.keys(staticData).filter((n) => n.startsWith('dapaWindow:'))).toEqual([
      expect.stringMatching(/^dapaWindow:h:[0-9a-f]{24}$/),
    ]);
  });
});
