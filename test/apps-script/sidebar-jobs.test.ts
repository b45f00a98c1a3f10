// The sidebar's server functions (startJob, continueJob, cancelJob, getJob, retrySkipped) through the built bundle:
// how a bulk check over thousands of rows proceeds in short executions and what it writes into the sheet.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JobState } from '../../apps-script/sidebar/contract';
import { DEFAULT_CONFIG, type SandboxConfig } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import type { AppsScriptStandIn } from './harness';
import { domains, metricsRow, standInFor, statsOf, useSuiteSandbox } from './support';

const CONFIG: SandboxConfig = {
  keys: {
    ...DEFAULT_CONFIG.keys,
    // A plan without rate limits, so 10,000 rows take seconds rather than the 20 minutes 500 URLs/min would.
    'sandbox-bulk': { maxUrlsPerRequest: 1000 },
    'sandbox-small': { maxUrlsPerRequest: 10 },
  },
};

async function finish(
  gas: AppsScriptStandIn,
  state: JobState,
  maxSteps = 200,
): Promise<{ state: JobState; steps: number }> {
  let steps = 0;
  while (state.status === 'running' && steps < maxSteps) {
    state = await gas.run<JobState>('continueJob');
    steps += 1;
  }
  return { state, steps };
}

describe('the sidebar checking rows in the sheet', () => {
  let sandbox!: RunningSandbox;
  let gas: AppsScriptStandIn;

  useSuiteSandbox(CONFIG, (started) => (sandbox = started));
  afterEach(async () => {
    await gas?.close();
  });

  it('finishes a 10,000-row column in short steps, none near the 6-minute limit', async () => {
    gas = await standInFor(sandbox, 'sandbox-bulk', { clock: 'real' });
    gas.sheet.addSheet('Big', 10_100, 26);
    gas.sheet.activate('Big');
    const values: string[][] = [['URL']];
    for (let i = 0; i < 10_000; i++) {
      values.push([
        i % 500 === 7
          ? 'not a url'
          : i % 1000 === 3
            ? ''
            : i % 10 === 9
              ? 'www.dup.example.com'
              : `host-${i}.example.net`,
      ]);
    }
    gas.sheet.setValues('Big!A1:A10001', values);
    const started = Date.now();
    const start = await gas.run<JobState>('startJob', { source: 'column', column: 'A', headerRow: true });
    expect(start).toMatchObject({
      sheetName: 'Big',
      a1: 'A2:A10001',
      total: 10_000,
      done: 0,
      status: 'running',
    });
    expect(gas.sheet.getValues('Big!B1:F1')).toEqual([['DA', 'PA', 'MR', 'Spam Score', 'Status']]);

    const { state, steps } = await finish(gas, start);
    const seconds = (Date.now() - started) / 1000;
    const runs = gas.executions.filter((e) => e.functionName === 'continueJob');
    const longest = Math.max(...runs.map((e) => e.elapsedMs ?? Infinity));
    console.log(
      `10,000 rows: ${steps} continueJob steps, longest ${longest} ms, ${seconds.toFixed(1)} s in all, ${state.counts.requests} requests`,
    );
    expect(state.status).toBe('done');
    expect(state.done).toBe(10_000);
    expect(runs.every((e) => e.status === 'ok')).toBe(true);
    expect(longest).toBeLessThan(60_000);

    const invalid = values.slice(1).filter(([v]) => v === 'not a url').length;
    const blank = values.slice(1).filter(([v]) => v === '').length;
    const distinct = new Set(
      values
        .slice(1)
        .map(([v]) => v)
        .filter((v) => v.includes('.')),
    ).size;
    expect(state.counts).toMatchObject({
      records: 10_000 - invalid - blank,
      skipped: invalid + blank,
      errors: 0,
      billed: distinct,
    });
    expect(state.skippedByReason).toEqual({ invalid_url_format: invalid, empty_url: blank });
    expect(statsOf(sandbox, 'sandbox-bulk').billed).toBe(distinct);

    const out = gas.sheet.getValues('Big!B2:F10001');
    out.forEach((row, i) => {
      const input = values[i + 1][0];
      if (input === '') expect(row[4]).toMatch(/^empty_url: /);
      else if (input === 'not a url') expect(row.slice(0, 4)).toEqual(['', '', '', '']);
      else expect(row).toEqual([...metricsRow(input.replace(/^www\./, '')), '']);
    });
  }, 120_000);

  it('writes DA, PA, MR, Spam Score and Status right of the selection, with the header above it', async () => {
    gas = await standInFor(sandbox, 'sandbox-premium');
    gas.sheet.setValues('C3:C8', [
      ['example.com'],
      ['nope'],
      [''],
      ['moz.com'],
      [3.5],
      ['https://github.com/a'],
    ]);
    gas.sheet.select('C3:C8');
    expect(await gas.run('getSelection')).toEqual({
      sheetName: 'Sheet1',
      a1: 'C3:C8',
      rows: 6,
      columns: 1,
      firstColumn: 'C',
    });
    const { state } = await finish(gas, await gas.run<JobState>('startJob', { source: 'selection' }));
    expect(state).toMatchObject({ a1: 'C3:C8', total: 6, done: 6, status: 'done' });
    expect(gas.sheet.getValues('D2:H8')).toEqual([
      ['DA', 'PA', 'MR', 'Spam Score', 'Status'],
      [...metricsRow('example.com'), ''],
      ['', '', '', '', expect.stringMatching(/^invalid_url_format: "nope" has no domain extension/)],
      ['', '', '', '', 'empty_url: Empty cell: nothing to check.'],
      [...metricsRow('moz.com'), ''],
      [
        '',
        '',
        '',
        '',
        expect.stringMatching(/^invalid_url_format: Not a text value \(got the number 3\.5\)/),
      ],
      [...metricsRow('github.com'), ''],
    ]);
    expect(state.message).toMatch(
      /^Done: 6 rows\. 3 with metrics, 3 skipped, 0 not checked; 1 requests, 3 credits billed/,
    );
  });

  it('takes row 1 of a selection as its header when it holds no URL', async () => {
    gas = await standInFor(sandbox, 'sandbox-premium');
    gas.sheet.setValues('A1:A3', [['Website'], ['example.com'], ['moz.com']]);
    gas.sheet.select('A1:A3');
    const { state } = await finish(gas, await gas.run<JobState>('startJob', { source: 'selection' }));
    expect(state).toMatchObject({ a1: 'A2:A3', total: 2, status: 'done' });
    expect(gas.sheet.getValues('B1:F1')).toEqual([['DA', 'PA', 'MR', 'Spam Score', 'Status']]);
    expect(gas.sheet.getValues('B2')).toEqual([[metricsRow('example.com')[0]]]);
  });

  it('refuses to overwrite data next to the URLs, and a selection of several columns, saying why', async () => {
    gas = await standInFor(sandbox, 'sandbox-premium');
    gas.sheet.setValues('A2:A4', [['example.com'], ['moz.com'], ['github.com']]);
    gas.sheet.setValues('D3', [['my notes']]);
    gas.sheet.select('A2:A4');
    await expect(gas.run('startJob', { source: 'selection' })).rejects.toThrow(
      'The results go into B2:F4, but D3 already holds "my notes". Clear those cells or insert 5 empty columns after column A, then start again.',
    );
    expect(gas.sheet.getValues('D3')).toEqual([['my notes']]);
    gas.sheet.select('A2:B4');
    await expect(gas.run('startJob', { source: 'selection' })).rejects.toThrow(
      /Select one column of URLs: A2:B4 has 2 columns/,
    );
    await expect(gas.run('startJob', { source: 'column', column: '7', headerRow: true })).rejects.toThrow(
      /"7" is not a column of Sheet1/,
    );
  });

  it('runs again over its own earlier results without complaint', async () => {
    gas = await standInFor(sandbox, 'sandbox-premium');
    gas.sheet.setValues('A1:A3', [['URL'], ['example.com'], ['moz.com']]);
    await finish(
      gas,
      await gas.run<JobState>('startJob', { source: 'column', column: 'A', headerRow: true }),
    );
    const { state } = await finish(
      gas,
      await gas.run<JobState>('startJob', { source: 'column', column: 'A', headerRow: true }),
    );
    expect(state).toMatchObject({
      status: 'done',
      counts: { records: 2, cached: 2, requests: 0, billed: 0 },
    });
  });

  it('adds columns when the URLs are too close to the sheet edge for the five result columns', async () => {
    gas = await standInFor(sandbox, 'sandbox-premium');
    gas.sheet.setValues('Y1:Y2', [['URL'], ['example.com']]);
    const { state } = await finish(
      gas,
      await gas.run<JobState>('startJob', { source: 'column', column: 'Y', headerRow: true }),
    );
    expect(state.status).toBe('done');
    expect(gas.sheet.maxColumns()).toBe(30);
    expect(gas.sheet.getValues('Z2:AD2')).toEqual([[...metricsRow('example.com'), '']]);
  });

  it('cancels a running step before its next request; the job can be seen again and the rest retried', async () => {
    // On a virtual clock each request takes 2 s; the cancel comes at 5 s, while the step waits for an answer.
    gas = await standInFor(sandbox, 'sandbox-small', { clock: 'virtual', virtualLatencyMs: 2000 });
    const list = domains(600, 'cancel').map((d, i) => (i % 50 === 10 ? '' : d));
    gas.sheet.setValues('A1:A601', [['URL'], ...list.map((d) => [d])]);
    gas.sheet.addSheet('Spare');
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    const t0 = gas.clock.now();
    const [stepState, cancelled] = await Promise.all([
      gas.run<JobState>('continueJob'),
      gas.runWith<JobState>({ at: t0 + 5_000 }, 'cancelJob'),
    ]);
    // Requests at 0, 2 and 4 s; the one answered after the cancel is the step's last.
    expect(gas.fetches.length).toBe(3);
    expect(cancelled.status).toBe('cancelled');
    expect(stepState.status).toBe('cancelled');
    expect(stepState.done).toBeLessThan(600);
    expect(statsOf(sandbox, 'sandbox-small').requests).toBeLessThan(60);
    const seen = await gas.run<JobState>('getJob');
    expect(seen).toMatchObject({ id: stepState.id, status: 'cancelled', done: stepState.done });
    expect(await gas.run<JobState>('continueJob')).toMatchObject({
      status: 'cancelled',
      done: stepState.done,
    });

    // Retry takes the rows the cancel left unchecked; blank ones among them need no request and are marked at once.
    sandbox.sandbox.configure(CONFIG);
    const left = gas.sheet.getValues('A2:F601').filter((row) => row.slice(1).every((v) => v === ''));
    const leftBlank = left.filter((row) => row[0] === '').length;
    expect(left.length).toBe(600 - stepState.done);
    const retry = await gas.run<JobState>('retrySkipped');
    expect(retry.total).toBe(left.length - leftBlank);
    const { state } = await finish(gas, retry);
    expect(state).toMatchObject({ status: 'done', done: retry.total, counts: { records: retry.total } });
    const results = gas.sheet.getValues('B2:F601');
    results.forEach((row, i) => {
      if (list[i] === '') expect(row[4]).toBe('empty_url: Empty cell: nothing to check.');
      else expect(typeof row[0]).toBe('number');
    });
    expect(Object.values(statsOf(sandbox, 'sandbox-small').billedByDomain).every((n) => n === 1)).toBe(true);
  }, 30_000);

  it('resumes after the sidebar was closed: getJob gives the unfinished job and continueJob goes on', async () => {
    gas = await standInFor(sandbox, 'sandbox-small', { clock: 'virtual', virtualLatencyMs: 2000 });
    const list = domains(400, 'resume');
    gas.sheet.setValues('A1:A401', [['URL'], ...list.map((d) => [d])]);
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    const first = await gas.run<JobState>('continueJob');
    expect(first.status).toBe('running');
    expect(first.done).toBeGreaterThan(0);
    expect(first.done).toBeLessThan(400);

    // The sidebar is closed and opened again: it asks for the job and continues it.
    const seen = await gas.run<JobState>('getJob');
    expect(seen).toMatchObject({ id: first.id, status: 'running', done: first.done });
    const { state } = await finish(gas, seen);
    expect(state).toMatchObject({ status: 'done', done: 400 });
    const steps = gas.executions.filter((e) => e.functionName === 'continueJob');
    expect(steps.length).toBeGreaterThan(2);
    for (const e of steps) expect(e.elapsedMs).toBeLessThan(35_000);
    expect(statsOf(sandbox, 'sandbox-small').billed).toBe(400);
  });

  it('retries only the rows skipped for a reason that can change', async () => {
    sandbox.sandbox.configure({ ...CONFIG, faults: { lookupFailedRate: 0.5, seed: 7 } });
    gas = await standInFor(sandbox, 'sandbox-premium', { clock: 'virtual' });
    const list = domains(300, 'retry');
    gas.sheet.setValues('A1:A302', [['URL'], ...list.map((d) => [d]), ['bad entry']]);
    const { state } = await finish(
      gas,
      await gas.run<JobState>('startJob', { source: 'column', column: 'A', headerRow: true }),
    );
    const failed = gas.sheet
      .getValues('F2:F302')
      .filter(([s]) => String(s).startsWith('lookup_failed')).length;
    expect(failed).toBeGreaterThan(0);
    expect(state.counts.retryable).toBe(failed);
    expect(state.skippedByReason).toEqual({ lookup_failed: failed, invalid_url_format: 1 });

    sandbox.sandbox.configure(CONFIG);
    const retry = await gas.run<JobState>('retrySkipped');
    expect(retry.total).toBe(failed);
    const again = await finish(gas, retry);
    expect(again.state).toMatchObject({
      status: 'done',
      done: failed,
      counts: { records: failed, billed: failed },
    });
    expect(gas.sheet.getValues('B2:B301').every(([v]) => typeof v === 'number')).toBe(true);
    expect(gas.sheet.getValues('F302')[0][0]).toMatch(/^invalid_url_format/);
    // The retry (stats restart with the sandbox's new config) billed exactly the rows that had failed, once each.
    const billed = statsOf(sandbox, 'sandbox-premium').billedByDomain;
    expect(Object.keys(billed)).toHaveLength(failed);
    expect(Object.values(billed).every((n) => n === 1)).toBe(true);
  });

  it('knows the rows to retry from the stored job, not from the text in the Status cells', async () => {
    sandbox.sandbox.configure({ ...CONFIG, faults: { lookupFailedRate: 0.5, seed: 11 } });
    gas = await standInFor(sandbox, 'sandbox-premium', { clock: 'virtual' });
    const list = domains(40, 'stored');
    gas.sheet.setValues('A1:A41', [['URL'], ...list.map((d) => [d])]);
    await finish(
      gas,
      await gas.run<JobState>('startJob', { source: 'column', column: 'A', headerRow: true }),
    );
    const status = gas.sheet.getValues('F2:F41').map(([s]) => String(s));
    const failed = status.map((s, i) => (s.startsWith('lookup_failed') ? i : -1)).filter((i) => i >= 0);
    const fine = status.map((s, i) => (s === '' ? i : -1)).filter((i) => i >= 0);
    expect(failed.length).toBeGreaterThan(1);
    // The user edits Status cells: a failed row's text is replaced, a good row is given a failed-looking text.
    gas.sheet.setValues(`F${failed[0] + 2}`, [['checked by hand']]);
    gas.sheet.setValues(`F${fine[0] + 2}`, [['lookup_failed: typed by the user']]);

    sandbox.sandbox.configure(CONFIG);
    const retry = await gas.run<JobState>('retrySkipped');
    expect(retry.total).toBe(failed.length);
    await finish(gas, retry);
    for (const i of failed) expect(typeof gas.sheet.getValues(`B${i + 2}`)[0][0]).toBe('number');
    expect(gas.sheet.getValues(`F${fine[0] + 2}`)[0][0]).toBe('lookup_failed: typed by the user');
  });

  it('stops with the reason when the key is wrong, and resumes once it is fixed', async () => {
    gas = await standInFor(sandbox, 'sandbox-premium');
    gas.sheet.setValues('A1:A3', [['URL'], ['example.com'], ['moz.com']]);
    await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
    await gas.run('saveSettings', { apiKey: 'sandbox-expired' });
    const stopped = await gas.run<JobState>('continueJob');
    expect(stopped.status).toBe('error');
    expect(stopped.message).toMatch(/plan does not allow this request, has expired/);
    expect(gas.sheet.getValues('B2:F3')).toEqual([
      ['', '', '', '', ''],
      ['', '', '', '', ''],
    ]);
    await gas.run('saveSettings', { apiKey: 'sandbox-premium' });
    const { state } = await finish(gas, await gas.run<JobState>('continueJob'));
    expect(state).toMatchObject({ status: 'done', done: 2 });
  });

  it('writes what the service says as text: a reason or a domain starting with = never becomes a formula', async () => {
    const hostile = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const urls = (JSON.parse(body) as { urls: string[] }).urls;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            status: 200,
            message: 'ok',
            data: urls.includes('example.com')
              ? [{ domain: '=SUM(1,1)', site_da: 1, site_pa: 2, site_mr: 3, spam_score: 4 }]
              : [],
            summary: { submitted: urls.length, processed: 1, skipped: urls.length - 1 },
            skipped: urls
              .map((url, index) => ({
                index,
                url,
                reason: '=IMPORTXML("http://x.invalid","//a")',
                message: '@evil +1',
              }))
              .filter((s) => s.url !== 'example.com'),
          }),
        );
      });
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      gas = await standInFor(
        { url: `http://127.0.0.1:${(hostile.address() as AddressInfo).port}` } as RunningSandbox,
        'any-key',
      );
      gas.sheet.setValues('A1:A3', [['URL'], ['example.com'], ['other.com']]);
      await finish(
        gas,
        await gas.run<JobState>('startJob', { source: 'column', column: 'A', headerRow: true }),
      );
      expect(
        gas.sheet
          .getFormulas('A1:F3')
          .flat()
          .every((f) => f === ''),
      ).toBe(true);
      expect(gas.sheet.getValues('F3')[0][0]).toBe('=IMPORTXML("http://x.invalid","//a"): @evil +1');

      const rows = await gas.runCustomFunction('=DAPA(A2:A3, "domain,da")', { cell: 'H2' });
      expect(rows).toEqual([
        ['=SUM(1,1)', 1],
        ['=IMPORTXML("http://x.invalid","//a")', ''],
      ]);
      expect(gas.sheet.getFormulas('H2:I3')).toEqual([
        ['=DAPA(A2:A3, "domain,da")', ''],
        ['', ''],
      ]);
    } finally {
      await new Promise<void>((resolve) => hostile.close(() => resolve()));
    }
  });
});
