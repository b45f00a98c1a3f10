// The Sheets sidebar in a real headless Chromium: the built apps-script/dist/Sidebar.html, its google.script.run
// wired to the Apps Script stand-in running the built Code.js against the sandbox API. Saves sidebar.png.
/// <reference lib="dom" />
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'puppeteer-core';
import type { AppsScriptStandIn } from '../apps-script/harness';
import { loadAppsScript } from '../apps-script/harness';
import { assertBundleIsCurrent, sheetsAddress, statsOf } from '../apps-script/support';
import { metricsFor } from '../sandbox/handler';
import { type RunningSandbox, startSandbox } from '../sandbox/server';
import { serveSidebar, type SidebarServer } from './bridge';
import { launchChromium, type LaunchedChromium } from './chromium';
import { screenshotAsProduction } from './screenshot';

// A step waits on the page with `until` (20 s each): jest's own 5 s default must not come first on a busy machine.
jest.setTimeout(60_000);

const KEY = 'sandbox-premium';
const SIDEBAR_HTML = path.resolve(__dirname, '../../apps-script/dist/Sidebar.html');
const SIDEBAR_SOURCES = path.resolve(__dirname, '../../apps-script/sidebar');
// The committed screenshot (linked from the README) is refreshed with UPDATE_SCREENSHOT=1; other runs write to tmp.
const SCREENSHOT = process.env.UPDATE_SCREENSHOT
  ? path.join(__dirname, 'sidebar.png')
  : path.join(os.tmpdir(), 'dapa-sidebar.png');
/** What google.script.run reports when Apps Script itself fails a call. */
const APPS_SCRIPT_HICCUP = "We're sorry, a server error occurred. Please wait a bit and try again.";
const PAYLOAD = '<img src=x onerror=alert(1)>';

/** 120 rows under a header: distinct domains, re-spelled duplicates, invalid entries and one blank cell. */
const ROWS: string[] = Array.from({ length: 120 }, (_, i) => {
  const domain = (n: number) => `site-${n}.example-${n % 7}.com`;
  if ([10, 40, 70, 100].includes(i)) return `https://www.${domain(i - 5).toUpperCase()}/page`;
  if (i === 20) return 'not a url';
  if (i === 60) return `${PAYLOAD}.com`;
  if (i === 90) return 'example';
  if (i === 50) return '';
  return domain(i);
});
const INVALID_ROWS = 3;
const DUPLICATE_ROWS = 4;
const BLANK_ROWS = 1;
const DISTINCT_DOMAINS = ROWS.length - INVALID_ROWS - DUPLICATE_ROWS - BLANK_ROWS;

/** The domain a valid row names, as the sandbox derives its metrics. */
function domainOf(url: string): string {
  return url
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/^www\./, '')
    .replace(/\/.*$/, '');
}

function assertSidebarIsCurrent(): void {
  if (!fs.existsSync(SIDEBAR_HTML)) throw new Error(`${SIDEBAR_HTML} is missing: run "npm run build" first`);
  const built = fs.statSync(SIDEBAR_HTML).mtimeMs;
  const newer = fs
    .readdirSync(SIDEBAR_SOURCES, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(SIDEBAR_SOURCES, f)).mtimeMs > built);
  if (newer.length > 0)
    throw new Error(`Sidebar.html is older than ${newer.join(', ')}: run "npm run build"`);
}

/** Polls the page until `predicate` holds; on timeout, says what the sidebar showed. */
async function until(page: Page, what: string, predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await page.evaluate(predicate)) return;
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  const shown = await page.evaluate(() => document.body.innerText);
  throw new Error(`Timed out waiting for: ${what}. The sidebar showed:\n${shown}`);
}

/**
 * Waits for a condition on the test's side, such as a call reaching the bridge: it goes on as soon as the condition
 * holds, and fails (after as long as `until` allows) instead of going on without it.
 */
async function settle(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() >= end) throw new Error(`Timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const textOf = (page: Page, selector: string) =>
  page.$eval(selector, (element) => (element as HTMLElement).textContent ?? '');
const isShown = (page: Page, selector: string) =>
  page.$eval(selector, (element) => !(element as HTMLElement).closest('[hidden]'));

interface ProgressMark {
  done: number;
  total: number;
}

describe('the DAPA sidebar in a real browser', () => {
  let sandbox: RunningSandbox;
  let gas: AppsScriptStandIn;
  let server: SidebarServer;
  let chromium: LaunchedChromium;
  let page: Page;
  const progress: ProgressMark[] = [];
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  const foreignRequests: string[] = [];
  /** Real continueJob executions, and the calls (1-based) the bridge fails as Apps Script sometimes does. */
  let continueCalls = 0;
  let continueExecutions = 0;
  const failingContinueCalls = new Set([1, 2]);
  /** While set, the next continueJob call waits here (a step still running) until the test releases it. */
  let heldStep: { reached: boolean; release: () => void; released: Promise<void> } | undefined;
  /** While set, the open sidebar's driveBackground calls wait here. */
  let heldDrive: Promise<void> | undefined;

  beforeAll(async () => {
    assertBundleIsCurrent();
    assertSidebarIsCurrent();
    sandbox = await startSandbox({ port: 0 });
    // Virtual clock: each fetch takes 20 s of stand-in time, so a ~25 s step ends after one or two requests and
    // the job needs several steps, in milliseconds of real time.
    gas = await loadAppsScript({ clock: 'virtual', virtualLatencyMs: 20_000 });
    gas.sheet.setValues('A1', [['URL']]);
    gas.sheet.setValues(
      `A2:A${ROWS.length + 1}`,
      ROWS.map((url) => [url]),
    );
    gas.sheet.select('C3');

    server = await serveSidebar(fs.readFileSync(SIDEBAR_HTML, 'utf8'), async (name, args) => {
      if (name === 'continueJob' && failingContinueCalls.has(++continueCalls))
        throw new Error(APPS_SCRIPT_HICCUP);
      if (name === 'continueJob' && heldStep) {
        heldStep.reached = true;
        await heldStep.released;
      }
      if (name === 'continueJob') continueExecutions++;
      if (name === 'driveBackground' && heldDrive) await heldDrive;
      return gas.run(name, ...args);
    });
    chromium = await launchChromium();
    page = await chromium.browser.newPage();
    // Google's sidebar is 300 px wide; twice the pixels keep the screenshot sharp in the README.
    await page.setViewport({ width: 300, height: 900, deviceScaleFactor: 2 });
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url)) foreignRequests.push(request.url());
    });
    await page.exposeFunction('recordProgress', (mark: ProgressMark) => progress.push(mark));
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('DOMContentLoaded', () => {
        const bar = document.getElementById('progress-bar');
        if (!bar) return;
        const record = (window as unknown as { recordProgress: (mark: ProgressMark) => void }).recordProgress;
        new MutationObserver(() =>
          record({
            done: Number(bar.getAttribute('aria-valuenow')),
            total: Number(bar.getAttribute('aria-valuemax')),
          }),
        ).observe(bar, { attributes: true, attributeFilter: ['aria-valuenow', 'aria-valuemax'] });
      });
    });
    await page.goto(server.url);
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await server?.close();
    await gas?.close();
    await sandbox?.close();
  });

  it('opens asking for an API key, with the key test disabled', async () => {
    await until(page, 'the settings to load', () => !document.body.innerText.includes('Loading settings'));
    expect(await textOf(page, '#key-status')).toBe('No API key saved yet.');
    expect(await page.$eval('#settings-details', (d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(await page.$eval('#test-key', (b) => (b as HTMLButtonElement).disabled)).toBe(true);
  });

  it('saves the key and afterwards shows only a masked hint, never the key', async () => {
    await page.type('#api-key', KEY);
    await page.click('input[name="environment"][value="custom"]');
    await page.type('#base-url', sheetsAddress(sandbox.url));
    await page.click('#save-settings');
    await until(
      page,
      'the key to be saved',
      () => !!document.getElementById('key-status')?.textContent?.startsWith('Key saved'),
    );

    const status = await textOf(page, '#key-status');
    expect(status).toMatch(/•/);
    expect(status).not.toContain(KEY);
    expect(await textOf(page, '#server-status')).toBe(`Server: Custom (${sheetsAddress(sandbox.url)})`);
    expect(await page.content()).not.toContain(KEY);
    const inputValues = await page.$$eval('input', (inputs) =>
      inputs.map((i) => (i as HTMLInputElement).value),
    );
    expect(inputValues.join('\n')).not.toContain(KEY);
    expect(server.calls.map((call) => call.answer).join('\n')).not.toContain(KEY);
    expect(await gas.run('getSettings')).toMatchObject({
      hasKey: true,
      environment: 'custom',
      baseUrl: sheetsAddress(sandbox.url),
    });
  });

  it('tests the key without billing a query', async () => {
    await page.click('#test-key');
    await until(page, 'the key test result', () =>
      /[✓✗]/.test(document.getElementById('settings-message')?.textContent ?? ''),
    );
    expect(await textOf(page, '#settings-message')).toMatch(/^✓ /);
    expect(await page.$eval('#settings-message', (m) => m.classList.contains('ok'))).toBe(true);
    expect(statsOf(sandbox, KEY).billed).toBe(0);
  });

  it('reads the range selected in the sheet, and says when it is not one column', async () => {
    gas.sheet.select('A2:C4');
    await page.click('#refresh-selection');
    await until(page, 'the wide selection', () =>
      (document.getElementById('selection-info')?.textContent ?? '').includes('A2:C4'),
    );
    expect(await textOf(page, '#selection-info')).toBe(
      'Sheet1 · A2:C4 has 3 columns: select one column of URLs (the results go into the 5 columns to its right).',
    );
    expect(await page.$eval('#selection-info', (p) => p.classList.contains('error'))).toBe(true);

    gas.sheet.select(`A2:A${ROWS.length + 1}`);
    await page.click('#refresh-selection');
    await until(page, 'the selection', () =>
      (document.getElementById('selection-info')?.textContent ?? '').includes('A2:A121'),
    );
    expect(await textOf(page, '#selection-info')).toBe('Sheet1 · A2:A121 (120 rows)');
    expect(await page.$eval('#selection-info', (p) => p.classList.contains('error'))).toBe(false);
  });

  it('shows the credits used this month beside a monthly budget it saves, and estimates the check before it starts', async () => {
    await until(page, 'the credits', () =>
      /credits used in/.test(document.getElementById('credits-used')?.textContent ?? ''),
    );
    expect(await textOf(page, '#credits-used')).toMatch(
      /^0 credits used in \d{4}-\d{2} \(UTC; no budget set\)\.$/,
    );
    await page.type('#credit-budget', '100');
    await page.click('#save-budget');
    await until(page, 'the budget to be saved', () =>
      (document.getElementById('credits-used')?.textContent ?? '').includes('budget 100, 100 left'),
    );
    expect(await gas.run('getCredits')).toMatchObject({ budget: 100, used: 0, left: 100 });

    await page.click('#estimate-check');
    await until(page, 'the estimate', () =>
      (document.getElementById('estimate')?.textContent ?? '').includes('distinct domains'),
    );
    expect(await textOf(page, '#estimate')).toBe(
      `120 rows, ${DISTINCT_DOMAINS} distinct domains, 0 kept or cached (free): costs at most 100 credits (the budget left; the rest wait for it).`,
    );
    // No budget: the check below may bill every new domain, and the estimate says so.
    await page.$eval('#credit-budget', (input) => ((input as HTMLInputElement).value = ''));
    await page.click('#save-budget');
    await until(page, 'the budget to be removed', () =>
      (document.getElementById('credits-used')?.textContent ?? '').includes('no budget set'),
    );
    await page.click('#estimate-check');
    await until(page, 'the uncapped estimate', () =>
      /costs at most \d+ credits\.$/.test(document.getElementById('estimate')?.textContent ?? ''),
    );
    expect(await textOf(page, '#estimate')).toMatch(
      new RegExp(`costs at most ${DISTINCT_DOMAINS} credits\\.$`),
    );
    expect(statsOf(sandbox, KEY).billed).toBe(0);
  });

  it('checks the range in short steps with a moving progress bar, through a failed call and a closed sidebar', async () => {
    const before = statsOf(sandbox, KEY);
    await page.click('#start');

    // The first step fails the way Apps Script sometimes does: a clear message and a Retry.
    await until(page, 'the failed step to be reported', () => !document.getElementById('failure')?.hidden);
    expect(await textOf(page, '#failure-text')).toBe(`The check paused: ${APPS_SCRIPT_HICCUP}`);
    expect(await isShown(page, '#failure-retry')).toBe(true);

    // Closing and reopening the sidebar offers to resume the stored job.
    await page.reload();
    await until(page, 'the resume offer', () => !document.getElementById('resume')?.hidden);
    expect(await textOf(page, '#resume-text')).toBe(
      'A check of Sheet1 · A2:A121 is unfinished: 0 of 120 rows done.',
    );
    await page.click('#resume-job');

    // The next call fails too; Retry carries on from where the job stands.
    await until(page, 'the second failed step', () => !document.getElementById('failure')?.hidden);
    await page.click('#failure-retry');
    await until(
      page,
      'the check to finish',
      () => document.getElementById('job-title')?.textContent === 'Finished',
      30_000,
    );

    expect(continueExecutions).toBeGreaterThanOrEqual(2);
    const intermediate = progress.filter((mark) => mark.total === 120 && mark.done > 0 && mark.done < 120);
    expect(intermediate.length).toBeGreaterThan(0);
    const shownDone = progress.filter((mark) => mark.total === 120).map((mark) => mark.done);
    expect(shownDone).toEqual([...shownDone].sort((a, b) => a - b));
    expect(await textOf(page, '#progress-text')).toBe('120 of 120 rows (100%)');
    expect(await page.$eval('#progress-fill', (f) => (f as HTMLElement).style.width)).toBe('100%');
    expect(await isShown(page, '#failure')).toBe(false);
    expect(await isShown(page, '#cancel-job')).toBe(false);

    const after = statsOf(sandbox, KEY);
    expect(Number(await textOf(page, '#sum-requests'))).toBe(after.requests - before.requests);
    expect(Number(await textOf(page, '#sum-billed'))).toBe(after.billed - before.billed);
    expect(after.billed - before.billed).toBe(DISTINCT_DOMAINS);
    expect(Number(await textOf(page, '#count-records'))).toBe(DISTINCT_DOMAINS + DUPLICATE_ROWS);
    expect(Number(await textOf(page, '#count-skipped')) + Number(await textOf(page, '#count-errors'))).toBe(
      INVALID_ROWS + BLANK_ROWS,
    );
    const reasons = await page.$$eval('#skip-reasons tr', (rows) =>
      rows.map((row) => [
        row.querySelector('th')?.textContent ?? '',
        Number(row.querySelector('td')?.textContent),
      ]),
    );
    expect(Object.fromEntries(reasons)).toMatchObject({ invalid_url_format: INVALID_ROWS });
    expect(reasons.reduce((sum, [, count]) => sum + Number(count), 0)).toBe(INVALID_ROWS + BLANK_ROWS);

    await until(page, 'the credits after the check', () =>
      /^[1-9]\d* credits used/.test(document.getElementById('credits-used')?.textContent ?? ''),
    );
    expect(await textOf(page, '#credits-used')).toMatch(new RegExp(`^${DISTINCT_DOMAINS} credits used`));

    // Beside the finished check, the background section says nothing is left (figures read after it finished).
    await until(
      page,
      'the background figures after the check',
      () => document.getElementById('background-left')?.textContent === 'Nothing left to check.',
    );
    await screenshotAsProduction(page, SCREENSHOT);
  });

  it('writes DA, PA, MR, Spam Score and Status next to the URLs, as values, never formulas', async () => {
    expect(gas.sheet.getValues('B1:F1')).toEqual([['DA', 'PA', 'MR', 'Spam Score', 'Status']]);
    const written = gas.sheet.getValues(`B2:F${ROWS.length + 1}`);
    ROWS.forEach((url, i) => {
      const row = written[i];
      if (url === '') {
        expect(String(row[4])).not.toBe('');
      } else if (['not a url', `${PAYLOAD}.com`, 'example'].includes(url)) {
        expect(row.slice(0, 4)).toEqual(['', '', '', '']);
        expect(String(row[4])).toMatch(/^invalid_url_format/);
      } else {
        const m = metricsFor(domainOf(url));
        expect(row).toEqual([m.site_da, m.site_pa, m.site_mr, m.spam_score, '']);
      }
    });
    expect(
      gas.sheet
        .getFormulas(`B1:F${ROWS.length + 1}`)
        .flat()
        .filter(Boolean),
    ).toEqual([]);
    expect(gas.sheet.getValues(`A2:A${ROWS.length + 1}`).map((row) => row[0])).toEqual(ROWS);
  });

  it('cancels a running check at once, then retries the rows it left unchecked', async () => {
    const more = Array.from({ length: 60 }, (_, i) => `more-${i}.example.net`);
    gas.sheet.addSheet('More');
    gas.sheet.setValues(`More!A1:A${more.length + 1}`, [['URL'], ...more.map((url) => [url])]);
    gas.sheet.select(`More!A2:A${more.length + 1}`);
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const step = { reached: false, release, released };
    heldStep = step;
    let callsBeforeCancel: number;
    try {
      await page.click('#start');
      await until(page, 'the Cancel button of the new job', () => {
        const range = document.getElementById('job-range')?.textContent ?? '';
        return range.startsWith('More') && !document.getElementById('cancel-job')?.hidden;
      });
      await settle('the step to reach the bridge', () => step.reached);
      expect(step.reached).toBe(true);
      callsBeforeCancel = server.calls.length;
      await page.click('#cancel-job');
      await until(page, 'the stopping state', () =>
        (document.getElementById('progress-text')?.textContent ?? '').includes('stopping'),
      );
      // The sidebar asks the server to cancel at once, while the step is still held.
      await settle('cancelJob to reach the bridge', () =>
        server.calls.slice(callsBeforeCancel).some((call) => call.name === 'cancelJob'),
      );
    } finally {
      heldStep = undefined;
      step.release();
    }
    const answeredMeanwhile = server.calls.slice(callsBeforeCancel).map((c) => c.name);
    expect(answeredMeanwhile).toContain('cancelJob');
    expect(answeredMeanwhile).not.toContain('continueJob');
    await until(
      page,
      'the cancelled job',
      () => document.getElementById('job-title')?.textContent === 'Cancelled',
    );
    expect(await textOf(page, '#progress-text')).toBe('0 of 60 rows (0%)');
    expect(
      gas.sheet
        .getValues('More!B2:F61')
        .flat()
        .filter((cell) => cell !== ''),
    ).toEqual([]);
    expect(await textOf(page, '#retry-skipped')).toBe('Retry 60 skipped rows');
    expect(await isShown(page, '#start')).toBe(true);

    await page.click('#retry-skipped');
    await until(
      page,
      'the retried rows to finish',
      () => document.getElementById('job-title')?.textContent === 'Finished',
      30_000,
    );
    expect(await textOf(page, '#progress-text')).toBe('60 of 60 rows (100%)');
    expect(await isShown(page, '#retry-skipped')).toBe(false);
    const written = gas.sheet.getValues('More!B2:F61');
    more.forEach((url, i) => {
      const m = metricsFor(url);
      expect(written[i]).toEqual([m.site_da, m.site_pa, m.site_mr, m.spam_score, '']);
    });
  });

  it('checks a whole column by its letter, and rows checked before come from the cache at no cost', async () => {
    await page.click('input[name="source"][value="column"]');
    await page.$eval('#column', (input) => ((input as HTMLInputElement).value = ''));
    await page.type('#column', '1B');
    await page.click('#start');
    await until(page, 'the column letter complaint', () => !document.getElementById('failure')?.hidden);
    expect(await textOf(page, '#failure-text')).toBe(
      '“1B” is not a column letter. Enter a letter such as B.',
    );

    await page.$eval('#column', (input) => ((input as HTMLInputElement).value = ''));
    await page.type('#column', 'a');
    expect(await page.$eval('#header-row', (box) => (box as HTMLInputElement).checked)).toBe(true);
    const before = statsOf(sandbox, KEY);
    await page.click('#start');
    await until(
      page,
      'the column check to finish from the cache',
      () =>
        document.getElementById('job-title')?.textContent === 'Finished' &&
        document.getElementById('sum-cached')?.textContent === '60',
    );
    expect(await isShown(page, '#failure')).toBe(false);
    expect(await textOf(page, '#job-range')).toBe('More · A2:A61');
    expect(await textOf(page, '#sum-requests')).toBe('0');
    expect(await textOf(page, '#sum-billed')).toBe('0');
    expect(statsOf(sandbox, KEY).requests).toBe(before.requests);
    const m = metricsFor('more-7.example.net');
    expect(gas.sheet.getValues('More!B9:F9')).toEqual([[m.site_da, m.site_pa, m.site_mr, m.spam_score, '']]);
  });

  it('shows text from the sheet as text: a sheet named like an HTML tag injects nothing', async () => {
    gas.sheet.addSheet(PAYLOAD);
    gas.sheet.setValues(`'${PAYLOAD}'!A1:A4`, [['URL'], ['moz.com'], [`${PAYLOAD}.com`], ['example.org']]);
    gas.sheet.select(`'${PAYLOAD}'!A2:A4`);
    await page.click('#refresh-selection');
    expect(
      await page.$eval('input[name="source"][value="selection"]', (r) => (r as HTMLInputElement).checked),
    ).toBe(true);
    await until(page, 'the new selection', () =>
      (document.getElementById('selection-info')?.textContent ?? '').includes('A2:A4'),
    );
    expect(await textOf(page, '#selection-info')).toBe(`${PAYLOAD} · A2:A4 (3 rows)`);

    await page.click('#start');
    await until(
      page,
      'the second check to finish',
      () =>
        document.getElementById('job-range')?.textContent?.endsWith('A2:A4') === true &&
        document.getElementById('job-title')?.textContent === 'Finished',
      30_000,
    );
    expect(await textOf(page, '#job-range')).toBe(`${PAYLOAD} · A2:A4`);
    expect(await page.$$eval('img', (images) => images.length)).toBe(0);
    expect(dialogs).toEqual([]);
    expect(gas.sheet.getValues(`'${PAYLOAD}'!F3`)[0][0]).toMatch(/^invalid_url_format/);
  });

  it('turns background checks on and off, and shows the next step and the credits kept results saved', async () => {
    await page.click('#background-toggle');
    await until(page, 'background checks to be on', () =>
      (document.getElementById('background-status')?.textContent ?? '').startsWith('On:'),
    );
    expect(await textOf(page, '#background-status')).toMatch(/Next step at \d\d:\d\d:\d\d\./);
    expect(gas.triggers.map((t) => t.handler).sort()).toEqual([
      'dapaBackgroundStep',
      'dapaBackgroundWatch',
      'dapaOnEdit',
    ]);
    // Results reused within the cache's 6 hours are not counted as saved by the store.
    expect(await textOf(page, '#saved-credits')).toMatch(
      /kept results saved you 0 credits here: each reused after/,
    );
    await page.click('#background-toggle');
    await until(page, 'background checks to be off', () =>
      (document.getElementById('background-status')?.textContent ?? '').startsWith('Off.'),
    );
    // Off keeps only the store's upkeep: one step when the oldest result kept passes the 30-day retention.
    expect(gas.triggers.map((t) => [t.handler, t.kind])).toEqual([['dapaBackgroundStep', 'CLOCK']]);
    const [upkeep] = gas.triggers;
    expect(upkeep.dueAt! - upkeep.createdAt).toBeGreaterThan(29 * 24 * 3_600_000);
  });

  it('never says rows are left beside a finished check, though the figures shown were read while it ran', async () => {
    const urls = Array.from({ length: 30 }, (_, i) => `left-${i}.example.org`);
    gas.sheet.addSheet('Left');
    gas.sheet.setValues(`Left!A1:A${urls.length + 1}`, [['URL'], ...urls.map((url) => [url])]);
    gas.sheet.select(`Left!A2:A${urls.length + 1}`);
    // A check started elsewhere (the menu's Check selection) and not stepped yet: the reopened sidebar reads the
    // background figures while it runs. Its own drive of the background is held until the end, so only the
    // sidebar's handling of the finished check can change those figures.
    expect(await gas.run('startJob', { source: 'selection' })).toMatchObject({
      status: 'running',
      total: 30,
    });
    let releaseDrive = () => {};
    heldDrive = new Promise<void>((resolve) => (releaseDrive = resolve));
    try {
      await page.reload();
      await until(
        page,
        "the resume offer, with the check's rows left",
        () =>
          !document.getElementById('resume')?.hidden &&
          document.getElementById('background-left')?.textContent?.startsWith('30 rows left') === true,
      );
      await page.click('#resume-job');
      await until(
        page,
        'the check to finish',
        () =>
          document.getElementById('job-range')?.textContent === 'Left · A2:A31' &&
          document.getElementById('job-title')?.textContent === 'Finished',
        30_000,
      );
      expect(await textOf(page, '#progress-text')).toBe('30 of 30 rows (100%)');
      expect(await textOf(page, '#background-left')).not.toMatch(/\d+ rows? left/);
      await until(
        page,
        'fresh background figures',
        () => document.getElementById('background-left')?.textContent === 'Nothing left to check.',
      );
    } finally {
      heldDrive = undefined;
      releaseDrive();
    }
  }, 60_000);

  it('removes the saved key', async () => {
    await page.click('#settings-details > summary');
    await page.click('#remove-key');
    await until(
      page,
      'the key to be removed',
      () => document.getElementById('key-status')?.textContent === 'No API key saved yet.',
    );
    expect(await textOf(page, '#settings-message')).toBe('Key removed.');
    expect(await page.$eval('#test-key', (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    expect(await gas.run('getSettings')).toMatchObject({ hasKey: false, keyHint: '' });
  });

  it('tells the owner, as the sidebar opens, that a copy shared after the key was saved lets editors reach it', async () => {
    await gas.run('saveSettings', { apiKey: KEY });
    gas.shareWith('editor@example.com'); // shared later, the key untouched
    await page.reload();
    await until(page, 'the sharing warning', () =>
      (document.getElementById('settings-message')?.textContent ?? '').includes('can read the key'),
    );
    const said = await textOf(page, '#settings-message');
    expect(said).toContain('(1 other person) can read the key');
    expect(said).toContain('They can also spend your credits');
    expect(said).not.toContain(KEY);
    await gas.run('saveSettings', { apiKey: '' });
  });

  it('loads nothing from the network and throws no script errors', () => {
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(fs.statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
  });
});
