// Makes the Marketplace graphics in apps-script/publishing/assets/ (committed): the icons and the card banner from the
// project's SVG logo (n8n-node/nodes/DapaChecker/dapa.svg), and screenshots at 1280 x 800 around the real sidebar as
// the browser test renders it (test/browser/sidebar.png; refresh that first with UPDATE_SCREENSHOT=1 npx jest
// test/browser). Rendered by the headless Chromium the project already ships for that test (@sparticuz/chromium via
// puppeteer-core): nothing to install. Run: npx tsx apps-script/publishing/make-assets.ts
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../../test/browser/chromium';

const root = join(__dirname, '../..');
const out = join(__dirname, 'assets');
const logo = readFileSync(join(root, 'n8n-node/nodes/DapaChecker/dapa.svg'), 'utf8');
const sidebar = readFileSync(join(root, 'test/browser/sidebar.png')).toString('base64');

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

/** A 1280 x 800 screenshot: the real sidebar (cropped from `top` of its 600 x 1824 capture) beside a caption. */
const screenshot = (title: string, lines: string[], top: number) =>
  page(
    `<div class="s"><div class="c"><h1>${title}</h1><ul>${lines.map((l) => `<li>${l}</li>`).join('')}</ul>
     <p class="f">DAPA Checker add-on</p></div>
     <div class="w"><img src="data:image/png;base64,${sidebar}" style="margin-top:-${top}px"></div></div>`,
    `.s{width:1280px;height:800px;display:flex;background:#f1f4f8;font-family:Arial,Helvetica,sans-serif}
     .c{flex:1;padding:90px 70px;color:#1f2a37}.c h1{font-size:44px;line-height:1.15;color:${BRAND};margin:0 0 36px}
     .c li{font-size:25px;line-height:1.4;margin:0 0 18px}.c .f{margin-top:60px;font-size:20px;color:#5b6b7c}
     .w{width:420px;height:740px;margin:30px 60px 30px 0;overflow:hidden;background:#fff;border-radius:10px;
        box-shadow:0 6px 24px rgba(0,0,0,.18)}.w img{width:420px;display:block}`,
  );

const jobs: Array<{ file: string; width: number; height: number; html: string }> = [
  { file: 'icon-128.png', width: 128, height: 128, html: icon(128) },
  { file: 'icon-32.png', width: 32, height: 32, html: icon(32) },
  { file: 'card-banner-220x140.png', width: 220, height: 140, html: banner },
  {
    file: 'screenshot-1-sidebar.png',
    width: 1280,
    height: 800,
    html: screenshot(
      'Domain Authority for a whole column, in one go',
      [
        'DA, PA, MR and spam score next to your URLs',
        'Each domain is checked once, in as few requests as your plan allows',
        'Progress, cancel and resume; every row gets a result or a reason',
      ],
      0,
    ),
  },
  {
    file: 'screenshot-2-summary.png',
    width: 1280,
    height: 800,
    html: screenshot(
      'Know what each check cost',
      [
        'Requests, billed queries and skipped rows, by reason',
        'Results kept for 30 days: the same list again costs nothing',
        'Retry only the rows that can succeed later',
      ],
      // 420 px shown of a 600 px capture: 0.7 scale; the lower part of the sidebar (summary and settings).
      Math.round((1824 - 740 / 0.7) * 0.7),
    ),
  },
];

async function main(): Promise<void> {
  mkdirSync(out, { recursive: true });
  const chromium = await launchChromium();
  try {
    const tab = await chromium.browser.newPage();
    for (const job of jobs) {
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
