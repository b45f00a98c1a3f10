// "Credits saved": a kept result reused after the 6-hour cache let it go counts once per user, however often a range
// recalculates, and counting it writes nothing to a cache (a range writes the cache only for what it newly learned);
// two executions of the user counting at once both keep their marks (the user lock).
// The real built Code.js in the stand-in, on a virtual clock, against the sandbox's entry plan.
import type { SandboxConfig } from '../sandbox/handler';
import type { AppsScriptStandIn } from './harness';
import { domains, metricsRow, useStandInEachTest } from './support';
import type { VirtualSandbox } from '../sandbox/virtual';

const KEY = 'entry-plan';
const CONFIG: SandboxConfig = {
  keys: { [KEY]: { maxUrlsPerRequest: 5, urlsPerMinute: 60, requestsPerMinute: 60 } },
};
const MINUTE = 60_000;
const DAY = 86_400_000;

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn;

const reopen = useStandInEachTest(KEY, CONFIG, (g, s) => {
  gas = g;
  sandbox = s;
});

function billed(): number {
  return sandbox.sandbox.stats()[KEY].billed;
}

async function saved(): Promise<number> {
  return (await gas.run<{ savedCredits: number }>('getBackground')).savedCredits;
}

/** The records in the caches (their keys: dapa1:<service digest>:<domain>; the queue is dapa1:q:...). */
function cachedRecords(): string[] {
  const keys = [...gas.cache.document.keys(), ...gas.cache.user('owner@example.com').keys()];
  return keys.filter((k) => /^dapa1:[^:]{12}:/.test(k));
}

/** A =DAPA range over `n` domains in column A, filled by background checks; answers its formula. */
async function filledRange(n: number): Promise<{ list: string[]; formula: string }> {
  const list = domains(n, 'saved');
  gas.sheet.setValues(
    `A2:A${n + 1}`,
    list.map((d) => [d]),
  );
  await gas.run('startBackground');
  const formula = `=DAPA(A2:A${n + 1})`;
  await gas.edit('B2', formula);
  const done = () => gas.sheet.getValues(`B2:B${n + 1}`).every((row) => typeof row[0] === 'number');
  await gas.runTriggers({ until: gas.clock.now() + (n / 60 + 30) * MINUTE, stop: done });
  expect(done()).toBe(true);
  return { list, formula };
}

describe('credits the result store saved', () => {
  it('count each kept domain once over three recalculations of a range of 990, writing no cache', async () => {
    const n = 990; // more than an execution of the old count took in (200), near what a cache holds (1,000 items)
    const { list, formula } = await filledRange(n);
    expect(billed()).toBe(n);
    expect(await saved()).toBe(0); // all fresh: the cache still had them
    expect(cachedRecords().length).toBeGreaterThan(0);
    gas.clock.advance(DAY); // the 6-hour cache is long gone
    for (let i = 0; i < 3; i++) {
      const grid = await gas.runCustomFunction(formula);
      expect(grid.slice(0, 3)).toEqual(list.slice(0, 3).map(metricsRow));
    }
    expect(cachedRecords()).toEqual([]); // none went back into a cache (it was empty after the day)
    expect(billed()).toBe(n);
    expect(await saved()).toBe(n);
  }, 60_000);

  it('keep both marks when two executions of the user reuse other kept results at the same time', async () => {
    // Every service call takes 20 ms, during which the other execution runs: the two interleave call by call.
    await reopen({ virtualLatencyMs: 300, triggerDelayMs: 2_000, serviceCallMs: 20 });
    const { list } = await filledRange(120);
    gas.clock.advance(DAY);
    const before = gas.executions.length;
    gas.sheet.setFormula('H2', '=DAPA(A2:A61)');
    gas.sheet.setFormula('N2', '=DAPA(A62:A121)');
    await gas.recalculate(); // the two formulas side by side, each its own execution of the owner
    const runs = gas.executions.slice(before).filter((e) => e.kind === 'custom-function');
    expect(runs.map((e) => e.status)).toEqual(['ok', 'ok']);
    const [a, b] = runs.map((e) => [e.startedAt, e.startedAt + (e.elapsedMs ?? 0)]);
    expect(a[0] < b[1] && b[0] < a[1]).toBe(true); // at the same time
    expect(gas.sheet.getValues('H2:K61')).toEqual(list.slice(0, 60).map(metricsRow));
    expect(gas.sheet.getValues('N2:Q61')).toEqual(list.slice(60).map(metricsRow));
    expect(await saved()).toBe(120); // 60 + 60: neither execution's marks were written over
  }, 60_000);

  it("are the user's own: another user's recalculations neither add to nor take from them", async () => {
    const { formula } = await filledRange(60);
    gas.clock.advance(DAY);
    await gas.runCustomFunction(formula);
    expect(await saved()).toBe(60);
    gas.asUser('editor@example.com');
    // An editor's formula reads the owner's properties read-only: its count is refused and caught, the cells fill.
    const grid = await gas.runCustomFunction(formula);
    expect(grid.every((row) => typeof row[1] === 'number')).toBe(true);
    expect(await saved()).toBe(0);
    gas.asUser('owner@example.com');
    await gas.runCustomFunction(formula);
    expect(await saved()).toBe(60);
  }, 60_000);
});
