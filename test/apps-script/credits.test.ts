// The monthly credit budget (issue 21) through the built bundle in the stand-in, on a virtual clock: formulas past it
// say so and fill in after a raise or when the month turns, the sidebar's estimate is what the check then bills, a
// schedule's forecast warns, and two checks at once never spend past the budget nor lose a count. Where Google's
// guide is silent (may the owner's own custom function set user properties?), both readings run.
import type { SandboxConfig } from '../sandbox/handler';
import type { AppsScriptStandIn, LoadOptions } from './harness';
import { domains, metricRows, sidebarCheck, useVirtualSandbox, virtualStandIn } from './support';
import type { VirtualSandbox } from '../sandbox/virtual';
import type { CreditInfo, Estimate } from '../../apps-script/sidebar/contract';

const KEY = 'credits-plan';
const CONFIG: SandboxConfig = { keys: { [KEY]: { maxUrlsPerRequest: 100 } } };
const HOUR = 3_600_000;
const BUDGET_CELL = /^credit_budget: credit budget reached: raise it in the sidebar/;

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn;
useVirtualSandbox(CONFIG, (s) => (sandbox = s));
afterEach(async () => {
  await gas?.close();
});

async function open(options: LoadOptions = {}): Promise<AppsScriptStandIn> {
  gas = await virtualStandIn(sandbox, KEY, CONFIG, {
    virtualLatencyMs: 300,
    triggerDelayMs: 2_000,
    ...options,
  });
  return gas;
}

function billed(): number {
  return sandbox.sandbox.stats()[KEY]?.billed ?? 0;
}

function billedOnce(): boolean {
  return Object.values(sandbox.sandbox.stats()[KEY]?.billedByDomain ?? {}).every((n) => n === 1);
}

function column(a1From: string, list: readonly string[]): void {
  const col = a1From.replace(/\d+$/, '');
  const first = Number(/\d+$/.exec(a1From)?.[0] ?? 1);
  gas.sheet.setValues(
    `${a1From}:${col}${first + list.length - 1}`,
    list.map((d) => [d]),
  );
}

function budgetCells(a1: string): number {
  return gas.sheet.getValues(a1).filter((row) => BUDGET_CELL.test(String(row[0]))).length;
}

/** The first instant of the month after `at` (UTC). */
function nextMonth(at: number): number {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

describe.each([
  ['may', 'owner' as const],
  ['may not', 'nobody' as const],
])('a formula past the budget (the owner’s custom function %s set user properties)', (_, reading) => {
  it('over 300 domains with 100 credits left fills 100, the rest say the budget is reached, and they fill in after a raise', async () => {
    await open({ customFunctionsSetUserProperties: reading });
    const list = domains(300, 'budget');
    column('A1', list);
    await gas.run('setCreditBudget', 100);
    await gas.edit('B1', '=DAPA(A1:A300)');
    expect(metricRows(gas, 'B1:E300')).toBe(100);
    expect(budgetCells('B1:E300')).toBe(200);
    expect(billed()).toBe(100);
    let credits = await gas.run<CreditInfo>('getCredits');
    expect(credits).toMatchObject({ budget: 100, used: 100, left: 0 });
    // A recalculation with nothing left sends nothing.
    await gas.run('refreshDapaFormulas');
    expect(billed()).toBe(100);
    expect(budgetCells('B1:E300')).toBe(200);

    credits = await gas.run<CreditInfo>('setCreditBudget', 350);
    expect(credits).toMatchObject({ budget: 350 });
    expect(metricRows(gas, 'B1:E300')).toBe(300);
    expect(billed()).toBe(300);
    expect(billedOnce()).toBe(true);
    expect(await gas.run<CreditInfo>('getCredits')).toMatchObject({ used: 300, left: 50 });
  });
});

describe('the monthly budget', () => {
  it('frees when the month turns: background checks fill the waiting cells without re-typing', async () => {
    await open();
    const list = domains(150, 'month');
    column('A1', list);
    await gas.run('setCreditBudget', 100);
    await gas.run('startBackground');
    await gas.edit('B1', '=DAPA(A1:A150)');
    await gas.runTriggers({ until: gas.clock.now() + HOUR });
    expect(metricRows(gas, 'B1:E150')).toBe(100);
    expect(
      gas.sheet.getValues('B1:E150').filter((r) => /fills in by itself when the month/.test(String(r[0])))
        .length,
    ).toBe(50);
    expect(billed()).toBe(100);

    const turn = nextMonth(gas.clock.now());
    gas.clock.advance(turn - gas.clock.now() + 1_000);
    await gas.runTriggers({ until: turn + 2 * HOUR });
    expect(metricRows(gas, 'B1:E150')).toBe(150);
    expect(billed()).toBe(150);
    expect(billedOnce()).toBe(true);
    expect(await gas.run<CreditInfo>('getCredits')).toMatchObject({ budget: 100, used: 50, left: 50 });
  });

  it('counts formulas, sidebar checks and background steps alike (no budget set: nothing is held back)', async () => {
    await open();
    column('A1', domains(40, 'f'));
    await gas.edit('B1', '=DAPA(A1:A40)');
    expect((await sidebarCheck(gas, undefined, 'H', domains(30, 's'))).status).toBe('done');
    expect(billed()).toBe(70);
    const credits = await gas.run<CreditInfo>('getCredits');
    expect(credits.used).toBe(70);
    expect(credits.budget).toBeUndefined();
    expect(credits.text).toMatch(/70 credits used in \d{4}-\d{2} \(UTC; no budget set\)/);
  });
});

describe('before a check', () => {
  it('the sidebar’s estimate is what the check then bills: kept and cached rows free, new ones capped by the budget left', async () => {
    await open();
    const earlier = domains(30, 'kept');
    expect((await sidebarCheck(gas, undefined, 'C', earlier)).status).toBe('done');
    expect(billed()).toBe(30);
    await gas.run('setCreditBudget', 100);

    const list = [...earlier, ...domains(90, 'new'), ...domains(10, 'new')]; // 130 rows, 120 distinct
    column('J1', list);
    const source = { source: 'column', column: 'J', headerRow: false };
    const estimate = await gas.run<Estimate>('estimateJob', source);
    expect(estimate).toMatchObject({ rows: 130, domains: 120, free: 30, cost: 70, capped: true });
    expect(estimate.text).toMatch(
      /130 rows, 120 distinct domains, 30 kept or cached \(free\): costs at most 70/,
    );
    const before = billed();
    let state = await gas.run<{ status: string }>('startJob', source);
    while (state.status === 'running') state = await gas.run<{ status: string }>('continueJob');
    expect(billed() - before).toBe(estimate.cost);

    // Uncapped: what is left of the list costs its new domains only.
    await gas.run('setCreditBudget', null);
    const again = await gas.run<Estimate>('estimateJob', source);
    expect(again).toMatchObject({ domains: 120, free: 100, cost: 20, capped: false });
    const mid = billed();
    await gas.run('retrySkipped');
    state = await gas.run<{ status: string }>('continueJob');
    while (state.status === 'running') state = await gas.run<{ status: string }>('continueJob');
    expect(billed() - mid).toBe(again.cost);
    expect(billedOnce()).toBe(true);
  });

  it('"Check formulas again" estimates every formula domain, capped by the budget, and bills that', async () => {
    await open();
    column('A1', domains(60, 'again'));
    await gas.edit('B1', '=DAPA(A1:A60)');
    await gas.run('startBackground');
    await gas.runTriggers({ until: gas.clock.now() + HOUR });
    const before = billed();
    await gas.run('setCreditBudget', 100); // 60 used: 40 left
    const estimate = await gas.run<Estimate>('estimateFormulasAgain');
    expect(estimate).toMatchObject({ rows: 60, domains: 60, free: 0, cost: 40, capped: true });
    await gas.run('checkFormulasAgain');
    await gas.runTriggers({ until: gas.clock.now() + HOUR });
    expect(billed() - before).toBe(estimate.cost);
  });
});

describe('a schedule', () => {
  it('shows its monthly forecast and warns past the budget or the entry plan’s 10,000 credits', async () => {
    await open();
    column('A1', domains(400, 'daily'));
    await gas.edit('B1', '=DAPA(A1:A400)');
    let info = await gas.run<{ schedule?: { forecast?: { credits: number; over?: string; text: string } } }>(
      'setSchedule',
      { every: 'daily', target: 'formulas' },
    );
    expect(info.schedule?.forecast).toMatchObject({ credits: 12_000, over: 'plan' });
    expect(info.schedule?.forecast?.text).toMatch(
      /About 12000 credits a month \(400 domains × 30 refreshes\)\. Warning: more than the entry plan/,
    );
    await gas.run('setCreditBudget', 2_000);
    info = await gas.run('setSchedule', { every: 'weekly', target: 'formulas' });
    expect(info.schedule?.forecast).toMatchObject({ credits: 1_600 });
    expect(info.schedule?.forecast?.over).toBeUndefined();
    info = await gas.run('setSchedule', { every: 'daily', target: 'formulas' });
    expect(info.schedule?.forecast).toMatchObject({ credits: 12_000, over: 'budget' });
    expect(info.schedule?.forecast?.text).toMatch(/more than your monthly budget \(2000\)/);
  });
});

describe('two checks at once', () => {
  async function checkIn(spreadsheetId: string, col: string, list: readonly string[], at: number) {
    gas.useSpreadsheet(spreadsheetId);
    column(`${col}1`, list);
    let state = await gas.runWith<{ status: string }>({ spreadsheetId, at }, 'startJob', {
      source: 'column',
      column: col,
      headerRow: false,
    });
    for (let i = 0; i < 50 && state.status === 'running'; i++)
      state = await gas.runWith<{ status: string }>({ spreadsheetId }, 'continueJob');
    return state;
  }

  it.each([
    ['a budget of 100', 100],
    ['no budget', undefined],
  ])('never spend past the budget together, nor lose a count (%s)', async (_, budget) => {
    await open({ serviceCallMs: 20 });
    if (budget !== undefined) await gas.run('setCreditBudget', budget);
    const first = gas.spreadsheetId;
    const second = gas.addSpreadsheet('second');
    const at = gas.clock.now() + 1_000;
    await Promise.all([
      checkIn(first, 'A', domains(80, 'one'), at),
      checkIn(second, 'A', domains(80, 'two'), at),
    ]);
    const spent = billed();
    expect(spent).toBe(budget ?? 160);
    expect(billedOnce()).toBe(true);
    gas.useSpreadsheet(first);
    expect((await gas.run<CreditInfo>('getCredits')).used).toBe(spent);
  });

  it('a formula that may not write the ledger, folded by a sidebar call while it runs: counted once, exactly', async () => {
    await open({ customFunctionsSetUserProperties: 'nobody' });
    await gas.run('setCreditBudget', 1_000);
    column('A1', domains(300, 'fold'));
    const at = gas.clock.now();
    const folds: CreditInfo[] = [];
    await Promise.all([
      gas.edit('B1', '=DAPA(A1:A300)'),
      gas.runWith<CreditInfo>({ at: at + 400 }, 'getCredits').then((c) => folds.push(c)),
      gas.runWith<CreditInfo>({ at: at + 700 }, 'getCredits').then((c) => folds.push(c)),
    ]);
    expect(metricRows(gas, 'B1:E300')).toBe(300);
    expect(billed()).toBe(300);
    // While the formula ran, its hold counted in full: never less than what it was billed by then.
    for (const c of folds) expect(c.used).toBe(300);
    expect(await gas.run<CreditInfo>('getCredits')).toMatchObject({ used: 300, left: 700 });
  });

  it('an editor’s formula (the owner’s key and budget; it may not write the ledger) beside the owner’s sidebar check', async () => {
    await open({ serviceCallMs: 20 });
    await gas.run('setCreditBudget', 100);
    column('A1', domains(80, 'editor'));
    column('H1', domains(80, 'owner'));
    const owner = 'owner@example.com';
    const at = gas.clock.now() + 1_000;
    gas.asUser('editor@example.com');
    const ownerCheck = async () => {
      let state = await gas.runWith<{ status: string }>({ user: owner, at }, 'startJob', {
        source: 'column',
        column: 'H',
        headerRow: false,
      });
      for (let i = 0; i < 50 && state.status === 'running'; i++)
        state = await gas.runWith<{ status: string }>({ user: owner }, 'continueJob');
    };
    await Promise.all([gas.edit('B1', '=DAPA(A1:A80)'), ownerCheck()]);
    expect(billed()).toBe(100);
    expect(billedOnce()).toBe(true);
    expect(metricRows(gas, 'B1:E80') + metricRows(gas, 'I1:L80')).toBe(100);
    expect((await gas.runWith<CreditInfo>({ user: owner }, 'getCredits')).used).toBe(100);
  });
});
