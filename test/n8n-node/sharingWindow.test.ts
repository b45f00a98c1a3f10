// The key's minute shared by workers through the store, on a skipping clock (the node's waits move Date.now()
// forward instead of passing, for the node, the sandbox and the webdis stand-in alike): a worker that starts right
// after another filled the minute knows the plan and the minute's sends from the store, and sends nothing into it.
import type { INodeType } from 'n8n-workflow';
import { SharingRun } from '../../shared/sharing-run';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { forgetRememberedWindows } from '../../n8n-node/nodes/DapaChecker/planWindow';
import { LEASE_MS, RedisShare } from '../../n8n-node/nodes/DapaChecker/sharing/redisShare';
import { forgetShares } from '../../n8n-node/nodes/DapaChecker/sharing/registry';
import { ShareSession } from '../../n8n-node/nodes/DapaChecker/sharing/session';
import type { StoreHttp } from '../../n8n-node/nodes/DapaChecker/sharing/webdis';
import { REQUEST_TIMEOUT_MS } from '../../n8n-node/nodes/DapaChecker/transport';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import { startSandbox, type RunningSandbox } from '../sandbox/server';
import { anotherWorker, createExecuteContext } from './executeContext';
import { startFakeWebdis, STORE_TEST_SECRET, STORE_TEST_NODE, type FakeWebdis } from './fakeWebdis';

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
const KEY = 'twenty-per-minute';
let server: RunningSandbox;
let webdis: FakeWebdis;

beforeAll(async () => {
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skipped);
  server = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await server.close();
  jest.restoreAllMocks();
});
beforeEach(async () => {
  server.sandbox.configure({
    ...DEFAULT_CONFIG,
    keys: { ...DEFAULT_CONFIG.keys, [KEY]: { maxUrlsPerRequest: 5, urlsPerMinute: 20 } },
  });
  webdis = await startFakeWebdis();
  forgetRememberedWindows();
  forgetShares();
});
afterEach(async () => {
  await webdis.close();
});

type NodeClass = new () => INodeType;

async function execute(Node: NodeClass, tag: string, count: number, shareAcrossWorkers: boolean) {
  const double = createExecuteContext({
    items: Array.from({ length: count }, (_v, i) => ({ url: `${tag}${i}.org` })),
    credentials: { apiKey: KEY, environment: 'custom', baseUrl: server.url },
    shareAcrossWorkers,
    sharedState: { url: webdis.url, secret: STORE_TEST_SECRET },
  });
  const [results, skippedItems] = (await new Node().execute!.call(
    double.context,
  )) as unknown as INodeType[][];
  return { results, skipped: skippedItems };
}

describe('the key’s minute across workers', () => {
  test.each([[true, 0]])(
    'with the store (%s): a worker right after another filled the minute has %i URLs refused',
    async (share, refused) => {
      // The first worker learns the plan (one refusal of 5 URLs) and ends with a full minute of 20 URLs, the last 5
      // sent as soon as the minute let them (within a minute of the refusal: no probe is due).
      const first = await execute(DapaChecker, 'first', 25, share);
      expect(first.results).toHaveLength(25);
      const sentBefore = server.sandbox.stats()[KEY].urlsSubmitted;
      const second = await execute(anotherWorker(), 'second', 5, share);
      expect(second.results).toHaveLength(5);
      // URLs the service refused for the minute (sent, not billed: it answers them rate_limit_reached).
      expect(server.sandbox.stats()[KEY].urlsSubmitted - sentBefore - 5).toBe(refused);
      expect(server.sandbox.stats()[KEY].billed).toBe(30);
    },
  );
});

/** An execution's session on a worker of the store, its run started on one domain (the per-request maximum set). */
async function startedSession(remote: RedisShare, name: string, domain: string): Promise<ShareSession> {
  const session = new ShareSession({
    storageKey: `dapaWindow:${name}`,
    reuseMs: 0,
    maximumSet: true,
    remote,
  });
  await session.awaitPlan(new Promise<void>(() => {}));
  const run = new SharingRun([domain], { baseUrl: server.url, deadline: Infinity }, (t) => session.view(t));
  await session.start(run, [domain], Date.now());
  return session;
}

describe('claims while a request waits for room in the shared minute', () => {
  const node = STORE_TEST_NODE;
  const http: StoreHttp = async (url) => {
    const response = await fetch(url);
    return { status: response.status, body: await response.text() };
  };

  test('a wait longer than a lease keeps the claims, and a request that goes holds them past its timeout', async () => {
    const remote = new RedisShare(node, http, webdis.url, 'dapa:test', STORE_TEST_SECRET);
    const now = Date.now();
    const limit = (value: number) => ({ value, exact: true, at: now });
    // Another worker spent the key's minute just now: 20 URLs of 20.
    await remote.flush(
      Array.from({ length: 4 }, (): [number, number] => [now, 5]),
      [],
    );
    await remote.keepPlan({
      v: 1,
      at: now,
      sends: [],
      limits: { urlsPerMinute: limit(20), maxUrlsPerRequest: limit(5) },
    });
    const session = await startedSession(remote, 'test', 'claimed.org');
    expect(webdis.get('dapa:test:c:claimed.org')).toBe(session.owner);

    const waitedFrom = Date.now();
    const entry = await session.reserve(1, Infinity);
    // The request waited for the minute to free up (longer than a claim's 60-s lease) ...
    expect(Date.now() - waitedFrom).toBeGreaterThanOrEqual(LEASE_MS - 1000);
    expect(entry).toBeDefined();
    expect(session.problem).toBeUndefined();
    // ... and still holds its domain: no other worker could have claimed and sent it meanwhile.
    expect(webdis.get('dapa:test:c:claimed.org')).toBe(session.owner);
    // While it is out (up to its 120-s timeout, with nothing renewing), the claim holds: its owner's heartbeat lives.
    skipped += REQUEST_TIMEOUT_MS;
    expect(webdis.get('dapa:test:c:claimed.org')).toBe(session.owner);
    expect(webdis.get(`dapa:test:o:${session.owner}`)).toBe('1');
    await session.end();
    expect(webdis.get('dapa:test:c:claimed.org')).toBeUndefined();
    expect(webdis.get(`dapa:test:o:${session.owner}`)).toBeUndefined();
  });

  test('while no worker knows the URL limit, a request waits for the one another worker reserved before it', async () => {
    const remote = new RedisShare(node, http, webdis.url, 'dapa:serial', STORE_TEST_SECRET);
    const other = `another-worker:1:5:${Date.now()}`;
    await remote.reserve(other, Date.now());
    const session = await startedSession(remote, 'serial', 'serial.org');
    const from = Date.now();
    let reserved = false;
    const reserving = session.reserve(5, Infinity).then(() => (reserved = true));
    while (Date.now() - from < 5000) await new Promise((resolve) => setImmediate(resolve));
    expect(reserved).toBe(false);
    await remote.flush([], [other]); // the other worker's request was answered (and what it taught is in the store)
    await reserving;
    expect(Date.now() - from).toBeLessThan(LEASE_MS);
    expect(session.problem).toBeUndefined();
    await session.end();

    // Once the limit is known, requests of several workers go together, as the minute's room allows.
    const now = Date.now();
    await remote.keepPlan({
      v: 1,
      at: now,
      sends: [],
      limits: {
        urlsPerMinute: { value: 60, exact: true, at: now },
        maxUrlsPerRequest: { value: 5, exact: true, at: now },
      },
    });
    await remote.reserve(`another-worker:2:5:${now}`, now);
    const next = await startedSession(remote, 'serial', 'next.org');
    const at = Date.now();
    await next.reserve(5, Infinity);
    expect(Date.now() - at).toBeLessThan(1000);
    await next.end();
  });

  test('an answered request stays reserved for the other workers until the run has taken its answer in', async () => {
    const remote = new RedisShare(node, http, webdis.url, 'dapa:taken', STORE_TEST_SECRET);
    const now = Date.now();
    const limit = (value: number) => ({ value, exact: true, at: now });
    await remote.keepPlan({
      v: 1,
      at: now,
      sends: [],
      limits: { urlsPerMinute: limit(60), maxUrlsPerRequest: limit(5) },
    });
    const session = await startedSession(remote, 'taken', 't.org');
    const token = session.sending(5);
    const entry = await session.reserve(5, Infinity);
    const flight = () => webdis.get('dapa:taken:flight') ?? [];
    expect(flight()).toEqual([entry]);
    // Answered (the HTTP call returned) but not taken in by the run yet: its send is not in the minute either.
    session.answered(token);
    session.unreserve(entry);
    await session.tick(Date.now()); // another request of the run goes meanwhile
    expect(flight()).toEqual([entry]);
    session.taken(Date.now());
    await session.tick(Date.now());
    expect(flight()).toEqual([]);
    await session.end();
  });

  test('a request waiting for room never goes above a guessed limit on its own when the calm after a refusal ends', async () => {
    const remote = new RedisShare(node, http, webdis.url, 'dapa:calm', STORE_TEST_SECRET);
    const now = Date.now();
    // The limit was guessed from a refusal 70 s ago (past the calm before a probe); other workers filled the minute.
    await remote.flush([[now - 1000, 20]], []);
    await remote.keepPlan({
      v: 1,
      at: now,
      sends: [],
      limits: {
        urlsPerMinute: { value: 20, exact: false, at: now - 70_000 },
        maxUrlsPerRequest: { value: 5, exact: true, at: now - 70_000 },
      },
      pressure: { urls: now - 70_000 },
    });
    const session = await startedSession(remote, 'calm', 'c.org');
    const from = Date.now();
    await session.reserve(5, Infinity);
    // It waited for the 20 URLs to leave the minute (59 s), instead of probing into it at once.
    expect(Date.now() - from).toBeGreaterThanOrEqual(58_000);
    await session.end();
  });

  test('an execution adds a lesson of the plan only when it knows something the store does not', async () => {
    const remote = new RedisShare(node, http, webdis.url, 'dapa:lessons', STORE_TEST_SECRET);
    const now = Date.now();
    const maximum = { maxUrlsPerRequest: { value: 5, exact: true, at: now } };
    await remote.keepPlan({ v: 1, at: now, sends: [], limits: maximum });
    const lessons = () => webdis.get('dapa:lessons:plans') ?? [];
    // It learned nothing: its steps and its end add nothing.
    const idle = await startedSession(remote, 'lessons', 'idle.org');
    await idle.tick(Date.now());
    await idle.end();
    expect(lessons()).toHaveLength(1);
    // A run that learned the minute's URL limit adds it, once.
    const learner = new ShareSession({
      storageKey: 'dapaWindow:lessons',
      reuseMs: 0,
      maximumSet: true,
      remote,
    });
    await learner.awaitPlan(new Promise<void>(() => {}));
    const at = Date.now();
    const window = {
      v: 1 as const,
      at,
      sends: [],
      limits: { ...maximum, urlsPerMinute: { value: 60, exact: false, at } },
    };
    const run = new SharingRun(['learner.org'], { baseUrl: server.url, deadline: Infinity, window });
    await learner.start(run, ['learner.org'], at);
    await learner.tick(Date.now());
    await learner.tick(Date.now());
    await learner.end();
    expect(lessons()).toHaveLength(2);
    expect((await remote.window(Date.now()))?.limits.urlsPerMinute?.value).toBe(60);
  });
});
