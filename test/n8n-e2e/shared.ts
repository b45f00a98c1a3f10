// Issue 35 in real components: n8n 2.41.1 in queue mode (one main, 5 workers x 2 slots, Bull on Debian's
// redis-server) with the node's shared store (Debian's webdis, started with the README's webdis.json, in front of a
// second redis-server of DAPA's own, as the README sets it up), and regular mode on either n8n;
// every figure is the sandbox's own count. Modes (run by run.sh):
//   queue    the shared-store scenarios: 40 overlapping executions, the same lists "an hour later", webdis stopped
//            mid-run, a wrong address and wrong auth, a worker SIGKILLed while holding claims
//   load     the 40 overlapping executions only, in queue mode (run.sh: on n8n 2.8.4, beside 2.41.1's full set)
//   regular  20 overlapping executions started together through a webhook on one `n8n start`
//   bench    the four figures before (the node packed from main, E2E_BEFORE_TARBALL) and after, at 1 process and
//            at 5 x 2 workers; writes the scaling section of BENCH.md and the figures block of n8n-node/README.md
//   before   only the before rows, printed (E2E_BEFORE_TARBALL)
//   readme   the README's figures block rendered again from the committed BENCH.md
// Ends with `N passed, N failed`.
import { startSandbox } from '../sandbox/server';
import { startPostgres } from './lib/postgres';
import { startRedis, type Started } from './lib/sharedStore';
import {
  CONCURRENCY,
  QUEUE_EXECUTIONS,
  REGULAR_EXECUTIONS,
  SANDBOX_CONFIG,
  WORK,
  WORKERS,
  apiCredential,
  cluster,
  type Ctx,
} from './lib/scaleSetup';
import {
  checkDelivered,
  checkShared,
  dapaFlow,
  line,
  overlappingLists,
  runLists,
  type Figures,
} from './lib/overlap';
import { BENCH_FILE } from './lib/benchDoc';
import { writeReadmeBlock, writeScaling, type ScalingRow } from './lib/scalingDoc';
import { benchSection, parseTable } from './lib/scalingFigures';
import { queueScenarios } from './lib/sharedScenarios';
import { Tally, runSuite } from './lib/tally';

/** 20 overlapping executions at once on one process; with `check`, the targets asserted. */
export async function regularRun(ctx: Ctx, before: boolean, check: boolean): Promise<Figures> {
  const key = before ? 'scale-before-reg' : 'scale-reg';
  const api = apiCredential(key, ctx.sandbox.url);
  const flow = dapaFlow({ id: `scaleReg${before ? 'Before' : ''}`, path: `scale-${key}`, api, before });
  const c = await cluster(ctx, `regular${before ? '-before' : ''}`, [flow], [api], { before });
  try {
    const lists = overlappingLists(REGULAR_EXECUTIONS, key);
    const f = await runLists(ctx.sandbox, key, `${c.base}/scale-${key}`, lists);
    const s = `regular mode, n8n ${c.version}${before ? ', before' : ''}`;
    ctx.log(`${s}: ${line(f)}`);
    if (check) {
      checkShared(ctx.t, `${s}, ${REGULAR_EXECUTIONS} overlapping executions through a webhook`, f);
      const twice = Object.entries(ctx.sandbox.sandbox.stats()[key]?.billedByDomain ?? {}).filter(
        ([, n]) => n > 1,
      );
      ctx.t.equal(s, 'no domain billed twice', twice, []);
    } else checkDelivered(ctx.t, s, f);
    return f;
  } finally {
    await c.stop();
  }
}

/** 40 overlapping executions at once on 5 workers x 2, the node as on main (no store). */
async function queueBefore(ctx: Ctx, redis: Started): Promise<Figures> {
  const key = 'scale-before-q';
  const api = apiCredential(key, ctx.sandbox.url);
  const flow = dapaFlow({ id: 'scaleQBefore', path: `scale-${key}`, api, before: true });
  const c = await cluster(ctx, 'queue-before', [flow], [api], { redis, before: true });
  try {
    const f = await runLists(
      ctx.sandbox,
      key,
      `${c.base}/scale-${key}`,
      overlappingLists(QUEUE_EXECUTIONS, key),
    );
    ctx.log(`queue mode, before: ${line(f)}`);
    checkDelivered(ctx.t, 'queue mode, before', f);
    return f;
  } finally {
    await c.stop();
  }
}

const row = (setup: string, node: string, f: Figures): ScalingRow => ({ setup, node, f });

async function main(): Promise<number> {
  const mode = process.argv[2] ?? 'queue';
  const t = new Tally();
  const sandbox = await startSandbox({ port: 0, config: SANDBOX_CONFIG });
  const ctx: Ctx = { t, sandbox, log: (text) => console.log(`        ${text}`) };
  const stops: Array<() => Promise<void>> = [];
  try {
    if (mode !== 'regular' && mode !== 'readme') {
      ctx.pg = await startPostgres();
      stops.push(ctx.pg.stop);
    }
    if (mode === 'regular') {
      await regularRun(ctx, false, true);
    } else if (mode === 'queue') {
      const redis = await startRedis();
      stops.push(redis.stop);
      await queueScenarios(ctx, redis, WORK);
    } else if (mode === 'load') {
      const redis = await startRedis();
      stops.push(redis.stop);
      await queueScenarios(ctx, redis, WORK, { onlyLoad: true });
    } else if (mode === 'readme') {
      // The README's figures block again from the committed BENCH.md's table (after a change of its wording).
      await writeReadmeBlock(parseTable(benchSection(BENCH_FILE) ?? ''));
    } else if (mode === 'before') {
      // Only the before rows (a look at the old node's figures; no file written).
      const redis = await startRedis();
      stops.push(redis.stop);
      await Promise.all([queueBefore(ctx, redis), regularRun(ctx, true, false)]);
    } else if (mode === 'bench') {
      const redis = await startRedis();
      stops.push(redis.stop);
      // Before: the queue cluster and the one process side by side (keys of their own; both wait on the plan).
      const [beforeQ, beforeR] = await Promise.all([queueBefore(ctx, redis), regularRun(ctx, true, false)]);
      const [afterQ, afterR] = await Promise.all([
        queueScenarios(ctx, redis, WORK, { onlyLoad: true }),
        regularRun(ctx, false, true),
      ]);
      if (!afterQ) throw new Error('the queue run measured nothing');
      const rows = [
        row('1 process', 'before', beforeR),
        row('1 process', 'after', afterR),
        row(`${WORKERS} workers x ${CONCURRENCY}`, 'before', beforeQ),
        row(`${WORKERS} workers x ${CONCURRENCY}`, 'after', afterQ),
      ];
      await writeScaling(rows, process.argv.includes('--write'));
    } else throw new Error(`unknown mode ${mode} (queue, load, regular or bench)`);
  } catch (error) {
    t.check(`shared store (${mode})`, 'the run completed', false, (error as Error).stack ?? String(error));
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await sandbox.close();
  }
  console.log(t.summary());
  return t.failed === 0 ? 0 : 1;
}

runSuite(main);
