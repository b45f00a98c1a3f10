// Shared by the Apps Script suites: a sandbox per suite, a stand-in with the user's settings pointing at it, and
// a guard that the bundle under test is built from the current sources.
import fs from 'node:fs';
import path from 'node:path';
import { emptyStats, metricsFor, type SandboxConfig, type KeyStats } from '../sandbox/handler';
import { type RunningSandbox, startSandbox } from '../sandbox/server';
import { type AppsScriptStandIn, DIST_DIR, loadAppsScript, type LoadOptions } from './harness';
import type { JobState } from '../../apps-script/sidebar/contract';
import { startVirtualSandbox, type VirtualSandbox } from '../sandbox/virtual';

const SRC_DIR = path.resolve(__dirname, '../../apps-script/src');

/** Fails loudly when apps-script/dist/Code.js is missing or older than a source file. */
export function assertBundleIsCurrent(): void {
  const bundle = path.join(DIST_DIR, 'Code.js');
  if (!fs.existsSync(bundle))
    throw new Error('apps-script/dist/Code.js is missing: run "npm run build" first');
  const built = fs.statSync(bundle).mtimeMs;
  const sources = [SRC_DIR, path.resolve(__dirname, '../../shared')].flatMap((dir) =>
    fs
      .readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .map((f) => path.join(dir, f))
      .filter((file) => fs.statSync(file).isFile()),
  );
  const newer = sources.filter((file) => fs.statSync(file).mtimeMs > built);
  if (newer.length > 0) {
    throw new Error(
      `apps-script/dist/Code.js is older than ${newer.map((f) => path.basename(f)).join(', ')}: run "npm run build"`,
    );
  }
}

export async function sandboxWith(config?: SandboxConfig): Promise<RunningSandbox> {
  return startSandbox({ port: 0, config });
}

/**
 * The sandbox of a describe block: started once (handed to `use`), reset to `config` before each test (before the
 * block's own beforeEach), closed after the block.
 */
export function useSuiteSandbox(config: SandboxConfig, use: (sandbox: RunningSandbox) => void): void {
  const get = useServer(() => sandboxWith(config), use);
  beforeEach(() => get()?.sandbox.configure(config));
}

/** A server started before the block's tests (handed to `use`) and closed after them; returns its getter. */
function useServer<S extends { close(): Promise<void> }>(
  start: () => Promise<S>,
  use: (server: S) => void,
): () => S | undefined {
  let server: S | undefined;
  beforeAll(async () => {
    server = await start();
    use(server);
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => server;
}

/** DA, PA, MR and Spam Score the sandbox gives a domain, in DAPA's default column order. */
export function metricsRow(domain: string): number[] {
  const m = metricsFor(domain);
  return [m.site_da, m.site_pa, m.site_mr, m.spam_score];
}

/**
 * The address the Sheets settings take for a local sandbox: Staging and Custom accept only https://, and the
 * stand-in's network reaches a loopback https address over plain HTTP (standin/url-fetch.ts).
 */
export function sheetsAddress(localUrl: string): string {
  return localUrl.replace(/^http:\/\//i, 'https://');
}

/**
 * A stand-in whose owner has `apiKey` saved and the sandbox as custom base URL; a virtual-clock sandbox answers on
 * the stand-in's clock.
 */
export async function standInFor(
  sandbox: Pick<RunningSandbox, 'url'> & Partial<Pick<VirtualSandbox, 'useClock'>>,
  apiKey: string | undefined,
  options: LoadOptions = {},
): Promise<AppsScriptStandIn> {
  assertBundleIsCurrent();
  const gas = await loadAppsScript(options);
  sandbox.useClock?.(gas.clock);
  await gas.run('saveSettings', {
    apiKey: apiKey ?? '',
    environment: 'custom',
    baseUrl: sheetsAddress(sandbox.url),
  });
  return gas;
}

/** The virtual-clock sandbox of a test file: started once (handed to `use`), closed after the file. */
export function useVirtualSandbox(config: SandboxConfig, use: (sandbox: VirtualSandbox) => void): void {
  useServer(() => startVirtualSandbox(config), use);
}

/**
 * A stand-in on a virtual clock with the sandbox (reset to `config`) answering on that clock, and the owner's
 * `apiKey` saved with the sandbox as custom base URL.
 */
export async function virtualStandIn(
  sandbox: VirtualSandbox,
  apiKey: string,
  config: SandboxConfig,
  options: LoadOptions = {},
): Promise<AppsScriptStandIn> {
  sandbox.sandbox.configure(config);
  return standInFor(sandbox, apiKey, { clock: 'virtual', ...options });
}

/**
 * A test file's virtual sandbox on `config` (started once) and a stand-in for each test with the owner's `key` saved
 * (300 ms a request, triggers 2 s late), closed after it; `use` is given both whenever one is loaded. Answers
 * `reopen(options)`: closes the test's stand-in and loads another with exactly these options.
 */
export function useStandInEachTest(
  key: string,
  config: SandboxConfig,
  use: (gas: AppsScriptStandIn, sandbox: VirtualSandbox) => void,
): (options: LoadOptions) => Promise<AppsScriptStandIn> {
  let sandbox: VirtualSandbox;
  let gas: AppsScriptStandIn | undefined;
  const reopen = async (options: LoadOptions) => {
    await gas?.close();
    gas = await virtualStandIn(sandbox, key, config, options);
    use(gas, sandbox);
    return gas;
  };
  useVirtualSandbox(config, (s) => (sandbox = s));
  beforeEach(async () => {
    gas = undefined;
    await reopen({ virtualLatencyMs: 300, triggerDelayMs: 2_000 });
  });
  afterEach(async () => {
    await gas?.close();
  });
  return reopen;
}

export function statsOf(sandbox: RunningSandbox, key: string): KeyStats {
  return sandbox.sandbox.stats()[key] ?? emptyStats();
}

/** Domains that the sandbox (and the core) take as distinct: d0.example-N.com ... */
export function domains(count: number, prefix = 'site'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}.example-${i % 7}.com`);
}

/** Rows of a result range that show metrics (a number in the first column). */
export function metricRows(gas: AppsScriptStandIn, a1: string): number {
  return gas.sheet.getValues(a1).filter((row) => typeof row[0] === 'number').length;
}

/**
 * The domain keys kept in the current spreadsheet's hidden result store (`_dapa_results`, read as a user would): a
 * batch row ('*' | service | {"k":[keys],"r":[records]} | checked at) holds many, an earlier version's row one
 * (key | service | record | checked at); claims and the header hold none.
 */
export function storedKeys(gas: AppsScriptStandIn): Set<string> {
  const last = gas.sheet.lastRow('_dapa_results');
  const rows = last > 0 ? gas.sheet.getValues(`'_dapa_results'!A1:D${last}`) : [];
  const keys = new Set<string>();
  for (const [a, service, payload, at] of rows) {
    if (typeof at !== 'number' || String(service).startsWith('claim:') || a === '') continue;
    if (a !== '*') keys.add(String(a));
    else for (const key of (JSON.parse(String(payload)) as { k: string[] }).k) keys.add(key);
  }
  return keys;
}

/**
 * One user's sidebar check of a column (no header) to its end: startJob, then continueJob until it stops, as that
 * user (undefined: the active user), starting at stand-in time `at` (beside other work: see runWith).
 */
export async function sidebarCheck(
  gas: AppsScriptStandIn,
  user: string | undefined,
  column: string,
  list: readonly string[],
  at?: number,
): Promise<JobState> {
  gas.sheet.setValues(
    `${column}1:${column}${list.length}`,
    list.map((d) => [d]),
  );
  let state = await gas.runWith<JobState>({ user, at }, 'startJob', {
    source: 'column',
    column,
    headerRow: false,
  });
  for (let i = 0; i < 100 && state.status === 'running'; i++)
    state = await gas.runWith<JobState>({ user }, 'continueJob');
  return state;
}

/** The entry plan (5 URLs per request, 60 a minute) under one key: the Sheets background suites' plan. */
export const ENTRY_KEY = 'entry-plan';
export const ENTRY_CONFIG: SandboxConfig = {
  keys: { [ENTRY_KEY]: { maxUrlsPerRequest: 5, urlsPerMinute: 60, requestsPerMinute: 60 } },
};

/**
 * A test file's virtual sandbox on the entry plan and a stand-in per test (closed after it): `open(options)` loads
 * one (300 ms a request), `gas()` and `sandbox()` give the current ones.
 */
export function entryPlanSuite(): {
  open: (options?: LoadOptions) => Promise<AppsScriptStandIn>;
  gas: () => AppsScriptStandIn;
  sandbox: () => VirtualSandbox;
  billedOnce: (count: number) => void;
} {
  let sandbox: VirtualSandbox;
  let gas: AppsScriptStandIn | undefined;
  useVirtualSandbox(ENTRY_CONFIG, (s) => (sandbox = s));
  afterEach(async () => {
    await gas?.close();
    gas = undefined;
  });
  return {
    open: async (options = {}) =>
      (gas = await virtualStandIn(sandbox, ENTRY_KEY, ENTRY_CONFIG, { virtualLatencyMs: 300, ...options })),
    gas: () => gas as AppsScriptStandIn,
    sandbox: () => sandbox,
    billedOnce: (count) => {
      const stats = sandbox.sandbox.stats()[ENTRY_KEY];
      expect(stats.billed).toBe(count);
      expect(Object.values(stats.billedByDomain).every((n) => n === 1)).toBe(true);
    },
  };
}

/** The result store's results (not its claims): when each row was checked. */
export function keptTimes(gas: AppsScriptStandIn): number[] {
  const last = gas.sheet.lastRow('_dapa_results');
  const rows = last > 1 ? gas.sheet.getValues(`'_dapa_results'!A2:D${last}`) : [];
  return rows
    .filter(
      ([a, service, , at]) => a !== '' && typeof at === 'number' && !String(service).startsWith('claim:'),
    )
    .map(([, , , at]) => Number(at));
}
