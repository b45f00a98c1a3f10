// The real service's habits as Sheets shows them: a 403 page for a refused network (not a wrong key, and never
// retried in a loop by background checks) and "no data" metrics (a blank cell in a row that is still a result).
import { metricsFor, type SandboxConfig } from '../sandbox/handler';
import type { AppsScriptStandIn } from './harness';
import { domains, useVirtualSandbox, virtualStandIn } from './support';
import type { VirtualSandbox } from '../sandbox/virtual';

const KEY = 'sandbox-basic';
const PLAN = { maxUrlsPerRequest: 5, urlsPerMinute: 60, requestsPerMinute: 60 };
const BLOCKED: SandboxConfig = { keys: { [KEY]: PLAN }, faults: { blockNetwork: true } };
const NO_SPAM_DATA: SandboxConfig = { keys: { [KEY]: PLAN }, faults: { noDataRate: 1 } };
const NETWORK = /refused requests from this server's network/;

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn;

useVirtualSandbox(BLOCKED, (s) => (sandbox = s));
async function standIn(config: SandboxConfig): Promise<void> {
  gas = await virtualStandIn(sandbox, KEY, config, { virtualLatencyMs: 200 });
}
afterEach(async () => {
  await gas.close();
});

describe('a service that refuses this network (403 page)', () => {
  beforeEach(() => standIn(BLOCKED));

  it('says so in the DAPA cell, the key test and the sidebar, never "incorrect API key"', async () => {
    gas.sheet.setValues('A2:A3', [['example.com'], ['example.org']]);
    const error = await gas.runCustomFunction('=DAPA(A2:A3)', { cell: 'B2' }).catch((e: Error) => e);
    expect((error as Error).message).toMatch(NETWORK);
    expect((error as Error).message).not.toMatch(/incorrect api key/i);
    const test = await gas.run<{ ok: boolean; message: string }>('testKey');
    expect(test.ok).toBe(false);
    expect(test.message).toMatch(NETWORK);
    expect(test.message).not.toMatch(/incorrect api key/i);
    gas.sheet.addSheet('Job');
    gas.sheet.setValues('Job!A1:A2', [['URL'], ['example.com']]);
    gas.sheet.activate('Job');
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    const job = await gas.run<{ status: string; message: string }>('continueJob');
    expect(job.status).toBe('error');
    expect(job.message).toMatch(NETWORK);
  });

  it('stops background checks and shows why, instead of retrying every minute', async () => {
    gas.sheet.setValues(
      'A2:A21',
      domains(20).map((d) => [d]),
    );
    await gas.run('startBackground');
    await gas.edit('B2', '=DAPA(A2:A21)');
    const requestsBefore = sandbox.sandbox.stats()[KEY].requests;
    const firings = await gas.runTriggers({ until: gas.clock.now() + 3_600_000 });
    expect(firings).toBeLessThanOrEqual(2);
    expect(sandbox.sandbox.stats()[KEY].requests - requestsBefore).toBeLessThanOrEqual(2);
    const info = await gas.run<{ stopped?: string; nextStepAt?: number }>('getBackground');
    expect(info.stopped).toMatch(NETWORK);
    expect(info.nextStepAt).toBeUndefined();
    expect(gas.triggers.filter((t) => t.kind === 'CLOCK')).toEqual([]);
  });
});

describe('a metric the service marks "no data" (-1)', () => {
  beforeEach(() => standIn(NO_SPAM_DATA));

  it('is a blank cell in a row that is still a result: fetched, from the cache, and from the store a day later', async () => {
    const list = ['example.com', 'example.org', 'example.net'];
    gas.sheet.setValues(
      'A2:A4',
      list.map((d) => [d]),
    );
    const expected = list.map((d) => {
      const m = metricsFor(d);
      return [m.site_da, m.site_pa, m.site_mr, ''];
    });
    expect(await gas.runCustomFunction('=DAPA(A2:A4)', { cell: 'B2' })).toEqual(expected);
    const requests = sandbox.sandbox.stats()[KEY].requests;
    // From the 6-hour cache: the same blank, no request.
    expect(await gas.runCustomFunction('=DAPA(A2:A4)', { cell: 'G2' })).toEqual(expected);
    // The sidebar keeps the row as a result (no status) and puts it in the result store.
    gas.sheet.addSheet('Job');
    gas.sheet.setValues('Job!A1:A4', [['URL'], ...list.map((d) => [d])]);
    gas.sheet.activate('Job');
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    expect(await gas.run('continueJob')).toMatchObject({ status: 'done', counts: { records: 3 } });
    expect(gas.sheet.getValues('Job!B2:F4')).toEqual(expected.map((row) => [...row, '']));
    expect(sandbox.sandbox.stats()[KEY].requests).toBe(requests);
    gas.clock.advance(24 * 3_600_000);
    gas.sheet.activate('Sheet1');
    expect(await gas.runCustomFunction('=DAPA(A2:A4)', { cell: 'L2' })).toEqual(expected);
    expect(sandbox.sandbox.stats()[KEY].requests).toBe(requests);
  });
});
