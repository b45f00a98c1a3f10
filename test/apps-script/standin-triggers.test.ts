// The stand-in's installable triggers, checked with small scripts: ScriptApp's limits (20 per user, none from a
// custom function), firing late on the virtual clock, the 6-minute limit and the daily trigger runtime quota.
import { AppsScriptError, type AppsScriptStandIn, loadAppsScript } from './harness';

const SCRIPT = `
function plant(n, ms) {
  for (var i = 0; i < n; i++) ScriptApp.newTrigger('tick').timeBased().after(ms).create();
  return ScriptApp.getProjectTriggers().length;
}
function clearAll() {
  ScriptApp.getProjectTriggers().forEach(function (t) { ScriptApp.deleteTrigger(t); });
  return ScriptApp.getProjectTriggers().length;
}
function everyMinute() { ScriptApp.newTrigger('work').timeBased().everyMinutes(1).create(); }
function tick(e) {
  var props = PropertiesService.getScriptProperties();
  props.setProperty('ticks', String(Number(props.getProperty('ticks') || 0) + 1));
  props.setProperty('lastAt', String(Date.now()));
  props.setProperty('uid', String(e && e.triggerUid));
}
function work() { Utilities.sleep(299000); Utilities.sleep(299000); tick(); }
function slow() { Utilities.sleep(30000); tick(); }
function plantSlow(n, ms) {
  for (var i = 0; i < n; i++) ScriptApp.newTrigger('slow').timeBased().after(ms).create();
}
/** @customfunction */
function SCHEDULE() { ScriptApp.newTrigger('tick').timeBased().after(1000).create(); return 1; }
`;

let gas: AppsScriptStandIn;
afterEach(async () => {
  await gas.close();
});

describe('ScriptApp in the stand-in', () => {
  it.each([false, true])(
    'two triggers due 10 s apart, each running 30 s: side by side with overlappingTriggers (%s), else one after the other',
    async (overlappingTriggers) => {
      const lateness = [0, 10_000];
      gas = await loadAppsScript({
        code: SCRIPT,
        clock: 'virtual',
        overlappingTriggers,
        triggerDelayMs: () => lateness.shift() ?? 0,
      });
      const t0 = gas.clock.now();
      await gas.run('plantSlow', 2, 60_000);
      expect(await gas.runTriggers({ until: t0 + 3_600_000 })).toBe(2);
      const runs = gas.executions.filter((e) => e.functionName === 'slow');
      expect(runs).toHaveLength(2);
      const [a, b] = runs.map((e) => e.startedAt - t0);
      expect(a).toBeGreaterThanOrEqual(60_000);
      // Google starts a due trigger whatever else of the user runs (30 simultaneous executions per user).
      if (overlappingTriggers) expect(b - a).toBeLessThan(11_000);
      else expect(b - a).toBeGreaterThanOrEqual(30_000);
      expect(gas.properties.script().ticks).toBe('2');
    },
  );

  it('two triggers due at once fire each at its own lateness: the less late one first', async () => {
    const lateness = [40_000, 10_000];
    gas = await loadAppsScript({
      code: SCRIPT,
      clock: 'virtual',
      overlappingTriggers: true,
      triggerDelayMs: () => lateness.shift() ?? 0,
    });
    const t0 = gas.clock.now();
    await gas.run('plantSlow', 2, 60_000);
    expect(await gas.runTriggers({ until: t0 + 3_600_000 })).toBe(2);
    const starts = gas.executions
      .filter((e) => e.functionName === 'slow')
      .map((e) => e.startedAt - t0)
      .sort((a, b) => a - b);
    expect(starts).toHaveLength(2);
    // Due at 60 s: the first fires 10 s late, the other 40 s late (not both at the later draw).
    expect(starts[0]).toBeGreaterThanOrEqual(70_000);
    expect(starts[0]).toBeLessThan(71_000);
    expect(starts[1]).toBeGreaterThanOrEqual(100_000);
    expect(starts[1]).toBeLessThan(101_000);
  });

  it("allows 20 triggers per user and throws Apps Script's error for the 21st", async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    expect(await gas.run('plant', 20, 60_000)).toBe(20);
    await expect(gas.run('plant', 1, 60_000)).rejects.toThrow(
      'This script has too many triggers. Triggers must be deleted from the script before more can be added.',
    );
    expect(await gas.run('clearAll')).toBe(0);
    // Another user has 20 of their own.
    expect(await gas.asUser('other@example.com').run('plant', 20, 60_000)).toBe(20);
  });

  it('refuses to create a trigger from a custom function', async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    const error = await gas.runCustomFunction('=SCHEDULE()').catch((e: AppsScriptError) => e);
    expect((error as AppsScriptError).message).toBe(
      'You do not have permission to call ScriptApp.newTrigger',
    );
    expect(gas.triggers).toEqual([]);
  });

  it('fires a one-off trigger late by the set delay on the virtual clock; it stays listed until deleted', async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual', triggerDelayMs: 7_000 });
    const t0 = gas.clock.now();
    await gas.run('plant', 1, 60_000);
    const firings = await gas.runTriggers({ until: t0 + 3_600_000 });
    expect(firings).toBe(1);
    const props = gas.properties.script();
    expect(props.ticks).toBe('1');
    expect(Number(props.lastAt) - t0).toBeGreaterThanOrEqual(67_000);
    expect(Number(props.lastAt) - t0).toBeLessThan(70_000);
    expect(props.uid).toBe(gas.triggers[0].id);
    expect(gas.triggers).toHaveLength(1);
    expect(gas.triggers[0].spent).toBe(true);
  });

  it('stops a trigger execution at 6 minutes and stops firing for the day once 90 minutes are used', async () => {
    // On time: the count of runs below assumes every-minute firings that are not late.
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual', triggerDelayMs: 0 });
    // Start at 00:01 UTC of the next day, so that the day does not end during the test.
    const day = Math.floor(gas.clock.now() / 86_400_000) + 1;
    gas.clock.advance(day * 86_400_000 + 60_000 - gas.clock.now());
    await gas.run('everyMinute');
    // Each run sleeps 10 minutes: killed at 6. 90 minutes a day allow 15 such runs.
    const endOfDay = (day + 1) * 86_400_000 - 1;
    await gas.runTriggers({ until: endOfDay, maxFirings: 40 });
    const runs = gas.executions.filter((e) => e.kind === 'trigger');
    expect(runs.length).toBe(15);
    expect(runs.every((e) => e.status === 'killed' && e.error === 'Exceeded maximum execution time')).toBe(
      true,
    );
    expect(gas.triggerRuntimeMs(day)).toBeGreaterThanOrEqual(90 * 60_000);
    expect(gas.refusedTriggers.length).toBeGreaterThan(0);
    expect(gas.properties.script().ticks).toBeUndefined();
    // 15 executions stopped at their limit take a few real seconds each on a loaded machine.
  }, 60_000);
});
