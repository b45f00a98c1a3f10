// SharingRun, the core's run for executions that share a key: domains another execution is checking are set aside
// (never sent; taken as cached when answered there, sent when handed back), and the others' window (their sends and
// their requests in flight) is merged into the run's before each decision.
import { SharingRun, type OthersView } from '../../shared/sharing-run';
import type { WindowSnapshot } from '../../shared';
import { metricsFor } from '../sandbox/handler';
import { ScriptedApi } from '../sandbox/scripted';

const BASE = 'https://api.example.com';

function sendsOf(run: SharingRun, api: ScriptedApi, now: number): string[][] {
  const sent: string[][] = [];
  for (;;) {
    const step = run.next(now);
    if (step.type !== 'send') return sent;
    sent.push(step.urls);
    run.receive(step.id, api.handle(step.request, now), now);
  }
}

const record = (domain: string) => ({ domain, ...metricsFor(domain) });

describe('a sharing run', () => {
  test('sends nothing set aside; an answer from elsewhere is a cached record that costs nothing', () => {
    const api = new ScriptedApi();
    const run = new SharingRun(['a.com', 'b.com', 'c.com'], { baseUrl: BASE, deadline: Infinity });
    run.setAside(['b.com', 'c.com']);
    expect(sendsOf(run, api, 0)).toEqual([['a.com']]);
    // Only set-aside domains left: it waits (in slices) rather than ending them.
    expect(run.next(1)).toEqual({ type: 'wait', ms: 1000 });
    run.resolveAside('b.com', record('b.com'));
    run.resolveAside('c.com'); // handed back: this run sends it
    expect(sendsOf(run, api, 2)).toEqual([['c.com']]);
    expect(run.next(3)).toEqual({ type: 'done' });
    const report = run.report();
    expect(report.outcomes.map((o) => o.kind === 'record' && o.cached)).toEqual([false, true, false]);
    expect(report.totals.billed).toBe(2);
    expect(report.totals.cached).toBe(1);
  });

  test('set-aside domains not answered by the deadline end unfinished, unbilled', () => {
    const run = new SharingRun(['a.com'], { baseUrl: BASE, deadline: 5000 });
    run.setAside(['a.com']);
    expect(run.next(4500)).toEqual({ type: 'wait', ms: 500 });
    expect(run.next(5000)).toEqual({ type: 'done' });
    expect(run.report().outcomes[0]).toMatchObject({ kind: 'error', code: 'unfinished' });
  });

  test('waits for a minute the other executions spent, their requests in flight included', () => {
    const api = new ScriptedApi();
    const now = 100_000;
    const window: WindowSnapshot = {
      v: 1,
      at: now,
      sends: [[now - 30_000, 15]],
      limits: {
        urlsPerMinute: { value: 20, exact: true, at: 0 },
        maxUrlsPerRequest: { value: 5, exact: true, at: 0 },
      },
    };
    let view: OthersView = { window, inFlight: [5] };
    const run = new SharingRun(['a.com'], { baseUrl: BASE, deadline: Infinity }, () => view);
    const step = run.next(now);
    // 15 answered + 5 in flight fill the minute of 20: the run waits for the 15 to leave it (30 s on).
    expect(step).toEqual({ type: 'wait', ms: 30_001 });
    view = { window, inFlight: [] };
    expect(sendsOf(run, api, now)).toEqual([['a.com']]);
  });

  test.each([
    [false, 'send'],
    [true, 'wait'],
  ])(
    'a URL limit guessed by another execution, the minute full: with a window of every worker (%s) the run %ss',
    (whole, expected) => {
      const now = 1_000_000;
      const window: WindowSnapshot = {
        v: 1,
        at: now,
        sends: [[now - 50_000, 20]],
        // Another execution learned the guess (from a window it labelled shared) and the calm after it is over.
        limits: {
          urlsPerMinute: { value: 20, exact: false, at: now - 90_000, shared: true },
          maxUrlsPerRequest: { value: 5, exact: true, at: 0 },
        },
        pressure: { urls: now - 90_000 },
      };
      const run = new SharingRun(['a.com'], { baseUrl: BASE, deadline: Infinity }, () => ({
        window,
        inFlight: [],
        whole,
      }));
      // Without the store, the guess may be this process's share of the plan: one probe above it is worth a try.
      // With every worker's sends in the window, the guess is the plan's: the run waits for the minute to slide.
      const step = run.next(now);
      expect(step.type).toBe(expected);
      if (step.type === 'wait') expect(step.ms).toBe(10_001);
    },
  );

  test.each([
    [false, 'send', true],
    [true, 'wait', undefined],
  ])(
    'a URL limit learned from its own sends: with a window of every worker (%s) the run %ss once the minute was calm',
    (whole, expected, shared) => {
      const t0 = 3_000_000;
      const domains = Array.from({ length: 45 }, (_v, i) => `d${i}.com`);
      // The fourth request finds the minute spent: other workers' sends, unseen without the store, filled it.
      const refused = new Set(domains.slice(15, 20));
      const api = new ScriptedApi({
        skip: (key, attempt) => (refused.has(key) && attempt === 1 ? 'rate_limit_reached' : undefined),
      });
      const view: OthersView = { inFlight: [], whole };
      const run = new SharingRun(
        domains,
        { baseUrl: BASE, deadline: Infinity, maxUrlsPerRequest: 5 },
        () => view,
      );
      expect(sendsOf(run, api, t0)).toHaveLength(4);
      expect(run.window(t0).limits.urlsPerMinute).toEqual({ value: 15, exact: false, at: t0, shared });
      // A minute on, the run sends its guess of 15 again; 15 URLs are left, a short list at that rate.
      const t1 = t0 + 60_001;
      expect(run.next(t0)).toMatchObject({ type: 'wait' });
      for (let i = 0; i < 3; i++) {
        const step = run.next(t1);
        if (step.type !== 'send') throw new Error(`expected a send, got ${step.type}`);
        run.receive(step.id, api.handle(step.request, t1), t1);
      }
      // Without the store the guess may be this worker's share of a minute the others have left: once the minute
      // since the refusal was calm, one request above it goes (a probe). With every worker's sends seen, the guess
      // is the plan's: the run waits for its minute to slide.
      const step = run.next(t1);
      expect(step.type).toBe(expected);
      if (step.type === 'wait') expect(step.ms).toBe(60_001);
    },
  );

  test('a refusal teaches the limit from the others’ sends as they are when it is answered, not when it was decided', () => {
    const now = 2_000_000;
    const maximum = { maxUrlsPerRequest: { value: 5, exact: true, at: 0 } };
    let view: OthersView = {
      window: { v: 1, at: now, sends: [[now - 2000, 20]], limits: maximum },
      inFlight: [],
      whole: true,
    };
    const api = new ScriptedApi({ skip: () => 'rate_limit_reached' });
    const run = new SharingRun(['a.com'], { baseUrl: BASE, deadline: Infinity }, () => view);
    const step = run.next(now);
    if (step.type !== 'send') throw new Error(`expected a send, got ${step.type}`);
    // While the request waited for its turn, the other workers' requests were answered: 55 URLs in the minute.
    view = {
      ...view,
      window: {
        v: 1,
        at: now,
        sends: [
          [now - 2000, 20],
          [now - 500, 35],
        ],
        limits: maximum,
      },
    };
    run.receive(step.id, api.handle(step.request, now + 100), now + 100);
    expect(run.window(now + 100).limits.urlsPerMinute).toMatchObject({ value: 55, exact: false });
  });
});
