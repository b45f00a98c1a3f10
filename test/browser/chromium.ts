// Launches a headless Chromium for the sidebar test: CHROMIUM_PATH if set, else the Chromium that the pinned
// @sparticuz/chromium dev dependency ships inside npm's tarball (so `npm ci` is enough; nothing is downloaded). That
// one is a Linux build only: on macOS or Windows, CHROMIUM_PATH names an installed Chrome or Chromium.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

const INSTALL_HELP =
  'Run `npm ci` (the dev dependency @sparticuz/chromium ships a headless Chromium), or install one with ' +
  '`apt-get update && apt-get install -y chromium` and set CHROMIUM_PATH=/usr/bin/chromium.';

/** Where Chrome usually is, by platform, for the message off Linux. */
const INSTALLED_CHROME: Partial<Record<NodeJS.Platform, string>> = {
  darwin: '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  win32: 'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
};

/** Off Linux, the packaged Chromium cannot run: say which variable to set, with the usual place of Chrome. */
export function offLinuxHelp(platform: NodeJS.Platform): string | undefined {
  if (platform === 'linux') return undefined;
  const usual = INSTALLED_CHROME[platform];
  return (
    `The Chromium of @sparticuz/chromium is a Linux build and cannot run on ${platform}. Set CHROMIUM_PATH to an ` +
    `installed Chrome or Chromium` +
    (usual ? `, for example CHROMIUM_PATH="${usual}"` : '') +
    ', then run the tests again.'
  );
}

/** Flags for a quiet, offline, throwaway browser: no first-run UI, no background traffic, no QUIC, no GPU. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-domain-reliability',
  '--no-pings',
  '--no-zygote',
  '--font-render-hinting=none',
];

export interface LaunchedChromium {
  browser: Browser;
  executablePath: string;
  close(): Promise<void>;
}

/** An Error that keeps the original failure as its cause (the project's lib is ES2020, before `{ cause }`). */
function withCause(message: string, cause: unknown): Error {
  return Object.assign(new Error(message), { cause });
}

async function findExecutable(): Promise<string> {
  const fromEnv = process.env.CHROMIUM_PATH?.trim();
  if (fromEnv) return fromEnv;
  const offLinux = offLinuxHelp(process.platform);
  if (offLinux) throw new Error(offLinux);
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    return await packaged.executablePath();
  } catch (error) {
    throw withCause(`No Chromium found (${(error as Error).message}). ${INSTALL_HELP}`, error);
  }
}

export async function launchChromium(): Promise<LaunchedChromium> {
  const executablePath = await findExecutable();
  const userDataDir = mkdtempSync(join(tmpdir(), 'sidebar-chromium-'));
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath,
      headless: 'shell',
      args: [...FLAGS, `--user-data-dir=${userDataDir}`],
      defaultViewport: { width: 300, height: 900 },
      timeout: 30_000,
    });
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw withCause(
      `Chromium at ${executablePath} did not start: ${(error as Error).message}\n` +
        `If a shared library is missing, install it (e.g. apt-get install -y libnss3). ${INSTALL_HELP}`,
      error,
    );
  }
  return {
    browser,
    executablePath,
    async close() {
      await browser.close().catch(() => undefined);
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
