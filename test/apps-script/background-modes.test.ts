// Background checks as Google really runs them (issue 13), in the stand-in that follows Google's documentation:
// triggers late by 0–60 s, Sheets keeping a custom function's result for identical arguments, the Editor add-on's
// trigger rules (one time-driven trigger per user per document, no recurrence under an hour), an open sidebar, a
// refused trigger, a non-owner editor and a blocked network. Entry plan: 5 URLs per request, 60 URLs a minute.
import type { AppsScriptStandIn, LoadOptions } from './harness';
import type { TriggerTable } from './standin/script-app';
import { WINDOW_TRIGGERS } from '../../apps-script/src/background/dispatcher';
import {
  domains,
  ENTRY_CONFIG as CONFIG,
  ENTRY_KEY as KEY,
  entryPlanSuite,
  metricRows,
  metricsRow,
} from './support';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const OWN = ['dapaBackgroundStep', 'dapaBackgroundWatch', 'dapaOnEdit'];

const suite = entryPlanSuite();
let gas: AppsScriptStandIn;

async function open(options: LoadOptions = {}): Promise<void> {
  gas = await suite.open(options);
}

function filled(a1: string): number {
  return metricRows(gas, a1);
}

async function formula(count: number): Promise<{ list: string[]; range: string }> {
  const list = domains(count, 'modes');
  gas.sheet.setValues(
    `A2:A${count + 1}`,
    list.map((d) => [d]),
  );
  await gas.edit('B2', `=DAPA(A2:A${count + 1})`);
  return { list, range: `B2:E${count + 1}` };
}

const billedOnce = (count: number) => suite.billedOnce(count);

describe('a bound script, triggers late by 0–60 s', () => {
  it.each([false, true])(
    'fills a =DAPA range by itself, Sheets keeping identical results: %s (refresh through a version cell)',
    async (keepsIdenticalResults) => {
      await open({ keepsIdenticalResults });
      await gas.run('startBackground');
      const t0 = gas.clock.now();
      const { list, range } = await formula(200);
      await gas.runTriggers({ until: t0 + 30 * MINUTE, stop: () => filled(range) === 200 });
      expect(gas.sheet.getValues(range)).toEqual(list.map(metricsRow));
      expect(gas.clock.now() - t0).toBeLessThanOrEqual(1.25 * (200 / 60) * MINUTE);
      billedOnce(200);
      // Refreshed through its block's version slot (one cell of the 128-row hidden sheet _dapa_versions).
      expect(gas.sheet.getFormulas('B2')[0][0]).toMatch(
        /^=DAPA\(A2:A201,,,'_dapa_versions'!\$A\$([1-9]|[1-9]\d|1[01]\d|12[0-8])\)$/,
      );
      const info = await gas.run<{ rowsLeft: number; mode: string; creditsUsed: number }>('getBackground');
      expect(info).toMatchObject({ rowsLeft: 0, mode: 'bound', creditsUsed: 140 });
    },
  );

  it('a step for the window gets WINDOW_TRIGGERS triggers due at once; one that finds the step running ends and sets none', async () => {
    // Requests of 3 s: the step is still at work when its twin fires half a second after it, whatever the machine's load.
    await open({ triggerDelayMs: 0, virtualLatencyMs: 3_000 });
    await gas.run('startBackground');
    const { range } = await formula(600);
    await gas.runTriggers({ until: gas.clock.now() + 30 * MINUTE, maxFirings: 1 });
    const pending = () => gas.triggers.filter((t) => t.handler === 'dapaBackgroundStep' && !t.spent);
    expect(WINDOW_TRIGGERS).toBe(12);
    expect(pending()).toHaveLength(WINDOW_TRIGGERS);
    // Due at once (each after() counts from its own creation, a few ms apart).
    const dues = pending().map((t) => t.dueAt as number);
    expect(Math.max(...dues) - Math.min(...dues)).toBeLessThan(1_000);
    // Both fire at once (each late by its own draw; here the same): the first to claim the step works, the other
    // finds it running and ends without setting a trigger (the running step sets the next ones at its end).
    const due = pending()[0].dueAt as number;
    const createdBefore = gas.createdTriggers.length;
    const filledBefore = filled(range);
    type Books = { stepWorkMs?: number; besideStepMs?: number };
    const books = () => JSON.parse(gas.properties.user()['dapa.dispatcher'] ?? '{}') as Books;
    const workBefore = books().stepWorkMs;
    expect(workBefore).toBeGreaterThan(0); // what the first step worked
    expect(books().besideStepMs).toBeUndefined();
    const [first, second] = [
      gas.runWith({ at: due }, 'dapaBackgroundStep'),
      // It adds its runtime to the day's, and its work to what the window's executions worked beside the step, not
      // to the average of what a window works (only a step adds to it, so such executions never pull it down).
      gas.runWith({ at: due + 500 }, 'dapaBackgroundStep').then(books),
    ];
    const [, afterSecond] = await Promise.all([first, second]);
    expect(afterSecond.stepWorkMs).toBe(workBefore);
    expect(afterSecond.besideStepMs).toBeGreaterThan(0);
    expect(afterSecond.besideStepMs).toBeLessThan(2_000);
    // The step, ending after it, adds it to its window's work and starts the next window's count afresh.
    expect(books().besideStepMs).toBeUndefined();
    expect(books().stepWorkMs).not.toBe(workBefore);
    const runs = gas.executions.filter((e) => e.functionName === 'dapaBackgroundStep').slice(-2);
    expect(runs).toHaveLength(2);
    const [long, short] = [...runs].sort((a, b) => (b.elapsedMs ?? 0) - (a.elapsedMs ?? 0));
    const createdAfter = gas.createdTriggers.slice(createdBefore);
    // It read the dispatcher's at-work note (in the same cache read as the daily-quota note) and ended at once: no
    // look at the spreadsheets, no step lease (that longer way took about 350 ms).
    expect(short.elapsedMs ?? Infinity).toBeLessThan(200);
    // Only the step that worked set triggers: a window's, at its end (long after the other ended).
    expect(createdAfter.filter((t) => t.handler === 'dapaBackgroundStep')).toHaveLength(WINDOW_TRIGGERS);
    const longEnd = long.startedAt + (long.elapsedMs ?? 0);
    expect(createdAfter.every((t) => t.createdAt >= longEnd - 5_000)).toBe(true);
    expect(filled(range)).toBeGreaterThan(filledBefore);
    billedOnce(filled(range));
  });

  it('goes on when a step ends on a refused probe, with every trigger 50 s late: each window waits for the lateness', async () => {
    // Triggers always 50 s late: the first step's probe above the guessed rate is refused near the step's end. A step
    // sleeps no longer than it works (a trigger execution holds one of the script's executions while it sleeps), so
    // the window's twelve triggers, all late by the same 50 s, cost each window about that: the price of not sleeping
    // when Google's lateness does not vary (with lateness that varies, the earliest of twelve comes within seconds).
    await open({ triggerDelayMs: 50_000 });
    await gas.run('startBackground');
    const t0 = gas.clock.now();
    const { list, range } = await formula(500);
    await gas.runTriggers({ until: t0 + 40 * MINUTE, stop: () => filled(range) === 500 });
    expect(gas.sheet.getValues(range)).toEqual(list.map(metricsRow));
    expect(suite.sandbox().sandbox.stats()[KEY].responsesByStatus[422]).toBeGreaterThanOrEqual(2); // 5 per request, a probe
    expect(gas.clock.now() - t0).toBeLessThanOrEqual(1.03 * (500 / 60) * MINUTE + 9 * 50_000);
    billedOnce(500);
  });

  it('stops after one request when the network is blocked (403), not after a window of parallel requests', async () => {
    await open({ triggerDelayMs: 0 });
    await gas.run('startBackground');
    const { range } = await formula(150);
    suite.sandbox().sandbox.configure({ ...CONFIG, faults: { blockNetwork: true } });
    const before = suite.sandbox().sandbox.stats()['(blocked)']?.requests ?? 0;
    await gas.runTriggers({ until: gas.clock.now() + 30 * MINUTE });
    expect((suite.sandbox().sandbox.stats()['(blocked)']?.requests ?? 0) - before).toBe(1);
    expect(filled(range)).toBe(60);
    const info = await gas.run<{ stopped?: string }>('getBackground');
    expect(info.stopped).toBeDefined();
    // Only the store's upkeep stays due, when the results kept pass the 30-day retention (it holds while stopped too).
    expect(
      gas.triggers.filter((t) => t.kind === 'CLOCK' && (t.dueAt ?? 0) < gas.clock.now() + 29 * 86_400_000),
    ).toEqual([]);
  });
});

describe('a 403 block that starts between two background steps', () => {
  it('costs the next step one request: every execution opens with one, whatever the last one saw', async () => {
    await open({ triggerDelayMs: 0 });
    await gas.run('startBackground');
    const { range } = await formula(300);
    // Steps whose checks were answered (the network worked a moment ago; a step works one window) ...
    for (let i = 0; i < 10 && filled(range) <= 60; i++)
      await gas.runTriggers({ until: gas.clock.now() + 30 * MINUTE, maxFirings: 1 });
    const filledBefore = filled(range);
    expect(filledBefore).toBeGreaterThan(60);
    // ... then Google's address is blocked before the next one.
    suite.sandbox().sandbox.configure({ ...CONFIG, faults: { blockNetwork: true } });
    const blocked = () => suite.sandbox().sandbox.stats()['(blocked)']?.requests ?? 0;
    const before = blocked();
    // The next step (a window's triggers: the first to fire works) meets the block with one request and stops.
    await gas.runTriggers({ until: gas.clock.now() + 30 * MINUTE });
    expect(blocked() - before).toBe(1);
    expect(filled(range)).toBe(filledBefore);
  });
});

describe('an Editor add-on (Google refuses one-off triggers under an hour)', () => {
  it('with the sidebar closed: filled within 2 hours, no trigger error shown, never two time-driven triggers', async () => {
    await open({ installAs: 'addon' });
    const info = await gas.run<{ mode: string; cadence: string; stopped?: string }>('startBackground');
    expect(info).toMatchObject({ mode: 'addon', cadence: 'hourly' });
    const t0 = gas.clock.now();
    const { list, range } = await formula(500);
    await gas.runTriggers({ until: t0 + 3 * HOUR, stop: () => filled(range) === 500 });
    expect(gas.sheet.getValues(range)).toEqual(list.map(metricsRow));
    expect(gas.clock.now() - t0).toBeLessThanOrEqual(2 * HOUR);
    expect(gas.maxClockTriggers).toBeLessThanOrEqual(1);
    expect(gas.ui.events.filter((e) => e.type === 'alert')).toEqual([]);
    expect((await gas.run<{ stopped?: string }>('getBackground')).stopped).toBeUndefined();
    billedOnce(500);
  });

  it('with the sidebar open: the sidebar drives the formulas at the plan’s pace, no trigger needed', async () => {
    await open({ installAs: 'addon' });
    const t0 = gas.clock.now();
    const { list, range } = await formula(300);
    gas.openSidebar({
      call: 'driveBackground',
      everyMs: 30_000,
      next: (info) => (info as { driveAt?: number }).driveAt,
    });
    await gas.runTriggers({ until: t0 + 30 * MINUTE, stop: () => filled(range) === 300 });
    expect(gas.sheet.getValues(range)).toEqual(list.map(metricsRow));
    expect(gas.clock.now() - t0).toBeLessThanOrEqual(1.1 * 5 * MINUTE);
    expect(gas.triggers).toEqual([]);
    billedOnce(300);
  });

  it('when Google refuses its trigger, turning on leaves no trigger behind and says what to do', async () => {
    await open({ installAs: 'addon' });
    // Another time-driven trigger of this add-on in this document (an older version's): the one allowed.
    const table = (gas as unknown as { world: { triggers: TriggerTable } }).world.triggers;
    table.add({
      handler: 'oldVersionStep',
      kind: 'CLOCK',
      user: 'owner@example.com',
      dueAt: gas.clock.now() + HOUR,
      everyMs: HOUR,
      createdAt: gas.clock.now(),
    });
    await expect(gas.run('startBackground')).rejects.toThrow(/could not start.*none was left installed/s);
    expect(gas.triggers.filter((t) => OWN.includes(t.handler))).toEqual([]);
    expect(gas.refusedTriggerCreations.length).toBeGreaterThan(0);
    expect((await gas.run<{ on: boolean }>('getBackground')).on).toBe(false);
  });
});

describe('a shared sheet', () => {
  it("shows results in a non-owner editor's =DAPA (the owner's key; its saves are refused and caught)", async () => {
    await open({ triggerDelayMs: 0 });
    gas.asUser('editor@example.com');
    const { list, range } = await formula(20);
    expect(gas.sheet.getValues(range)).toEqual(list.map(metricsRow));
  });
});
