// The shared store as the README sets it up, on the real programs (Debian's redis-server and webdis, apt-get when
// missing): n8n's queue Redis and DAPA's own Redis side by side, webdis started with the README's own webdis.json
// (parsed out of n8n-node/README.md; only the addresses and the log are put in). Through webdis a `bull:*` key of the
// queue can be neither read nor deleted, nor reached by SELECT or a script; and the credential's Test, run against
// this webdis, passes with the README's user and says what real webdis answers to a wrong password (403). The node's
// Lua scripts run here on the real Redis (the unit tests' stand-in runs their JavaScript twins).
import type { ICredentialsDecrypted, ICredentialTestFunctions } from 'n8n-workflow';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DomainRecord } from '../../shared/index';
import { testSharedStateCredential } from '../../n8n-node/nodes/DapaChecker/sharing/credentialTest';
import { RedisShare } from '../../n8n-node/nodes/DapaChecker/sharing/redisShare';
import type { StoreHttp } from '../../n8n-node/nodes/DapaChecker/sharing/webdis';
import { STORE_TEST_NODE } from './fakeWebdis';
import { metricsFor } from '../sandbox/handler';
import {
  DAPA_REDIS_ARGS,
  readmeDapaRedisArgs,
  readmeWebdisAcl,
  readmeWebdisConfig,
  redisCli,
  startRedis,
  startWebdis,
  type RunningWebdis,
  type Started,
} from '../n8n-e2e/lib/sharedStore';

jest.setTimeout(120_000);

const readme = () =>
  readFileSync(path.join(__dirname, '../../n8n-node/README.md'), 'utf8').replace(/\s+/g, ' ');
/** A record as the service answers it (the sandbox's metrics for the domain). */
const sandboxRecord = (domain: string) => ({ domain, ...metricsFor(domain) }) as unknown as DomainRecord;

let queueRedis: Started;
let dapaRedis: Started;
let webdis: RunningWebdis;
const auth = readmeWebdisAcl().auth ?? '';
const JOB = 'bull:jobs:1';
const JOB_VALUE = '{"name":"a queued n8n execution"}';

beforeAll(async () => {
  queueRedis = await startRedis();
  const readmeArgs = readmeDapaRedisArgs();
  dapaRedis = await startRedis(readmeArgs instanceof Error ? DAPA_REDIS_ARGS : readmeArgs);
  const dir = mkdtempSync(path.join(tmpdir(), 'dapa-store-'));
  webdis = await startWebdis({ redisPort: dapaRedis.port, dir, name: 'webdis' });
  redisCli(queueRedis.port, ['SET', JOB, JOB_VALUE]);
});
afterAll(async () => {
  await webdis?.stop();
  await dapaRedis?.stop();
  await queueRedis?.stop();
});

/** One command through webdis, with the README's user and password unless told otherwise. */
async function call(args: Array<string | number>, user = auth): Promise<{ status: number; body: string }> {
  const url = `${webdis.url}/${args.map((a) => encodeURIComponent(String(a))).join('/')}.json`;
  const response = await fetch(url, {
    headers: { Authorization: `Basic ${Buffer.from(user).toString('base64')}` },
  });
  return { status: response.status, body: await response.text() };
}

describe("the README's webdis.json keeps DAPA apart from n8n's queue", () => {
  test("it points webdis at DAPA's own Redis (dapa-redis), never the queue's, and asks for a user", () => {
    const config = readmeWebdisConfig();
    expect(config.redis_host).toBe('dapa-redis');
    expect(config.acl[0]).toEqual({ disabled: ['*'] });
    expect(auth).toMatch(/^[^:]+:.+$/);
  });

  test("the Compose file's dapa-redis is bounded (256 MB, least recently used keys evicted)", () => {
    expect(readmeDapaRedisArgs()).toEqual(DAPA_REDIS_ARGS);
  });

  test("DAPA's Redis, started as the README says, is bounded, and evicts only its own keys", () => {
    expect(redisCli(dapaRedis.port, ['CONFIG', 'GET', 'maxmemory'])).toBe(`maxmemory\n${256 * 1024 * 1024}`);
    expect(redisCli(dapaRedis.port, ['CONFIG', 'GET', 'maxmemory-policy'])).toBe(
      'maxmemory-policy\nallkeys-lru',
    );
  });

  test('through webdis a bull:* key of the queue can be neither read nor deleted', async () => {
    expect(await call(['GET', JOB])).toEqual({ status: 200, body: '{"GET":null}' });
    expect(await call(['DEL', JOB])).toEqual({ status: 200, body: '{"DEL":0}' });
    // Another database, every key, or the whole server: refused by the ACL.
    for (const args of [
      ['SELECT', 1],
      ['MGET', JOB],
      ['KEYS', '*'],
      ['SCAN', 0],
      ['FLUSHALL'],
      ['FLUSHDB'],
      ['CONFIG', 'GET', '*'],
    ])
      expect((await call(args)).status).toBe(403);
    // A script runs on DAPA's Redis only: the queue's key is not there either, in any database.
    const script =
      "local n = 0 for db = 0, 15 do redis.call('select', db) n = n + redis.call('del', KEYS[1]) end return n";
    expect(await call(['EVAL', script, 1, JOB])).toEqual({ status: 200, body: '{"EVAL":0}' });
    expect(redisCli(queueRedis.port, ['GET', JOB])).toBe(JOB_VALUE);
  });

  test('without the user and password, webdis refuses every command with 403', async () => {
    expect((await call(['PING'], '')).status).toBe(403);
    expect((await call(['GET', 'x'], 'dapa:wrong')).status).toBe(403);
  });
});

describe("the credential's Test against the real webdis", () => {
  const run = async (data: Record<string, string>) =>
    await testSharedStateCredential.call(
      {} as ICredentialTestFunctions,
      { data } as unknown as ICredentialsDecrypted,
    );
  const [user, password] = auth.split(':');

  test("passes with the README's user and password, and leaves no key behind", async () => {
    expect(await run({ url: webdis.url, user, password, secret: 'a-signing-secret' })).toEqual({
      status: 'OK',
      message: 'Connection tested: webdis answers and allows every command the DAPA Checker node uses.',
    });
    expect(redisCli(dapaRedis.port, ['DBSIZE'])).toBe('0');
  });

  test('says the password is wrong, in the words of what webdis answers (403)', async () => {
    const result = await run({ url: webdis.url, user, password: 'wrong', secret: 'a-signing-secret' });
    expect(result.status).toBe('Error');
    expect(result.message).toMatch(/refused PING \(HTTP 403\): the User or Password .* is wrong/);
  });
});

describe("the node's scripts on the real Redis, through the README's webdis", () => {
  const [user, password] = auth.split(':');
  const http: StoreHttp = async (url) => {
    const response = await fetch(url, {
      headers: { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    });
    return { status: response.status, body: await response.text() };
  };
  const store = (secret = 'a-signing-secret-for-real') =>
    new RedisShare(STORE_TEST_NODE, http, webdis.url, 'dapa:real', secret);
  const record = (domain: string) => ({ domain, site_da: 10 }) as unknown as DomainRecord;

  test('claims, a heartbeat, signed answers and owner-checked release, one call a batch', async () => {
    const a = store();
    const b = store();
    const now = Date.now();
    const domains = Array.from({ length: 450 }, (_v, i) => `real${i}.org`);
    const first = await a.claim(domains.slice(0, 300), 'owner-a', now, 60_000);
    expect([...first.values()].every((r) => r === 'mine')).toBe(true);
    // Another execution: the first 300 are busy (owner-a's heartbeat lives), the rest its own.
    const second = await b.claim(domains.slice(150), 'owner-b', now, 60_000);
    expect(domains.slice(150, 300).every((d) => second.get(d) === 'busy')).toBe(true);
    expect(domains.slice(300).every((d) => second.get(d) === 'mine')).toBe(true);
    // owner-a answers 10: kept, signed, its claims freed; owner-b finds them answered.
    await a.publish(
      domains.slice(150, 160).map((d) => [d, { record: record(d), checkedAt: now }]),
      'owner-a',
      3_600_000,
    );
    expect(redisCli(dapaRedis.port, ['EXISTS', 'dapa:real:c:real150.org'])).toBe('0');
    const found = await b.claim(domains.slice(150, 161), 'owner-b', now, 60_000);
    expect(found.get('real150.org')).toEqual({ record: record('real150.org'), checkedAt: now });
    expect(found.get('real160.org')).toBe('busy');
    // Read with another Signing Secret, the answers do not verify: not reused, the domains claimed instead.
    const other = await store('another-secret-entirely').claim(['real151.org'], 'owner-c', now, 60_000);
    expect(other.get('real151.org')).toBe('mine');
    // Release is owner-checked: owner-b cannot free owner-a's claims; owner-a's end frees them and its heartbeat.
    await b.release(domains.slice(200, 210), 'owner-b', new Map());
    expect(redisCli(dapaRedis.port, ['GET', 'dapa:real:c:real200.org'])).toBe('owner-a');
    await a.release(domains.slice(160, 300), 'owner-a', new Map([['real0.org', 'owner-b']]));
    expect(redisCli(dapaRedis.port, ['EXISTS', 'dapa:real:c:real200.org'])).toBe('0');
    expect(redisCli(dapaRedis.port, ['GET', 'dapa:real:c:real0.org'])).toBe('owner-b');
    expect(redisCli(dapaRedis.port, ['EXISTS', 'dapa:real:o:owner-a'])).toBe('0');
    // Its heartbeat gone, owner-a's last claims are anyone's.
    const taken = await b.claim(['real1.org'], 'owner-b', now, 60_000);
    expect(taken.get('real1.org')).toBe('mine');
  });

  test('the minute and the requests in flight: reserve, flush and the plan, read back as one window', async () => {
    const a = store();
    const now = Date.now();
    expect(await a.reserve(`w1:1:5:${now}`, now)).toEqual([]);
    expect(await a.reserve(`w2:1:7:${now}`, now)).toEqual([5]);
    await a.flush([[now, 5]], [`w1:1:5:${now}`]);
    expect(await a.flightBefore(`w2:1:7:${now}`, now)).toEqual([]);
    const limit = { value: 60, exact: true, at: now };
    await a.keepPlan({ v: 1, at: now, sends: [], limits: { urlsPerMinute: limit } });
    const window = await a.window(now);
    expect(window?.sends).toEqual([[now, 5]]);
    expect(window?.limits.urlsPerMinute).toMatchObject({ value: 60, exact: true });
  });
});

describe('what DAPA keeps in its Redis, and what eviction costs', () => {
  const [user, password] = auth.split(':');
  const http: StoreHttp = async (url) => {
    const response = await fetch(url, {
      headers: { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    });
    return { status: response.status, body: await response.text() };
  };
  const domains = (n: number, tag: string) => Array.from({ length: n }, (_v, i) => `${tag}-${i}.example.org`);
  const answer = (domain: string) => ({ record: sandboxRecord(domain), checkedAt: Date.now() });

  test("bytes per kept domain, measured on the real Redis, are the README's", async () => {
    const store = new RedisShare(
      STORE_TEST_NODE,
      http,
      webdis.url,
      'dapa:0123456789abcdef01234567',
      'bytes-secret',
    );
    const kept = domains(2000, 'kept');
    await store.publish(
      kept.map((d) => [d, answer(d)]),
      'owner',
      720 * 3600_000,
    );
    let bytes = 0;
    for (const d of kept.slice(0, 200))
      bytes += Number(redisCli(dapaRedis.port, ['MEMORY', 'USAGE', `dapa:0123456789abcdef01234567:r:${d}`]));
    const perDomain = bytes / 200;
    const perBound = Math.floor((256 * 1024 * 1024) / perDomain / 1000) * 1000;
    console.log(
      `${Math.round(perDomain)} bytes per kept domain (MEMORY USAGE of its answer): about ${perBound} in 256 MB`,
    );
    const stated = /about (\d+) bytes of Redis per kept domain/.exec(readme())?.[1];
    expect(Number(stated)).toBeGreaterThan(0);
    // Within 15 % of the README's figure (the allocator rounds sizes; a change in what is kept moves it more).
    expect(Math.abs(perDomain - Number(stated)) / Number(stated)).toBeLessThan(0.15);
    const fit = Math.round((256 * 1024 * 1024) / Number(stated) / 100_000) * 100_000;
    expect(readme()).toContain(`about ${fit.toLocaleString('en-US')} domains fit in 256 MB`);
  });

  test('a full Redis evicts old answers: writes go on, an evicted answer is only checked again', async () => {
    const small = await startRedis(['--maxmemory', '2mb', '--maxmemory-policy', 'allkeys-lru']);
    const dir = mkdtempSync(path.join(tmpdir(), 'dapa-store-'));
    const smallWebdis = await startWebdis({ redisPort: small.port, dir, name: 'webdis-small' });
    try {
      const store = new RedisShare(STORE_TEST_NODE, http, smallWebdis.url, 'dapa:small', 'evict-secret');
      const all = domains(12_000, 'many');
      await store.publish(
        all.map((d) => [d, answer(d)]),
        'owner',
        720 * 3600_000,
      );
      expect(Number(redisCli(small.port, ['DBSIZE']))).toBeLessThan(all.length);
      // Claimed again: each domain is either its kept answer (reused) or, evicted, claimed to be checked once more.
      const replies = await store.claim(all, 'next', Date.now(), 720 * 3600_000);
      const reused = [...replies.values()].filter((r) => typeof r === 'object').length;
      const again = [...replies.values()].filter((r) => r === 'mine').length;
      console.log(
        `2 MB Redis, 12,000 answers written: ${reused} kept and reused, ${again} evicted (one more credit each)`,
      );
      expect(replies.size).toBe(all.length);
      expect(reused + again).toBe(all.length);
      expect(again).toBeGreaterThan(0);
    } finally {
      await smallWebdis.stop();
      await small.stop();
    }
  });
});
