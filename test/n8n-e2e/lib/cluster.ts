// A real n8n behind production webhooks: one `n8n start` (regular mode) or one main and N `n8n worker` processes
// (queue mode, Redis for Bull), the credentials and workflows imported with n8n's CLI and published first. Workers
// start one after another (each ready before the next: 2 cores), and one can be SIGKILLed by the tests.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { n8nEnvFromCompose } from './compose';
import { N8nCli, freePort, n8nVersion, tail, type CredentialJson, type WorkflowJson } from './n8n';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(
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

export interface ClusterOptions {
  /** The folder of this instance (user folder, logs); emptied first. */
  workDir: string;
  /** The nodes folder holding the node package (installNodeTarball, snapshotNodePackage), placed in the user folder. */
  extensionsDir: string;
  credentials: CredentialJson[];
  workflows: WorkflowJson[];
  /** Queue mode with this Redis (Bull) and these workers; absent: regular mode, one process. */
  queue?: { redisPort: number; workers: number; concurrency: number };
  /** The database settings (lib/postgres.ts), required in queue mode; absent: n8n's SQLite file in the user folder. */
  database?: Record<string, string>;
  log?: (line: string) => void;
}

export interface Proc {
  pid: number;
  output: () => string;
  stop: () => Promise<void>;
}

export interface Cluster {
  /** `http://127.0.0.1:<port>/webhook` */
  base: string;
  version: string;
  main: Proc;
  workers: Proc[];
  stop: () => Promise<void>;
}

/** The Compose file's queue-mode settings for a cluster here; its PostgreSQL is required, as in the file. */
export function queueEnv(
  redisPort: number,
  database: Record<string, string> | undefined,
): Record<string, string> {
  if (!database)
    throw new Error('queue mode runs on PostgreSQL, as in the Compose file: start one (lib/postgres.ts)');
  return n8nEnvFromCompose({ redisPort, database });
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const n8n = new N8nCli(opts.workDir, opts.log);
  n8n.reset();
  n8n.extensionsDir = opts.extensionsDir;
  const logs = path.join(opts.workDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const port = await freePort();
  n8n.extraEnv = {
    N8N_PORT: String(port),
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    N8N_SECURE_COOKIE: 'false',
    ...(opts.queue
      ? {
          // Queue mode as n8n-node/README.md's Compose file sets it (its hosts and ports swapped for ours).
          ...queueEnv(opts.queue.redisPort, opts.database),
          // Bull's keys of this instance only (two instances may share one Redis, one after the other).
          QUEUE_BULL_PREFIX: `bull-${path.basename(opts.workDir)}`,
          QUEUE_HEALTH_CHECK_ACTIVE: 'false',
          OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
        }
      : opts.database),
  };
  await n8n.importCredentials(opts.credentials);
  await n8n.importWorkflows(opts.workflows.map((wf) => ({ ...wf, active: true })));
  for (const wf of opts.workflows) {
    const published = await n8n.run(['publish:workflow', `--id=${wf.id}`], 120_000);
    if (published.exitCode !== 0)
      opts.log?.(`publish:workflow ${wf.id}: ${tail(published.stdout + published.stderr, 5)}`);
  }
  const procs: Proc[] = [];
  const stop = async () => {
    for (const p of [...procs].reverse()) await p.stop().catch(() => undefined);
  };
  try {
    const main = await n8n.startProcess(['start'], path.join(logs, 'main.log'));
    procs.push({ pid: main.child.pid ?? 0, output: main.output, stop: main.stop });
    await waitFor('the main process', () => /Editor is now accessible/.test(main.output()), 240_000);
    await webhooksRegistered(`http://127.0.0.1:${port}/webhook`, opts.workflows);
    const workers: Proc[] = [];
    for (let w = 0; w < (opts.queue?.workers ?? 0); w++) {
      const worker = await n8n.startProcess(
        ['worker', `--concurrency=${opts.queue?.concurrency ?? 1}`],
        path.join(logs, `worker${w + 1}.log`),
      );
      const proc = { pid: worker.child.pid ?? 0, output: worker.output, stop: worker.stop };
      procs.push(proc);
      workers.push(proc);
      await waitFor(`worker ${w + 1}`, () => /worker is now ready/.test(worker.output()), 240_000);
    }
    return {
      base: `http://127.0.0.1:${port}/webhook`,
      version: n8nVersion(),
      main: procs[0],
      workers,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * n8n 2.41.1 registers the published workflows' webhooks only after "Editor is now accessible": a GET on a POST-only
 * webhook tells a registered one ("not registered for GET requests", "did you mean") from an unknown one, without
 * starting an execution.
 */
async function webhooksRegistered(base: string, workflows: WorkflowJson[]): Promise<void> {
  const paths = workflows.flatMap((wf) =>
    wf.nodes.filter((n) => n.type === 'n8n-nodes-base.webhook').map((n) => String(n.parameters.path)),
  );
  for (const p of paths) {
    await waitFor(
      `the webhook ${p}`,
      async () => {
        const answer = await get(`${base}/${p}`);
        return answer.status !== 404 || /not registered for GET|did you mean/i.test(answer.text);
      },
      120_000,
    );
  }
}

function get(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const request = http.get(url, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    request.on('error', (error) => resolve({ status: 0, text: String(error) }));
  });
}

/** Ends a process group at once (SIGKILL): a worker dying with its claims held. */
export function killGroup(proc: Proc): void {
  process.kill(-proc.pid, 'SIGKILL');
}

/** Resident memory of the cluster's process groups (n8n and its task runners), in MB, and the load average. */
export function footprint(c: Cluster): { mb: number; text: string } {
  const groups = new Set([c.main, ...c.workers].map((p) => String(p.pid)));
  const ps = spawnSync('ps', ['-eo', 'pgid=,rss='], { encoding: 'utf8' }).stdout ?? '';
  let kb = 0;
  for (const row of ps.split('\n')) {
    const [pgid, rss] = row.trim().split(/\s+/);
    if (groups.has(pgid)) kb += Number(rss) || 0;
  }
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const mb = Math.round(kb / 1024);
  return {
    mb,
    text: `${groups.size} n8n process groups: ${mb} MB resident; load average ${load} on ${os.cpus().length} cores`,
  };
}

/** Executions a worker started and finished, by its log. */
export function workerCounts(proc: Proc): { started: number; finished: number } {
  const text = proc.output();
  return {
    started: (text.match(/Worker started execution/g) ?? []).length,
    finished: (text.match(/Worker finished execution/g) ?? []).length,
  };
}

export interface Answer {
  status: number;
  items: Array<Record<string, unknown>>;
  text: string;
  ms: number;
  /** When the answer came (ms since the epoch). */
  at: number;
}

/**
 * How long a webhook call waits by default: the longest execution of the clusters' scenarios ends within 4 minutes,
 * so an answer that has not come a minute later is lost (its check fails with status 0) rather than waited for.
 */
export const ANSWER_TIMEOUT_MS = 5 * 60_000;

/** POSTs `{items}` to a webhook and waits for the answer, at most `timeoutMs` (then status 0). */
export function post(url: string, items: unknown[], timeoutMs = ANSWER_TIMEOUT_MS): Promise<Answer> {
  const started = Date.now();
  const body = JSON.stringify({ items });
  return new Promise((resolve) => {
    const done = (status: number, text: string) => {
      let parsed: Array<Record<string, unknown>> = [];
      try {
        const json = JSON.parse(text) as unknown;
        parsed = Array.isArray(json) ? (json as Array<Record<string, unknown>>) : [];
      } catch {
        // an error page or nothing: no items
      }
      resolve({ status, items: parsed, text, ms: Date.now() - started, at: Date.now() });
    };
    const request = http.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
        response.on('error', (error) => done(0, String(error)));
      },
    );
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer after ${timeoutMs} ms`)));
    request.on('error', (error) => done(0, String(error)));
    request.end(body);
  });
}
