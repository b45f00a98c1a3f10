// "Remove DAPA from this spreadsheet" leaves nothing of DAPA's in a spreadsheet that used every feature (formulas
// with their 4th argument, background checks, a sidebar check, sample data, a kept result store): no hidden sheet,
// no DAPA formula, no developer metadata or document property of DAPA's, no trigger or state of this user's for it;
// and the user's data and results stay as the values they showed, and so does the user's own developer metadata.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withFourthArgument } from '../../apps-script/src/checks/formulas';
import { VERSION_SLOTS, versionSlotRef } from '../../apps-script/src/stores/store-sheet';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import type { AppsScriptStandIn } from './harness';
import { useVirtualSandbox, virtualStandIn } from './support';
import type { VirtualSandbox } from '../sandbox/virtual';

const KEY = 'sandbox-premium';
let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn;
useVirtualSandbox(DEFAULT_CONFIG, (s) => (sandbox = s));
afterEach(async () => {
  await gas?.close();
});

describe('what background checks change, as the guide says it', () => {
  test('the 4th argument the guide shows is the one the code writes, and the number of version cells', () => {
    const guide = readFileSync(join(__dirname, '../../docs/guide.md'), 'utf8').replace(/\s+/g, ' ');
    expect(guide).toContain(
      `\`=DAPA(A2:A50)\` becomes \`${withFourthArgument('=DAPA(A2:A50)', versionSlotRef(6))}\``,
    );
    expect(guide).toContain(`${VERSION_SLOTS} such cells serve any number of formulas`);
    expect(guide).toContain('**Extensions → DAPA → Remove DAPA from this spreadsheet**');
  });
});

describe('Remove DAPA from this spreadsheet', () => {
  it('takes out everything DAPA put there and keeps the data and results as values', async () => {
    gas = await virtualStandIn(sandbox, KEY, DEFAULT_CONFIG);
    const sheet = gas.sheet.sheetNames()[0];
    gas.sheet.setValues('A1:A6', [
      ['URL'],
      ['example.com'],
      ['example.org'],
      ['github.com'],
      ['not a domain'],
      ['w3.org'],
    ]);
    gas.sheet.setValues('A8', [['my own note']]);
    gas.sheet.setValues('H2:H3', [['example.net'], ['mozilla.org']]);
    await gas.run('startBackground');
    await gas.edit('B1', '=DAPA(A2:A4, "da,pa", TRUE)');
    await gas.edit('E5', '=DAPA(A5)');
    await gas.edit('E6', '=DAPA(A6)');
    await gas.runTriggers({ until: gas.clock.now() + 5 * 60_000 });
    await gas.run('refreshDapaFormulas');
    await gas.runTriggers({ until: gas.clock.now() + 5 * 60_000 });
    // A sidebar check writes its marked output columns; sample data its own sheet.
    gas.sheet.select('H2:H3');
    await gas.run('startJob', { source: 'selection' });
    for (let i = 0; i < 10; i++)
      if ((await gas.run<{ status: string }>('continueJob')).status !== 'running') break;
    await gas.run('trySampleData');
    await gas.run('setKeepDays', 10);
    gas.sheet.activate(sheet);
    // The user's own developer metadata, some of it with keys that start like DAPA's.
    const mine = [
      { key: 'dapa', value: 'mine', on: undefined },
      { key: 'dapaNotes', value: 'mine too', on: undefined },
      { key: 'my.tag', value: 'kept', on: { sheet, column: 9 } },
      { key: 'dapa_output', value: 'not ours', on: { sheet, column: 10 } },
    ];
    for (const { key, value, on } of mine) gas.addDeveloperMetadata(key, value, on);

    // What DAPA put there: hidden sheets, 4th arguments, developer metadata, triggers, this user's state.
    const names = gas.sheet.sheetNames();
    expect(names).toEqual(expect.arrayContaining(['_dapa_results', '_dapa_versions', 'DAPA sample']));
    const formulasBefore = gas.sheet
      .getFormulas('A1:N8')
      .flat()
      .filter((f) => /DAPA\(/i.test(f));
    expect(formulasBefore.some((f) => /'_dapa_versions'!\$A\$\d+/.test(f))).toBe(true);
    const ours = gas.allDeveloperMetadata().filter((m) => /^dapa[.-]/.test(m.key));
    // The sidebar check's marks on its five output columns (I:M) and the spreadsheet's own values.
    expect(ours.filter((m) => m.key === 'dapa-output')).toHaveLength(5);
    expect(ours.some((m) => m.key === 'dapa.retentionDays')).toBe(true);
    expect(gas.triggers.some((t) => t.user === gas.user)).toBe(true);
    const shown = gas.sheet.getValues('A1:N8');
    expect(shown[1].slice(1, 3).every((v) => typeof v === 'number')).toBe(true); // B2:C2 hold metrics

    gas.ui.respond({ button: 'OK' });
    await gas.run('removeDapa');

    const said = (gas.ui.events.at(-1) as { message?: string }).message;
    expect(gas.ui.events.at(-1)).toMatchObject({
      type: 'alert',
      message: expect.stringMatching(
        /^DAPA is removed from this spreadsheet: 3 DAPA formulas are now values, 3 sheets/,
      ),
    });
    expect(gas.sheet.sheetNames()).toEqual([sheet]);
    expect(
      gas.sheet
        .getFormulas('A1:N8')
        .flat()
        .filter((f) => f !== ''),
    ).toEqual([]);
    expect(gas.sheet.getValues('A1:N8')).toEqual(shown);
    // Every one of DAPA's developer metadata entries is gone and counted; the user's own stay as they were.
    expect(said).toMatch(new RegExp(`and ${ours.length} notes of its are deleted`));
    expect(gas.allDeveloperMetadata().map(({ key, value }) => ({ key, value }))).toEqual(
      mine.map(({ key, value }) => ({ key, value })),
    );
    expect(Object.keys(gas.properties.document()).filter((k) => k.startsWith('dapa'))).toEqual([]);
    expect(gas.triggers.filter((t) => t.user === gas.user)).toEqual([]);
    const id = gas.spreadsheetId;
    expect(Object.keys(gas.properties.user()).filter((k) => k.includes(id))).toEqual([]);
    // The key stays: it is the user's, not the spreadsheet's.
    expect(gas.properties.user()['dapa.apiKey']).toBe(KEY);
  });

  it('asks first: Cancel changes nothing', async () => {
    gas = await virtualStandIn(sandbox, KEY, DEFAULT_CONFIG);
    gas.sheet.setValues('A1:A2', [['URL'], ['example.com']]);
    await gas.edit('B1', '=DAPA(A2)');
    gas.ui.respond({ button: 'CANCEL' });
    await gas.run('removeDapa');
    expect(gas.ui.events.at(-1)).toMatchObject({
      type: 'alert',
      message: expect.stringMatching(/^Remove DAPA from/),
    });
    expect(gas.sheet.getFormulas('B1')).toEqual([['=DAPA(A2)']]);
  });

  it('says "1 DAPA formula is now a value" for one formula, and counts in the plural otherwise', async () => {
    gas = await virtualStandIn(sandbox, KEY, DEFAULT_CONFIG);
    gas.sheet.setValues('A1:A2', [['URL'], ['example.com']]);
    await gas.edit('B2', '=DAPA(A2)');
    gas.ui.respond({ button: 'OK' });
    await gas.run('removeDapa');
    const said = gas.ui.events.at(-1);
    expect(said).toMatchObject({
      type: 'alert',
      message: expect.stringContaining('1 DAPA formula is now a value,'),
    });
    expect(said?.type === 'alert' && said.message).not.toMatch(
      /\b1 DAPA formulas\b|\b1 sheets\b|\b1 notes\b/,
    );
  });
});

describe('Remove DAPA removes only DAPA: each shape of a formula with DAPA in it', () => {
  /** The sheet's formulas and values before and after the removal, for A1:H12. */
  async function removeAround(cells: Record<string, string>) {
    gas = await virtualStandIn(sandbox, KEY, DEFAULT_CONFIG);
    gas.sheet.setValues('A1:A12', [
      ['URL'],
      ...[
        'example.com',
        'example.org',
        'github.com',
        'w3.org',
        'mozilla.org',
        'wikipedia.org',
        'gnu.org',
        'python.org',
        'nodejs.org',
        'rust-lang.org',
        'debian.org',
      ].map((d) => [d]),
    ]);
    for (const [a1, text] of Object.entries(cells)) {
      if (text.startsWith('=')) await gas.edit(a1, text);
      else gas.sheet.setValues(a1, [[text]]);
    }
    const before = { formulas: gas.sheet.getFormulas('A1:H12'), values: gas.sheet.getValues('A1:H12') };
    gas.ui.respond({ button: 'OK' });
    await gas.run('removeDapa');
    const after = { formulas: gas.sheet.getFormulas('A1:H12'), values: gas.sheet.getValues('A1:H12') };
    return { before, after };
  }
  const at = (grid: unknown[][], a1: string) => {
    const m = /^([A-H])(\d+)$/.exec(a1) as RegExpExecArray;
    return grid[Number(m[2]) - 1][m[1].charCodeAt(0) - 65];
  };

  it('=INDEX(DAPA(A2),1,1) becomes its value; the user’s =SUM(1,2) and =LEN(A2) beside it keep their formulas', async () => {
    const { before, after } = await removeAround({
      B2: '=INDEX(DAPA(A2),1,1)',
      C2: '=SUM(1,2)',
      D2: '=LEN(A2)',
      E2: 'my note',
    });
    expect(typeof at(before.values, 'B2')).toBe('number'); // the DA of example.com
    expect(at(after.formulas, 'B2')).toBe('');
    expect(at(after.values, 'B2')).toBe(at(before.values, 'B2'));
    expect([at(after.formulas, 'C2'), at(after.formulas, 'D2')]).toEqual(['=SUM(1,2)', '=LEN(A2)']);
    expect(at(after.values, 'E2')).toBe('my note');
  });

  it('=IFERROR(DAPA(A3:A4),"") and its array become values; a formula right of the array keeps its own', async () => {
    const { before, after } = await removeAround({ B3: '=IFERROR(DAPA(A3:A4),"")', F3: '=LEN(A3)' });
    expect(typeof at(before.values, 'E4')).toBe('number'); // the spam score of github.com, spilled
    expect(after.formulas.slice(2, 4).map((r) => r.slice(1, 5))).toEqual([
      ['', '', '', ''],
      ['', '', '', ''],
    ]);
    expect(after.values.slice(2, 4)).toEqual(before.values.slice(2, 4));
    expect(at(after.formulas, 'F3')).toBe('=LEN(A3)');
  });

  it('=ARRAYFORMULA(DAPA(A6:A8)) and its array become values; formulas right of and below it keep theirs', async () => {
    const { before, after } = await removeAround({
      B6: '=ARRAYFORMULA(DAPA(A6:A8))',
      F7: '=SUM(1,2)',
      B9: '=LEN(A9)',
      C10: '=INDEX(DAPA(A10),1,2)',
      D10: 'kept',
    });
    expect(before.values.slice(5, 8).map((r) => r.slice(1, 5).every((v) => typeof v === 'number'))).toEqual([
      true,
      true,
      true,
    ]);
    expect(after.formulas.slice(5, 8).flatMap((r) => r.slice(1, 5))).toEqual(new Array(12).fill(''));
    expect(after.values.slice(5, 10)).toEqual(before.values.slice(5, 10));
    expect([at(after.formulas, 'F7'), at(after.formulas, 'B9')]).toEqual(['=SUM(1,2)', '=LEN(A9)']);
    expect([at(after.formulas, 'C10'), at(after.values, 'D10')]).toEqual(['', 'kept']);
  });

  it('=DAPA(A11:A12, "da,pa", TRUE) and its array (header included) become values, nothing else', async () => {
    const { before, after } = await removeAround({
      C11: '=DAPA(A11:A12, "da,pa", TRUE)',
      E11: '=SUM(1,2)',
      B12: 'mine',
    });
    expect(at(before.values, 'C11')).toMatch(/DA/);
    expect(
      after.formulas
        .slice(10)
        .flat()
        .filter((f) => f !== ''),
    ).toEqual(['=SUM(1,2)']);
    expect(after.values.slice(10)).toEqual(before.values.slice(10));
  });

  it('a user’s formula with "DAPA(" only in a quoted text keeps it; =DAPA_SAMPLE in the user’s sheet becomes its value', async () => {
    const { before, after } = await removeAround({
      B2: '=CONCAT("DAPA(", A2)',
      C3: '=DAPA_SAMPLE(A3)',
      G3: '=SUM(1,2)',
    });
    expect(at(after.formulas, 'B2')).toBe('=CONCAT("DAPA(", A2)');
    expect(String(at(before.values, 'C3'))).toMatch(/SAMPLE/);
    expect(after.formulas[2].slice(2, 6)).toEqual(['', '', '', '']);
    expect(after.values[2]).toEqual(before.values[2]);
    expect(at(after.formulas, 'G3')).toBe('=SUM(1,2)');
  });
});
