// Queue mode in a real n8n: Redis (Debian's redis-server on 127.0.0.1), one main `n8n start` and two `n8n worker`
// processes sharing one user folder. Several webhook executions at once, with one credential on a tight plan and
// overlapping domains, are put on the Bull queue by the main and run by the workers; then one more execution shows
// that the plan the workers learned is not learned again.
// Run by run.sh on the newer n8n; ends with `N passed, N failed`; `--out <file>` rewrites the queue section of BENCH.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  DEFAULT_CONFIG,
  checkEntry,
  type KeyStats,
  type PlanConfig,
  type SandboxConfig,
} from '../sandbox/handler';
import { startSandbox } from '../sandbox/server';
import { writeSection, BENCH_FILE } from './lib/benchDoc';
import { domainPool, spell } from './lib/datasets';
import { E2E_DIR, N8nCli, freePort, n8nVersion, snapshotNodePackage, tail } from './lib/n8n';
import { Tally, clip, runSuite } from './lib/tally';
import {
  appendMerge,
  dapaChecker,
  dapaCredential,
  itemsFromWebhookBody,
  pairingProbe,
  webhookTrigger,
  workflow,
} from './lib/workflows';

const WORK_DIR = path.join(E2E_DIR, 'work', 'queue');
const KEY = 'sandbox-basic';
/** The sandbox's entry plan (the real service's "Basic"), with Laravel's rate-limit headers as the service sends them. */
const PLAN = DEFAULT_CONFIG.keys[KEY] as Required<
  Pick<PlanConfig, 'maxUrlsPerRequest' | 'urlsPerMinute' | 'requestsPerMinute'>
>;
const EXECUTIONS = 4;
const SHARED = 15; // domains every execution has
const OWN = 15; // domains only one execution has
const WORKERS = 2;
const WORKER_CONCURRENCY = 2;
const S = 'queue mode';

interface Item {
  row: number;
  url: string;
  note: string;
}

/** Execution `e`'s items: the shared domains, its own ones, a repeat spelled differently, and one non-domain. */
function itemsFor(e: number, tag: string): Item[] {
  const shared = domainPool(SHARED, `${tag}-shared-`);
  const own = domainPool(OWN, `${tag}-own${e}-`);
  const urls = [...shared, ...own].map((d, i) => spell(d, i + e));
  urls.push(spell(shared[e % SHARED], 3), 'not a domain');
  return urls.map((url, row) => ({ row, url, note: `execution ${e} item ${row}` }));
}

function distinctDomains(items: Item[]): Set<string> {
  const out = new Set<string>();
  for (const item of items) {
    const checked = checkEntry(item.url);
    if (checked.ok) out.add(checked.domain);
  }
  return out;
}

function diff(after: KeyStats, before: KeyStats | undefined, limit422: number) {
  const status = (s: KeyStats | undefined, code: string) => s?.responsesByStatus[code] ?? 0;
  return {
    requests: after.requests - (before?.requests ?? 0),
    billed: after.billed - (before?.billed ?? 0),
    limit422,
    tooMany: status(after, '429') - status(before, '429'),
    rateSkips: after.rateLimitSkips - (before?.rateLimitSkips ?? 0),
  };
}

/** Redis on the loopback address, no persistence; installed from Debian when missing. */
async function startRedis(): Promise<{ port: number; stop: () => Promise<void> }> {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
    console.log('redis-server missing: apt-get install -y redis-server');
    spawnSync(
      'sh',
      ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server'],
      {
        stdio: 'inherit',
      },
    );
  }
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'yes',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  for (let i = 0; i < 100 && !/Ready to accept connections/.test(out); i++) await sleep(100);
  if (!/Ready to accept connections/.test(out))
    throw new Error(`redis-server did not start: ${tail(out, 10)}`);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    port,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(
  what: string,
  test: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await test()) return;
    await sleep(250);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

interface Answer {
  status: number;
  items: Array<Record<string, unknown>>;
  text: string;
  ms: number;
}

/** POSTs the items to the webhook and waits for the answer however long the execution takes (no client timeout). */
async function post(url: string, items: Item[]): Promise<Answer> {
  const started = Date.now();
  const body = JSON.stringify({ items });
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
  let parsed: Array<Record<string, unknown>> = [];
  try {
    const json = JSON.parse(text) as unknown;
    parsed = Array.isArray(json) ? (json as Array<Record<string, unknown>>) : [];
  } catch {
    // checked below through `items`
  }
  return { status, items: parsed, text, ms: Date.now() - started };
}

/** Every item once (by `row`), each paired with its own source item (the probes' `sourceRow`), none lost. */
function checkExecution(t: Tally, label: string, items: Item[], answer: Answer): void {
  t.equal(S, `${label}: the webhook answers 200`, answer.status, 200);
  const rows = answer.items.map((item) => item.row);
  const missing = items.filter((item) => !rows.includes(item.row)).map((item) => item.row);
  const twice = rows.filter((row, i) => rows.indexOf(row) !== i);
  t.check(
    S,
    `${label}: all ${items.length} items come out exactly once (0 lost)`,
    answer.items.length === items.length && missing.length === 0 && twice.length === 0,
    `out ${answer.items.length}, missing ${clip(missing)}, twice ${clip(twice)}; ${clip(answer.text, 200)}`,
  );
  const unpaired = answer.items.filter((item) => item.sourceRow !== item.row);
  t.check(
    S,
    `${label}: every item is paired with its own input item ($('Source').item)`,
    unpaired.length === 0 && answer.items.length > 0,
    clip(unpaired.slice(0, 3)),
  );
  const onResults = answer.items.filter((item) => typeof item.site_da === 'number');
  const skipped = answer.items.filter((item) => typeof item.reason === 'string');
  const notFinished = skipped.filter((item) => item.reason !== 'invalid_url_format');
  t.check(
    S,
    `${label}: every domain has its result; only the non-domain is skipped`,
    onResults.length === items.length - 1 && notFinished.length === 0,
    `results ${onResults.length}, skipped ${clip(skipped.map((i) => i.reason))}`,
  );
}

function workerStarts(output: string): number {
  return (output.match(/Worker started execution/g) ?? []).length;
}

async function main(): Promise<number> {
  const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : undefined;
  const t = new Tally();
  const config: SandboxConfig = { keys: DEFAULT_CONFIG.keys, faults: { rateLimitHeaders: true } };
  // A 422 without an envelope is "Limit Exceeded" (the request the node learns the maximum from); an all-skipped
  // envelope is also a 422, but carries a summary.
  let limitExceeded = 0;
  const sandbox = await startSandbox({
    port: 0,
    config,
    onRequest: (entry) => {
      if (entry.status === 422 && !entry.summary) limitExceeded += 1;
    },
  });
  const n8n = new N8nCli(WORK_DIR, (line) => console.log(`        ${line}`));
  const stops: Array<() => Promise<void>> = [];
  const version = n8nVersion();
  try {
    n8n.reset();
    mkdirSync(path.join(WORK_DIR, 'logs'), { recursive: true });
    const copy = await snapshotNodePackage(WORK_DIR);
    if (!copy) throw new Error('the node is not built in n8n-node/dist (npm run build)');
    n8n.extensionsDir = copy;

    const redis = await startRedis();
    stops.push(redis.stop);
    const port = await freePort();
    n8n.extraEnv = {
      EXECUTIONS_MODE: 'queue',
      QUEUE_BULL_REDIS_HOST: '127.0.0.1',
      QUEUE_BULL_REDIS_PORT: String(redis.port),
      QUEUE_HEALTH_CHECK_ACTIVE: 'false',
      // One SQLite file for main and workers, in WAL mode (n8n warns that queue mode is meant for PostgreSQL).
      DB_SQLITE_POOL_SIZE: '4',
      N8N_PORT: String(port),
      N8N_LISTEN_ADDRESS: '127.0.0.1',
      N8N_SECURE_COOKIE: 'false',
      OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
    };

    const credential = dapaCredential('queueCred', 'DAPA entry plan', KEY, sandbox.url);
    const wf = workflow(
      'e2eQueue',
      'queue: DAPA behind a webhook',
      [
        webhookTrigger('Webhook', 'dapa-queue'),
        itemsFromWebhookBody('Source'),
        dapaChecker('DAPA', credential),
        pairingProbe('Results probe'),
        pairingProbe('Skipped probe'),
        appendMerge('All'),
      ],
      [
        ['Webhook', 'Source'],
        ['Source', 'DAPA'],
        ['DAPA', 'Results probe', 0],
        ['DAPA', 'Skipped probe', 1],
        ['Results probe', 'All', 0, 0],
        ['Skipped probe', 'All', 0, 1],
      ],
    );
    await n8n.importCredentials([credential]);
    await n8n.importWorkflows([{ ...wf, active: true }]);
    const published = await n8n.run(['publish:workflow', '--id=e2eQueue'], 120_000);
    if (published.exitCode !== 0)
      console.log(`        publish:workflow: ${tail(published.stdout + published.stderr, 5)}`);

    const logs = path.join(WORK_DIR, 'logs');
    const main = await n8n.startProcess(['start'], path.join(logs, 'main.log'));
    stops.unshift(main.stop);
    await waitFor('the main process', () => /Editor is now accessible/.test(main.output()), 180_000);
    const workers = [];
    for (let w = 0; w < WORKERS; w++) {
      const worker = await n8n.startProcess(
        ['worker', `--concurrency=${WORKER_CONCURRENCY}`],
        path.join(logs, `worker${w + 1}.log`),
      );
      stops.unshift(worker.stop);
      workers.push(worker);
    }
    for (const worker of workers) {
      await waitFor('a worker', () => /worker is now ready/.test(worker.output()), 180_000);
    }
    const url = `http://127.0.0.1:${port}/webhook/dapa-queue`;
    console.log(`queue mode: n8n ${version}, main on ${port}, Redis on ${redis.port}, ${WORKERS} workers`);

    // Phase 1: several executions at once, the same credential, overlapping domains, nothing learned yet.
    sandbox.sandbox.configure(config);
    const batches = Array.from({ length: EXECUTIONS }, (_v, e) => itemsFor(e, 'q'));
    const started = Date.now();
    const answers = await Promise.all(batches.map((items) => post(url, items)));
    const wallMs = Date.now() - started;
    const after1 = sandbox.sandbox.stats()[KEY];
    answers.forEach((answer, e) =>
      checkExecution(t, `execution ${e + 1} of ${EXECUTIONS}`, batches[e], answer),
    );
    const expectedBilled = new Map<string, number>();
    for (const items of batches) {
      for (const domain of distinctDomains(items))
        expectedBilled.set(domain, (expectedBilled.get(domain) ?? 0) + 1);
    }
    const over = [...expectedBilled].filter(([d, n]) => (after1?.billedByDomain[d] ?? 0) > n);
    const sumBilled = [...expectedBilled.values()].reduce((a, b) => a + b, 0);
    t.check(
      S,
      '0 domains billed twice within an execution (each domain billed once per execution that has it)',
      over.length === 0 && after1?.billed === sumBilled,
      `billed ${after1?.billed}, expected ${sumBilled}; over: ${clip(over.map(([d, n]) => `${d} ${after1?.billedByDomain[d]}/${n}`))}`,
    );
    const phase1 = diff(after1, undefined, limitExceeded);
    const boundMs = (sumBilled / PLAN.urlsPerMinute) * 60_000;
    t.check(
      S,
      `429s bounded: at most ${EXECUTIONS} (one per execution)`,
      phase1.tooMany <= EXECUTIONS,
      `${phase1.tooMany} 429s`,
    );
    t.check(
      S,
      `at most one learning request (422 Limit Exceeded) per execution while nothing is learned yet`,
      phase1.limit422 <= EXECUTIONS,
      `${phase1.limit422} for ${EXECUTIONS} executions`,
    );
    const starts = workers.map((w) => workerStarts(w.output()));
    t.check(
      S,
      `the workers ran the executions (worker logs: ${starts.join(' + ')} started), none in the main process`,
      starts.reduce((a, b) => a + b, 0) === EXECUTIONS &&
        starts.every((n) => n > 0) &&
        workerStarts(main.output()) === 0,
      `starts per worker ${clip(starts)}`,
    );
    // Executions on one key do not coordinate: each paces to what it sees, and one may lose the race for the
    // minute's URLs again and again (the core then learns a lower URL rate for it). The wall time is a figure to
    // report against the plan's bound, not a pass/fail check here; every item is still checked above.
    console.log(
      `        wall time of all ${EXECUTIONS}: ${(wallMs / 1000).toFixed(1)} s = ${(wallMs / boundMs).toFixed(2)} x ` +
        `the plan's bound (${(boundMs / 1000).toFixed(0)} s for ${sumBilled} billed URLs at ${PLAN.urlsPerMinute}/min)`,
    );

    // Phase 2: one more execution, on a worker that has learned the plan (both ran phase 1), in a fresh minute (the
    // sandbox's windows and counters reset), so that its requests are only what the learned plan asks for.
    const again = itemsFor(0, 'r');
    sandbox.sandbox.configure(config);
    limitExceeded = 0;
    const before2 = sandbox.sandbox.stats()[KEY];
    const started2 = Date.now();
    const answer2 = await post(url, again);
    const wall2 = Date.now() - started2;
    const after2 = sandbox.sandbox.stats()[KEY];
    checkExecution(t, 'the next execution', again, answer2);
    const phase2 = diff(after2, before2, limitExceeded);
    t.equal(S, 'the next execution sends no learning request (no 422 Limit Exceeded)', phase2.limit422, 0);
    const distinct2 = distinctDomains(again).size;
    t.check(
      S,
      `the next execution sends ceil(${distinct2}/5) = ${Math.ceil(distinct2 / 5)} requests`,
      phase2.requests === Math.ceil(distinct2 / PLAN.maxUrlsPerRequest),
      `${phase2.requests} requests`,
    );
    const totalStarts = workers.reduce((n, w) => n + workerStarts(w.output()), 0);
    t.equal(S, 'the next execution also ran on a worker', totalStarts, EXECUTIONS + 1);
    const perExecution = answers.map((a) => `${(a.ms / 1000).toFixed(1)} s`).join(', ');
    console.log(`        phase 1 executions took ${perExecution}`);
    console.log(
      `        phase 1: ${phase1.requests} requests, ${phase1.billed} billed, ${phase1.tooMany} 429s, ` +
        `${phase1.rateSkips} rate_limit_reached, ${phase1.limit422} 422s, wall ${(wallMs / 1000).toFixed(1)} s ` +
        `(bound ${(boundMs / 1000).toFixed(0)} s); phase 2: ${phase2.requests} requests, ${phase2.limit422} 422s`,
    );

    if (out) {
      const rows = [
        `| ${EXECUTIONS} executions at once (nothing learned yet) | ${phase1.requests} | ${phase1.billed} | ${phase1.limit422} | ${phase1.tooMany} | ${phase1.rateSkips} | ${answers.reduce((n, a) => n + a.items.length, 0)} / ${batches.reduce((n, b) => n + b.length, 0)} | ${(wallMs / 1000).toFixed(1)} s | ${(boundMs / 1000).toFixed(0)} s (${(wallMs / boundMs).toFixed(2)}x) |`,
        `| 1 execution afterwards (plan learned) | ${phase2.requests} | ${phase2.billed} | ${phase2.limit422} | ${phase2.tooMany} | ${phase2.rateSkips} | ${answer2.items.length} / ${again.length} | ${(wall2 / 1000).toFixed(1)} s | ${((phase2.billed / PLAN.urlsPerMinute) * 60).toFixed(0)} s |`,
      ];
      await writeSection(
        'queue',
        `## Queue mode: Redis + one main + two workers

Generated by \`test/n8n-e2e/queue.ts\` (part of \`npm run test:e2e\`); do not edit by hand.

- Date: ${new Date().toISOString()}; machine: ${os.cpus().length} cores, Node ${process.version}
- n8n ${version}: \`EXECUTIONS_MODE=queue\`, Debian's redis-server on 127.0.0.1, one \`n8n start\` and ${WORKERS}
  \`n8n worker --concurrency=${WORKER_CONCURRENCY}\` sharing one user folder (SQLite in WAL mode; n8n warns that queue
  mode is meant for PostgreSQL). Executions come in as production webhook calls, which the main process puts on
  the Bull queue; the worker logs show which worker ran each.
- Plan (sandbox key \`${KEY}\`): ${PLAN.maxUrlsPerRequest} URLs/request, ${PLAN.urlsPerMinute} URLs/min, ${PLAN.requestsPerMinute} requests/min, shared by all executions (the entry plan)
- Each execution: ${SHARED + OWN + 2} items, ${SHARED} domains shared by all executions, ${OWN} of its own, one repeat, one non-domain

| Run | Requests | Billed | 422 Limit Exceeded (learning) | 429s | rate_limit_reached | Items out / in | Wall time | Plan's bound |
| --- | -------: | -----: | -------------: | ---: | -----------------: | -------------: | --------: | -----------: |
${rows.join('\n')}

Each execution's own time in this run: ${answers.map((a) => `${(a.ms / 1000).toFixed(1)} s`).join(', ')}. The executions
share the plan's minute without coordinating (each paces to what it sees); the suite reports this figure and does not
gate on it. Earlier runs took about 300 s in one execution of the batch and in the lone execution after it: a worker
had kept the URL rate it inferred from its own share of the shared minute (5 a minute) and paced the next execution
by it, one request a minute. The node now keeps only the per-request maximum between executions (it is exact); the
rates are read afresh in each execution.

The plan's bound is the billed URLs at the plan's ${PLAN.urlsPerMinute} URLs a minute. Billed is the sandbox's count: each
execution pays once for each of its domains (the shared ones are billed once per execution, never twice within one).
The second row's execution sends no 422 to learn the maximum again: the worker that runs it learned the maximum in
an earlier execution and keeps it in its process memory. (Each worker also saves it in the node's static data, but
n8n ${version} does not load static data into a new queued execution: it reloads it only for resumed ones, and the
execution record's copy of the workflow carries none; so in queue mode each worker learns the plan once.)`,
        out === 'BENCH' ? BENCH_FILE : out,
      );
    }
  } catch (error) {
    t.check(S, 'the queue-mode run completed', false, (error as Error).stack ?? String(error));
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    await sandbox.close();
  }
  if (!existsSync(path.join(WORK_DIR, 'logs'))) console.log('no logs');
  console.log(t.summary());
  return t.failed === 0 ? 0 : 1;
}

runSuite(main);
