// Pictures of the sidebar for the README and the Marketplace listing: the settings lines are shown as they read with
// a production key (the runs behind the pictures use the local sandbox and a sandbox key, which no user sees), and
// the picture is refused if anything of the test set-up would still be visible.
import type { Page } from 'puppeteer-core';

/** What the two settings lines read for a user of the real service with a saved key (only its last 4 shown). */
export const PRODUCTION_LOOK = {
  key: 'Key saved: ••••••7f3a',
  server: 'Server: Production (https://www.dapachecker.org)',
};

/** Text that must not be visible in a published picture: a local server, a sandbox key or its masked hint. */
export const TEST_SETUP_TEXT = /127\.0\.0\.1|localhost|sandbox|••mium|••asic|Custom \(/i;

/**
 * Takes a full-page screenshot of the sidebar with the settings lines as PRODUCTION_LOOK, then puts the real lines
 * back. Throws, naming it, when text of the test set-up is visible anyway.
 */
export async function screenshotAsProduction(page: Page, path: string): Promise<void> {
  const real = await page.evaluate((look) => {
    const key = document.getElementById('key-status');
    const server = document.getElementById('server-status');
    if (!key || !server) throw new Error('The sidebar markup lacks #key-status or #server-status.');
    const before = { key: key.textContent ?? '', server: server.textContent ?? '' };
    key.textContent = look.key;
    server.textContent = look.server;
    return before;
  }, PRODUCTION_LOOK);
  try {
    const shown = await page.evaluate(() => document.body.innerText);
    const leak = TEST_SETUP_TEXT.exec(shown);
    if (leak) throw new Error(`The picture would show "${leak[0]}" of the test set-up:\n${shown}`);
    await page.screenshot({ path: path as `${string}.png`, fullPage: true });
  } finally {
    await page.evaluate((before) => {
      document.getElementById('key-status')!.textContent = before.key;
      document.getElementById('server-status')!.textContent = before.server;
    }, real);
  }
}
