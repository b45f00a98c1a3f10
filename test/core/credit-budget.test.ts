// The run's credit ceiling: whatever the server answers, it never bills more than the budget, and every domain past
// the budget ends as a retryable `credit_budget` skip that a later run with credits left picks up.
import fc from 'fast-check';
import { CheckRun, outcomeText, runSyncAll, type Outcome, type RunOptions } from '../../shared';
import { createSandbox, type FaultConfig, type PlanConfig } from '../sandbox/handler';
import { runOnVirtualSandbox, sandboxAnswers, VirtualClock, virtualIo } from '../sandbox/virtual';

const KEY = 'k';
const domains = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `site${from + i}.com`);
const budgetSkips = (outcomes: Outcome[]) =>
  outcomes.filter((o) => o.kind === 'skip' && o.reason === 'credit_budget');

function sandboxOf(plan: PlanConfig, faults?: FaultConfig) {
  return createSandbox({ keys: { [KEY]: plan }, faults });
}

/** Runs with every request the window allows in flight at once (the Sheets background's fetchAll driver). */
function runAllVirtual(
  sandbox: ReturnType<typeof createSandbox>,
  values: string[],
  options: Partial<RunOptions>,
) {
  let peakUnanswered = 0;
  const io = virtualIo(new VirtualClock(), sandboxAnswers(sandbox, KEY), { latencyMs: 200 });
  const run = new CheckRun(values, { baseUrl: 'http://virtual', deadline: 3_600_000, ...options });
  const report = runSyncAll(run, {
    ...io,
    sendAll: (requests) => {
      const urls = requests.reduce((n, r) => n + (JSON.parse(r.body) as { urls: string[] }).urls.length, 0);
      peakUnanswered = Math.max(peakUnanswered, urls);
      return io.sendAll(requests);
    },
  });
  return { report, peakUnanswered, stats: sandbox.stats()[KEY] };
}

describe('a credit budget', () => {
  test('bills exactly the budget and ends the rest as retryable credit_budget skips with a message', () => {
    const sandbox = sandboxOf({ maxUrlsPerRequest: 5 });
    const values = domains(20);
    const { report, stats } = runOnVirtualSandbox(sandbox, KEY, values, {
      creditBudget: 7,
      maxUrlsPerRequest: 5,
    });
    expect(stats.billed).toBe(7);
    expect(report.totals.billed).toBe(7);
    expect(report.totals.records).toBe(7);
    const skipped = budgetSkips(report.outcomes);
    expect(skipped).toHaveLength(13);
    expect(report.totals.skippedByReason.credit_budget).toBe(13);
    for (const o of skipped) {
      expect(o).toMatchObject({ kind: 'skip', retryable: true, detail: { budget: 7 } });
      expect(outcomeText(o)).toMatch(/credit budget \(7\) is spent/);
    }
    // The last request carried only what was left (5 + 2), never more URLs than credits.
    expect(stats.urlsSubmitted).toBe(7);
  });

  test('a budget of 0 sends nothing; cached and invalid rows cost nothing and keep their outcome', () => {
    const run = new CheckRun(['a.com', 'b.com', 'nodot', ''], {
      baseUrl: 'http://x',
      deadline: 1e9,
      creditBudget: 0,
    });
    run.addCached({ 'a.com': { domain: 'a.com', da: 1, pa: 1, mr: 1, spam_score: 1 } as never });
    expect(run.next(0)).toEqual({ type: 'done' });
    const kinds = run
      .report()
      .outcomes.map((o) => (o.kind === 'record' ? 'record' : o.kind === 'skip' ? o.reason : o.code));
    expect(kinds).toEqual(['record', 'credit_budget', 'invalid_url_format', 'empty_url']);
  });

  test('lookup_failed answers bill nothing, so the credits they did not spend go to the next domains', () => {
    const sandbox = sandboxOf({ maxUrlsPerRequest: 5 }, { lookupFailedRate: 0.3, seed: 4 });
    const { report, stats } = runOnVirtualSandbox(sandbox, KEY, domains(60), { creditBudget: 25 });
    expect(stats.billed).toBe(25);
    expect(stats.urlsSubmitted).toBeGreaterThan(25); // retried and new domains used the unbilled credits
    expect(report.totals.records).toBe(25);
  });

  test('with requests in flight together, the URLs out never exceed the credits left', () => {
    const sandbox = sandboxOf({ maxUrlsPerRequest: 5 });
    const window = {
      v: 1 as const,
      at: 0,
      sends: [],
      limits: { maxUrlsPerRequest: { value: 5, exact: true, at: 0 } },
    };
    const { report, peakUnanswered, stats } = runAllVirtual(sandbox, domains(100), {
      creditBudget: 23,
      inFlight: Infinity,
      window,
    });
    expect(peakUnanswered).toBe(23); // 5 requests at once: 5 + 5 + 5 + 5 + 3
    expect(stats.requests).toBe(5);
    expect(stats.billed).toBe(23);
    expect(budgetSkips(report.outcomes)).toHaveLength(77);
  });

  test('a run stopped by its deadline ends the rows past the budget on the budget, the rest unfinished', () => {
    const sandbox = sandboxOf({ maxUrlsPerRequest: 5, urlsPerMinute: 10 });
    const { report, stats } = runOnVirtualSandbox(sandbox, KEY, domains(40), {
      creditBudget: 25,
      deadline: 30_000,
    });
    expect(stats.billed).toBe(10);
    const codes = report.outcomes.map((o) =>
      o.kind === 'error' ? o.code : o.kind === 'skip' ? o.reason : 'record',
    );
    expect(codes.filter((c) => c === 'record')).toHaveLength(10);
    expect(codes.filter((c) => c === 'unfinished')).toHaveLength(15);
    expect(codes.filter((c) => c === 'credit_budget')).toHaveLength(15);
  });
});

const plan = fc.record({
  maxUrlsPerRequest: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
  requestsPerMinute: fc.option(fc.integer({ min: 2, max: 30 }), { nil: undefined }),
  urlsPerMinute: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
});
const faults = fc.record({
  lookupFailedRate: fc.constantFrom(0, 0.1, 0.4),
  serverErrorRate: fc.constantFrom(0, 0.1, 0.3),
  html502Rate: fc.constantFrom(0, 0.1),
  shuffleData: fc.boolean(),
  domainSpelling: fc.constantFrom<'host' | 'www' | 'upper' | 'mixed'>('host', 'www', 'upper', 'mixed'),
  rateLimitHeaders: fc.boolean(),
  retryAfter: fc.constantFrom<'seconds' | 'date' | 'none'>('seconds', 'none'),
  seed: fc.integer({ min: 1, max: 1000 }),
});

describe('whatever the plan, the faults and the budget', () => {
  test('billed <= budget, every position has one outcome, none billed twice, and the budget is used before any row is refused', () => {
    fc.assert(
      fc.property(
        plan,
        faults,
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 80 }),
        fc.boolean(),
        (p, f, budget, n, together) => {
          const sandbox = sandboxOf(p, f);
          const values = [...domains(n), 'not a url', '', ...domains(Math.min(n, 5))]; // duplicates too
          const options = { creditBudget: budget, deadline: 1_800_000 };
          const { report, stats } = together
            ? runAllVirtual(sandbox, values, {
                ...options,
                inFlight: Infinity,
                window: {
                  v: 1,
                  at: 0,
                  sends: [],
                  limits: { maxUrlsPerRequest: { value: p.maxUrlsPerRequest ?? 5, exact: true, at: 0 } },
                },
              })
            : runOnVirtualSandbox(sandbox, KEY, values, options);
          const billed = stats?.billed ?? 0;
          const t = report.totals;
          expect(billed).toBeLessThanOrEqual(budget);
          expect(t.billed).toBe(billed);
          expect(report.outcomes).toHaveLength(values.length);
          expect(t.records + t.skips + t.errors).toBe(values.length);
          for (const times of Object.values(stats?.billedByDomain ?? {})) expect(times).toBe(1);
          // A domain is refused on the budget only when the credits are billed, or held by domains not sent yet.
          const notSent = new Set(
            report.outcomes.flatMap((o) =>
              (o.kind === 'error' && o.code === 'unfinished') ||
              (o.kind === 'skip' && o.reason === 'rate_limit_reached')
                ? [o.key]
                : [],
            ),
          );
          if (budgetSkips(report.outcomes).length > 0 && !report.fatal)
            expect(billed + notSent.size).toBeGreaterThanOrEqual(budget);
        },
      ),
      { numRuns: 150, seed: 21 },
    );
  });
});
