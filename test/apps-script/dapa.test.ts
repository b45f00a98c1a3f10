// =DAPA(urls, metrics, header) through the built bundle in the Apps Script stand-in, against the sandbox API.
import { DEFAULT_CONFIG, metricsFor } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import type { AppsScriptStandIn } from './harness';
import { domains, metricsRow, standInFor, statsOf, useSuiteSandbox } from './support';

const KEY = 'sandbox-premium';
const CONFIG = {
  keys: {
    ...DEFAULT_CONFIG.keys,
    'sandbox-slow': { maxUrlsPerRequest: 10 },
    'sandbox-2rpm': { maxUrlsPerRequest: 5, requestsPerMinute: 2 },
  },
};

describe('=DAPA in a sheet', () => {
  let sandbox!: RunningSandbox;
  let gas: AppsScriptStandIn;

  useSuiteSandbox(CONFIG, (started) => (sandbox = started));
  beforeEach(async () => {
    gas = await standInFor(sandbox, KEY, { clock: 'virtual' });
  });
  afterEach(async () => {
    await gas.close();
  });

  it('gives DA, PA, MR and Spam Score for each cell of a range, one row per cell, row by row', async () => {
    gas.sheet.setValues('A2:B3', [
      ['example.com', 'moz.com'],
      ['https://github.com/x', 'nodejs.org'],
    ]);
    const rows = await gas.runCustomFunction('=DAPA(A2:B3)', { cell: 'D2' });
    expect(rows).toEqual([
      metricsRow('example.com'),
      metricsRow('moz.com'),
      metricsRow('github.com'),
      metricsRow('nodejs.org'),
    ]);
    expect(gas.sheet.getValues('D2:G5')).toEqual(rows);
  });

  it('takes a single cell as a one-row range', async () => {
    gas.sheet.setValues('A2', [['www.Example.com/about']]);
    expect(await gas.runCustomFunction('=DAPA(A2)', { cell: 'B2' })).toEqual([metricsRow('example.com')]);
  });

  it('chooses and orders the columns from the metrics list, and TRUE adds a header row', async () => {
    gas.sheet.setValues('A2:A3', [['example.com'], ['moz.com']]);
    const rows = await gas.runCustomFunction('=DAPA(A2:A3, "spam,da,domain", TRUE)', { cell: 'B1' });
    const m = metricsFor('example.com');
    const n = metricsFor('moz.com');
    expect(rows).toEqual([
      ['Spam Score', 'DA', 'Domain'],
      [m.spam_score, m.site_da, 'example.com'],
      [n.spam_score, n.site_da, 'moz.com'],
    ]);
    const onlyPa = await gas.runCustomFunction('=DAPA(A2:A3, "pa")', { cell: 'F2' });
    expect(onlyPa).toEqual([[m.site_pa], [n.site_pa]]);
  });

  it("reads the service's answer whatever its order, domain spelling and number format", async () => {
    sandbox.sandbox.configure({
      ...CONFIG,
      faults: { shuffleData: true, domainSpelling: 'mixed', numericStrings: true, seed: 3 },
    });
    const list = domains(40, 'spelling');
    gas.sheet.setValues(
      'A1:A40',
      list.map((d) => [`https://www.${d}/page`]),
    );
    const rows = await gas.runCustomFunction('=DAPA(A1:A40)', { cell: 'B1' });
    expect(rows).toEqual(list.map(metricsRow));
  });

  it('rides out server errors and HTML 502 pages from a proxy', async () => {
    sandbox.sandbox.configure({ ...CONFIG, faults: { serverErrorRate: 0.3, html502Rate: 0.2, seed: 5 } });
    const list = domains(150, 'flaky');
    gas.sheet.setValues(
      'A1:A150',
      list.map((d) => [d]),
    );
    const rows = await gas.runCustomFunction('=DAPA(A1:A150)', { cell: 'B1' });
    expect(rows).toEqual(list.map(metricsRow));
    const stats = statsOf(sandbox, KEY);
    expect((stats.responsesByStatus['500'] ?? 0) + (stats.responsesByStatus['502'] ?? 0)).toBeGreaterThan(0);
    expect(stats.billed).toBe(150);
  });

  it('says which metric name is unknown instead of guessing', async () => {
    gas.sheet.setValues('A2', [['example.com']]);
    await expect(gas.runCustomFunction('=DAPA(A2, "da,authority")', { cell: 'B2' })).rejects.toThrow(
      /Unknown metric "authority".*da, pa, mr, spam or domain/,
    );
    expect(gas.sheet.getDisplayValues('B2')).toEqual([['#ERROR!']]);
  });

  it('sends one request per range, and a domain written several ways is sent and billed once', async () => {
    const column = [
      'example.com',
      'https://www.example.com/a',
      'EXAMPLE.COM',
      'example.com/',
      'moz.com',
      'www.moz.com',
      'github.com',
    ];
    gas.sheet.setValues(
      'A1:A7',
      column.map((v) => [v]),
    );
    const rows = await gas.runCustomFunction('=DAPA(A1:A7)', { cell: 'B1' });
    expect(rows.map((r) => r[0])).toEqual(
      column.map(
        (v) =>
          metricsRow(
            v
              .replace(/^https:\/\/www\.|^www\.|\/.*$/g, '')
              .toLowerCase()
              .replace(/\/a$/, ''),
          )[0],
      ),
    );
    const stats = statsOf(sandbox, KEY);
    expect(stats.requests).toBe(1);
    expect(stats.urlsSubmitted).toBe(3);
    expect(stats.billedByDomain).toEqual({ 'example.com': 1, 'moz.com': 1, 'github.com': 1 });
  });

  it('keeps blanks and non-text cells in the sheet: blank rows stay blank, others get the reason', async () => {
    gas.sheet.setValues('A1:A6', [['example.com'], [''], ['   '], [42], [true], ['not a url']]);
    const rows = await gas.runCustomFunction('=DAPA(A1:A6)', { cell: 'B1' });
    expect(rows).toEqual([
      metricsRow('example.com'),
      ['', '', '', ''],
      ['', '', '', ''],
      ['invalid_url_format', '', '', ''],
      ['invalid_url_format', '', '', ''],
      ['invalid_url_format', '', '', ''],
    ]);
    const sent = gas.fetches.map((f) => JSON.parse(f.payload) as { urls: string[] });
    expect(sent).toEqual([{ urls: ['example.com'] }]);
  });

  it('costs 0 requests and 0 billed queries on recalculation, a reopened sheet, or the same domain in another formula', async () => {
    gas.sheet.setValues('A1:A4', [['example.com'], ['moz.com'], ['github.com'], ['nodejs.org']]);
    const first = await gas.runCustomFunction('=DAPA(A1:A4)', { cell: 'B1' });
    const after = statsOf(sandbox, KEY);
    expect(after.billed).toBe(4);

    // A recalculation of the same formula, then a new formula on another sheet with some of the domains.
    expect(await gas.runCustomFunction('=DAPA(A1:A4)', { cell: 'B1' })).toEqual(first);
    gas.sheet.addSheet('Other');
    gas.sheet.setValues('Other!A1:A2', [['https://moz.com/blog'], ['www.github.com']]);
    expect(await gas.runCustomFunction('=DAPA(Other!A1:A2)', { cell: 'Other!C1' })).toEqual([
      first[1],
      first[2],
    ]);
    // A reopened sheet: a new stand-in realm, same document cache.
    expect(await gas.runCustomFunction('=DAPA(A1:A4)')).toEqual(first);

    const now = statsOf(sandbox, KEY);
    expect(now.requests).toBe(after.requests);
    expect(now.billed).toBe(4);
  });

  it('keeps records for 6 hours: after that the same formula asks the service again', async () => {
    gas.sheet.setValues('A1', [['example.com']]);
    await gas.runCustomFunction('=DAPA(A1)', { cell: 'B1' });
    gas.clock.advance(6 * 3600 * 1000 - 60_000);
    await gas.runCustomFunction('=DAPA(A1)', { cell: 'B1' });
    expect(statsOf(sandbox, KEY).requests).toBe(1);
    gas.clock.advance(61_000);
    await gas.runCustomFunction('=DAPA(A1)', { cell: 'B1' });
    expect(statsOf(sandbox, KEY).requests).toBe(2);
  });

  it('never caches a skip: a lookup_failed cell is asked again on the next recalculation', async () => {
    sandbox.sandbox.configure({ ...CONFIG, faults: { lookupFailedRate: 1 } });
    gas.sheet.setValues('A1:A2', [['example.com'], ['nope']]);
    expect(await gas.runCustomFunction('=DAPA(A1:A2)', { cell: 'B1' })).toEqual([
      ['lookup_failed', '', '', ''],
      ['invalid_url_format', '', '', ''],
    ]);
    const failedRequests = statsOf(sandbox, KEY).requests;
    expect(failedRequests).toBe(4); // the first try and 3 retries, all inside one run

    sandbox.sandbox.configure(CONFIG);
    expect(await gas.runCustomFunction('=DAPA(A1:A2)', { cell: 'B1' })).toEqual([
      metricsRow('example.com'),
      ['invalid_url_format', '', '', ''],
    ]);
    const stats = statsOf(sandbox, KEY);
    expect(stats.requests).toBe(1);
    expect(stats.urlsSubmitted).toBe(1); // "nope" never left the sheet
  });

  it('keeps the learned plan maximum, so a later formula sends no request the plan refuses', async () => {
    const first = domains(120, 'first');
    gas.sheet.setValues(
      `A1:A120`,
      first.map((d) => [d]),
    );
    await gas.runCustomFunction('=DAPA(A1:A120)', { cell: 'B1' });
    const stats = statsOf(sandbox, KEY);
    expect(stats.responsesByStatus['422']).toBe(1); // 100 URLs: Limit Exceeded, then 50 per request
    expect(stats.billed).toBe(120);
    const plan = Object.entries(gas.properties.user()).find(([k]) => k.startsWith('dapa.window.'));
    expect(JSON.parse(plan?.[1] ?? '{}')).toMatchObject({ limits: { maxUrlsPerRequest: { value: 50 } } });

    const second = domains(120, 'second');
    gas.sheet.setValues(
      `C1:C120`,
      second.map((d) => [d]),
    );
    const before = stats.requests;
    await gas.runCustomFunction('=DAPA(C1:C120)', { cell: 'D1' });
    const after = statsOf(sandbox, KEY);
    expect(after.responsesByStatus['422']).toBe(1);
    expect(after.requests - before).toBe(3);
  });

  it('returns within the 30-second limit on a slow service, marking the rest unfinished, never timing out', async () => {
    await gas.close();
    // Each request takes 4 s of stand-in time; 200 domains at 10 per request would need 80 s.
    gas = await standInFor(sandbox, 'sandbox-slow', { clock: 'virtual', virtualLatencyMs: 4000 });
    const list = domains(200, 'slow');
    gas.sheet.setValues(
      'A1:A200',
      list.map((d) => [d]),
    );
    const rows = await gas.runCustomFunction('=DAPA(A1:A200)', { cell: 'B1' });
    const execution = gas.executions.filter((e) => e.functionName === 'DAPA').pop();
    expect(execution?.status).toBe('ok');
    expect(execution?.elapsedMs).toBeLessThan(30_000);
    const done = rows.filter((r) => typeof r[0] === 'number').length;
    const unfinished = rows.filter((r) => String(r[0]).startsWith('unfinished'));
    expect(done).toBeGreaterThanOrEqual(40);
    expect(done + unfinished.length).toBe(200);
    expect(String(unfinished[0][0])).toMatch(/refresh/i);

    // Refreshing finishes the rest from where it stopped: checked rows come from the cache.
    const billed = statsOf(sandbox, 'sandbox-slow').billed;
    for (let i = 0; i < 4; i++) await gas.runCustomFunction('=DAPA(A1:A200)', { cell: 'B1' });
    expect(gas.sheet.getValues('B1:B200').every(([v]) => typeof v === 'number')).toBe(true);
    expect(statsOf(sandbox, 'sandbox-slow').billed).toBe(200);
    expect(billed).toBe(done);
  });

  it('stops before a long Retry-After instead of waiting past the limit', async () => {
    await gas.close();
    gas = await standInFor(sandbox, 'sandbox-2rpm', { clock: 'real' });
    gas.sheet.setValues(
      'A1:A30',
      domains(30, 'rpm').map((d) => [d]),
    );
    const started = Date.now();
    const rows = await gas.runCustomFunction('=DAPA(A1:A30)', { cell: 'B1' });
    expect(Date.now() - started).toBeLessThan(10_000);
    // Request 1 (30 URLs) is refused as over the plan's 5, request 2 brings 5 records, request 3 gets the 429.
    expect(rows.filter((r) => typeof r[0] === 'number')).toHaveLength(5);
    expect(rows.filter((r) => String(r[0]).startsWith('unfinished'))).toHaveLength(25);
    expect(statsOf(sandbox, 'sandbox-2rpm').responsesByStatus['429']).toBe(1);
  });

  it('says a key is missing, wrong, or on an expired plan, and where to fix it', async () => {
    gas.sheet.setValues('A1', [['example.com']]);
    await gas.run('saveSettings', { apiKey: '' });
    await expect(gas.runCustomFunction('=DAPA(A1)', { cell: 'B1' })).rejects.toThrow(
      'No DAPA API key is set. Add your key in Extensions → DAPA → Set API key.',
    );
    await gas.run('saveSettings', { apiKey: 'not-a-real-key' });
    await expect(gas.runCustomFunction('=DAPA(A1)', { cell: 'B1' })).rejects.toThrow(
      /API key was rejected \("incorrect API key provided"\).*Extensions → DAPA → Set API key/,
    );
    await gas.run('saveSettings', { apiKey: 'sandbox-expired' });
    await expect(gas.runCustomFunction('=DAPA(A1)', { cell: 'B1' })).rejects.toThrow(
      /plan has expired.*\("you are not premium for this request"\).*Extensions → DAPA → Set API key/,
    );
    expect(gas.sheet.getNote('B1')).toMatch(/plan has expired/);
    for (const line of gas.logs) expect(line.text).not.toContain('sandbox-expired');
  });

  it('sends the key only in the Authorization header, never in a URL, a cache key or a log line', async () => {
    gas.sheet.setValues('A1:A2', [['example.com'], ['moz.com']]);
    await gas.runCustomFunction('=DAPA(A1:A2)', { cell: 'B1' });
    expect(gas.fetches.length).toBeGreaterThan(0);
    for (const fetch of gas.fetches) {
      expect(fetch.url).not.toContain(KEY);
      expect(fetch.payload).not.toContain(KEY);
      expect(fetch.requestHeaders.Authorization).toBe(`Bearer ${KEY}`);
    }
    // The two records, the formulas' queue of this spreadsheet (the document's state, in its own cache), and the
    // copies of the owner's settings (base URL, whether a key and a budget are set; never the key) and the retention that
    // spare every cell a Properties call (issue 34).
    const cacheKeys = gas.cache.document.keys();
    const copies = ['dapa.formulaSettings', 'dapa.retentionDays'];
    expect(cacheKeys.filter((k) => copies.includes(k)).sort()).toEqual(copies);
    expect(cacheKeys.filter((k) => !k.startsWith('dapa1:q:') && !copies.includes(k)).length).toBe(2);
    expect(cacheKeys.length).toBe(5);
    for (const key of cacheKeys) {
      expect(key.length).toBeLessThan(250);
      expect(key).not.toContain(KEY);
      expect(gas.cache.document.live(key) ?? '').not.toContain(KEY);
    }
    for (const value of Object.values(gas.properties.document())) expect(value).not.toContain(KEY);
  });

  it('lets formulas recalculating side by side share the cache and the learned plan', async () => {
    const list = domains(60, 'side');
    gas.sheet.setValues(
      'A1:A60',
      list.map((d) => [d]),
    );
    gas.sheet.setFormula('C1', '=DAPA(A1:A30)');
    gas.sheet.setFormula('H1', '=DAPA(A31:A60, "da")');
    gas.sheet.setFormula('J1', '=DAPA(A1:A60, "pa")');
    await gas.recalculate();
    expect(gas.sheet.getValues('C1:C30').map(([v]) => v)).toEqual(
      list.slice(0, 30).map((d) => metricsRow(d)[0]),
    );
    expect(gas.sheet.getValues('H1:H30').map(([v]) => v)).toEqual(
      list.slice(30).map((d) => metricsRow(d)[0]),
    );
    expect(gas.sheet.getValues('J1:J60').map(([v]) => v)).toEqual(list.map((d) => metricsRow(d)[1]));
    // A changed input cell recalculates the two formulas that read it (side by side, so each may ask for the new
    // domain once); the 59 other domains come from the cache.
    const before = statsOf(sandbox, KEY).urlsSubmitted;
    gas.sheet.setValues('A5', [['brand-new.example.org']]);
    await gas.recalculate();
    expect(gas.sheet.getValues('C5')).toEqual([[metricsRow('brand-new.example.org')[0]]]);
    expect(gas.sheet.getValues('J5')).toEqual([[metricsRow('brand-new.example.org')[1]]]);
    expect(gas.sheet.getValues('H1')).toEqual([[metricsRow(list[30])[0]]]);
    const submitted = statsOf(sandbox, KEY).urlsSubmitted - before;
    expect(submitted).toBeGreaterThanOrEqual(1);
    expect(submitted).toBeLessThanOrEqual(2);
  });

  it('answers a formula of blank cells (dragged past the list) at once, without a store, cache or service call', async () => {
    const slow = await standInFor(sandbox, KEY, { clock: 'virtual', serviceCallMs: 1_000 });
    try {
      slow.sheet.setValues('A2:A3', [[''], ['  ']]);
      expect(await slow.runCustomFunction('=DAPA(A2)', { cell: 'B2' })).toEqual([['', '', '', '']]);
      expect(await slow.runCustomFunction('=DAPA(A2:A3, "da", TRUE)', { cell: 'C2' })).toEqual([
        ['DA'],
        [''],
        [''],
      ]);
      const blank = slow.executions.filter((e) => e.kind === 'custom-function');
      expect(blank).toHaveLength(2);
      // Every service call takes a second here: a formula of blank cells makes none.
      for (const e of blank) expect(e.elapsedMs).toBeLessThan(1_000);
      // One cell with a URL beside them does go to the stores.
      slow.sheet.setValues('A4', [['example.com']]);
      await slow.runCustomFunction('=DAPA(A2:A4)', { cell: 'D2' });
      const checked = slow.executions.filter((e) => e.kind === 'custom-function').at(-1);
      expect(checked?.elapsedMs).toBeGreaterThanOrEqual(1_000);
    } finally {
      await slow.close();
    }
  });
});
