// Makes the Marketplace graphics in apps-script/publishing/assets/ (committed): the icons and the card banner from the
// project's SVG logo (n8n-node/nodes/DapaChecker/dapa.svg), and screenshots at 1280 x 800 around the real built
// sidebar as a Marketplace user sees it: installed as an Editor add-on (the Apps Script stand-in's add-on mode), a
// check of 40 rows finished on the entry plan, background checks on. The run behind it uses the local sandbox; the
// settings lines are shown as a production key reads (test/browser/screenshot.ts, which refuses a picture showing
// the set-up). Rendered by the headless Chromium the project already ships for the browser test
// (@sparticuz/chromium via puppeteer-core): nothing to install. Run after npm run build:
// npx tsx apps-script/publishing/make-assets.ts
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { loadAppsScript } from '../../test/apps-script/harness';
import { assertBundleIsCurrent, sheetsAddress } from '../../test/apps-script/support';
import { serveSidebar } from '../../test/browser/bridge';
import { launchChromium, type LaunchedChromium } from '../../test/browser/chromium';
import { screenshotAsProduction } from '../../test/browser/screenshot';
import { startSandbox } from '../../test/sandbox/server';

const root = join(__dirname, '../..');
const out = join(__dirname, 'assets');
const logo = readFileSync(join(root, 'n8n-node/nodes/DapaChecker/dapa.svg'), 'utf8');

/** A list as users keep one: distinct domains, a re-spelled duplicate, a blank cell and an entry that is no URL. */
const URLS = Array.from({ length: 40 }, (_, i) => {
  if (i === 13) return 'https://www.Blog-1.news-site.com/2024/post';
  if (i === 25) return '';
  if (i === 31) return 'see notes';
  return `https://www.${['shop', 'blog', 'docs', 'news'][i % 4]}-${i}.news-site.com/`;
});

const page = (body: string, css = '') =>
  `<!doctype html><html><head><style>html,body{margin:0;padding:0;background:transparent}${css}</style></head><body>${body}</body></html>`;

/** The logo scaled to a square of `size` pixels (its own viewBox keeps it sharp). */
const icon = (size: number) =>
  page(logo.replace(/width="60" height="60"/, `width="${size}" height="${size}"`), 'svg{display:block}');

const BRAND = '#1f4e79';
const banner = page(
  `<div class="b">${logo.replace(/width="60" height="60"/, 'width="84" height="84"')}<div class="t">DAPA<br>Checker</div></div>`,
  `.b{width:220px;height:140px;background:${BRAND};display:flex;align-items:center;justify-content:center;gap:12px;
   font:700 24px/1.1 Arial,Helvetica,sans-serif;color:#fff}`,
);

/** Polls the page until `predicate` holds; on timeout, says what the sidebar showed. */
async function until(page: Page, what: string, predicate: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await page.evaluate(predicate)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `Timed out waiting for ${what}. The sidebar showed:\n${await page.evaluate(() => document.body.innerText)}`,
  );
}

interface SidebarPicture {
  base64: string;
  /** Where the check section and the finished check start, in pixels of the picture (2 per CSS pixel). */
  checkTop: number;
  jobTop: number;
}

/** The real sidebar in add-on mode after a finished check, background checks on, as a 600 px wide PNG. */
async function sidebarPicture(chromium: LaunchedChromium): Promise<SidebarPicture> {
  assertBundleIsCurrent();
  const sandbox = await startSandbox({ port: 0 });
  const gas = await loadAppsScript({ clock: 'virtual', virtualLatencyMs: 400, installAs: 'addon' });
  const dir = mkdtempSync(join(tmpdir(), 'dapa-assets-'));
  try {
    gas.sheet.setValues('A1', [['URL']]);
    gas.sheet.setValues(
      `A2:A${URLS.length + 1}`,
      URLS.map((url) => [url]),
    );
    gas.sheet.select(`A2:A${URLS.length + 1}`);
    // The entry plan's sandbox key (5 URLs per request, 60 a minute): the summary shows what a real check costs.
    await gas.run('saveSettings', {
      apiKey: 'sandbox-basic',
      environment: 'custom',
      baseUrl: sheetsAddress(sandbox.url),
    });
    const html = readFileSync(join(root, 'apps-script/dist/Sidebar.html'), 'utf8');
    const server = await serveSidebar(html, (name, args) => gas.run(name, ...args));
    try {
      const page = await chromium.browser.newPage();
      await page.setViewport({ width: 300, height: 900, deviceScaleFactor: 2 });
      await page.goto(server.url);
      await until(page, 'the selection', () =>
        (document.getElementById('selection-info')?.textContent ?? '').includes('(40 rows)'),
      );
      await page.click('#start');
      await until(
        page,
        'the check to finish',
        () => document.getElementById('job-title')?.textContent === 'Finished',
      );
      await page.click('#background-toggle');
      await until(page, 'background checks to be on', () =>
        (document.getElementById('background-status')?.textContent ?? '').startsWith('On:'),
      );
      await until(
        page,
        'the figures after the check',
        () => document.getElementById('background-left')?.textContent === 'Nothing left to check.',
      );
      const top = (selector: string) =>
        page.$eval(selector, (section) => Math.round(section.getBoundingClientRect().top * 2));
      const [checkTop, jobTop] = [await top('#check'), await top('#job')];
      const file = join(dir, 'sidebar.png');
      await screenshotAsProduction(page, file);
      return { base64: readFileSync(file).toString('base64'), checkTop, jobTop };
    } finally {
      await server.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await gas.close();
    await sandbox.close();
  }
}

/** Shown width of the sidebar in a screenshot: 420 px of its 600 px picture. */
const SCALE = 420 / 600;

/** A 1280 x 800 screenshot: the real sidebar (its picture from `top`, in picture pixels) beside a caption. */
const screenshot = (sidebar: string, title: string, lines: string[], top: number) =>
  page(
    `<div class="s"><div class="c"><h1>${title}</h1><ul>${lines.map((l) => `<li>${l}</li>`).join('')}</ul>
     <p class="f">DAPA Checker add-on</p></div>
     <div class="w"><img src="data:image/png;base64,${sidebar}" style="margin-top:-${Math.round(top * SCALE)}px"></div></div>`,
    `.s{width:1280px;height:800px;display:flex;background:#f1f4f8;font-family:Arial,Helvetica,sans-serif}
     .c{flex:1;padding:90px 70px;color:#1f2a37}.c h1{font-size:44px;line-height:1.15;color:${BRAND};margin:0 0 36px}
     .c li{font-size:25px;line-height:1.4;margin:0 0 18px}.c .f{margin-top:60px;font-size:20px;color:#5b6b7c}
     .w{box-sizing:border-box;border-top:16px solid #fff;width:420px;height:740px;margin:30px 60px 30px 0;overflow:hidden;background:#fff;border-radius:10px;
        box-shadow:0 6px 24px rgba(0,0,0,.18)}.w img{width:420px;display:block}`,
  );

function jobs(sidebar: SidebarPicture): Array<{ file: string; width: number; height: number; html: string }> {
  return [
    { file: 'icon-128.png', width: 128, height: 128, html: icon(128) },
    { file: 'icon-32.png', width: 32, height: 32, html: icon(32) },
    { file: 'card-banner-220x140.png', width: 220, height: 140, html: banner },
    {
      file: 'screenshot-1-sidebar.png',
      width: 1280,
      height: 800,
      html: screenshot(
        sidebar.base64,
        'Domain Authority for a whole column, in one go',
        [
          'DA, PA, MR and spam score next to your URLs',
          'Each domain is checked once, in as few requests as your plan allows',
          'Background checks finish long lists with the sheet closed',
        ],
        // The check and the background section (the settings above it hold nothing to show).
        sidebar.checkTop,
      ),
    },
    {
      file: 'screenshot-2-summary.png',
      width: 1280,
      height: 800,
      html: screenshot(
        sidebar.base64,
        'Know what each check cost',
        [
          'Requests, credits billed and skipped rows, by reason',
          'Results kept for 30 days: the same list again costs nothing',
          'Retry only the rows that can succeed later',
        ],
        // The finished check and its summary.
        sidebar.jobTop,
      ),
    },
  ];
}

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const chromium = await launchChromium();
  try {
    const sidebar = await sidebarPicture(chromium);
    const tab = await chromium.browser.newPage();
    for (const job of jobs(sidebar)) {
      await tab.setViewport({ width: job.width, height: job.height, deviceScaleFactor: 1 });
      await tab.setContent(job.html, { waitUntil: 'load' });
      await tab.screenshot({
        path: join(out, job.file) as `${string}.png`,
        omitBackground: true,
        clip: { x: 0, y: 0, width: job.width, height: job.height },
      });
      console.log(`apps-script/publishing/assets/${job.file}  ${job.width} x ${job.height}`);
    }
  } finally {
    await chromium.close();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
