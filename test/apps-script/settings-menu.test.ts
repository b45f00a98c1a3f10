// Settings, the key test, the add-on menu and "Refresh DAPA formulas", through the built bundle.
import type { JobState, KeyTestResult, Settings } from '../../apps-script/sidebar/contract';
import { DEFAULT_CONFIG, metricsFor } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import fs from 'node:fs';
import path from 'node:path';
import { type AppsScriptStandIn, DIST_DIR, loadAppsScript } from './harness';
import {
  assertBundleIsCurrent,
  domains,
  sheetsAddress,
  standInFor,
  statsOf,
  useSuiteSandbox,
} from './support';

const CONFIG = { keys: { ...DEFAULT_CONFIG.keys, 'sandbox-slow': { maxUrlsPerRequest: 10 } } };

describe('settings and the key', () => {
  let sandbox!: RunningSandbox;
  let gas: AppsScriptStandIn;

  useSuiteSandbox(CONFIG, (started) => (sandbox = started));
  beforeEach(async () => {
    assertBundleIsCurrent();
    gas = await loadAppsScript();
  });
  afterEach(async () => {
    await gas.close();
  });

  it('never hands the key back: getSettings gives a masked hint only', async () => {
    expect(await gas.run<Settings>('getSettings')).toEqual({
      hasKey: false,
      keyHint: '',
      environment: 'production',
      baseUrl: 'https://www.dapachecker.org',
    });
    const saved = await gas.run<Settings>('saveSettings', { apiKey: '  sk-live-abcdef123456  ' });
    expect(saved).toEqual({
      hasKey: true,
      keyHint: '••••••3456',
      environment: 'production',
      baseUrl: 'https://www.dapachecker.org',
    });
    expect(JSON.stringify(await gas.run('getSettings'))).not.toContain('abcdef');
    expect(gas.properties.user()['dapa.apiKey']).toBe('sk-live-abcdef123456');
    expect(Object.values(gas.properties.document()).join()).not.toContain('abcdef');
    // A short key shows no character at all.
    expect((await gas.run<Settings>('saveSettings', { apiKey: 'abc' })).keyHint).toBe('••••••');
  });

  it('keeps the key when apiKey is left out, removes it with an empty string', async () => {
    await gas.run('saveSettings', { apiKey: 'sandbox-premium' });
    // Staging has no built-in host: it is an address the user types.
    await expect(gas.run('saveSettings', { environment: 'staging', baseUrl: '' })).rejects.toThrow(
      /The staging address must start with https:\/\//,
    );
    expect(
      await gas.run<Settings>('saveSettings', {
        environment: 'staging',
        baseUrl: 'https://staging.example.net/',
      }),
    ).toMatchObject({
      hasKey: true,
      environment: 'staging',
      baseUrl: 'https://staging.example.net',
    });
    expect(await gas.run<Settings>('saveSettings', { apiKey: '' })).toMatchObject({
      hasKey: false,
      keyHint: '',
    });
    expect(gas.properties.user()['dapa.apiKey']).toBeUndefined();
  });

  it('rejects an invalid custom base URL or a key with spaces, saying what is wrong', async () => {
    await expect(gas.run('saveSettings', { environment: 'custom', baseUrl: 'ftp://x' })).rejects.toThrow(
      'The custom address must start with https:// (for example https://api.your-proxy.com).',
    );
    await expect(
      gas.run('saveSettings', { environment: 'custom', baseUrl: 'https://a b.com' }),
    ).rejects.toThrow('The custom base URL cannot contain spaces.');
    // Apps Script fetches from Google's servers: a local or http address could never be reached, so it is refused
    // with why, and nothing is saved.
    for (const environment of ['custom', 'staging'] as const)
      for (const baseUrl of ['http://127.0.0.1:8787', 'http://api.your-proxy.com'])
        await expect(gas.run('saveSettings', { environment, baseUrl })).rejects.toThrow(
          `The ${environment} address must start with https://`,
        );
    await expect(
      gas.run('saveSettings', { environment: 'custom', baseUrl: 'http://127.0.0.1:8787' }),
    ).rejects.toThrow(/can never be reached from there.*urlFetchWhitelist in appsscript\.json/);
    await expect(gas.run('saveSettings', { apiKey: 'two words' })).rejects.toThrow(/cannot contain spaces/);
    await expect(gas.run('saveSettings', { environment: 'moon' })).rejects.toThrow(
      /Unknown environment "moon"/,
    );
    expect(await gas.run<Settings>('getSettings')).toMatchObject({
      hasKey: false,
      environment: 'production',
    });
    expect(
      await gas.run<Settings>('saveSettings', {
        environment: 'custom',
        baseUrl: `${sheetsAddress(sandbox.url)}/api/user/dapa-checker/`,
      }),
    ).toMatchObject({ environment: 'custom' });
  });

  it('tests the key without billing anything', async () => {
    await gas.run('saveSettings', { environment: 'custom', baseUrl: sheetsAddress(sandbox.url) });
    expect(await gas.run<KeyTestResult>('testKey')).toEqual({
      ok: false,
      message: expect.stringMatching(/No API key is saved/),
    });
    await gas.run('saveSettings', { apiKey: 'sandbox-premium' });
    expect(await gas.run<KeyTestResult>('testKey')).toMatchObject({
      ok: true,
      message: expect.stringMatching(/billed nothing/),
    });
    expect(statsOf(sandbox, 'sandbox-premium')).toMatchObject({ requests: 1, billed: 0 });
    await gas.run('saveSettings', { apiKey: 'wrong-key' });
    expect(await gas.run<KeyTestResult>('testKey')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/Incorrect API key/),
    });
    await gas.run('saveSettings', { apiKey: 'sandbox-expired' });
    expect(await gas.run<KeyTestResult>('testKey')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/expired/),
    });
    await gas.run('saveSettings', { environment: 'custom', baseUrl: 'https://127.0.0.1:9' });
    expect(await gas.run<KeyTestResult>('testKey')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^Could not reach https:\/\/127\.0\.0\.1:9/),
    });
  });

  it('forgets the learned plan limits when the key changes', async () => {
    await gas.run('saveSettings', {
      apiKey: 'sandbox-premium',
      environment: 'custom',
      baseUrl: sheetsAddress(sandbox.url),
    });
    gas.sheet.setValues(
      'A1:A60',
      domains(60).map((d) => [d]),
    );
    await gas.runCustomFunction('=DAPA(A1:A60)', { cell: 'B1' });
    expect(Object.keys(gas.properties.user()).some((k) => k.startsWith('dapa.window.'))).toBe(true);
    await gas.run('saveSettings', { apiKey: 'another-key-0000' });
    expect(Object.keys(gas.properties.user()).some((k) => k.startsWith('dapa.window.'))).toBe(false);
  });

  it("uses each user's own key in the sidebar, and the owner's key in formulas of a shared sheet", async () => {
    await gas.run('saveSettings', {
      apiKey: 'sandbox-premium',
      environment: 'custom',
      baseUrl: sheetsAddress(sandbox.url),
    });
    gas.sheet.setValues('A1', [['example.com']]);
    gas.asUser('editor@example.com');
    expect(await gas.run<Settings>('getSettings')).toMatchObject({ hasKey: false });
    gas.sheet.select('A1');
    await expect(gas.run('startJob', { source: 'selection' })).rejects.toThrow(/No DAPA API key is set/);
    expect(await gas.runCustomFunction('=DAPA(A1)', { cell: 'B1' })).toEqual([
      [
        metricsFor('example.com').site_da,
        metricsFor('example.com').site_pa,
        metricsFor('example.com').site_mr,
        metricsFor('example.com').spam_score,
      ],
    ]);
  });
});

describe('the add-on menu', () => {
  let sandbox!: RunningSandbox;
  let gas: AppsScriptStandIn;

  useSuiteSandbox(CONFIG, (started) => (sandbox = started));
  afterEach(async () => {
    await gas.close();
  });

  it('builds its items when the sheet opens, even before the add-on is authorized (AuthMode.NONE)', async () => {
    gas = await loadAppsScript();
    await gas.runWithAuthMode('NONE', 'onOpen', { authMode: 'NONE' });
    expect(gas.ui.events).toEqual([
      {
        type: 'menu',
        title: '(add-on menu)',
        items: [
          { caption: 'Open sidebar', functionName: 'showSidebar' },
          { caption: 'Set API key', functionName: 'promptApiKey' },
          { caption: 'Try with sample data', functionName: 'trySampleData' },
          { caption: 'Check selection', functionName: 'checkSelection' },
          { caption: 'Refresh DAPA formulas', functionName: 'refreshDapaFormulas' },
          { caption: 'Check DAPA formulas again', functionName: 'checkFormulasAgain' },
          { caption: 'Turn on background checks', functionName: 'startBackground' },
          { caption: 'Turn off background checks', functionName: 'stopBackground' },
          { separator: true },
          { caption: 'Remove DAPA from this spreadsheet', functionName: 'removeDapa' },
          { caption: 'Help', functionName: 'showHelp' },
        ],
      },
    ]);
    // Each item names a top-level function of the bundle, and installing builds the same menu.
    const code = fs.readFileSync(path.join(DIST_DIR, 'Code.js'), 'utf8');
    const menu = gas.ui.events[0];
    for (const item of menu.type === 'menu' ? menu.items : []) {
      if ('functionName' in item) expect(code).toMatch(new RegExp(`^function ${item.functionName}\\(`, 'm'));
    }
    await gas.run('onInstall', { authMode: 'FULL' });
    expect(gas.ui.events[1]).toEqual(gas.ui.events[0]);
  });

  it('sets the key from a prompt and reports the key test', async () => {
    gas = await standInFor(sandbox, undefined);
    gas.ui.respond({ button: 'OK', text: 'sandbox-premium' });
    await gas.run('promptApiKey');
    expect(gas.ui.events[0]).toMatchObject({
      type: 'prompt',
      title: 'DAPA API key',
      message: expect.stringMatching(/^No key is set yet/),
    });
    expect(gas.ui.events[1]).toMatchObject({
      type: 'alert',
      message: expect.stringMatching(/^Saved\. The API key works/),
    });
    expect(await gas.run<Settings>('getSettings')).toMatchObject({ hasKey: true, keyHint: '••••••mium' });

    gas.ui.respond({ button: 'CANCEL', text: 'ignored' });
    await gas.run('promptApiKey');
    expect(gas.ui.events[2]).toMatchObject({
      type: 'prompt',
      message: expect.stringMatching(/current key is ••••••mium/),
    });
    expect(gas.ui.events).toHaveLength(3);
    expect(gas.properties.user()['dapa.apiKey']).toBe('sandbox-premium');
  });

  it('checks the selection: starts the job and opens the sidebar that drives it', async () => {
    gas = await standInFor(sandbox, 'sandbox-premium');
    gas.sheet.setValues('A2:A3', [['example.com'], ['moz.com']]);
    gas.sheet.select('A2:A3');
    await gas.run('checkSelection');
    const sidebar = gas.ui.events.find((e) => e.type === 'sidebar');
    expect(sidebar).toMatchObject({ title: 'DAPA checker', html: expect.stringContaining('<') });
    expect(await gas.run<JobState>('getJob')).toMatchObject({ a1: 'A2:A3', status: 'running', total: 2 });
    gas.sheet.select('A2:B3');
    await gas.run('checkSelection');
    expect(gas.ui.events[gas.ui.events.length - 1]).toMatchObject({
      type: 'alert',
      message: expect.stringMatching(/Select one column/),
    });
  });

  it('refreshes the DAPA formulas that are unfinished, and only those (through their version cells), keeping what the caches hold', async () => {
    gas = await standInFor(sandbox, 'sandbox-slow', { clock: 'virtual', virtualLatencyMs: 4000 });
    gas.sheet.setValues(
      'A1:A150',
      domains(150, 'refresh').map((d) => [d]),
    );
    // Formulas of one block of 50 rows share a version slot: the small one sits in another block (rows 60-62).
    gas.sheet.setValues('C60:C61', [['example.com'], ['moz.com']]);
    gas.sheet.setFormula('B1', '=DAPA(A1:A150, "da")');
    gas.sheet.setFormula('D60', '=DAPA(C60:C61, "da", TRUE)');
    await gas.recalculate();
    const unfinished = () =>
      gas.sheet.getDisplayValues('B1:B150').filter(([v]) => v.startsWith('unfinished')).length;
    expect(unfinished()).toBeGreaterThan(0);

    // The first refresh gives each formula its version slot (the complete one too); then only the unfinished one.
    let rounds = 0;
    while (unfinished() > 0 && rounds < 6) {
      const result = await gas.run<{ formulas: number; refreshed: number }>('refreshDapaFormulas');
      expect(result).toEqual({ formulas: 2, refreshed: rounds === 0 ? 2 : 1 });
      rounds += 1;
    }
    expect(unfinished()).toBe(0);
    // The small formula ran beside the big one's sender (a cell waits only for a request in flight that carries it):
    // a refresh shows it.
    expect(gas.sheet.getValues('D60:D62')).toEqual([
      ['DA'],
      [metricsFor('example.com').site_da],
      [metricsFor('moz.com').site_da],
    ]);
    // Their own arguments kept as written, each with its block's slot of the hidden sheet _dapa_versions (1 × 128).
    const big = /^=DAPA\(A1:A150, "da",,'_dapa_versions'!\$A\$(\d+)\)$/.exec(
      gas.sheet.getFormulas('B1')[0][0],
    );
    const small = /^=DAPA\(C60:C61, "da", TRUE,'_dapa_versions'!\$A\$(\d+)\)$/.exec(
      gas.sheet.getFormulas('D60')[0][0],
    );
    expect(big && small && Number(big[1]) !== Number(small[1])).toBe(true);
    expect([gas.sheet.maxRows('_dapa_versions'), gas.sheet.maxColumns('_dapa_versions')]).toEqual([128, 1]);
    // The first refresh's step sent what the window allowed (all of it on this plan) and refreshed what it completed.
    expect(gas.ui.events.filter((e) => e.type === 'toast').pop()).toMatchObject({
      message: `Refreshing ${rounds === 1 ? 2 : 1} of 2 DAPA formulas (${rounds === 1 ? 0 : 1} are up to date).`,
    });
    // Its last recalculation found every domain, which only the next refresh can tell (from the cache, not the
    // display): it marks the formula up to date with one more recalculation, which sends nothing.
    const sent = gas.fetches.length;
    // (A formula the first refresh's step completed is marked up to date by that step: nothing is left to mark.)
    const marked = rounds === 1 ? 0 : 1;
    expect(await gas.run('refreshDapaFormulas')).toEqual({ formulas: 2, refreshed: marked });
    expect(gas.fetches.length).toBe(sent);
    expect(await gas.run('refreshDapaFormulas')).toEqual({ formulas: 2, refreshed: 0 });
    const requests = gas.fetches.length;

    // Six hours later the cache has expired, but a refresh kept what it held in the result store (30 days): nothing is
    // refreshed and nothing is asked again.
    gas.clock.advance(6 * 3600 * 1000 + 1000);
    expect(await gas.run('refreshDapaFormulas')).toEqual({ formulas: 2, refreshed: 0 });
    expect(gas.fetches.length).toBe(requests);
    expect(gas.sheet.getValues('D61')).toEqual([[metricsFor('example.com').site_da]]);
  });

  it('shows help, including which key a shared sheet uses', async () => {
    gas = await loadAppsScript();
    await gas.run('showHelp');
    const dialog = gas.ui.events[0];
    expect(dialog).toMatchObject({ type: 'dialog', title: 'DAPA help', modal: true });
    expect(dialog.type === 'dialog' && dialog.html).toMatch(
      /a formula uses the key Google&#39;s properties hold/,
    );
    expect(dialog.type === 'dialog' && dialog.html).toMatch(
      /everyone who can edit the spreadsheet can read your key/,
    );
    expect(dialog.type === 'dialog' && dialog.html).toMatch(/=DAPA\(A2:A50, &#34;spam,da&#34;, TRUE\)/);
  });
});
