// The stand-in runs custom functions as Sheets may: every formula cell its own execution, N side by side, each with
// its 30 seconds wherever it is (a lock wait included), and Google's "too many scripts running simultaneously" for a
// user's execution past 30. Checked with a small script, so that only the stand-in is under test.
import { type AppsScriptStandIn, loadAppsScript, type LoadOptions } from './harness';
import { TIME_LIMIT_MESSAGE, TOO_MANY_SIMULTANEOUS_MESSAGE } from './standin/limits';

// Hundreds of executions on the virtual clock take a few real seconds on a busy machine: never jest's 5 s default.
jest.setTimeout(120_000);

const SCRIPT = `
/** @customfunction */
function SLOW(x) { Utilities.sleep(5000); return 'done ' + x; }
/** @customfunction */
function WAITLOCK() { LockService.getScriptLock().waitLock(120000); return 'got it'; }
function holdLock() { var lock = LockService.getScriptLock(); lock.waitLock(1000); Utilities.sleep(60000); lock.releaseLock(); }
`;

let gas: AppsScriptStandIn | undefined;
afterEach(async () => {
  await gas?.close();
  gas = undefined;
});

async function load(options: LoadOptions): Promise<AppsScriptStandIn> {
  gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual', ...options });
  return gas;
}

function slowColumn(g: AppsScriptStandIn, rows: number): void {
  for (let r = 1; r <= rows; r++) g.sheet.setFormula(`A${r}`, `=SLOW(${r})`);
}

describe('custom functions side by side', () => {
  it('runs 30 formula cells in flight at once, each its own execution, all within their 30 seconds', async () => {
    const g = await load({ customFunctionsAtOnce: 30 });
    slowColumn(g, 60);
    await g.recalculate();
    expect(g.maxSimultaneous).toBe(30);
    expect(g.executions.filter((e) => e.kind === 'custom-function')).toHaveLength(60);
    expect(g.sheet.getValues('A1:A60').map((r) => r[0])).toEqual(
      Array.from({ length: 60 }, (_, i) => `done ${i + 1}`),
    );
    // Two rounds of 30 at 5 s each, not sixty rounds: the 30 that began first all began before any cell ended, the
    // other 30 after (counted on the executions' own records, not on the clock, which counts real time too).
    const cells = g.executions.filter((e) => e.kind === 'custom-function');
    const firstEnd = Math.min(...cells.map((e) => e.startedAt + (e.elapsedMs ?? Infinity)));
    expect(cells.filter((e) => e.startedAt < firstEnd)).toHaveLength(30);
    const second = cells.filter((e) => e.startedAt >= firstEnd);
    const secondEnd = Math.min(...second.map((e) => e.startedAt + (e.elapsedMs ?? Infinity)));
    expect(second.filter((e) => e.startedAt < secondEnd)).toHaveLength(30);
  });

  it('starts its worker threads at load when asked (warmWorkers), and reuses them: no execution starts a worker', async () => {
    const cold = await load({});
    expect(cold.workersStarted).toBe(0);
    await cold.close();
    const g = await load({ warmWorkers: 4 });
    expect(g.workersStarted).toBe(4);
    slowColumn(g, 12);
    await g.recalculate();
    expect(g.maxSimultaneous).toBe(4);
    expect(g.sheet.getValues('A1:A12').map((r) => r[0])).toEqual(
      Array.from({ length: 12 }, (_, i) => `done ${i + 1}`),
    );
    // Three rounds of four ran on the four workers started at load.
    expect(g.workersStarted).toBe(4);
  });

  it('runs 4 at once by default', async () => {
    const g = await load({});
    slowColumn(g, 12);
    await g.recalculate();
    expect(g.maxSimultaneous).toBe(4);
  });

  it("refuses a user's 31st execution with Google's message (the cell shows #ERROR!)", async () => {
    const g = await load({ customFunctionsAtOnce: 31 });
    slowColumn(g, 31);
    await g.recalculate();
    const values = g.sheet.getValues('A1:A31').map((r) => String(r[0]));
    expect(values.filter((v) => v.startsWith('done'))).toHaveLength(30);
    const refused = values.findIndex((v) => v === '#ERROR!');
    expect(refused).toBeGreaterThanOrEqual(0);
    expect(g.sheet.getNote(`A${refused + 1}`)).toBe(TOO_MANY_SIMULTANEOUS_MESSAGE);
    expect(g.tooManySimultaneous).toHaveLength(1);
  });

  it('stops a custom function at 30 s inside a lock wait, as at any other wait', async () => {
    const g = await load({});
    g.sheet.setFormula('B1', '=WAITLOCK()');
    // The server call takes the lock first and keeps it for a minute; the formula waits for it.
    await Promise.all([g.runWith({}, 'holdLock'), g.recalculate()]);
    expect(g.sheet.getValues('B1')[0][0]).toBe('#ERROR!');
    expect(g.sheet.getNote('B1')).toBe(TIME_LIMIT_MESSAGE);
    const killed = g.executions.find((e) => e.functionName === 'WAITLOCK');
    expect(killed?.status).toBe('killed');
    expect(killed?.elapsedMs).toBeGreaterThanOrEqual(30_000);
    expect(killed?.elapsedMs).toBeLessThan(31_000);
  });
});
