// Many users of one published add-on at once (issue 46), checked with a small script so that only the stand-in is
// under test: a spreadsheet of another user runs its formulas as that user, spreadsheets recalculate side by side,
// one recalculation of a spreadsheet at a time (an edit's onEdit triggers first), and the script's 1,000
// simultaneous executions across all users.
import { type AppsScriptStandIn, loadAppsScript, type LoadOptions } from './harness';
import { TOO_MANY_SIMULTANEOUS_MESSAGE } from './standin/limits';

jest.setTimeout(120_000);

const SCRIPT = `
/** @customfunction */
function SLOW(x) { Utilities.sleep(5000); return 'done ' + x; }
function watchEdits() {
  ScriptApp.newTrigger('onEdited').forSpreadsheet(SpreadsheetApp.getActive()).onEdit().create();
}
function onEdited() { Utilities.sleep(10000); }
`;

let gas: AppsScriptStandIn | undefined;
afterEach(async () => {
  await gas?.close();
  gas = undefined;
});

async function load(options: LoadOptions = {}): Promise<AppsScriptStandIn> {
  gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual', customFunctionsAtOnce: 30, ...options });
  return gas;
}

/** A spreadsheet of `user` with `rows` =SLOW(r) cells in A1:A{rows}; its id. */
function sheetOf(g: AppsScriptStandIn, user: string, rows: number, first = 1): string {
  const id = g.addSpreadsheet(`Sheet of ${user}`, { owner: user });
  g.useSpreadsheet(id);
  for (let r = first; r < first + rows; r++) g.sheet.setFormula(`A${r}`, `=SLOW(${r})`);
  return id;
}

function values(g: AppsScriptStandIn, id: string, a1: string): string[] {
  g.useSpreadsheet(id);
  return g.sheet.getValues(a1).map((r) => String(r[0]));
}

describe('many users of one script', () => {
  it("runs a user's own spreadsheet's formulas as that user, side by side with another user's", async () => {
    const g = await load();
    const a = sheetOf(g, 'a@example.com', 30);
    const b = sheetOf(g, 'b@example.com', 30);
    await g.recalculate();
    const cells = g.executions.filter((e) => e.kind === 'custom-function');
    expect(cells.filter((e) => e.user === 'a@example.com' && e.spreadsheetId === a)).toHaveLength(30);
    expect(cells.filter((e) => e.user === 'b@example.com' && e.spreadsheetId === b)).toHaveLength(30);
    // Each user 30 at once (their limit), the script 60: both sheets in the time of one.
    expect(g.maxSimultaneous).toBe(30);
    expect(g.maxScriptSimultaneous).toBe(60);
    expect(g.tooManySimultaneous).toHaveLength(0);
    // Every cell of both sheets began before the first one ended (counted on the executions' own records, not on the
    // clock, which counts the machine's real time too).
    const firstEnd = Math.min(...cells.map((e) => e.startedAt + (e.elapsedMs ?? Infinity)));
    expect(Math.max(...cells.map((e) => e.startedAt))).toBeLessThan(firstEnd);
    expect(values(g, b, 'A1:A30').every((v) => v.startsWith('done'))).toBe(true);
  });

  it("refuses an execution past the script's simultaneous executions, whoever runs it", async () => {
    const g = await load({ scriptSimultaneousExecutions: 40 });
    const a = sheetOf(g, 'a@example.com', 30);
    const b = sheetOf(g, 'b@example.com', 30);
    await g.recalculate();
    expect(g.maxScriptSimultaneous).toBe(40);
    expect(g.tooManySimultaneous).toHaveLength(20);
    const shown = [...values(g, a, 'A1:A30'), ...values(g, b, 'A1:A30')];
    expect(shown.filter((v) => v === '#ERROR!')).toHaveLength(20);
    g.useSpreadsheet(b);
    expect(g.sheet.getNote('A30')).toBe(TOO_MANY_SIMULTANEOUS_MESSAGE);
  });

  it('recalculates a spreadsheet once at a time: cells made stale meanwhile wait for the next round', async () => {
    const g = await load();
    const a = sheetOf(g, 'a@example.com', 30);
    const t0 = g.clock.now();
    await Promise.all([
      g.recalculate(),
      (async () => {
        await g.waitUntil(t0 + 1_000);
        g.useSpreadsheet(a);
        for (let r = 31; r <= 60; r++) g.sheet.setFormula(`A${r}`, `=SLOW(${r})`);
        await g.recalculate();
      })(),
    ]);
    // Asked again while the first 30 ran: 30 at once, not 60 (the user's 31st would have been refused).
    expect(g.maxSimultaneous).toBe(30);
    expect(g.tooManySimultaneous).toHaveLength(0);
    expect(values(g, a, 'A1:A60').every((v) => v.startsWith('done'))).toBe(true);
  });

  it("runs an edit's formulas after its onEdit triggers, even when another user's work asks meanwhile", async () => {
    const g = await load();
    const a = g.addSpreadsheet('Sheet of a', { owner: 'a@example.com' });
    g.useSpreadsheet(a).asUser('a@example.com');
    await g.run('watchEdits');
    const t0 = g.clock.now();
    await Promise.all([
      g.edit('A1', '=SLOW(1)'),
      (async () => {
        await g.waitUntil(t0 + 1_000);
        await g.recalculate();
      })(),
    ]);
    const trigger = g.executions.find((e) => e.functionName === 'onEdited');
    const cell = g.executions.find((e) => e.functionName === 'SLOW');
    expect(trigger?.elapsedMs).toBeGreaterThanOrEqual(10_000);
    expect(cell?.startedAt).toBeGreaterThanOrEqual((trigger?.startedAt ?? 0) + (trigger?.elapsedMs ?? 0));
    expect(values(g, a, 'A1')).toEqual(['done 1']);
  });
});
