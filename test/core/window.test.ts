// The plan's window across executions: a run starts from what earlier ones sent, says what room is left, and hands
// back a snapshot that a shell stores as it is. And one run with many requests in flight, sent together.
import fc from 'fast-check';
import {
  CheckRun,
  mergeWindows,
  PLAN_MEMORY_MS,
  restoreWindow,
  roomIn,
  runSyncAll,
  type RunOptions,
  type WindowSnapshot,
} from '../../shared';
import { PlanWindow } from '../../shared/window';
import { createSandbox, DEFAULT_CONFIG } from '../sandbox/handler';
import { runOnVirtualSandbox, runVirtual, VirtualClock, virtualIo } from '../sandbox/virtual';
import { ScriptedApi, type ApiFault } from '../sandbox/scripted';

const T = 1_000_000;
const basic = (t: number): WindowSnapshot => ({
  v: 1,
  at: t,
  sends: [],
  limits: {
    maxUrlsPerRequest: { value: 5, exact: true, at: t },
    urlsPerMinute: { value: 60, exact: false, at: t },
  },
  pressure: { urls: t }, // it was learned from a rate_limit_reached just now
});
const domains = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${from + i}.com`);

describe('the window a run starts from', () => {
  test('sends of an earlier execution in the last minute hold the next run back: no request is wasted on a full window', () => {
    const sandbox = createSandbox(DEFAULT_CONFIG);
    const first = runOnVirtualSandbox(sandbox, 'sandbox-basic', domains(60), { window: basic(T) }, T);
    expect(first.report.totals.billed).toBe(60);
    const second = runOnVirtualSandbox(
      sandbox,
      'sandbox-basic',
      domains(10, 100),
      { window: first.report.window },
      first.end,
    );
    expect(second.report.totals.records).toBe(10);
    expect(second.stats.rateLimitSkips).toBe(0); // it knew the minute was spent and waited for it
    expect(second.report.totals.requests).toBe(2);
  });

  test('roomIn says how much the plan allows now and when it frees', () => {
    const w = basic(T);
    w.sends = [
      [T - 50_000, 30],
      [T - 10_000, 30],
    ];
    const room = roomIn(w, T);
    expect(room.urls).toBe(0);
    expect(room.freeAt).toBe(T + 10_001); // the first 30 leave the window
    expect(room.emptyAt).toBe(T + 50_001);
    expect(room.capacity).toBe(60);
    expect(roomIn(w, T + 10_001).urls).toBe(30);
    expect(roomIn(undefined, T).urls).toBe(Infinity);
  });

  test('an inferred limit with no pushback for a minute leaves room for one probe; an exact one does not', () => {
    const w = basic(T);
    w.sends = [[T - 30_000, 60]];
    w.pressure = { urls: T - 70_000 };
    expect(roomIn(w, T)).toMatchObject({ urls: 5, probe: true });
    w.limits.urlsPerMinute = { value: 60, exact: true, at: T };
    expect(roomIn(w, T)).toMatchObject({ urls: 0, probe: false });
  });

  test('a probe goes when the calm minute after the pushback has passed, not a whole window later', () => {
    // A guess of 10 a minute learned from a skip at T + 200, a moment after the run's own first sends (T + 100 and
    // T + 150). Those left the window at T + 60 150; the run sent its 10 again at once, so the window is full.
    const w = basic(T);
    w.limits.urlsPerMinute = { value: 10, exact: false, at: T + 200 };
    w.pressure = { urls: T + 200 };
    w.sends = [
      [T + 60_150, 5],
      [T + 60_160, 5],
    ];
    const now = T + 60_170;
    // 30 URLs left would take three more minutes at the guess: the probe is due at T + 60 200, 30 ms from now.
    expect(roomIn(w, now, 30)).toMatchObject({ urls: 0, freeAt: T + 60_200 });
    expect(roomIn(w, T + 60_200, 30)).toMatchObject({ urls: 5, probe: true });
  });

  test('a guess learned from a minute shared with other runs is probed even with little work left; a guess the run learned alone is not, an inherited one is', () => {
    const learn = (earlier: Array<[number, number]>) => {
      const w = new PlanWindow({
        ...basic(T),
        limits: { maxUrlsPerRequest: basic(T).limits.maxUrlsPerRequest },
        sends: earlier,
        pressure: undefined,
      });
      w.observedSince = T + 100;
      w.accepted(T + 150, 5);
      w.accepted(T + 200, 5);
      expect(w.learnUrlLimit(T + 250)).toBe(earlier.reduce((n, s) => n + s[1], 10));
      // A minute on, the run has sent its guess again and has a little work left.
      const at = T + 60_300;
      const guess = w.limits.urlsPerMinute?.value ?? 0;
      w.accepted(at, guess);
      return { limit: w.limits.urlsPerMinute, slot: w.plan(at, 5, 5) };
    };
    // The window held 20 URLs another execution in this process sent (the snapshot the run started from).
    const shared = learn([[T + 50, 20]]);
    expect(shared.limit).toMatchObject({ value: 30, exact: false, shared: true });
    expect(shared.slot).toMatchObject({ at: T + 60_300, probe: true });
    // Alone (nothing known from before it), the same guess is likely the plan's: 5 left waits for the window.
    const alone = learn([]);
    expect(alone.limit?.shared).toBeUndefined();
    expect(alone.slot.probe).toBe(false);
    expect(alone.slot.at).toBeGreaterThan(T + 60_300);
    // A guess an earlier run learned (maybe in a minute crowded by queue workers it never saw) is probed for the
    // same little work once calm, when the slide it would wait for is far off; not when the slide is near.
    const inherited = new PlanWindow({
      ...basic(T),
      limits: { urlsPerMinute: { value: 25, exact: false, at: T - 120_000 } },
      sends: [],
      pressure: { urls: T - 120_000 },
    });
    inherited.observedSince = T;
    inherited.accepted(T, 25);
    expect(inherited.plan(T + 100, 5, 5)).toMatchObject({ at: T + 100, probe: true });
    expect(inherited.plan(T + 50_000, 5, 5)).toMatchObject({ at: T + 60_001, probe: false });
    // The label survives a shell's storage, and only on an inferred limit.
    const stored = restoreWindow(
      JSON.stringify(new PlanWindow({ ...basic(T), limits: { urlsPerMinute: shared.limit! } }).snapshot(T)),
      T,
    );
    expect(stored?.limits.urlsPerMinute?.shared).toBe(true);
    const exact = restoreWindow(
      { ...basic(T), limits: { urlsPerMinute: { value: 60, exact: true, at: T, shared: true } } },
      T,
    );
    expect(exact?.limits.urlsPerMinute?.shared).toBeUndefined();
  });

  test("a guess is labelled shared when the server's request count shows runs this window cannot see", () => {
    const run = (crowd: number, hearFirst: boolean) => {
      const w = new PlanWindow();
      w.observedSince = T;
      w.accepted(T, 5);
      w.accepted(T + 10, 5);
      // The server counts this run's two requests and `crowd` more from runs on another queue worker.
      const hear = () => w.heard(T + 20, { limit: 60, remaining: 60 - 2 - crowd });
      if (hearFirst) hear();
      w.learnUrlLimit(T + 20);
      if (!hearFirst) hear();
      return w.limits.urlsPerMinute;
    };
    expect(run(10, true)).toMatchObject({ value: 10, exact: false, shared: true });
    expect(run(10, false)).toMatchObject({ value: 10, exact: false, shared: true });
    // The server's count is this run's own: the guess is likely the plan's.
    expect(run(0, true)?.shared).toBeUndefined();
    expect(run(0, false)?.shared).toBeUndefined();
  });

  test('restoreWindow keeps the last minute and the last 7 days of limits, labelled, and refuses junk', () => {
    const stored = JSON.stringify({
      v: 1,
      at: T,
      sends: [
        [T - 70_000, 5],
        [T - 10_000, 5],
        ['x', 1],
      ],
      limits: {
        maxUrlsPerRequest: { value: 5, exact: true, at: T - PLAN_MEMORY_MS - 1 },
        urlsPerMinute: { value: 20, exact: false, at: T - 1000 },
      },
    });
    const w = restoreWindow(stored, T);
    expect(w?.sends).toEqual([[T - 10_000, 5]]);
    expect(w?.limits).toEqual({ urlsPerMinute: { value: 20, exact: false, at: T - 1000 } });
    for (const junk of ['', 'null', '{', '{"v":2}', 42, { v: 1, at: 'x', sends: [], limits: {} }])
      expect(restoreWindow(junk, T)).toBeUndefined();
  });

  test('mergeWindows: sends of both (each once), exact beats inferred, newer beats older', () => {
    const a = basic(T);
    a.sends = [
      [T - 5000, 5],
      [T - 4000, 5],
    ];
    const b: WindowSnapshot = {
      v: 1,
      at: T + 1000,
      sends: [
        [T - 4000, 5],
        [T - 100, 5],
      ],
      limits: {
        maxUrlsPerRequest: { value: 10, exact: false, at: T + 1000 },
        urlsPerMinute: { value: 45, exact: false, at: T + 1000 },
      },
    };
    const m = mergeWindows(a, b);
    expect(m?.sends).toEqual([
      [T - 5000, 5],
      [T - 4000, 5],
      [T - 100, 5],
    ]);
    expect(m?.limits.maxUrlsPerRequest?.value).toBe(5);
    expect(m?.limits.urlsPerMinute?.value).toBe(45);
  });

  test("a 422's stated maximum is exact; a halved batch is a guess", () => {
    const stated = runVirtual(domains(12), new ScriptedApi({ maxUrls: 5 }));
    expect(stated.report.window.limits.maxUrlsPerRequest).toMatchObject({ value: 5, exact: true });
    const halved = runVirtual(domains(12), new ScriptedApi({ maxUrls: 5, limitMessageWithNumber: false }));
    expect(halved.report.window.limits.maxUrlsPerRequest?.exact).toBe(false);
  });
});

describe('one timer table: the window says when the next request may go', () => {
  const afterRetryAfter = (values: string[]) => {
    // A background step (waiting off) gets a 429 with Retry-After: 2 and no rate-limit headers on its first request.
    const api = new ScriptedApi({ faults: ['429ra'] });
    return runVirtual(values, api, { waitForRateLimits: false }, { latencyMs: 100 });
  };

  test("a Retry-After without rate-limit headers is honoured by the next execution's run (a formula or the sidebar)", () => {
    const first = afterRetryAfter(['a.com', 'b.com']);
    expect(first.report.totals.skippedByReason).toEqual({ rate_limit_reached: 2 });
    const retryAt = first.elapsed + 2000; // the answer came at 100 ms
    // Half a second later a formula starts from the stored window, with waiting on: it waits for the rest.
    const start = first.elapsed + 500;
    const stored = restoreWindow(JSON.stringify(first.report.window), start);
    expect(stored?.hold).toEqual({ until: retryAt, cause: 'retry_after' });
    const clock = new VirtualClock(start);
    const sentAt: number[] = [];
    const io = virtualIo(clock, new ScriptedApi());
    const run = new CheckRun(['a.com', 'b.com'], {
      baseUrl: 'http://fake',
      deadline: start + 30_000,
      window: stored,
    });
    const report = runSyncAll(run, {
      ...io,
      sendAll: (requests) => (sentAt.push(...requests.map(() => clock.now())), io.sendAll(requests)),
    });
    expect(report.totals.records).toBe(2);
    expect(sentAt).toEqual([retryAt]);
    // The room a background step reads says the same: nothing before the Retry-After.
    expect(roomIn(stored, start)).toMatchObject({ urls: 0, requests: 0, freeAt: retryAt, emptyAt: retryAt });
    expect(roomIn(stored, retryAt).urls).toBe(Infinity);
  });

  test('a hold is kept while it holds: restored, merged (the later wins), dropped once it has passed', () => {
    const held = (until: number, cause: 'retry_after' | 'failure'): WindowSnapshot => ({
      ...basic(T),
      hold: { until, cause },
    });
    expect(restoreWindow(held(T + 5000, 'failure'), T)?.hold).toEqual({ until: T + 5000, cause: 'failure' });
    expect(restoreWindow(held(T - 1, 'failure'), T)?.hold).toBeUndefined();
    expect(restoreWindow({ ...basic(T), hold: { until: 'x', cause: 'failure' } }, T)?.hold).toBeUndefined();
    expect(mergeWindows(held(T + 5000, 'failure'), held(T + 9000, 'retry_after'))?.hold).toEqual({
      until: T + 9000,
      cause: 'retry_after',
    });
    expect(mergeWindows(held(T + 9000, 'failure'), basic(T))?.hold?.until).toBe(T + 9000);
    expect(new PlanWindow(held(T + 5000, 'failure')).snapshot(T + 5000).hold).toBeUndefined();
  });

  test("the server's Retry-After wins over the window's guess; a backoff of our own does not", () => {
    const full: WindowSnapshot = { ...basic(T), sends: [[T - 10_000, 60]] }; // the guess frees at T + 50 001
    const server = new PlanWindow({ ...full, hold: { until: T + 2000, cause: 'retry_after' } });
    expect(server.plan(T, 5)).toEqual({ at: T + 2000, urls: 5, probe: false });
    const own = new PlanWindow({ ...full, hold: { until: T + 2000, cause: 'rate_limit' } });
    expect(own.plan(T, 5).at).toBe(T + 50_001);
  });
});

describe('one run, many requests in flight (sent together)', () => {
  /** Drives a run with runSyncAll against a ScriptedApi: each turn's requests answered together 200 ms later. */
  const together = (values: unknown[], api: ScriptedApi, options: Partial<RunOptions>, start = T) => {
    const clock = new VirtualClock(start);
    const turns: number[] = [];
    const io = virtualIo(clock, api, { latencyMs: 200 });
    const run = new CheckRun(values, { baseUrl: 'http://fake', deadline: start + 3_600_000, ...options });
    const report = runSyncAll(run, {
      ...io,
      sendAll: (requests) => (turns.push(requests.length), io.sendAll(requests)),
    });
    return { report, turns, end: clock.now() };
  };

  test('what the window allows goes out in one turn, and every request counts in the window', () => {
    const api = new ScriptedApi({ maxUrls: 5 });
    const { report, turns, end } = together(domains(100), api, {
      window: basic(T),
      inFlight: Infinity,
      waitForRateLimits: false,
    });
    expect(turns).toEqual([12]); // 60 URLs a minute, 5 a request: 12 requests, then the minute is spent
    expect(report.totals).toMatchObject({ requests: 12, billed: 60, records: 60 });
    expect(report.totals.skippedByReason).toEqual({ rate_limit_reached: 40 });
    expect(report.window.sends).toEqual(Array.from({ length: 12 }, () => [end, 5]));
    expect(roomIn(report.window, end, 1000).urls).toBe(0);
    // Storing it over the stored window keeps the twelve equal sends.
    expect(mergeWindows(basic(T), report.window)?.sends).toHaveLength(12);
    // The window alone says when the rest may go: not before the twelve sends leave it, then at once.
    expect(roomIn(report.window, end + 59_000, 1000).urls).toBe(0);
    expect(roomIn(report.window, end + 60_001, 1000).urls).toBe(60);
  });

  test('maxSend: only that many new domains go; the rest end unfinished, not run, and every total adds up', () => {
    const api = new ScriptedApi({ maxUrls: 5 });
    const values = ['', ...domains(20), 'not a url', 'w0.com'];
    const { report, turns } = together(values, api, { window: basic(T), inFlight: Infinity, maxSend: 12 });
    expect(turns).toEqual([3]);
    expect(api.sent.flat()).toEqual(domains(12));
    const t = report.totals;
    expect(t).toMatchObject({ inputs: 23, records: 13, requests: 3, billed: 12 });
    expect(t.errorsByCode).toEqual({ unfinished: 8 });
    expect(report.outcomes[13]).toMatchObject({
      kind: 'error',
      code: 'unfinished',
      detail: { why: 'not_run' },
    });
    expect(t.records + t.skips + t.errors).toBe(t.inputs);
  });

  test('a 429 among requests in flight: what the others billed is kept, the rest waits for the Retry-After', () => {
    const api = new ScriptedApi({ maxUrls: 5, faults: [undefined, '429ra', undefined] });
    const { report, turns, end } = together(domains(15), api, {
      window: { ...basic(T), limits: { maxUrlsPerRequest: basic(T).limits.maxUrlsPerRequest } },
      inFlight: Infinity,
      waitForRateLimits: false,
    });
    expect(turns).toEqual([3]);
    expect(report.totals).toMatchObject({ requests: 3, billed: 10, records: 10 });
    expect(report.totals.skippedByReason).toEqual({ rate_limit_reached: 5 });
    expect([...api.billed.values()].every((n) => n === 1)).toBe(true);
    expect(report.window.hold).toEqual({ until: end + 2000, cause: 'retry_after' });
    expect(roomIn(report.window, end).freeAt).toBe(end + 2000);
  });

  test('without a known maximum per request, requests go one at a time (else each would pay a 422)', () => {
    const api = new ScriptedApi({ maxUrls: 5 });
    const { report, turns } = together(domains(12), api, { inFlight: Infinity });
    expect(turns.every((n) => n === 1)).toBe(true);
    expect(report.totals.records).toBe(12);
  });

  test('nothing lost, nothing billed twice, whatever the faults and the requests in flight (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a.com', 'b.com', 'c.com', 'd.com', 'e.org', 'f.net', '', 'not a url', 7), {
          maxLength: 30,
        }),
        fc.array(fc.constantFrom<ApiFault | undefined>(undefined, '500', 'network', '429ra', 'garbage'), {
          maxLength: 6,
        }),
        fc.integer({ min: 1, max: 5 }),
        (values, faults, inFlight) => {
          const api = new ScriptedApi({
            maxUrls: 2,
            faults,
            skip: (_k, attempt) => (attempt === 1 ? 'lookup_failed' : undefined),
          });
          const window: WindowSnapshot = {
            v: 1,
            at: T,
            sends: [],
            limits: { maxUrlsPerRequest: { value: 2, exact: true, at: T } },
          };
          const { report } = together(values, api, { window, inFlight });
          const t = report.totals;
          expect(t.inputs).toBe(values.length);
          expect(t.records + t.skips + t.errors).toBe(t.inputs);
          expect([...api.billed.values()].every((n) => n === 1)).toBe(true);
          expect(t.billed).toBe(api.billed.size);
          const distinct = new Set(report.outcomes.flatMap((o) => (o.kind === 'record' ? [o.key] : [])));
          expect(distinct.size).toBe(api.billed.size);
        },
      ),
      { numRuns: 200 },
    );
  });
});
