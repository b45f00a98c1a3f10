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
});
