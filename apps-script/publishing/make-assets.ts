// Makes the Marketplace graphics in apps-script/publishing/assets/ (committed): the icons and the card banner from the
// project's SVG logo (n8n-node/nodes/DapaChecker/dapa.svg), and two 1280 x 800 screenshots of the product at work on
// the entry plan (the sandbox's key sandbox-basic: 5 URLs per request, 60 a minute): a spreadsheet whose =DAPA column
// the built Code.js filled, beside the real built sidebar (Sidebar.html in headless Chromium, its google.script.run
// bridged to the Apps Script stand-in in add-on mode). The grid is the stand-in's sheet drawn as a grid (the values
// are the ones the add-on wrote); the sidebar is shown section by section, whole sections only (never cut
// mid-sentence), without its settings block, so no server line or key of the test run is pictured (a section showing
// any text of the set-up is refused: TEST_SETUP_TEXT of test/browser/screenshot.ts). Rendered by the headless
// Chromium the project already ships for the browser test (@sparticuz/chromium via puppeteer-core): nothing to
// install. Run after npm run build:
// npx tsx apps-script/publishing/make-assets.ts
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { type AppsScriptStandIn, loadAppsScript } from '../../test/apps-script/harness';
import { assertBundleIsCurrent, sheetsAddress } from '../../test/apps-script/support';
import { serveSidebar } from '../../test/browser/bridge';
import { launchChromium, type LaunchedChromium } from '../../test/browser/chromium';
import { TEST_SETUP_TEXT } from '../../test/browser/screenshot';
import { startSandbox } from '../../test/sandbox/server';

const root = join(__dirname, '../..');
const out = join(__dirname, 'assets');
const logo = readFileSync(join(root, 'n8n-node/nodes/DapaChecker/dapa.svg'), 'utf8');

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

/** One section of the sidebar as a picture (2 pixels per CSS pixel) and its height in CSS pixels. */
interface SectionPicture {
  base64: string;
  height: number;
}

/** A spreadsheet as it was left: the cells' display values from `top` (A1 notation of the first cell) on. */
interface Grid {
  cells: string[][];
  firstColumn: number;
  /** The selected cell (row and column index in `cells`) and what the formula bar shows for it. */
  selected: { row: number; column: number; bar: string };
  /** Cells written by the add-on (drawn as they are, other cells too): the columns from this index on. */
  resultFrom: number;
}

/** What a run of the product left to picture. */
interface Shot {
  grid: Grid;
  sections: SectionPicture[];
}

const FORMULA = '=DAPA(A2:A21, "da,pa,mr,spam", TRUE)';

/** Pictures of whole sidebar sections, refused if text of the test set-up would show in them. */
async function sections(page: Page, ids: string[]): Promise<SectionPicture[]> {
  const pictures: SectionPicture[] = [];
  for (const id of ids) {
    const element = await page.$(`#${id}`);
    if (!element) throw new Error(`The sidebar has no #${id}`);
    const text = await page.$eval(`#${id}`, (e) => (e as HTMLElement).innerText);
    const leak = TEST_SETUP_TEXT.exec(text);
    if (leak) throw new Error(`The picture of #${id} would show "${leak[0]}" of the test set-up:\n${text}`);
    const box = await element.boundingBox();
    const base64 = (await element.screenshot({ encoding: 'base64' })) as string;
    pictures.push({ base64, height: Math.round(box?.height ?? 0) });
  }
  return pictures;
}

/** A stand-in in add-on mode with the entry plan's sandbox key, its sidebar open in Chromium; `use` drives both. */
async function withProduct<T>(
  chromium: LaunchedChromium,
  use: (gas: AppsScriptStandIn, open: () => Promise<Page>) => Promise<T>,
): Promise<T> {
  assertBundleIsCurrent();
  const sandbox = await startSandbox({ port: 0 });
  const gas = await loadAppsScript({ clock: 'virtual', virtualLatencyMs: 400, installAs: 'addon' });
  try {
    await gas.run('saveSettings', {
      apiKey: 'sandbox-basic',
      environment: 'custom',
      baseUrl: sheetsAddress(sandbox.url),
    });
    const html = readFileSync(join(root, 'apps-script/dist/Sidebar.html'), 'utf8');
    const server = await serveSidebar(html, (name, args) => gas.run(name, ...args));
    try {
      // Opened once the sheet is set up: a page polling the server while a formula recalculates would run it twice.
      const open = async () => {
        const page = await chromium.browser.newPage();
        // Google's sidebar is 300 px wide; twice the pixels keep the picture sharp.
        await page.setViewport({ width: 300, height: 900, deviceScaleFactor: 2 });
        await page.goto(server.url);
        return page;
      };
      return await use(gas, open);
    } finally {
      await server.close();
    }
  } finally {
    await gas.close();
    await sandbox.close();
  }
}

/** Screenshot 1: =DAPA filled a column on the entry plan; the sidebar shows the month's credits and the check panel. */
async function formulaShot(chromium: LaunchedChromium): Promise<Shot> {
  return withProduct(chromium, async (gas, open) => {
    gas.sheet.setValues('A1:A21', [['URL'], ...FORMULA_URLS.map((url) => [url])]);
    await gas.runCustomFunction(FORMULA, { cell: 'B1' });
    gas.sheet.select('A2:A21');
    const page = await open();
    await until(page, 'the selection', () =>
      (document.getElementById('selection-info')?.textContent ?? '').includes('(20 rows)'),
    );
    await until(page, 'the credits', () =>
      /credit/.test(document.getElementById('credits-used')?.textContent ?? ''),
    );
    // The page's calls let the stand-in recalculate the formula (answered from the cache): let it finish first.
    await gas.recalculate();
    const cells = gas.sheet.getDisplayValues('A1:E21');
    if (cells.flat().some((cell) => /Loading/.test(cell)))
      throw new Error('The =DAPA column is still loading');
    return {
      grid: { cells, firstColumn: 0, selected: { row: 0, column: 1, bar: FORMULA }, resultFrom: 1 },
      sections: await sections(page, ['credits', 'check']),
    };
  });
}

/** Screenshot 2: a sidebar check of 40 rows finished on the entry plan; its summary beside the rows it wrote. */
async function sidebarShot(chromium: LaunchedChromium): Promise<Shot> {
  return withProduct(chromium, async (gas, open) => {
    gas.sheet.setValues('A1', [['URL']]);
    gas.sheet.setValues(
      `A2:A${SIDEBAR_URLS.length + 1}`,
      SIDEBAR_URLS.map((url) => [url]),
    );
    gas.sheet.select(`A2:A${SIDEBAR_URLS.length + 1}`);
    const page = await open();
    await until(page, 'the selection', () =>
      (document.getElementById('selection-info')?.textContent ?? '').includes('(40 rows)'),
    );
    await page.click('#start');
    await until(
      page,
      'the check to finish',
      () => document.getElementById('job-title')?.textContent === 'Finished',
    );
    const cells = gas.sheet.getDisplayValues('A1:F24');
    return {
      grid: {
        cells,
        firstColumn: 0,
        selected: { row: 1, column: 0, bar: String(cells[1][0]) },
        resultFrom: 1,
      },
      sections: await sections(page, ['job']),
    };
  });
}

/** Twenty URLs as users keep them: distinct sites, a re-spelled duplicate, a blank cell and an entry that is no URL. */
const FORMULA_URLS = Array.from({ length: 20 }, (_, i) => {
  if (i === 6) return 'https://WWW.shop-2.news-site.com/sale';
  if (i === 11) return '';
  if (i === 15) return 'see notes';
  return `https://www.${['shop', 'blog', 'docs', 'news'][i % 4]}-${i}.news-site.com/`;
});

/** Forty for the sidebar, the same kinds. */
const SIDEBAR_URLS = Array.from({ length: 40 }, (_, i) => {
  if (i === 13) return 'https://www.Blog-1.news-site.com/2024/post';
  if (i === 25) return '';
  if (i === 31) return 'see notes';
  return `https://www.${['shop', 'blog', 'docs', 'news'][i % 4]}-${i}.news-site.com/`;
});

const escape = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

const letter = (n: number) => String.fromCharCode(65 + n);

/** The grid as a spreadsheet shows it: a formula bar, column letters, row numbers; numbers right-aligned. */
function gridHtml(grid: Grid): string {
  const width = grid.cells[0]?.length ?? 0;
  const head = `<tr><th class="corner"></th>${Array.from({ length: width }, (_, c) => `<th>${letter(grid.firstColumn + c)}</th>`).join('')}</tr>`;
  const rows = grid.cells
    .map((row, r) => {
      const tds = row
        .map((value, c) => {
          const classes = [
            /^-?\d+(\.\d+)?$/.test(value) ? 'num' : '',
            r === 0 ? 'head' : '',
            r === grid.selected.row && c === grid.selected.column ? 'sel' : '',
            c === 0 ? 'url' : '',
          ].filter(Boolean);
          return `<td class="${classes.join(' ')}">${escape(value)}</td>`;
        })
        .join('');
      return `<tr><th>${r + 1}</th>${tds}</tr>`;
    })
    .join('');
  const cellName = `${letter(grid.firstColumn + grid.selected.column)}${grid.selected.row + 1}`;
  return `<div class="bar"><span class="name">${cellName}</span><span class="fx">fx</span><span class="formula">${escape(grid.selected.bar)}</span></div>
    <table>${head}${rows}</table>`;
}

/** The sidebar panel: a title bar as a Sheets sidebar has, then the sections' pictures at 300 CSS pixels wide. */
function sidebarHtml(pictures: SectionPicture[]): string {
  const images = pictures
    .map((p) => `<img src="data:image/png;base64,${p.base64}" style="width:300px;height:${p.height}px">`)
    .join('');
  return `<div class="side"><div class="title">DAPA checker<span>×</span></div>${images}</div>`;
}

/** A 1280 x 800 screenshot: the spreadsheet on the left, the sidebar on the right, a one-line caption on top. */
function screenshot(shot: Shot, caption: string): string {
  return page(
    `<div class="s"><div class="cap">${escape(caption)}</div><div class="main"><div class="sheet">${gridHtml(shot.grid)}</div>${sidebarHtml(shot.sections)}</div></div>`,
    `.s{width:1280px;height:800px;background:#f8f9fa;font-family:Arial,Helvetica,sans-serif;color:#202124;display:flex;flex-direction:column}
     .cap{height:56px;line-height:56px;padding:0 24px;font-size:22px;font-weight:700;color:#fff;background:${BRAND}}
     .main{flex:1;display:flex;overflow:hidden}
     .sheet{flex:1;overflow:hidden;background:#fff;border-right:1px solid #dadce0}
     .bar{height:30px;display:flex;align-items:center;border-bottom:1px solid #dadce0;font-size:13px}
     .bar .name{width:60px;text-align:center;border-right:1px solid #dadce0}
     .bar .fx{width:34px;text-align:center;color:#5f6368;font-style:italic;border-right:1px solid #dadce0}
     .bar .formula{padding-left:8px;font-family:Consolas,monospace}
     table{border-collapse:collapse;font-size:13px;table-layout:fixed}
     th{background:#f1f3f4;color:#5f6368;font-weight:400;border:1px solid #dadce0;height:24px;min-width:36px;padding:0 4px}
     th.corner{width:36px}
     td{border:1px solid #e2e3e5;height:24px;padding:0 6px;white-space:nowrap;overflow:hidden;max-width:290px;min-width:86px}
     td.url{width:290px}
     td.num{text-align:right}
     td.head{font-weight:700}
     td.sel{outline:2px solid #1a73e8;outline-offset:-2px}
     .side{width:320px;background:#fff;overflow:hidden;box-shadow:-2px 0 6px rgba(0,0,0,.08)}
     .side .title{height:44px;line-height:44px;padding:0 16px;font-size:16px;border-bottom:1px solid #dadce0;display:flex;justify-content:space-between}
     .side .title span{color:#5f6368}
     .side img{display:block;margin:0 10px}`,
  );
}

function jobs(shots: {
  formula: Shot;
  sidebar: Shot;
}): Array<{ file: string; width: number; height: number; html: string }> {
  return [
    { file: 'icon-128.png', width: 128, height: 128, html: icon(128) },
    { file: 'icon-32.png', width: 32, height: 32, html: icon(32) },
    { file: 'card-banner-220x140.png', width: 220, height: 140, html: banner },
    {
      file: 'screenshot-1-formula.png',
      width: 1280,
      height: 800,
      html: screenshot(shots.formula, 'DA, PA, MR and spam score next to your URLs: =DAPA(A2:A21)'),
    },
    {
      file: 'screenshot-2-sidebar.png',
      width: 1280,
      height: 800,
      html: screenshot(shots.sidebar, 'Thousands of rows from the sidebar, with what each check cost'),
    },
  ];
}

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const chromium = await launchChromium();
  try {
    const shots = { formula: await formulaShot(chromium), sidebar: await sidebarShot(chromium) };
    const tab = await chromium.browser.newPage();
    for (const job of jobs(shots)) {
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
