// The plan's window across executions: a run starts from what earlier ones sent, says what room is left, and hands
// back a snapshot that a shell stores as it is. And one merged report for runs side by side that keeps every total.
import fc from 'fast-check';
import {
  CheckRun,
  mergeReports,
  mergeWindows,
  PLAN_MEMORY_MS,
  restoreWindow,
  roomIn,
  type Outcome,
  type ReportPart,
  type WindowSnapshot,
} from '../../shared';
import { PlanWindow } from '../../shared/window';
import { createSandbox, DEFAULT_CONFIG } from '../sandbox/handler';
import { runOnVirtualSandbox, runVirtual } from './virtual';
import { FakeApi } from './fake-api';

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
    const stated = runVirtual(domains(12), new FakeApi({ maxUrls: 5 }));
    expect(stated.report.window.limits.maxUrlsPerRequest).toMatchObject({ value: 5, exact: true });
    const halved = runVirtual(domains(12), new FakeApi({ maxUrls: 5, limitMessageWithNumber: false }));
    expect(halved.report.window.limits.maxUrlsPerRequest?.exact).toBe(false);
  });
});

describe('one report for runs side by side', () => {
  const filler: Outcome = { kind: 'error', code: 'unfinished', retryable: true, detail: { why: 'not_run' } };

  test('records + skips + errors = inputs, and every count is kept (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a.com', 'b.com', 'c.com', 'd.com', '', 'not a url', 7), { maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 5 }),
        (values, parts, unsent) => {
          const positions = values.map((_, i) => i).slice(0, Math.max(0, values.length - unsent));
          const groups = Array.from({ length: parts }, (_, g) => positions.filter((p) => p % parts === g));
          const reports = groups.map((group) => {
            const api = new FakeApi({});
            return runVirtual(
              group.map((p) => values[p]),
              api,
            ).report;
          });
          const merged = mergeReports(
            groups.map((positions, g) => ({ report: reports[g], positions })),
            values.length,
            filler,
          );
          const t = merged.totals;
          expect(t.inputs).toBe(values.length);
          expect(t.records + t.skips + t.errors).toBe(t.inputs);
          expect(t.requests).toBe(reports.reduce((s, r) => s + r.totals.requests, 0));
          expect(t.billed).toBe(reports.reduce((s, r) => s + r.totals.billed, 0));
          expect(t.blanks).toBe(reports.reduce((s, r) => s + r.totals.blanks, 0));
          expect(t.errorsByCode.unfinished ?? 0).toBe(values.length - positions.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  test("a fatal answer of one run is the merged report's, and windows are merged", () => {
    const one = new CheckRun(['a.com'], { baseUrl: 'http://x', deadline: 10 }).report();
    const merged = mergeReports(
      [
        { report: { ...one, fatal: { code: 'bad_key', retryable: false } }, positions: [0] },
        { report: one, positions: [1] },
      ],
      2,
      filler,
    );
    expect(merged.fatal?.code).toBe('bad_key');
    expect(merged.window.v).toBe(1);
  });

  test('requests sent side by side at the same moment all count in the merged window, and the base once', () => {
    // Twelve runs start from one stored window (5 URLs sent earlier) and each sends 5 URLs, answered together.
    const base: WindowSnapshot = { ...basic(T), sends: [[T - 30_000, 5]] };
    const part = (g: number): ReportPart => {
      const report = new CheckRun([`p${g}.com`], { baseUrl: 'http://x', deadline: T, window: base }).report();
      const sends: Array<[number, number]> = [...base.sends, [T, 5]];
      return { report: { ...report, window: { ...base, at: T, sends } }, positions: [g] };
    };
    const merged = mergeReports(
      Array.from({ length: 12 }, (_, g) => part(g)),
      12,
      filler,
      base,
    );
    const urls = merged.window.sends.reduce((sum, [, n]) => sum + n, 0);
    expect(urls).toBe(5 + 12 * 5);
    expect(roomIn(merged.window, T + 1, 1000).urls).toBe(0);
    // Storing it over the stored window (the same history twice) keeps the twelve equal sends.
    expect(mergeWindows(base, merged.window)?.sends).toHaveLength(13);
  });
});
