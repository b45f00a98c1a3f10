// What the issue-35 runs share: the sandbox keys (copies of the entry plan), the cluster's size, the node package
// before or after, and starting a cluster of either in its own folder under work/shared/.
import path from 'node:path';
import { DEFAULT_CONFIG, type SandboxConfig } from '../../sandbox/handler';
import type { RunningSandbox } from '../../sandbox/server';
import { startCluster, type Cluster } from './cluster';
import {
  E2E_DIR,
  installNodeTarball,
  snapshotNodePackage,
  type CredentialJson,
  type WorkflowJson,
} from './n8n';
import type { RunningPostgres } from './postgres';
import type { Started } from './sharedStore';
import type { Tally } from './tally';
import { dapaCredential } from './workflows';

/** Each run's own folder (two regular-mode runs go side by side, one per n8n version). */
export const WORK = path.join(E2E_DIR, 'work', process.env.E2E_SHARED_DIR ?? 'shared');
export const WORKERS = 5;
export const CONCURRENCY = 2;
/** Regular mode's load: 20 executions of 10, overlapping by half (105 distinct). */
export const REGULAR_EXECUTIONS = 20;
/** Queue mode's load: 40 executions of 10, overlapping by half (205 distinct). */
export const QUEUE_EXECUTIONS = 40;

/**
 * Issue 44's rows: on a bigger plan (BIG_PLAN), BIG_WORKERS x CONCURRENCY and two lists of BIG_LIST overlapping by
 * half (7,500 distinct); on the entry plan, WIDE_WORKERS x CONCURRENCY and WIDE_EXECUTIONS lists of 10 (505 distinct).
 */
export const BIG_WORKERS = 2;
export const BIG_LIST = 5000;
export const BIG_PLAN = { maxUrlsPerRequest: 100, requestsPerMinute: 60, urlsPerMinute: 6000 };
export const WIDE_WORKERS = 10;
export const WIDE_EXECUTIONS = 100;

/** Sandbox keys, each a copy of the entry plan (but scale-big, on BIG_PLAN), so that no scenario starts from another's minute. */
export const KEYS = [
  'scale-q',
  'scale-reg',
  'scale-kill',
  'scale-down',
  'scale-addr',
  'scale-auth',
  'scale-authok',
  'scale-before-q',
  'scale-before-reg',
  'scale-wide',
] as const;
export const SANDBOX_CONFIG: SandboxConfig = {
  keys: {
    ...DEFAULT_CONFIG.keys,
    ...Object.fromEntries(KEYS.map((k) => [k, { ...DEFAULT_CONFIG.keys['sandbox-basic'] }])),
    'scale-big': { ...BIG_PLAN },
  },
};

export const apiCredential = (key: string, sandboxUrl: string): CredentialJson =>
  dapaCredential(`cred-${key}`, `DAPA ${key}`, key, sandboxUrl);

export interface Ctx {
  t: Tally;
  sandbox: RunningSandbox;
  log: (line: string) => void;
  /** PostgreSQL for the queue-mode clusters (one database each). */
  pg?: RunningPostgres;
}

/** The node package for a cluster: the one run.sh packed (after), or the one packed from main with its install.mjs. */
async function packageFor(dir: string, before: boolean): Promise<string> {
  const tarball = process.env.E2E_BEFORE_TARBALL;
  if (before) {
    if (!tarball) throw new Error('E2E_BEFORE_TARBALL is not set (run.sh packs it)');
    return installNodeTarball(dir, tarball, path.join(path.dirname(path.dirname(tarball)), 'install.mjs'));
  }
  const copy = await snapshotNodePackage(dir);
  if (!copy) throw new Error('the node is not built in n8n-node/dist (npm run build)');
  return copy;
}

export async function cluster(
  ctx: Ctx,
  name: string,
  workflows: WorkflowJson[],
  credentials: CredentialJson[],
  opts: { redis?: Started; before?: boolean; workers?: number } = {},
): Promise<Cluster> {
  const dir = path.join(WORK, name);
  const workers = opts.workers ?? WORKERS;
  const started = Date.now();
  const extensionsDir = await packageFor(path.join(WORK, `${name}-package`), opts.before === true);
  const c = await startCluster({
    workDir: dir,
    extensionsDir,
    credentials,
    workflows,
    queue: opts.redis ? { redisPort: opts.redis.port, workers, concurrency: CONCURRENCY } : undefined,
    database: opts.redis && ctx.pg ? ctx.pg.database(`n8n_${name.replace(/\W/g, '_')}`) : undefined,
    log: ctx.log,
  });
  ctx.log(
    `${name}: n8n ${c.version}, ${opts.redis ? `main + ${workers} workers x ${CONCURRENCY}, PostgreSQL` : 'one process (regular mode), SQLite'}` +
      `${opts.before ? ', the node as on main' : ''}, ready in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  return c;
}
