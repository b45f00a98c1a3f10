// The queue-mode scenarios of issue 35 on one cluster (main + 5 workers x 2; all on n8n 2.41.1, (a) on 2.8.4 too),
// each on an entry-plan key of its own and asserted on the sandbox's counts: (a) 40 overlapping executions sharing
// through webdis + Redis; (d) the same lists "an hour later" with Reuse Results For 24; (c) webdis stopped mid-run;
// a wrong address and wrong auth (and the right auth, with the ACL of the README's webdis.json); (b) a worker
// SIGKILLed holding claims.
import type { Started } from './sharedStore';
import {
  DAPA_REDIS_ARGS,
  readmeDapaRedisArgs,
  readmeWebdisAcl,
  redisCli,
  redisKeys,
  startRedis,
  startWebdis,
  type RunningWebdis,
} from './sharedStore';
import { footprint, killGroup, post, waitFor, workerCounts, type Cluster } from './cluster';
import { freePort } from './n8n';
import {
  checkDelivered,
  checkShared,
  dapaFlow,
  distinctOf,
  E2E_SIGNING_SECRET,
  line,
  overlappingLists,
  runLists,
  sharedCredential,
  type Figures,
} from './overlap';
import { clip } from './tally';
import { answerMac } from '../../../n8n-node/nodes/DapaChecker/keyedDigest';
import { QUEUE_EXECUTIONS, apiCredential, cluster, type Ctx } from './scaleSetup';

/** The issue's pace target for the 40 executions. */
export const PACE_FACTOR = 1.1;
const HOUR_MS = 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const AUTH = 'dapa:e2e-secret';
/** The user and password of the README's webdis.json, which the store's webdis is started with. */
const README_AUTH = readmeWebdisAcl().auth;

interface Flows {
  c: Cluster;
  url: (key: string, suffix?: string) => string;
}

const billedTwice = (ctx: Ctx, key: string) =>
  Object.entries(ctx.sandbox.sandbox.stats()[key]?.billedByDomain ?? {}).filter(([, n]) => n > 1);

/** (a) 40 executions of lists of 10 overlapping by half, posted at once. */
async function overlapping(ctx: Ctx, f: Flows): Promise<Figures> {
  const s = `queue mode, ${QUEUE_EXECUTIONS} overlapping executions sharing through webdis`;
  const figures = await runLists(
    ctx.sandbox,
    'scale-q',
    f.url('scale-q'),
    overlappingLists(QUEUE_EXECUTIONS, 'scale-q'),
  );
  ctx.log(`${s}: ${line(figures)}`);
  checkShared(ctx.t, s, figures, { factor: PACE_FACTOR });
  ctx.t.equal(s, 'no domain billed twice', billedTwice(ctx, 'scale-q'), []);
  return figures;
}

/**
 * (d) The same lists an hour later, with Reuse Results For 24: we cannot wait an hour, so the proof is (1) every
 * answer in Redis expires more than an hour from now (Reuse Results For 720 wrote them), (2) the answers' own check
 * times are moved an hour back in Redis (the TTL kept), and (3) the 40 executions again bill 0 and their items say
 * `reused`; the items served from Redis carry the hour-old `checked_at` (a worker also keeps answers in memory).
 */
async function anHourLater(ctx: Ctx, f: Flows, redis: Started, since: number): Promise<void> {
  const s = 'queue mode, the same lists an hour later (Reuse Results For 24)';
  const keys = redisKeys(redis.port, 'dapa:*:r:*');
  const ttls = keys.map((k) => Number(redisCli(redis.port, ['PTTL', k])));
  ctx.t.check(
    s,
    `the ${keys.length} answers in Redis (one per distinct domain) all expire more than an hour from now`,
    keys.length >= 205 && ttls.every((ms) => ms > HOUR_MS),
    `${keys.length} keys, shortest PTTL ${Math.min(...ttls)} ms`,
  );
  let aged = 0;
  for (const key of keys) {
    const value = redisCli(redis.port, ['GET', key]);
    const moved = resign(key, ageBy(value, HOUR_MS, since));
    if (moved !== value) {
      redisCli(redis.port, ['SET', key, moved, 'KEEPTTL']);
      aged++;
    }
  }
  ctx.t.check(
    s,
    'every answer in Redis has a check time, moved an hour back',
    aged === keys.length,
    `${aged}`,
  );
  const lists = overlappingLists(QUEUE_EXECUTIONS, 'scale-q');
  const figures = await runLists(ctx.sandbox, 'scale-q', f.url('scale-q', '-24h'), lists);
  ctx.log(`${s}: ${line(figures)}`);
  checkDelivered(ctx.t, s, figures);
  ctx.t.equal(s, '0 credits', figures.billed, 0);
  const results = figures.answers.flatMap((a) => a.items).filter((i) => typeof i.site_da === 'number');
  ctx.t.check(
    s,
    'every item has its result, reused',
    results.length === figures.itemsIn && results.every((i) => i.reused === true),
    `${results.length} results, ${results.filter((i) => i.reused !== true).length} not reused`,
  );
  const old = results.filter((i) => Date.parse(String(i.checked_at)) <= Date.now() - HOUR_MS);
  ctx.t.check(
    s,
    'items served from Redis say they were checked an hour ago',
    old.length > 0,
    `${old.length}`,
  );
}

/** A stored answer signed again with the suite's Signing Secret (as the node would have, an hour ago). */
function resign(key: string, value: string): string {
  const kept = JSON.parse(value) as { record: unknown; checkedAt: number };
  const domain = key.slice(key.indexOf(':r:') + 3);
  const mac = answerMac(E2E_SIGNING_SECRET, domain, kept.checkedAt, JSON.stringify(kept.record));
  return JSON.stringify({ ...kept, mac });
}

/** A stored answer with every check time after `since` (ms or ISO) moved `by` ms back; unchanged if none. */
export function ageBy(value: string, by: number, since: number): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return value;
  }
  const move = (v: unknown): unknown => {
    if (typeof v === 'number' && v >= since - 60_000 && v <= Date.now() + 60_000) return v - by;
    if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v)) {
      const ms = Date.parse(v);
      if (ms >= since - 60_000 && ms <= Date.now() + 60_000) return new Date(ms - by).toISOString();
    }
    if (Array.isArray(v)) return v.map(move);
    if (typeof v === 'object' && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, move(x)]));
    return v;
  };
  const out = JSON.stringify(move(parsed));
  return out === JSON.stringify(parsed) ? value : out;
}

/** (c) webdis stopped once the key's first minute is billed: every item still ends, and says the store failed. */
async function storeDown(ctx: Ctx, f: Flows, webdis: RunningWebdis): Promise<void> {
  const s = 'queue mode, webdis stopped mid-run';
  const lists = overlappingLists(10, 'scale-down', 20);
  const billed = () => ctx.sandbox.sandbox.stats()['scale-down']?.billed ?? 0;
  const running = runLists(ctx.sandbox, 'scale-down', f.url('scale-down'), lists);
  await waitFor('the first minute billed on scale-down', () => billed() >= 60, 5 * 60_000);
  const stoppedAt = Date.now();
  await webdis.stop();
  ctx.log(`${s}: webdis stopped after ${billed()} billed`);
  const figures = await running;
  ctx.log(`${s}: ${line(figures)}`);
  checkDelivered(ctx.t, s, figures);
  const after = figures.answers.filter((a) => a.at > stoppedAt);
  const says = (i: Record<string, unknown>) => /could not be reached/.test(String(i.shared_store ?? ''));
  const told = after.filter((a) => a.items.length > 0 && a.items.every(says));
  const partly = after.filter((a) => a.items.some(says) && !a.items.every(says));
  ctx.log(
    `${s}: ${told.length} of the ${after.length} executions still running when webdis stopped say so (the others needed nothing more from it)`,
  );
  ctx.t.check(
    s,
    'the executions that met the stopped store say on every item that the shared store could not be reached (shared_store), and at least one did',
    told.length > 0 && partly.length === 0,
    `${told.length} say it on every item, ${partly.length} on some items only`,
  );
}

/** A wrong address, wrong auth and the right auth: one execution of 10 each. */
async function badInput(ctx: Ctx, f: Flows, redis: Started): Promise<void> {
  const cases: Array<[string, string, RegExp | undefined]> = [
    ['scale-addr', 'a Webdis URL where nothing listens', /could not be reached/],
    ['scale-auth', 'a wrong password', /refused/],
    ['scale-authok', 'the right user and password (the README ACL)', undefined],
  ];
  await Promise.all(
    cases.map(async ([key, what, says]) => {
      const s = `queue mode, ${what}`;
      const figures = await runLists(ctx.sandbox, key, f.url(key), overlappingLists(1, key));
      ctx.log(`${s}: ${line(figures)}`);
      checkDelivered(ctx.t, s, figures);
      ctx.t.equal(s, 'every domain checked, once (10 billed)', figures.billed, 10);
      const notes = figures.answers[0].items.map((i) => String(i.shared_store ?? ''));
      ctx.t.check(
        s,
        says
          ? `every item says why the shared store failed (${says.source})`
          : 'no item says the store failed',
        says ? notes.every((n) => says.test(n)) : notes.every((n) => n === ''),
        clip(notes.slice(0, 2)),
      );
    }),
  );
  const domains = [...distinctOf(overlappingLists(1, 'scale-authok'))];
  const stored = redisKeys(redis.port, 'dapa:*:r:*').filter((k) =>
    domains.some((d) => k.endsWith(`:r:${d}`)),
  );
  ctx.t.equal('queue mode, the right auth', 'its 10 answers are in Redis', stored.length, 10);
}

/**
 * (b) A worker SIGKILLed while it holds claims: the key's minute is spent first, so an execution claims its 10
 * domains and waits for the window; its worker is killed; another execution of the same list then waits for the
 * leases to run out and checks them: nothing lost, nothing billed twice.
 */
async function workerKilled(ctx: Ctx, f: Flows, redis: Started): Promise<void> {
  const s = 'queue mode, a worker killed while holding claims';
  const prime = overlappingLists(12, 'scale-kill-prime').map((l) => l.slice(0, 5)); // 60 distinct
  const primed = await Promise.all(prime.map((items) => post(f.url('scale-kill'), items)));
  ctx.log(`${s}: the minute spent (${ctx.sandbox.sandbox.stats()['scale-kill']?.billed} billed)`);
  const list = overlappingLists(1, 'scale-kill')[0];
  const domains = [...distinctOf([list])];
  const claimed = () =>
    redisKeys(redis.port, 'dapa:*:c:*').filter((k) => domains.some((d) => k.endsWith(`:c:${d}`)));
  const busy = () => f.c.workers.filter((w) => workerCounts(w).started > workerCounts(w).finished);
  const victimCall = post(f.url('scale-kill'), list, 4 * 60_000);
  await waitFor('the 10 claims in Redis', () => claimed().length === domains.length, 30_000);
  const victims = busy();
  ctx.t.check(
    s,
    'one worker runs the execution holding the 10 claims',
    victims.length === 1,
    `${victims.length}`,
  );
  // A claim holds while its owner's heartbeat (`o:<owner>`) lives: that is the lease left.
  const leases = claimed().map((k) => {
    const owner = redisCli(redis.port, ['GET', k]);
    return Number(redisCli(redis.port, ['PTTL', k.replace(/:c:.*$/, `:o:${owner}`)]));
  });
  const killedAt = Date.now();
  killGroup(victims[0]);
  ctx.log(
    `${s}: SIGKILLed worker pid ${victims[0].pid} holding ${leases.length} claims (leases ${Math.min(...leases)}-${Math.max(...leases)} ms left)`,
  );
  const retry = await runLists(ctx.sandbox, 'scale-kill', f.url('scale-kill'), [list]);
  ctx.log(
    `${s}: the next execution: ${line(retry)} (answered ${((Date.now() - killedAt) / 1000).toFixed(0)} s after the kill)`,
  );
  const victim = await Promise.race([victimCall, sleep(30_000).then(() => undefined)]);
  ctx.log(
    `${s}: the killed execution's call: ${victim ? `answered ${victim.status} after ${(victim.ms / 1000).toFixed(0)} s` : 'no answer 30 s after the next execution (left to n8n)'}`,
  );
  checkDelivered(ctx.t, s, retry);
  ctx.t.equal(
    s,
    "the dead worker's claims ran out (none left once the next execution is done)",
    claimed(),
    [],
  );
  ctx.t.check(
    s,
    'the priming executions all answered',
    primed.every((a) => a.status === 200),
  );
  ctx.t.equal(s, 'the next execution checks the 10 domains the dead worker claimed', retry.billed, 10);
  ctx.t.equal(s, 'no domain billed twice', billedTwice(ctx, 'scale-kill'), []);
}

/**
 * Starts DAPA's own Redis (apart from `redis`, n8n's queue, as the README sets it up), the webdis instances in front
 * of it (the README's webdis.json) and the cluster, runs the scenarios; returns (a)'s figures.
 */
export async function queueScenarios(
  ctx: Ctx,
  redis: Started,
  work: string,
  opts: { onlyLoad?: boolean } = {},
): Promise<Figures | undefined> {
  const stops: Array<() => Promise<void>> = [];
  const started = Date.now();
  try {
    const readmeArgs = readmeDapaRedisArgs();
    const store = await startRedis(readmeArgs instanceof Error ? DAPA_REDIS_ARGS : readmeArgs);
    stops.push(store.stop);
    const webdis = await startWebdis({ redisPort: store.port, dir: work, name: 'webdis' });
    stops.push(webdis.stop);
    const down = await startWebdis({ redisPort: store.port, dir: work, name: 'webdis-down' });
    stops.push(down.stop);
    const authed = await startWebdis({
      redisPort: store.port,
      dir: work,
      name: 'webdis-auth',
      basicAuth: AUTH,
    });
    stops.push(authed.stop);
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const shared = sharedCredential('store', 'webdis', webdis.url, README_AUTH);
    const stores = {
      'scale-q': shared,
      'scale-kill': shared,
      'scale-down': sharedCredential('store-down', 'webdis (stopped mid-run)', down.url, README_AUTH),
      'scale-addr': sharedCredential('store-addr', 'webdis (wrong address)', nowhere),
      'scale-auth': sharedCredential('store-auth', 'webdis (wrong auth)', authed.url, `${AUTH}-wrong`),
      'scale-authok': sharedCredential('store-authok', 'webdis (auth)', authed.url, AUTH),
    };
    const keys = (opts.onlyLoad ? ['scale-q'] : Object.keys(stores)) as Array<keyof typeof stores>;
    const apis = keys.map((k) => apiCredential(k, ctx.sandbox.url));
    const workflows = keys.map((k, i) =>
      dapaFlow({ id: `scaleQ${i}`, path: k, api: apis[i], shared: stores[k] }),
    );
    if (!opts.onlyLoad)
      workflows.push(
        dapaFlow({
          id: 'scaleQ24h',
          path: 'scale-q-24h',
          api: apis[0],
          shared,
          reuseResultsHours: 24,
        }),
      );
    const creds = [...apis, ...new Set(keys.map((k) => stores[k]))];
    const c = await cluster(ctx, 'queue', workflows, creds, { redis });
    stops.unshift(c.stop);
    const f: Flows = { c, url: (key, suffix = '') => `${c.base}/${key}${suffix}` };
    ctx.log(`queue cluster at rest: ${footprint(c).text}`);
    let peak = footprint(c);
    const sampler = setInterval(() => {
      const now = footprint(c);
      if (now.mb > peak.mb) peak = now;
    }, 5000);
    const a = await overlapping(ctx, f).finally(() => clearInterval(sampler));
    ctx.log(`queue cluster at its largest during the 40 executions: ${peak.text}`);
    if (opts.onlyLoad) return a;
    await anHourLater(ctx, f, store, started);
    await Promise.all([storeDown(ctx, f, down), badInput(ctx, f, store)]);
    await workerKilled(ctx, f, store);
    return a;
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}
