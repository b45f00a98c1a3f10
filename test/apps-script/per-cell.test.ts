// =DAPA(A2) dragged down, as spreadsheet people write it: every cell its own custom-function execution, many side by
// side (the stand-in's customFunctionsAtOnce), through the built bundle on a virtual clock. Cells running at once
// share requests and fill them with the domains of cells not yet running; no cell runs past its 30 seconds, nothing
// is billed twice, blank rows cost nothing, and each cell says what is true (the budget, a refused permission).
import type { SandboxConfig } from '../sandbox/handler';
import type { VirtualSandbox } from '../sandbox/virtual';
import type { AppsScriptStandIn, LoadOptions } from './harness';
import { SCOPES } from './standin/scopes';
import { domains, metricRows, useVirtualSandbox, virtualStandIn } from './support';

// Hundreds of executions on the virtual clock take a few real seconds on a busy machine: never jest's 5 s default.
jest.setTimeout(120_000);

const RPM = 'per-cell-rpm'; // 50 URLs a request, 10 requests a minute
const ENTRY = 'per-cell-entry'; // the entry plan: 5 URLs a request, 60 URLs a minute
const CONFIG: SandboxConfig = {
  keys: {
    [RPM]: { maxUrlsPerRequest: 50, requestsPerMinute: 10 },
    [ENTRY]: { maxUrlsPerRequest: 5, urlsPerMinute: 60 },
  },
};

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn | undefined;
useVirtualSandbox(CONFIG, (s) => (sandbox = s));
afterEach(async () => {
  await gas?.close();
  gas = undefined;
});

async function open(key: string, options: LoadOptions): Promise<AppsScriptStandIn> {
  gas = await virtualStandIn(sandbox, key, CONFIG, {
    virtualLatencyMs: 400,
    serviceCallMs: 15,
    triggerDelayMs: 5_000,
    ...options,
  });
  return gas;
}

const stats = (key: string) => sandbox.sandbox.stats()[key];
const billedTwice = (key: string) =>
  Object.values(stats(key)?.billedByDomain ?? {}).filter((n) => n > 1).length;

/** Domains in A2:A(n+1) and =DAPA(A{r}) beside each from B2 down to row `to`, entered as one drag. */
async function dragDown(g: AppsScriptStandIn, list: readonly string[], to = list.length + 1): Promise<void> {
  g.sheet.setValues(
    `A2:A${list.length + 1}`,
    list.map((d) => [d]),
  );
  for (let r = 3; r <= to; r++) g.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
  await g.edit('B2', '=DAPA(A2)');
}

function column(g: AppsScriptStandIn, a1: string): string[] {
  return g.sheet.getValues(a1).map((r) => String(r[0]));
}

describe('=DAPA(A2) dragged down', () => {
  it('30 cells at once share full requests: 200 cells on a 50-per-request plan cost about 200 / 50 requests', async () => {
    const g = await open(RPM, { customFunctionsAtOnce: 30 });
    await dragDown(g, domains(200, 'rpm'));
    // A cell waits only for a request in flight that carries it; the others answer at once, and one Refresh shows them
    // from the caches without a request.
    const sent = stats(RPM)?.requests ?? 0;
    expect(metricRows(g, 'B2:B201')).toBeGreaterThan(0);
    await g.run('refreshDapaFormulas');
    expect(metricRows(g, 'B2:B201')).toBe(200);
    expect(stats(RPM)?.requests).toBe(sent);
    expect(column(g, 'B2:B201').filter((v) => v.startsWith('#'))).toEqual([]);
    // One 422 may teach the plan's maximum; the rest are full requests of 50.
    expect(stats(RPM)?.requests).toBeLessThanOrEqual(Math.ceil(200 / 50) + 1);
    expect(stats(RPM)?.billed).toBe(200);
    expect(billedTwice(RPM)).toBe(0);
    expect(g.maxSimultaneous).toBe(30);
  });

  it('dragged past the data, the blank rows send nothing and show blank cells', async () => {
    const g = await open(RPM, { customFunctionsAtOnce: 10 });
    await dragDown(g, domains(20, 'few'), 120);
    await g.run('refreshDapaFormulas');
    expect(metricRows(g, 'B2:B21')).toBe(20);
    expect(column(g, 'B22:B120').every((v) => v === '')).toBe(true);
    const before = stats(RPM)?.requests ?? 0;
    expect(before).toBeLessThanOrEqual(2);
    for (let r = 22; r <= 120; r++) g.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
    await g.recalculate();
    expect(stats(RPM)?.requests).toBe(before);
  });

  it('with background checks on, blank rows below the list are never recalculated again: no version slot, one run each', async () => {
    const g = await open(RPM, { customFunctionsAtOnce: 10 });
    await g.run('startBackground');
    await dragDown(g, domains(60, 'below'), 140);
    for (let i = 0; i < 6 && metricRows(g, 'B2:B61') < 60; i++)
      await g.runTriggers({ until: g.clock.now() + 30 * 60_000, maxFirings: 1 });
    expect(metricRows(g, 'B2:B61')).toBe(60);
    expect(column(g, 'B62:B140').every((v) => v === '')).toBe(true);
    // The filled rows were given their slots (the background refreshed them); the blank ones kept their formula.
    const formulas = g.sheet.getFormulas('B2:B140').map((r) => String(r[0]));
    expect(formulas.slice(0, 60).filter((f) => f.includes('_dapa_versions'))).not.toHaveLength(0);
    expect(formulas.slice(60).filter((f, i) => f !== `=DAPA(A${i + 62})`)).toEqual([]);
    const runs = new Map<number, number>();
    for (const e of g.executions)
      if (e.kind === 'custom-function' && e.cell && e.cell.row > 61)
        runs.set(e.cell.row, (runs.get(e.cell.row) ?? 0) + 1);
    expect(runs.size).toBe(140 - 61);
    expect([...runs.values()].filter((n) => n > 1)).toEqual([]);
  });

  it('on the entry plan no cell runs past its 30 seconds: what the minute allows fills, the rest say unfinished', async () => {
    const g = await open(ENTRY, { customFunctionsAtOnce: 30 });
    await dragDown(g, domains(150, 'entry'));
    expect(column(g, 'B2:B151').filter((v) => v.startsWith('#'))).toEqual([]);
    // What the minute allows is sent by the cells' sender (60 billed); a Refresh shows it without a request, and
    // the rest say unfinished.
    expect(stats(ENTRY)?.billed).toBe(60);
    const sent = stats(ENTRY)?.requests ?? 0;
    await g.run('refreshDapaFormulas');
    expect(stats(ENTRY)?.requests).toBe(sent);
    const values = column(g, 'B2:B151');
    const filled = metricRows(g, 'B2:B151');
    expect(filled).toBeGreaterThanOrEqual(60);
    expect(values.filter((v) => v.startsWith('unfinished: refresh to finish'))).toHaveLength(150 - filled);
    expect(g.executions.every((e) => e.kind !== 'custom-function' || (e.elapsedMs ?? 0) < 30_000)).toBe(true);
    expect(stats(ENTRY)?.responsesByStatus?.[429] ?? 0).toBe(0);
    expect(stats(ENTRY)?.billed).toBe(billedCount(ENTRY));
    expect(billedTwice(ENTRY)).toBe(0);
  });

  it("a cell that waits for another cell's round or for the background spends no Properties call (Google's 50,000 a day)", async () => {
    const g = await open(ENTRY, { customFunctionsAtOnce: 30 });
    await g.run('startBackground');
    const before = g.propertiesCalls();
    await dragDown(g, domains(150, 'quiet'));
    const values = column(g, 'B2:B151');
    const filled = metricRows(g, 'B2:B151');
    const waiting = values.filter((v) => v.startsWith('unfinished: checking in the background')).length;
    expect(waiting).toBeGreaterThanOrEqual(60);
    expect(filled + waiting).toBe(150);
    // The first 30 side by side read the owner's settings once each (then the document cache keeps a copy: never
    // the key), a cell that sends reads the key and the plan's window and writes the window it left; every cell that
    // only answers reads nothing.
    const calls = g.propertiesCalls() - before;
    expect(calls).toBeLessThanOrEqual(30 + filled + 12);
  });

  it('the next day (the 6-hour cache empty), rows dragged below cells that show their metrics bill only themselves', async () => {
    const g = await open(RPM, { customFunctionsAtOnce: 30 });
    const list = domains(120, 'yesterday');
    await dragDown(g, list);
    await g.run('refreshDapaFormulas');
    expect(metricRows(g, 'B2:B121')).toBe(120);
    const billedYesterday = stats(RPM)?.billed ?? 0;
    g.clock.advance(7 * 60 * 60_000);
    const fresh = domains(20, 'today');
    g.sheet.setValues(
      'A122:A141',
      fresh.map((d) => [d]),
    );
    for (let r = 123; r <= 141; r++) g.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
    await g.edit('B122', '=DAPA(A122)');
    await g.run('refreshDapaFormulas');
    expect(metricRows(g, 'B122:B141')).toBe(20);
    expect((stats(RPM)?.billed ?? 0) - billedYesterday).toBe(20);
    expect(billedTwice(RPM)).toBe(0);
  });

  it('a refused network call names what to grant, not a failing service (where Google refuses it)', async () => {
    const granted = [SCOPES.spreadsheets, SCOPES.containerUi, SCOPES.scriptApp];
    const g = await open(RPM, { grantedScopes: granted, customFunctionFetch: 'needs-grant' });
    g.sheet.setValues('A2', [['example.com']]);
    await g.edit('B2', '=DAPA(A2)');
    expect(column(g, 'B2')[0]).toBe('#ERROR!');
    expect(g.sheet.getNote('B2')).toMatch(/Connect to an external service/);
    expect(stats(RPM)?.requests ?? 0).toBe(0);
  });
});

function billedCount(key: string): number {
  return Object.keys(stats(key)?.billedByDomain ?? {}).length;
}

describe('a formula past the monthly budget, background checks on', () => {
  it('shows every billed domain within one background step, and the rest say the budget, never "checking"', async () => {
    const g = await open(ENTRY, { customFunctionsAtOnce: 4 });
    const list = domains(300, 'budget');
    g.sheet.setValues(
      'A1:A300',
      list.map((d) => [d]),
    );
    await g.run('setCreditBudget', 100);
    await g.run('startBackground');
    await g.edit('B1', '=DAPA(A1:A300)');
    for (let i = 0; i < 12; i++) {
      await g.runTriggers({ until: g.clock.now() + 30 * 60_000, maxFirings: 1 });
      // After each step (and the recalculation it causes), every domain billed so far is shown.
      expect(metricRows(g, 'B1:E300')).toBe(stats(ENTRY)?.billed ?? 0);
    }
    expect(stats(ENTRY)?.billed).toBe(100);
    const values = column(g, 'B1:B300');
    expect(values.filter((v) => /checking in the background/.test(v))).toEqual([]);
    expect(values.filter((v) => v.startsWith('credit_budget: credit budget reached'))).toHaveLength(200);
  });
});
