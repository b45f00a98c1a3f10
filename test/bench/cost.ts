// Scenario 4, what the core costs: CPU per 10,000 rows against an instant fake server (real clock, median), the
// time to load the Apps Script bundle into a fresh node:vm realm, and the minified sizes of the three bundles.
import { transformSync } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as vm from 'node:vm';
import { gzipSync } from 'node:zlib';
import { CheckRun, runSync, type HttpAnswer, type HttpRequest } from '../../shared';
import { bundleCore } from '../core/core-bundle';
import { checkEntry } from '../sandbox/handler';
import { FIXED_BATCH_SIZE, mapBatchByOrder } from './baselines';
import { sheetColumn } from './datasets';
import { postOf } from './env';

const ROOT = path.join(__dirname, '..', '..');
export const APPS_SCRIPT_BUNDLE = path.join(ROOT, 'apps-script', 'dist', 'Code.js');
export const N8N_BUNDLE = path.join(ROOT, 'n8n-node', 'dist', 'nodes', 'DapaChecker', 'DapaChecker.node.js');
/** What a custom function (`=DAPA(...)`) may spend in all, loading included. */
export const CUSTOM_FUNCTION_BUDGET_MS = 30_000;

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A server that answers at once, in order, every valid entry with a record; it times itself so it can be left out. */
function instantServer(): { send(request: HttpRequest): HttpAnswer; spentMs(): number } {
  let spent = 0;
  return {
    send(request) {
      const started = performance.now();
      const urls = (JSON.parse(request.body) as { urls: unknown[] }).urls;
      const data: unknown[] = [];
      const skipped: unknown[] = [];
      urls.forEach((url, index) => {
        const check = checkEntry(url);
        if (check.ok)
          data.push({ domain: check.host, site_da: 40, site_pa: 35, site_mr: 4.5, spam_score: 2 });
        else
          skipped.push({ index, url: typeof url === 'string' ? url : '', reason: check.reason, message: '' });
      });
      const status = data.length > 0 ? 200 : 422;
      const body = JSON.stringify({
        status,
        message: 'ok',
        data,
        summary: { submitted: urls.length, processed: data.length, skipped: skipped.length },
        skipped,
      });
      spent += performance.now() - started;
      return { status, headers: { 'content-type': 'application/json' }, body };
    },
    spentMs: () => spent,
  };
}

export interface CpuFigures {
  rows: number;
  distinct: number;
  runs: number;
  /** Median client-side milliseconds per 10,000 rows (the fake server's own time left out). */
  coreMs: number;
  fixedBatchesMs: number;
  coreRequests: number;
  fixedBatchesRequests: number;
}

/** Median of `runs` timed runs after two warm-ups. */
function timed(runs: number, once: () => number): number {
  once();
  once();
  return median(Array.from({ length: runs }, once));
}

export function cpuPer10kRows(runs = 9): CpuFigures {
  const column = sheetColumn(10_000, 4_000, { seed: 11, prefix: 'cpu' });
  const { rows } = column;
  let coreRequests = 0;
  let fixedBatchesRequests = 0;
  const coreMs = timed(runs, () => {
    const server = instantServer();
    const started = performance.now();
    const run = new CheckRun(rows, {
      baseUrl: 'http://bench.invalid',
      deadline: Infinity,
      maxUrlsPerRequest: 50,
    });
    const report = runSync(run, { now: () => 0, sleep: () => undefined, send: server.send });
    coreRequests = report.totals.requests;
    return performance.now() - started - server.spentMs();
  });
  const fixedBatchesMs = timed(runs, () => {
    const server = instantServer();
    const started = performance.now();
    let requests = 0;
    const results = [];
    for (let i = 0; i < rows.length; i += FIXED_BATCH_SIZE) {
      const batch = rows.slice(i, i + FIXED_BATCH_SIZE);
      results.push(...mapBatchByOrder(batch, server.send(postOf('http://bench.invalid', batch))));
      requests += 1;
    }
    fixedBatchesRequests = requests;
    return performance.now() - started - server.spentMs();
  });
  const per10k = 10_000 / rows.length;
  return {
    rows: rows.length,
    distinct: column.distinctValid,
    runs,
    coreMs: coreMs * per10k,
    fixedBatchesMs: fixedBatchesMs * per10k,
    coreRequests,
    fixedBatchesRequests,
  };
}

export type LoadFigures =
  | { missing: string }
  | { bytes: number; firstMs: number; medianMs: number; runs: number; entryPoints: string[] };

/** Loads the Apps Script bundle into fresh V8 realms (no Node globals), as Apps Script does on each execution. */
export function appsScriptLoad(runs = 7, file = APPS_SCRIPT_BUNDLE): LoadFigures {
  if (!existsSync(file))
    return { missing: `${path.relative(ROOT, file)} is missing: run \`npm run build\` first` };
  const code = readFileSync(file, 'utf8');
  let entryPoints: string[] = [];
  const loadOnce = (): number => {
    const realm = vm.createContext({});
    const started = performance.now();
    new vm.Script(code, { filename: 'Code.js' }).runInContext(realm);
    const ms = performance.now() - started;
    entryPoints = Object.keys(realm).filter(
      (name) => typeof (realm as Record<string, unknown>)[name] === 'function',
    );
    return ms;
  };
  const firstMs = loadOnce();
  const medianMs = median(Array.from({ length: runs }, loadOnce));
  return { bytes: Buffer.byteLength(code), firstMs, medianMs, runs, entryPoints };
}

export interface SizeFigure {
  name: string;
  file: string;
  /** Bytes as built, minified bytes (the n8n bundle is minified here, it ships readable), and gzip of those. */
  builtBytes?: number;
  minifiedBytes?: number;
  gzipBytes?: number;
  missing?: string;
}

function sizeOf(name: string, file: string, minify: boolean): SizeFigure {
  const relative = path.relative(ROOT, file);
  if (!existsSync(file))
    return { name, file: relative, missing: `${relative} is missing: run \`npm run build\` first` };
  const built = readFileSync(file, 'utf8');
  const minified = minify
    ? transformSync(built, { minify: true, loader: 'js', logLevel: 'silent' }).code
    : built;
  return {
    name,
    file: relative,
    builtBytes: Buffer.byteLength(built),
    minifiedBytes: Buffer.byteLength(minified),
    gzipBytes: gzipSync(minified).length,
  };
}

export function bundleSizes(): SizeFigure[] {
  const core = bundleCore();
  return [
    {
      name: 'core (shared/, with zod/mini)',
      file: 'shared/index.ts (esbuild IIFE, minified)',
      builtBytes: core.bytes,
      minifiedBytes: core.bytes,
      gzipBytes: gzipSync(core.code).length,
    },
    sizeOf('Apps Script bundle', APPS_SCRIPT_BUNDLE, false),
    sizeOf('n8n node bundle', N8N_BUNDLE, true),
  ];
}
