// The daily trigger runtime (90 minutes a day on a consumer account): when what is left needs more than the day leaves,
// the sidebar says so and that the work goes on tomorrow; when it fits, it says nothing.
import type { SandboxConfig } from '../sandbox/handler';
import type { VirtualSandbox } from '../sandbox/virtual';
import type { AppsScriptStandIn } from './harness';
import { domains, useVirtualSandbox, virtualStandIn } from './support';

const KEY = 'quota-entry';
const CONFIG: SandboxConfig = { keys: { [KEY]: { maxUrlsPerRequest: 5, urlsPerMinute: 60 } } };

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn;
useVirtualSandbox(CONFIG, (s) => (sandbox = s));
beforeEach(async () => {
  gas = await virtualStandIn(sandbox, KEY, CONFIG, { virtualLatencyMs: 300 });
});
afterEach(async () => {
  await gas.close();
});

/** A =DAPA range over `n` domains, written without being recalculated (what the background finds to do). */
function formulaOver(n: number): void {
  gas.sheet.addSheet('List', Math.max(1000, n + 1), 5);
  gas.sheet.activate('List');
  gas.sheet.setValues(
    `A2:A${n + 1}`,
    domains(n, 'q').map((d) => [d]),
  );
  gas.sheet.setFormula('B2', `=DAPA(A2:A${n + 1})`);
}

describe('the daily trigger runtime in the sidebar', () => {
  it('says nothing when what is left fits in the day', async () => {
    formulaOver(500);
    await gas.run('startBackground');
    const info = await gas.run<{ rowsLeft: number; quota?: string }>('getBackground');
    expect(info.rowsLeft).toBe(500);
    expect(info.quota).toBeUndefined();
  });

  it('says that what does not fit in the day goes on tomorrow', async () => {
    formulaOver(8_000);
    await gas.run('startBackground');
    const info = await gas.run<{ rowsLeft: number; quota?: string }>('getBackground');
    expect(info.rowsLeft).toBe(8_000);
    expect(info.quota).toMatch(/about 120 more minutes of trigger runtime, and Google leaves 90 today/);
    expect(info.quota).toMatch(/goes on by itself tomorrow/);
  });
});
