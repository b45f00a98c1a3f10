// "Remove DAPA from this spreadsheet" leaves nothing of DAPA's in a spreadsheet that used every feature (formulas
// with their 4th argument, background checks, a sidebar check, sample data, a kept result store): no hidden sheet,
// no DAPA formula, no developer metadata or document property of DAPA's, no trigger or state of this user's for it;
// and the user's data and results stay as the values they showed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withFourthArgument } from '../../apps-script/src/checks/formula-text';
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

    // What DAPA put there: hidden sheets, 4th arguments, developer metadata, triggers, this user's state.
    const names = gas.sheet.sheetNames();
    expect(names).toEqual(expect.arrayContaining(['_dapa_results', '_dapa_versions', 'DAPA sample']));
    const formulasBefore = gas.sheet
      .getFormulas('A1:N8')
      .flat()
      .filter((f) => /DAPA\(/i.test(f));
    expect(formulasBefore.some((f) => /'_dapa_versions'!\$A\$\d+/.test(f))).toBe(true);
    expect(gas.allDeveloperMetadata().some((m) => m.key.startsWith('dapa'))).toBe(true);
    expect(gas.triggers.some((t) => t.user === gas.user)).toBe(true);
    const shown = gas.sheet.getValues('A1:N8');
    expect(shown[1].slice(1, 3).every((v) => typeof v === 'number')).toBe(true); // B2:C2 hold metrics

    gas.ui.respond({ button: 'OK' });
    await gas.run('removeDapa');

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
    expect(gas.allDeveloperMetadata().filter((m) => m.key.startsWith('dapa'))).toEqual([]);
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
});
