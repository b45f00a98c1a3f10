// Side-by-side benchmark in the same real n8n, against the same sandbox, on the same 1,000 items (400 distinct
// domains): the DAPA Checker node versus n8n's HTTP Request node (one item per request, its Batching option, and
// Retry On Fail). Prints requests, billed queries, 429s, lost items and wall time, and writes them as Markdown.
//   npx tsx test/n8n-e2e/bench.ts --out test/n8n-e2e/BENCH.md     (BENCH_PLAN=premium for the slow, real-size plan)
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_CONFIG, type KeyStats, type PlanConfig, type SandboxConfig } from '../sandbox/handler';
import { startSandbox } from '../sandbox/server';
import { writeMain } from './lib/benchDoc';
import { thousandItemsOver400Domains, type TestItem } from './lib/datasets';
import {
  E2E_DIR,
  N8N_BIN,
  N8nCli,
  outputOf,
  pairedIndex,
  snapshotNodePackage,
  tail,
  type Execution,
  type OutputItem,
} from './lib/n8n';
import {
  bearerHeaderCredential,
  dapaChecker,
  dapaCredential,
  httpRequestDapa,
  manualTrigger,
  sourceItems,
  workflow,
  type HttpBaselineOptions,
} from './lib/workflows';
import { runSuite } from './lib/tally';

interface BenchPlan {
  key: string;
  plan: PlanConfig;
  /** HTTP Request Batching that keeps one-URL requests within the plan's requests per minute. */
  batching: { batchSize: number; batchInterval: number };
  why: string;
}

const PLANS: Record<'fast' | 'premium', BenchPlan> = {
  fast: {
    key: 'bench-fast',
    plan: { maxUrlsPerRequest: 50, requestsPerMinute: 600, urlsPerMinute: 5000 },
    batching: { batchSize: 10, batchInterval: 1000 },
    why:
      "sandbox-premium's 50 URLs per request, with ten times its per-minute limits (600 requests, 5,000 URLs). " +
      'The limits still decide the outcome of one-request-per-item, but the HTTP Request run that respects them ' +
      '(10 items per batch, one batch a second) takes about 100 s instead of the ~17 minutes the real-size plan ' +
      'needs (BENCH_PLAN=premium runs that one).',
  },
  premium: {
    key: 'sandbox-premium',
    plan: DEFAULT_CONFIG.keys['sandbox-premium'],
    batching: { batchSize: 1, batchInterval: 1000 },
    why:
      "The sandbox's built-in premium plan (50 URLs per request, 60 requests and 500 URLs a minute). The HTTP " +
      'Request run that respects it (one item a second) takes about 17 minutes.',
  },
};

interface Variant {
  id: string;
  label: string;
  node: string;
  http?: HttpBaselineOptions;
}

interface Measured {
  variant: Variant;
  requests: number;
  billed: number;
  rateLimited: number;
  lost: number;
  wallMs: number;
  status: string;
  byStatus: Record<string, number>;
  note: string;
}

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

/** Input rows that ended with a result or a reason (the rest are lost: nothing usable came out for them). */
function deliveredRows(variant: Variant, exec: Execution): Set<number> {
  const rows = new Set<number>();
  const add = (item: OutputItem) => {
    const row = pairedIndex(item);
    if (row !== undefined) rows.add(row);
  };
  if (!variant.http) {
    outputOf(exec.run, variant.node, 0)
      .filter((item) => item.json.error === undefined && typeof item.json.site_da === 'number')
      .forEach(add);
    outputOf(exec.run, variant.node, 1)
      .filter((item) => typeof item.json.reason === 'string')
      .forEach(add);
    return rows;
  }
  for (const item of outputOf(exec.run, variant.node, 0)) {
    const data = item.json.data;
    const skipped = item.json.skipped;
    const hasRecord = Array.isArray(data) && data.length > 0;
    const hasReason = Array.isArray(skipped) && skipped.length > 0;
    if (item.json.error === undefined && (hasRecord || hasReason)) add(item);
  }
  return rows;
}

function wallMsOf(exec: Execution): number {
  const run = exec.run;
  if (!run) return exec.elapsedMs;
  return Date.parse(run.stoppedAt) - Date.parse(run.startedAt);
}

function ratio(value: number, base: number): string {
  if (base === 0) return value === 0 ? 'same' : 'node: 0';
  const r = value / base;
  return `${r >= 10 ? r.toFixed(0) : r.toFixed(1)}x`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function table(rows: Measured[]): string {
  const base = rows[0];
  const header =
    '| Variant | Requests | Billed queries | 429s | Lost items | Wall time | Execution |\n' +
    '|---|---:|---:|---:|---:|---:|---|';
  const lines = rows.map((m) => {
    const cell = (value: number, baseValue: number, text = String(value)) =>
      m === base ? text : `${text} (${ratio(value, baseValue)})`;
    return (
      `| ${m.variant.label} | ${cell(m.requests, base.requests)} | ${cell(m.billed, base.billed)} | ` +
      `${cell(m.rateLimited, base.rateLimited)} | ${cell(m.lost, base.lost)} | ` +
      `${cell(m.wallMs, base.wallMs, seconds(m.wallMs))} | ${m.status} |`
    );
  });
  return [header, ...lines].join('\n');
}

function machine(): string {
  const cpus = os.cpus();
  return (
    `${cpus[0]?.model ?? 'unknown CPU'} x ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GB RAM, ` +
    `${os.type()} ${os.release()}, Node ${process.version}`
  );
}

async function main(): Promise<number> {
  const out = argument('--out') ?? path.join(E2E_DIR, 'BENCH.md');
  const planName = process.env.BENCH_PLAN === 'premium' ? 'premium' : 'fast';
  const bench = PLANS[planName];
  const config: SandboxConfig = { keys: { ...DEFAULT_CONFIG.keys, [bench.key]: bench.plan } };
  const items: TestItem[] = thousandItemsOver400Domains();
  const n8nVersion = execFileSync(N8N_BIN, ['--version'], { encoding: 'utf8' }).trim();

  const variants: Variant[] = [
    { id: 'benchDapaNode', label: 'DAPA Checker node (defaults)', node: 'DAPA' },
    {
      id: 'benchHttpPerItem',
      label: 'HTTP Request, one item per request',
      node: 'HTTP',
      http: { onError: 'continueRegularOutput' },
    },
    {
      id: 'benchHttpBatching',
      label: `HTTP Request, Batching ${bench.batching.batchSize} items / ${bench.batching.batchInterval} ms`,
      node: 'HTTP',
      http: { onError: 'continueRegularOutput', batching: bench.batching },
    },
    {
      id: 'benchHttpRetry',
      label: 'HTTP Request, one item per request, Retry On Fail (5 tries, 5 s apart)',
      node: 'HTTP',
      http: { retryOnFail: { maxTries: 5, waitBetweenTries: 5000 } },
    },
  ];

  const sandbox = await startSandbox({ port: 0, config });
  const n8n = new N8nCli(path.join(E2E_DIR, 'work', `bench-${process.env.E2E_N8N_DIR ?? 'n8n'}`), (line) =>
    console.log(`  ${line}`),
  );
  const measured: Measured[] = [];
  try {
    const dapaCred = dapaCredential('benchCredDapa', 'DAPA bench plan', bench.key, sandbox.url);
    const httpCred = bearerHeaderCredential('benchCredHttp', 'Bearer bench plan', bench.key);
    n8n.reset();
    const packageCopy = await snapshotNodePackage(n8n.workDir);
    if (!packageCopy)
      throw new Error('The DAPA Checker node is not built in n8n-node/dist: run npm run build');
    n8n.extensionsDir = packageCopy;
    await n8n.importCredentials([dapaCred, httpCred]);
    await n8n.importWorkflows(
      variants.map((v) =>
        workflow(
          v.id,
          `bench: ${v.label}`,
          [
            manualTrigger(),
            sourceItems(items),
            v.http ? httpRequestDapa(v.node, sandbox.url, httpCred, v.http) : dapaChecker(v.node, dapaCred),
          ],
          [
            ['Start', 'Source'],
            ['Source', v.node],
          ],
        ),
      ),
    );

    for (const variant of variants) {
      sandbox.sandbox.configure(config); // fresh rate windows and counters for each variant
      console.log(`bench: ${variant.label} ...`);
      const exec = await n8n.execute(variant.id, planName === 'premium' ? 45 * 60_000 : 10 * 60_000);
      const stats: KeyStats | undefined = sandbox.sandbox.stats()[bench.key];
      const delivered = deliveredRows(variant, exec);
      const failure = exec.run?.data.resultData.error?.message;
      const m: Measured = {
        variant,
        requests: stats?.requests ?? 0,
        billed: stats?.billed ?? 0,
        rateLimited: stats?.responsesByStatus['429'] ?? 0,
        lost: items.length - delivered.size,
        wallMs: wallMsOf(exec),
        status: exec.timedOut ? 'timed out' : (exec.run?.status ?? `exit ${exec.exitCode}`),
        byStatus: stats?.responsesByStatus ?? {},
        note: failure ? `failed: ${failure}` : '',
      };
      if (!exec.run) m.note = `no run data: ${tail(exec.stdout + exec.stderr, 5)}`;
      measured.push(m);
      console.log(
        `  requests ${m.requests}, billed ${m.billed}, 429s ${m.rateLimited}, lost ${m.lost}, ` +
          `wall ${seconds(m.wallMs)}, ${m.status}${m.note ? ` (${m.note})` : ''}`,
      );
    }
  } finally {
    await sandbox.close();
  }

  const when = new Date().toISOString();
  const planText = `${bench.plan.maxUrlsPerRequest} URLs/request, ${bench.plan.requestsPerMinute} requests/min, ${bench.plan.urlsPerMinute} URLs/min`;
  const doc = `# DAPA Checker node vs HTTP Request node, in a real n8n

Generated by \`npm run bench:n8n\` (\`test/n8n-e2e/bench.ts\`${planName === 'premium' ? ', BENCH_PLAN=premium' : ''}); do not edit by hand.

- Date: ${when}
- Machine: ${machine()}
- n8n: ${n8nVersion} (installed by test/n8n-e2e/run.sh), headless \`n8n execute --id=… --rawOutput\`, one execution per row
- API: the sandbox (test/sandbox), reset before each row; plan \`${bench.key}\`: ${planText}
- Items: the same 1,000 items for every row, over 400 distinct domains, each domain spelled in several ways
  (\`https://www.x.com/path\`, \`X.COM\`, \`www.x.com\`, ...), in a fixed shuffled order

${table(measured)}

Ratios in brackets are against the DAPA Checker node (first row). Requests, billed queries and 429s are the
sandbox's own counters for the plan's key; billed queries are the sum of \`summary.processed\` (a domain checked twice
is billed twice). Lost items are input items that came out with neither a result nor a skip reason (a 429 or 5xx
error item is lost: the user has to run it again). Wall time is the execution's start-to-stop time as n8n records
it (n8n's own boot, about 4 s, is the same for every row and not included).

Sandbox answers by status: ${measured.map((m) => `${m.variant.label}: \`${JSON.stringify(m.byStatus)}\``).join('; ')}.
${measured
  .filter((m) => m.note)
  .map((m) => `\n${m.variant.label}: ${m.note}`)
  .join('')}

## The rows
- **DAPA Checker node (defaults)**: the node as a user adds it: URL \`{{ $json.url }}\`, no option changed.
- **HTTP Request, one item per request**: the usual hand-built workflow, \`{"urls":[<url>]}\` per item with a
  header credential, On Error = Continue (regular output) so that an error answer does not end the run. The node
  starts every item's request without waiting for the previous answer.
- **HTTP Request, Batching**: the same with the node's Batching option set to stay within the plan's requests per
  minute (${bench.batching.batchSize} items, then ${bench.batching.batchInterval} ms pause).
- **Retry On Fail**: one item per request, On Error = Stop, with the engine's Retry On Fail at its maximum
  (5 tries, 5 s apart): each try runs the whole node again, for every item.

## Why this plan
${bench.why}
`;
  // Formatted like every other Markdown file of the repository; the queue-mode and entry-plan sections are kept.
  await writeMain(doc, out);
  console.log(`\n${table(measured)}\n\nwritten to ${path.relative(process.cwd(), out)}`);

  const node = measured[0];
  const nodeOk = node.status === 'success' && node.lost === 0 && node.billed === 400;
  if (!nodeOk) console.log(`benchmark: the DAPA Checker node row is wrong: ${JSON.stringify(node)}`);
  return nodeOk ? 0 : 1;
}

runSuite(main, false);
