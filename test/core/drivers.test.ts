// Both drivers against the sandbox over real HTTP, and the pacer against the sandbox's own handling on a
// virtual clock.
import {
  CheckRun,
  outcomeText,
  runAsync,
  runSync,
  runSyncAll,
  type HttpRequest,
  type Report,
} from '../../shared';
import { createSandbox, metricsFor } from '../sandbox/handler';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import { startSandbox, type RunningSandbox } from '../sandbox/server';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { fetchSync } from './sync-http';
import { runOnVirtualSandbox, VirtualClock, virtualIo } from '../sandbox/virtual';
import { ScriptedApi } from '../sandbox/scripted';

const domains = (n: number, prefix = 'site') =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}.example.com`);
const withKey = (request: HttpRequest, key: string): HttpRequest => ({
  ...request,
  headers: { ...request.headers, Authorization: `Bearer ${key}` },
});

async function checkAsync(
  sandbox: RunningSandbox,
  values: unknown[],
  key = 'sandbox-premium',
): Promise<Report> {
  const run = new CheckRun(values, { baseUrl: sandbox.url, deadline: Date.now() + 60_000 });
  return runAsync(run, {
    now: () => Date.now(),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    send: async (request) => {
      const res = await fetch(request.url, {
        method: 'POST',
        headers: withKey(request, key).headers,
        body: request.body,
      });
      return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
    },
  });
}

function expectAllRecordsCorrect(report: Report, values: string[]) {
  report.outcomes.forEach((o, i) => {
    expect(o.kind).toBe('record');
    if (o.kind === 'record') expect(o.record).toMatchObject(metricsFor(values[i]));
  });
}

describe('the async driver over real HTTP', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(() => sandbox.close());
  beforeEach(() => sandbox.sandbox.configure(DEFAULT_CONFIG));

  test('checks 120 rows with duplicates in the fewest requests and bills each domain once', async () => {
    const distinct = domains(80);
    const values = [...distinct, ...distinct.slice(0, 40).map((d) => `https://WWW.${d}/page`)];
    const report = await checkAsync(sandbox, values);
    expectAllRecordsCorrect(
      report,
      values.map((v) =>
        v
          .replace(/^https:\/\/www\./i, '')
          .replace(/\/page$/, '')
          .toLowerCase(),
      ),
    );
    const stats = sandbox.sandbox.stats()['sandbox-premium'];
    expect(stats.billed).toBe(80);
    expect(Object.values(stats.billedByDomain).every((n) => n === 1)).toBe(true);
    // first request of 100 learns the maximum of 50 from the message: 1 + ceil(80 / 50)
    expect(report.totals.requests).toBe(3);
    expect(report.learned.maxUrlsPerRequest).toBe(50);
  });

  test('resolves every row under faults: lookup_failed, 500s, HTML 502s, shuffled and respelled records', async () => {
    sandbox.sandbox.configure({
      keys: { faulty: { maxUrlsPerRequest: 50 } },
      faults: {
        lookupFailedRate: 0.2,
        serverErrorRate: 0.15,
        html502Rate: 0.1,
        shuffleData: true,
        domainSpelling: 'mixed',
        numericStrings: true,
        seed: 7,
        latencyMs: [1, 5],
      },
    });
    const values = domains(150, 'f');
    const report = await checkAsync(sandbox, values, 'faulty');
    expectAllRecordsCorrect(report, values);
    const stats = sandbox.sandbox.stats()['faulty'];
    expect(Object.values(stats.billedByDomain).every((n) => n === 1)).toBe(true);
    expect(stats.billed).toBe(150);
    expect(report.totals.retries).toBeGreaterThan(0);
  }, 60_000);

  test('an expired plan and a wrong key end the run with their own errors', async () => {
    const expired = await checkAsync(sandbox, ['a.com'], 'sandbox-expired');
    expect(expired.fatal?.code).toBe('not_premium');
    const wrong = await checkAsync(sandbox, ['a.com'], 'nope');
    expect(wrong.fatal?.code).toBe('bad_key');
    expect(wrong.fatal && outcomeText(wrong.fatal)).not.toMatch(/nope/);
  });
});

/** The sandbox in its own process: a blocking send would otherwise block the server it waits for. */
function startSandboxProcess(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../sandbox/cli.ts')], {
    env: { ...process.env, SANDBOX_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(out);
      if (found) resolve({ url: found[1], child });
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${out}`)));
  });
}

describe('the sync driver over real HTTP', () => {
  let sandbox: { url: string; child: ChildProcess };
  beforeAll(async () => {
    sandbox = await startSandboxProcess();
  }, 20_000);
  afterAll(() => sandbox.child.kill());

  test('checks a list with blanks, invalid entries and duplicates with blocking sends and sleeps', () => {
    const values = ['alpha.com', '', 'www.alpha.com', 'nodot', 12, 'beta.org/x', 'bad.zz9'];
    const run = new CheckRun(values, { baseUrl: sandbox.url, deadline: Date.now() + 30_000 });
    const report = runSync(run, {
      now: () => Date.now(),
      sleep: (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms),
      send: (request) => fetchSync(withKey(request, 'sandbox-premium')),
    });
    expect(report.outcomes.map((o) => (o.kind === 'skip' ? o.reason : o.kind))).toEqual([
      'record',
      'empty_url',
      'record',
      'invalid_url_format',
      'invalid_url_format',
      'record',
      'invalid_url_format',
    ]);
    expect(report.totals.requests).toBe(1);
    expect(report.totals.billed).toBe(2);
  });
});

describe('pacing against the sandbox on a virtual clock', () => {
  test('a URLs-per-minute plan is learned from rate_limit_reached and paced with nothing lost', () => {
    const sandbox = createSandbox({ keys: { upm: { maxUrlsPerRequest: 50, urlsPerMinute: 100 } } });
    const values = domains(400, 'u');
    const { report, elapsed, stats } = runOnVirtualSandbox(sandbox, 'upm', values);
    expectAllRecordsCorrect(report, values);
    expect(report.learned.urlsPerMinute).toBe(100);
    // 400 URLs at 100 per minute: the last batch can go 3 minutes after the first
    expect(elapsed).toBeLessThan(3.2 * 60_000);
    expect(stats.rateLimitSkips).toBeLessThanOrEqual(100);
    expect(Object.values(stats.billedByDomain).every((n) => n === 1)).toBe(true);
  });

  test('a requests-per-minute plan is learned from 429 and paced so that 429s stay rare', () => {
    const sandbox = createSandbox({
      keys: { rpm: { maxUrlsPerRequest: 5, requestsPerMinute: 10 } },
      faults: { retryAfter: 'none' },
    });
    const values = domains(100, 'r');
    const { report } = runOnVirtualSandbox(sandbox, 'rpm', values, { maxUrlsPerRequest: 5 });
    expectAllRecordsCorrect(report, values);
    expect(report.learned.requestsPerMinute).toBe(10);
    expect(report.totals.responses.rateLimited).toBeLessThanOrEqual(2);
    expect(report.totals.requests).toBeLessThanOrEqual(22);
  });
});

describe('the sync driver that sends requests together (runSyncAll)', () => {
  /** `values` checked with up to `inFlight` requests a turn (2 URLs each), each turn answered 100 ms later. */
  function together(
    values: string[],
    inFlight: number,
    failTurn?: number,
    cancelAfter = Infinity,
    firstAlone = false,
  ) {
    const api = new ScriptedApi({ maxUrls: 2 });
    const window = {
      v: 1 as const,
      at: 0,
      sends: [],
      limits: { maxUrlsPerRequest: { value: 2, exact: true, at: 0 } },
    };
    const clock = new VirtualClock();
    const io = virtualIo(clock, api, { latencyMs: 100 });
    const turns: number[] = [];
    const run = new CheckRun(values, {
      baseUrl: 'http://fake',
      deadline: 600_000,
      window,
      inFlight,
      firstAlone,
    });
    const report = runSyncAll(run, {
      ...io,
      sendAll: (requests) => {
        turns.push(requests.length);
        if (turns.length !== failTurn) return io.sendAll(requests);
        clock.advance(100);
        throw new Error('Address unavailable');
      },
      cancelled: () => api.requests >= cancelAfter,
    });
    return { report, turns, api };
  }

  test('a sendAll that throws fails every request of its turn as a network failure, and they are sent again', () => {
    const { report, turns } = together(domains(6, 'n'), 3, 1);
    expect(turns).toEqual([3, 3]);
    expect(report.totals).toMatchObject({ records: 6, billed: 6, requests: 6, retries: 6 });
    expect(report.totals.responses.transient).toBe(3);
  });

  test("with firstAlone, the run's first request goes alone and the rest together once it is answered", () => {
    const { report, turns } = together(domains(12, 'f'), 3, undefined, Infinity, true);
    expect(turns).toEqual([1, 3, 2]);
    expect(report.totals).toMatchObject({ records: 12, billed: 12, requests: 6 });
    expect(together(domains(12, 'g'), 3).turns).toEqual([3, 3]);
  });

  test('a cancel between turns ends the rest as cancelled, with nothing more sent', () => {
    const { report, api } = together(domains(12, 'c'), 2, undefined, 4);
    expect(api.requests).toBe(4);
    expect(report.totals.records).toBe(8);
    expect(report.totals.errorsByCode).toEqual({ cancelled: 4 });
  });
});
