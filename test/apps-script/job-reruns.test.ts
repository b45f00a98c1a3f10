// A sidebar job run again over the same column: "Check again" bills each domain once however often it appears, and
// a second check writes over its own earlier results (with or without a header row), never over a user's cells.
import type { JobState } from '../../apps-script/sidebar/contract';
import { DEFAULT_CONFIG, type SandboxConfig } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import type { AppsScriptStandIn } from './harness';
import { domains, metricsRow, standInFor, statsOf, useSuiteSandbox } from './support';

const BULK = 'sandbox-bulk';
const CONFIG: SandboxConfig = { keys: { ...DEFAULT_CONFIG.keys, [BULK]: { maxUrlsPerRequest: 1000 } } };

async function finish(gas: AppsScriptStandIn, state: JobState): Promise<JobState> {
  for (let i = 0; i < 100 && state.status === 'running'; i++) state = await gas.run<JobState>('continueJob');
  return state;
}

/** A sidebar check of column A to its end. */
async function checkColumn(
  gas: AppsScriptStandIn,
  options: { headerRow: boolean; fresh?: boolean },
): Promise<JobState> {
  return finish(gas, await gas.run<JobState>('startJob', { source: 'column', column: 'A', ...options }));
}

describe('a sidebar job run again over the same column', () => {
  let sandbox!: RunningSandbox;
  let gas: AppsScriptStandIn;

  useSuiteSandbox(CONFIG, (started) => (sandbox = started));
  afterEach(async () => {
    await gas?.close();
  });

  it('"Check again" over 600 rows bills each distinct domain once, though it appears in several slices', async () => {
    gas = await standInFor(sandbox, BULK, { clock: 'virtual' });
    // 200 domains three times: the first slice (500 rows) has them all, the second (100 rows) repeats 100 of them.
    const list = [...domains(200, 'again'), ...domains(200, 'again'), ...domains(200, 'again')];
    gas.sheet.setValues('A1:A601', [['URL'], ...list.map((d) => [d])]);
    const first = await checkColumn(gas, { headerRow: true });
    expect(first.counts.billed).toBe(200);

    // Check again: what was checked before the job is not reused, what the job itself received is.
    const again = await checkColumn(gas, { headerRow: true, fresh: true });
    expect(again).toMatchObject({ status: 'done', done: 600, counts: { records: 600, billed: 200 } });
    const billed = statsOf(sandbox, BULK).billedByDomain;
    expect(Object.keys(billed)).toHaveLength(200);
    expect(Object.values(billed).every((n) => n === 2)).toBe(true);
    expect(gas.sheet.getValues('B2:F601')).toEqual(list.map((d) => [...metricsRow(d), '']));
  });

  it.each([
    ['without', false],
    ['with', true],
  ])('checks a column %s a header row again, writing over its own earlier results', async (_, headerRow) => {
    gas = await standInFor(sandbox, 'sandbox-premium', { clock: 'virtual' });
    const top = headerRow ? 2 : 1;
    if (headerRow) gas.sheet.setValues('A1', [['URL']]);
    gas.sheet.setValues(`A${top}:A${top + 2}`, [['example.com'], ['moz.com'], ['github.com']]);
    expect(await checkColumn(gas, { headerRow })).toMatchObject({ status: 'done', done: 3 });
    // The user changes a URL and checks the column again: its row shows the new outcome, the others stay right.
    gas.sheet.setValues(`A${top + 1}`, [['nope']]);
    expect(await checkColumn(gas, { headerRow })).toMatchObject({ status: 'done', done: 3 });
    expect(gas.sheet.getValues(`B${top}:F${top + 2}`)).toEqual([
      [...metricsRow('example.com'), ''],
      ['', '', '', '', expect.stringMatching(/^invalid_url_format: "nope"/)],
      [...metricsRow('github.com'), ''],
    ]);
    if (headerRow) expect(gas.sheet.getValues('B1:F1')).toEqual([['DA', 'PA', 'MR', 'Spam Score', 'Status']]);
  });

  it("refuses a user's values next to a column without a header row, beside its own earlier results too", async () => {
    gas = await standInFor(sandbox, 'sandbox-premium', { clock: 'virtual' });
    const refused = (area: string, cell: string, value: string) =>
      `The results go into ${area}, but ${cell} already holds "${value}". Clear those cells or insert 5 empty columns after column A, then start again.`;
    gas.sheet.setValues('A1:A3', [['example.com'], ['moz.com'], ['github.com']]);
    gas.sheet.setValues('C2', [['my notes']]);
    await expect(checkColumn(gas, { headerRow: false })).rejects.toThrow(refused('B1:F3', 'C2', 'my notes'));

    gas.sheet.setValues('C2', [['']]);
    expect(await checkColumn(gas, { headerRow: false })).toMatchObject({ status: 'done', done: 3 });
    // Two more URLs, with the user's value beside one of them: below the rows the first check wrote.
    gas.sheet.setValues('A4:A5', [['example.org'], ['example.net']]);
    gas.sheet.setValues('D5', [['my notes']]);
    await expect(checkColumn(gas, { headerRow: false })).rejects.toThrow(refused('B1:F5', 'D5', 'my notes'));
    // A value the user typed over the first check's results is theirs too.
    gas.sheet.setValues('D5', [['']]);
    gas.sheet.setValues('B2', [['checked by hand']]);
    await expect(checkColumn(gas, { headerRow: false })).rejects.toThrow(
      refused('B1:F5', 'B2', 'checked by hand'),
    );
    expect(gas.sheet.getValues('B2')).toEqual([['checked by hand']]);
  });
});
