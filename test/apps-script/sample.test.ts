// Sample mode, as a new user (or a Marketplace reviewer) without a key meets it: the menu's "Try with sample data"
// fills a sheet of its own through the real bundle, every made-up value says SAMPLE, and nothing reaches the service,
// is billed or is kept where a real check could read it back.
import { DEFAULT_CONFIG } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import type { AppsScriptStandIn } from './harness';
import { loadAppsScript } from './harness';
import { assertBundleIsCurrent, metricsRow, sheetsAddress, statsOf, useSuiteSandbox } from './support';

const SHEET = "'DAPA sample'";

describe('Try with sample data', () => {
  let sandbox: RunningSandbox;
  let gas: AppsScriptStandIn;
  useSuiteSandbox(DEFAULT_CONFIG, (s) => (sandbox = s));

  beforeEach(async () => {
    assertBundleIsCurrent();
    gas = await loadAppsScript({ installAs: 'addon' });
  });
  afterEach(async () => {
    await gas.close();
  });

  test('with no key: a sheet of sample URLs, =DAPA_SAMPLE beside them, every value marked SAMPLE, 0 requests', async () => {
    await gas.run('trySampleData');
    const urls = gas.sheet.getValues(`${SHEET}!A1:A9`).map((row) => row[0]);
    expect(urls[0]).toBe('URL');
    expect(gas.sheet.getValues(`${SHEET}!B1:E1`)).toEqual([
      ['DA (sample)', 'PA (sample)', 'MR (sample)', 'Spam Score (sample)'],
    ]);
    const rows = gas.sheet.getValues(`${SHEET}!B2:E9`);
    const byUrl = new Map(urls.slice(1).map((url, i) => [String(url), rows[i]]));
    // A domain's row: four text cells, each "SAMPLE <number>"; nothing a SUM or a sort could take for a metric.
    for (const url of ['https://www.wikipedia.org/', 'github.com', 'npmjs.com'])
      for (const cell of byUrl.get(url) ?? [])
        expect({ url, cell }).toEqual({ url, cell: expect.stringMatching(/^SAMPLE \d+(\.\d)?$/) });
    // The core at work: a re-spelled duplicate gets the same row, a blank stays blank, a non-domain says why.
    expect(byUrl.get('GitHub.com/features')).toEqual(byUrl.get('github.com'));
    expect(byUrl.get('')).toEqual(['', '', '', '']);
    expect(byUrl.get('not a domain')?.[0]).toBe('invalid_url_format');
    expect(String(gas.sheet.getValues(`${SHEET}!A11`)[0][0])).toMatch(/^SAMPLE DATA: made up by the add-on/);
    // Nothing left the script, nothing was billed, nothing was kept for a real check to find.
    expect(gas.fetches).toHaveLength(0);
    expect(Object.values(sandbox.sandbox.stats()).every((s) => s.requests === 0)).toBe(true);
    expect(gas.properties.user()).toEqual({});
    expect(gas.properties.document()).toEqual({});
  });

  test('typed by a user who has a key, DAPA_SAMPLE still sends nothing, and DAPA then shows real metrics', async () => {
    await gas.run('saveSettings', {
      apiKey: 'sandbox-premium',
      environment: 'custom',
      baseUrl: sheetsAddress(sandbox.url),
    });
    gas.sheet.setValues('A1', [['example.com']]);
    const sample = await gas.runCustomFunction('=DAPA_SAMPLE(A1)', { cell: 'B1' });
    expect(sample[0].every((cell) => /^SAMPLE /.test(String(cell)))).toBe(true);
    expect(gas.fetches).toHaveLength(0);
    const real = await gas.runCustomFunction('=DAPA(A1)', { cell: 'B2' });
    expect(real).toEqual([metricsRow('example.com')]);
    expect(statsOf(sandbox, 'sandbox-premium')).toMatchObject({ requests: 1, billed: 1 });
  });

  test('the menu offers it, and the sample can fail the checks above (a real metric is not SAMPLE)', async () => {
    await gas.run('onOpen');
    expect(JSON.stringify(gas.ui.events)).toContain('Try with sample data');
    expect(/^SAMPLE \d+(\.\d)?$/.test(String(metricsRow('example.com')[0]))).toBe(false);
  });
});
