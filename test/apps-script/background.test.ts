// Background checks on the entry plan (5 URLs per request, 60 URLs per minute), on a virtual clock: formulas and
// sidebar jobs that finish by themselves, paced by the plan without sleeping, the result store, schedules.
import crypto from 'node:crypto';
import type { SandboxConfig } from '../sandbox/handler';
import type { AppsScriptStandIn } from './harness';
import { domains, metricsRow, sheetsAddress, storedKeys, useStandInEachTest } from './support';
import type { VirtualSandbox } from '../sandbox/virtual';
import { WINDOW_TRIGGERS } from '../../apps-script/src/background/dispatcher';

const KEY = 'entry-plan';
const CONFIG: SandboxConfig = {
  keys: {
    [KEY]: { maxUrlsPerRequest: 5, urlsPerMinute: 60, requestsPerMinute: 60 },
    'sandbox-expired': { expired: true },
  },
};
const MINUTE = 60_000;

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn;

const reopen = useStandInEachTest(KEY, CONFIG, (g, s) => {
  gas = g;
  sandbox = s;
});

function steps() {
  return gas.triggers.filter((t) => t.handler === 'dapaBackgroundStep');
}

function stats() {
  return sandbox.sandbox.stats()[KEY];
}

function filled(a1: string, count: number): number {
  return gas.sheet.getValues(a1).filter((row, i) => row[0] !== '' && i < count && typeof row[0] === 'number')
    .length;
}

/**
 * A sidebar check of `list` (column A, with a header) with background checks on and the sidebar closed: no
 * continueJob call, only triggers run, until the job is done or `forMs` has passed; answers when it started.
 */
async function jobInBackground(list: string[], forMs: number): Promise<number> {
  gas.sheet.setValues(`A1:A${list.length + 1}`, [['URL'], ...list.map((d) => [d])]);
  await gas.run('startBackground');
  const startedAt = gas.clock.now();
  await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
  await gas.runTriggers({
    until: startedAt + forMs,
    stop: () => gas.properties.user()[`dapa.job.${SPREADSHEET}`]?.includes('"status":"done"') ?? false,
  });
  return startedAt;
}

describe('background checks', () => {
  it('fill a =DAPA range larger than the plan allows per minute by themselves, each domain billed once', async () => {
    const list = domains(150);
    gas.sheet.setValues(
      'A2:A151',
      list.map((d) => [d]),
    );
    await gas.run('startBackground');
    const startedAt = gas.clock.now();
    await gas.edit('B2', '=DAPA(A2:A151)');
    const afterFormula = filled('B2:E151', 150);
    expect(afterFormula).toBeGreaterThan(0);
    expect(afterFormula).toBeLessThan(150);
    expect(String(gas.sheet.getValues('B151:B151')[0][0])).toMatch(/^unfinished: checking in the background/);
    let mostPending = 0;
    await gas.runTriggers({
      until: startedAt + 30 * MINUTE,
      stop: () => {
        mostPending = Math.max(mostPending, steps().length);
        return filled('B2:E151', 150) === 150;
      },
    });
    // One window's triggers at most, due at once (the first to fire works; the rest end or are deleted).
    expect(mostPending).toBeLessThanOrEqual(WINDOW_TRIGGERS);
    const took = gas.clock.now() - startedAt;
    expect(gas.sheet.getValues('B2:E151')).toEqual(list.map(metricsRow));
    // The plan's bound: 150 URLs at 60 a minute is 2.5 minutes (the first 60 go at once).
    expect(took).toBeLessThanOrEqual(1.1 * 2.5 * MINUTE);
    expect(Object.values(stats().billedByDomain).every((n) => n === 1)).toBe(true);
    expect(stats().billed).toBe(150);
    // Steps sleep through windows within the day's sleep budget (30 minutes, a third of the consumer quota).
    expect(gas.triggerRuntimeMs()).toBeLessThanOrEqual(30 * MINUTE);
    // Done, no step stays scheduled, and no fired trigger lingers in the project's list (the hourly watch stays).
    expect(steps()).toEqual([]);
    expect(gas.triggers.map((t) => t.handler).sort()).toEqual(['dapaBackgroundWatch', 'dapaOnEdit']);
  });

  it('keep a sidebar check going after the sidebar is closed, and the sidebar sees where it stands', async () => {
    const list = domains(300, 'job');
    const startedAt = await jobInBackground(list, 30 * MINUTE);
    const took = gas.clock.now() - startedAt;
    const job = await gas.run<{ status: string; done: number; total: number }>('getJob');
    expect(job).toMatchObject({ status: 'done', done: 300, total: 300 });
    expect(gas.sheet.getValues('B2:E301')).toEqual(list.map(metricsRow));
    expect(took).toBeLessThanOrEqual(1.1 * 5 * MINUTE);
    expect(stats().billed).toBe(300);
    // Steps wait for the window inside a step rather than schedule one that comes up to a minute late, within the
    // day's sleep budget (30 minutes, a third of the consumer trigger quota): see step.ts.
    expect(gas.triggerRuntimeMs()).toBeLessThanOrEqual(30 * MINUTE);
  });

  it('answer the same list the next day from the result store: 0 requests, 0 credits', async () => {
    const list = domains(100, 'again');
    gas.sheet.setValues(
      'A2:A101',
      list.map((d) => [d]),
    );
    await gas.run('startBackground');
    await gas.edit('B2', '=DAPA(A2:A101)');
    const t0 = gas.clock.now();
    await gas.runTriggers({ until: t0 + 30 * MINUTE, stop: () => filled('B2:E101', 100) === 100 });
    expect(filled('B2:E101', 100)).toBe(100);
    const requests = stats().requests;
    const billed = stats().billed;
    gas.clock.advance(24 * 3_600_000); // the 6-hour cache is long gone
    gas.sheet.setValues(
      'G2:G101',
      list.map((d) => [d]),
    );
    await gas.edit('H2', '=DAPA(G2:G101)');
    expect(gas.sheet.getValues('H2:K101')).toEqual(list.map(metricsRow));
    expect(stats().requests).toBe(requests);
    expect(stats().billed).toBe(billed);
    const info = await gas.run<{ savedCredits: number }>('getBackground');
    expect(info.savedCredits).toBe(100); // each reused after the cache let it go
  });

  it('stop, and say why, on an error that retrying cannot fix (an expired plan) instead of looping', async () => {
    gas.sheet.setValues(
      'A2:A81',
      domains(80).map((d) => [d]),
    );
    await gas.run('startBackground');
    await gas.edit('B2', '=DAPA(A2:A81)');
    await gas.run('saveSettings', { apiKey: 'sandbox-expired' });
    const t0 = gas.clock.now();
    const firings = await gas.runTriggers({ until: t0 + 60 * MINUTE });
    expect(firings).toBeLessThanOrEqual(3);
    const info = await gas.run<{ stopped?: string; nextStepAt?: number }>('getBackground');
    expect(info.stopped).toMatch(/plan/i);
    expect(info.nextStepAt).toBeUndefined();
    // Only the store's upkeep stays due, when the results kept pass the 30-day retention (it holds while stopped too).
    expect(
      gas.triggers.filter((t) => t.kind === 'CLOCK' && (t.dueAt ?? 0) < gas.clock.now() + 29 * 86_400_000),
    ).toEqual([]);
  });
});

describe('a Retry-After without rate-limit headers', () => {
  it('carries across steps: the step after the one a 429 stopped sends nothing before it, then finishes', async () => {
    // Another client of the key spends its request window late in a step, so the step's next request is answered
    // 429 with a Retry-After (seconds, no X-RateLimit-* headers) that ends after the step's budget. Nothing in the
    // window of this user's sends explains that wait: only the hold kept in the stored window carries it.
    const plan = sandbox.sandbox;
    const handle = plan.handle;
    const ours: { at: number; status: number; retryAfter?: number; execution?: number }[] = [];
    let burstAt: number | undefined;
    plan.handle = (req, at) => {
      const step = gas.executions.find(
        (e) => e.status === 'running' && e.functionName === 'dapaBackgroundStep',
      );
      // Another client of the key spends the window during a step, once the job has run a few minutes.
      if (burstAt === undefined && step && ours.length > 0 && at - ours[0].at >= 200_000) {
        burstAt = at;
        const other = { ...req, body: JSON.stringify({ urls: ['other-client.example'] }) };
        for (let i = 0; i < 100 && handle(other, at).status !== 429; i++);
      }
      const out = handle(req, at);
      const retryAfter = out.headers['retry-after'];
      expect(Object.keys(out.headers).filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
      ours.push({
        at,
        status: out.status,
        retryAfter: retryAfter ? Number(retryAfter) : undefined,
        execution: step?.id,
      });
      return out;
    };
    try {
      const list = domains(600, 'hold');
      await jobInBackground(list, 60 * MINUTE);
      expect(burstAt).toBeDefined();
      const limited = ours.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      // The first step a 429 stopped, and when its Retry-After (the latest of that step's 429s) ends.
      const stoppedIn = limited[0].execution;
      const inStep = limited.filter((r) => r.execution === stoppedIn && r.retryAfter !== undefined);
      const holdEnds = Math.max(...inStep.map((r) => r.at + (r.retryAfter ?? 0) * 1000));
      // That step ended before the Retry-After time: the wait is the next step's to honour.
      const stopped = gas.executions.find((e) => e.id === stoppedIn);
      expect(stopped?.startedAt).toBeDefined();
      const stepEnd = (stopped?.startedAt ?? 0) + (stopped?.elapsedMs ?? Infinity);
      expect(stepEnd).toBeLessThan(holdEnds);
      const later = ours.filter((r) => r.at > stepEnd);
      expect(later.length).toBeGreaterThan(0);
      expect(later.filter((r) => r.at < holdEnds)).toEqual([]);
      expect(inStep).toEqual(limited);
      // The server had no cause to refuse again (a 422 of a probe above the guessed rate may come, as ever).
      expect(later.filter((r) => r.status === 429)).toEqual([]);
      const job = await gas.run<{ status: string; done: number; total: number }>('getJob');
      expect(job).toMatchObject({ status: 'done', done: 600, total: 600 });
      expect(gas.sheet.getValues('B2:E601')).toEqual(list.map(metricsRow));
      // Each domain of the list billed once (the other client's requests bill its own domain).
      const { billed, billedByDomain } = stats();
      expect(list.filter((d) => billedByDomain[d] !== 1)).toEqual([]);
      expect(billed - (billedByDomain['other-client.example'] ?? 0)).toBe(600);
    } finally {
      plan.handle = handle;
    }
  });
});

describe('the daily trigger quota', () => {
  it.each(['first-request', 'utc-day'] as const)(
    'stops the steps when it is spent, and the hourly watch resumes them when it is back (%s); nothing is lost',
    async (quotaReset) => {
      // A few steps' runtime a day (a step works a window, seconds, and sleeps no longer than that).
      await reopen({ virtualLatencyMs: 300, triggerQuotaMs: 8_000, quotaReset });
      // Start at 23:00 UTC, so that the quota runs out before midnight and comes back after it (at midnight, or 24
      // hours after the first step).
      const day = Math.floor(gas.clock.now() / 86_400_000) + 1;
      gas.clock.advance(day * 86_400_000 - 3_600_000 - gas.clock.now());
      const list = domains(400, `quota-${quotaReset}`);
      gas.sheet.setValues(
        'A2:A401',
        list.map((d) => [d]),
      );
      const billedBefore = stats()?.billed ?? 0;
      await gas.run('startBackground');
      await gas.edit('B2', '=DAPA(A2:A401)');
      await gas.runTriggers({ until: (day + 2) * 86_400_000, stop: () => filled('B2:E401', 400) === 400 });
      expect(gas.refusedTriggers.length).toBeGreaterThan(0);
      expect(gas.refusedTriggers[0].at).toBeLessThan(day * 86_400_000);
      expect(filled('B2:E401', 400)).toBe(400);
      expect(gas.clock.now()).toBeGreaterThan(day * 86_400_000);
      expect(stats().billed - billedBefore).toBe(400);
    },
  );
});

describe('what the formulas show (issue 34, item 6)', () => {
  it("is kept by the owner's background, so the next day nothing of it is paid again", async () => {
    const list = domains(20, 'shown');
    gas.sheet.setValues(
      'A2:A21',
      list.map((d) => [d]),
    );
    // The formula fills on its own (its records are only cached), then background checks go on in the spreadsheet.
    await gas.edit('B2', '=DAPA(A2:A21)');
    expect(filled('B2:E21', 20)).toBe(20);
    const billed = stats().billed;
    const keptBefore = storedKeys(gas);
    expect(list.filter((d) => keptBefore.has(d))).toEqual([]);
    await gas.run('startBackground');
    await gas.run('refreshDapaFormulas');
    await gas.runTriggers({ until: gas.clock.now() + 10 * MINUTE });
    const kept = storedKeys(gas);
    expect(list.filter((d) => !kept.has(d))).toEqual([]);
    // Two days later (the cache long gone) the same domains in another formula cost nothing.
    gas.clock.advance(48 * 3_600_000);
    gas.sheet.setFormula('H2', '=DAPA(A2:A21)');
    await gas.recalculate();
    expect(filled('H2:K21', 20)).toBe(20);
    expect(stats().billed).toBe(billed);
  });
});

describe('the result store', () => {
  it('keeps results whatever the service address hashes to (a hash led by "-" is not read as a formula)', async () => {
    // A base URL (the same service: dot segments fall away) whose SHA-256 in web-safe base64 starts with "-".
    let base = '';
    for (let i = 0; !base; i++) {
      const candidate = `${sheetsAddress(sandbox.url)}/v${i}/..`;
      if (crypto.createHash('sha256').update(candidate).digest('base64url').startsWith('-')) base = candidate;
    }
    await gas.run('saveSettings', { environment: 'custom', baseUrl: base });
    const list = domains(5, 'hash');
    gas.sheet.setValues('A1:A6', [['URL'], ...list.map((d) => [d])]);
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    expect(await gas.run('continueJob')).toMatchObject({ status: 'done', counts: { billed: 5 } });
    gas.clock.advance(7 * 3_600_000); // past the cache: only the store can answer
    expect(await gas.runCustomFunction('=DAPA(A2:A6)', { cell: 'H2' })).toEqual(list.map(metricsRow));
    expect(stats().billed).toBe(5);
  });

  it('is ignored by "Check again": those domains are checked and billed anew', async () => {
    const list = domains(10, 'fresh');
    gas.sheet.setValues('A1:A11', [['URL'], ...list.map((d) => [d])]);
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    expect(await gas.run('continueJob')).toMatchObject({ status: 'done', counts: { billed: 10 } });
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    expect(await gas.run('continueJob')).toMatchObject({ status: 'done', counts: { billed: 0, cached: 10 } });
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true, fresh: true });
    expect(await gas.run('continueJob')).toMatchObject({ status: 'done', counts: { billed: 10, cached: 0 } });
    expect(stats().billed).toBe(20);
    expect(gas.sheet.getValues('B2:E11')).toEqual(list.map(metricsRow));
  });

  it('keeps results for the days the user chose, then checks them again', async () => {
    const list = domains(10, 'keep');
    gas.sheet.setValues('A1:A11', [['URL'], ...list.map((d) => [d])]);
    expect(await gas.run('setKeepDays', 2)).toMatchObject({ retentionDays: 2 });
    await expect(gas.run('setKeepDays', 0)).rejects.toThrow('Keep results for 1 to 365 days, not "0".');
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    await gas.run('continueJob');
    gas.clock.advance(36 * 3_600_000); // 1.5 days: kept
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    expect(await gas.run('continueJob')).toMatchObject({ counts: { billed: 0 } });
    gas.clock.advance(24 * 3_600_000); // 2.5 days: gone
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    expect(await gas.run('continueJob')).toMatchObject({ counts: { billed: 10 } });
  });
});

describe('scheduled refresh', () => {
  it("re-checks the sheet's formulas every day, each domain billed once a day, and the formulas show it", async () => {
    const list = domains(30, 'daily');
    gas.sheet.setValues(
      'A2:A31',
      list.map((d) => [d]),
    );
    await gas.run('startBackground');
    await gas.edit('B2', '=DAPA(A2:A31)');
    await gas.runTriggers({ until: gas.clock.now() + 10 * MINUTE });
    expect(stats().billed).toBe(30);
    const info = await gas.run<{ schedule?: { every: string; nextAt: number } }>('setSchedule', {
      every: 'daily',
      target: 'formulas',
    });
    expect(info.schedule?.every).toBe('daily');
    const due = info.schedule?.nextAt ?? 0;
    await gas.runTriggers({ until: due + 10 * MINUTE });
    expect(stats().billed).toBe(60);
    expect(Object.values(stats().billedByDomain).every((n) => n === 2)).toBe(true);
    expect(gas.sheet.getValues('B2:E31')).toEqual(list.map(metricsRow));
    // The next refresh is pending, a day later.
    const next = await gas.run<{ nextStepAt?: number; schedule?: { nextAt: number } }>('getBackground');
    expect(next.schedule?.nextAt).toBe(due + 24 * 3_600_000);
    expect(next.nextStepAt).toBeLessThanOrEqual(due + 24 * 3_600_000 + 1_000); // after() takes whole ms
  });

  it('re-checks the last sidebar range every week into its columns, with a "Checked at" column', async () => {
    const list = domains(40, 'weekly');
    gas.sheet.setValues('A1:A41', [['URL'], ...list.map((d) => [d])]);
    await gas.run('startBackground');
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    await gas.runTriggers({ until: gas.clock.now() + 10 * MINUTE });
    expect(stats().billed).toBe(40);
    const info = await gas.run<{ schedule?: { nextAt: number } }>('setSchedule', {
      every: 'weekly',
      target: 'range',
    });
    const due = info.schedule?.nextAt ?? 0;
    expect(due - gas.clock.now()).toBeGreaterThan(6.9 * 24 * 3_600_000);
    await gas.runTriggers({ until: due + 10 * MINUTE });
    expect(stats().billed).toBe(80);
    expect(gas.sheet.getValues('B2:E41')).toEqual(list.map(metricsRow));
    expect(gas.sheet.getValues('G1:G1')).toEqual([['Checked at']]);
    const stamps = gas.sheet.getValues('G2:G41').map((row) => row[0]);
    expect(stamps.every((v) => v instanceof Date && v.getTime() >= due)).toBe(true);
    await expect(gas.run('setSchedule', { every: 'hourly', target: 'range' })).rejects.toThrow(
      'Refresh "daily", "weekly" or "monthly", not "hourly".',
    );
  });
});

const SPREADSHEET = '1StandInSpreadsheetId0000000000000000000000';
