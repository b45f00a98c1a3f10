// The shared store as the README sets it up, on the real programs (Debian's redis-server and webdis, apt-get when
// missing): n8n's queue Redis and DAPA's own Redis side by side, webdis started with the README's own webdis.json
// (parsed out of n8n-node/README.md; only the addresses and the log are put in). Through webdis a `bull:*` key of the
// queue can be neither read nor deleted, nor reached by SELECT or a script; and the credential's Test, run against
// this webdis, passes with the README's user and says what real webdis answers to a wrong password (403).
import type { ICredentialsDecrypted, ICredentialTestFunctions } from 'n8n-workflow';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testSharedStateCredential } from '../../n8n-node/nodes/DapaChecker/sharing/credentialTest';
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

jest.setTimeout(60_000);

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
    expect(await call(['MGET', JOB])).toEqual({ status: 200, body: '{"MGET":[null]}' });
    expect(await call(['DEL', JOB])).toEqual({ status: 200, body: '{"DEL":0}' });
    // Another database, every key, or the whole server: refused by the ACL.
    for (const args of [
      ['SELECT', 1],
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
