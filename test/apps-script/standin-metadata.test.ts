// Developer metadata on a sheet's columns in the stand-in, as Google documents it: only an entire column takes it
// (not an arbitrary range), it moves with its column when columns are inserted, and a sheet holds 30,000 characters.
import { type AppsScriptStandIn, loadAppsScript } from './harness';

const SCRIPT = `
function column(letter) { return SpreadsheetApp.getActive().getActiveSheet().getRange(letter + ':' + letter); }
function mark(letter, key, value) { column(letter).addDeveloperMetadata(key, value); }
function markCells(a1) { SpreadsheetApp.getActive().getActiveSheet().getRange(a1).addDeveloperMetadata('k', 'v'); }
function marks(letter) {
  return column(letter).getDeveloperMetadata().map(function (m) { return m.getKey() + '=' + m.getValue(); });
}
function insertAfter(n, count) { SpreadsheetApp.getActive().getActiveSheet().insertColumnsAfter(n, count); }
function unmark(letter) { column(letter).getDeveloperMetadata().forEach(function (m) { m.remove(); }); }
function spreadsheetKeys() {
  return SpreadsheetApp.getActive().getDeveloperMetadata().map(function (m) { return m.getKey(); });
}
`;

let gas: AppsScriptStandIn;
afterEach(async () => {
  await gas?.close();
});

describe("developer metadata on a sheet's columns", () => {
  it("is kept on the column, moves with it when columns are inserted, and is not the spreadsheet's", async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    await gas.run('mark', 'B', 'out', '0');
    expect(await gas.run('marks', 'B')).toEqual(['out=0']);
    expect(await gas.run('spreadsheetKeys')).toEqual([]);
    await gas.run('insertAfter', 1, 2);
    expect(await gas.run('marks', 'B')).toEqual([]);
    expect(await gas.run('marks', 'D')).toEqual(['out=0']);
    await gas.run('unmark', 'D');
    expect(await gas.run('marks', 'D')).toEqual([]);
  });

  it("refuses a range that is not an entire column, with Google's text, and passing a sheet's 30,000 characters", async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    await expect(gas.run('markCells', 'B1:B10')).rejects.toThrow(
      'Adding developer metadata to arbitrary ranges is not currently supported.',
    );
    await expect(gas.run('markCells', 'B:C')).rejects.toThrow(/arbitrary ranges/);
    await gas.run('mark', 'B', 'big', 'x'.repeat(29_000));
    await expect(gas.run('mark', 'C', 'more', 'x'.repeat(1_000))).rejects.toThrow(
      /a sheet may hold at most 30000 characters/,
    );
  });
});
