// Executions on different n8n workers sharing one key through Redis over HTTP (webdis; here a stand-in speaking its
// URL protocol, the end-to-end tests run the real ones): each distinct domain billed once across workers, one Limit
// Exceeded in all, answers reused from the store, a claim whose worker died awaited until its lease runs out, a store
// that fails mid-run or from the start falls back to the process (every item says so), and the credential's Test
// says which of address, auth or command is wrong. A second worker is the node's code loaded again in isolation
// (its own module state, as in another process).
import { createHash } from 'node:crypto';
import type { ICredentialsDecrypted, ICredentialTestFunctions, INodeType } from 'n8n-workflow';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { storeNamespace } from '../../n8n-node/nodes/DapaChecker/keyedDigest';
import { testSharedStateCredential } from '../../n8n-node/nodes/DapaChecker/sharing/credentialTest';
import { metricsFor } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import { anotherWorker, createExecuteContext, useSandboxServer } from './executeContext';
import { startFakeWebdis, STORE_TEST_SECRET, type FakeWebdis } from './fakeWebdis';

jest.setTimeout(30_000);

let server: RunningSandbox;
useSandboxServer((s) => (server = s));
let webdis: FakeWebdis;
beforeEach(async () => {
  webdis = await startFakeWebdis({ auth: 'dapa:secret' });
});
afterEach(async () => {
  await webdis.close();
});

type NodeClass = new () => INodeType;

const overlapping = (i: number) => Array.from({ length: 10 }, (_v, j) => ({ url: `w${5 * i + j}.com` }));

async function execute(
  Node: NodeClass,
  items: Array<{ url: string }>,
  state: Record<string, string> | null = {
    url: webdis.url,
    user: 'dapa',
    password: 'secret',
    secret: STORE_TEST_SECRET,
  },
  options = {},
) {
  const sharedState = state ?? undefined;
  const double = createExecuteContext({
    items,
    credentials: { apiKey: 'sandbox-basic', environment: 'custom', baseUrl: server.url },
    shareAcrossWorkers: state !== null,
    sharedState,
    options,
  });
  const [results, skipped] = (await new Node().execute!.call(double.context)) as [
    Array<{ json: Record<string, unknown> }>,
    Array<{ json: Record<string, unknown> }>,
  ];
  return { results, skipped, sent: double.sent, storeSent: double.storeSent };
}

const prefix = () => storeNamespace(STORE_TEST_SECRET, server.url, 'sandbox-basic');

describe('executions on different workers, through the shared store', () => {
  test('overlapping lists on two workers: each distinct domain billed once, one Limit Exceeded, nothing lost', async () => {
    const workers = [DapaChecker, anotherWorker()];
    const lists = Array.from({ length: 6 }, (_v, i) => overlapping(i));
    const runs = await Promise.all(lists.map((items, i) => execute(workers[i % 2], items)));
    const stats = server.sandbox.stats()['sandbox-basic'];
    expect(stats.billed).toBe(35);
    expect(Object.values(stats.billedByDomain).every((times) => times === 1)).toBe(true);
    expect(stats.responsesByStatus['422']).toBe(1);
    runs.forEach((run, i) => {
      expect(run.skipped).toEqual([]);
      expect(run.results.map((item) => item.json.url)).toEqual(lists[i].map((item) => item.url));
      for (const item of run.results) {
        expect(item.json).toMatchObject(metricsFor(String(item.json.url)));
        expect(item.json.shared_store).toBeUndefined();
      }
    });
    // The store holds digests and domains, never the key.
    expect(webdis.keys().every((key) => key.startsWith(`${prefix()}:`))).toBe(true);
    expect(JSON.stringify(webdis.commands)).not.toContain('sandbox-basic');
  });

  test('a list checked on one worker costs another worker nothing, from the store', async () => {
    const items = overlapping(0);
    await execute(DapaChecker, items);
    const other = await execute(anotherWorker(), items);
    expect(other.sent).toEqual([]);
    expect(other.results.every((item) => item.json.reused === true)).toBe(true);
    expect(server.sandbox.stats()['sandbox-basic'].billed).toBe(10);
  });

  test('a domain claimed by a worker that died is checked once its heartbeat runs out', async () => {
    webdis.set(`${prefix()}:c:gone.com`, 'a-dead-worker', 3_600_000);
    webdis.set(`${prefix()}:o:a-dead-worker`, '1', 1500);
    const run = await execute(anotherWorker(), [{ url: 'gone.com' }, { url: 'here.com' }]);
    expect(run.results.map((item) => [item.json.domain, item.json.reused])).toEqual([
      ['gone.com', false],
      ['here.com', false],
    ]);
    const stats = server.sandbox.stats()['sandbox-basic'];
    expect(stats.billedByDomain).toEqual({ 'gone.com': 1, 'here.com': 1 });
    expect(run.sent).toHaveLength(2); // here.com at once; gone.com after the heartbeat
    expect(webdis.get(`${prefix()}:c:gone.com`)).toBeUndefined();
  });

  test('a store that cannot be reached: the process shares, every item says so, nothing lost', async () => {
    await webdis.close();
    const run = await execute(DapaChecker, [{ url: 'a.com' }, { url: 'nope' }]);
    expect(run.results).toHaveLength(1);
    expect(run.skipped).toHaveLength(1);
    for (const item of [...run.results, ...run.skipped])
      expect(item.json.shared_store).toMatch(
        /^The shared store \(webdis\) at http:\/\/127\.0\.0\.1:\d+ could not be reached \(.+\): this execution shared only within its n8n process\.$/,
      );
    webdis = await startFakeWebdis();
  });

  test('a store that refuses a command: the process shares from then on, and says which command', async () => {
    webdis.options.disabled = ['EVAL'];
    const run = await execute(DapaChecker, overlapping(2));
    expect(run.results).toHaveLength(10);
    expect(run.results[0].json.shared_store).toMatch(/refused the command EVAL \(HTTP 403\)/);
    expect(server.sandbox.stats()['sandbox-basic'].billed).toBe(10);
  });

  test('no plain digest of the key in Redis: its namespace is an HMAC with the Signing Secret', async () => {
    await execute(DapaChecker, [{ url: 'a.com' }]);
    const plain = createHash('sha256').update(`${server.url}\nsandbox-basic`).digest('hex').slice(0, 24);
    expect(webdis.keys().length).toBeGreaterThan(0);
    expect(webdis.keys().every((key) => key.startsWith(`${prefix()}:`) && !key.includes(plain))).toBe(true);
    // Another secret, another namespace: a store shared by two teams keeps them apart.
    expect(storeNamespace('another-signing-secret', server.url, 'sandbox-basic')).not.toBe(prefix());
  });

  test('an answer in Redis that does not verify (forged, or altered) is not reused: the domain is checked', async () => {
    await execute(DapaChecker, [{ url: 'a.com' }, { url: 'b.com' }]);
    const kept = JSON.parse(String(webdis.get(`${prefix()}:r:a.com`))) as Record<string, unknown>;
    webdis.set(`${prefix()}:r:a.com`, JSON.stringify({ ...kept, record: { domain: 'a.com', site_da: 99 } }));
    webdis.set(`${prefix()}:r:b.com`, JSON.stringify({ ...kept, mac: undefined }));
    const again = await execute(anotherWorker(), [{ url: 'a.com' }, { url: 'b.com' }]);
    expect(again.results.map((item) => [item.json.domain, item.json.reused])).toEqual([
      ['a.com', false],
      ['b.com', false],
    ]);
    expect(again.results[0].json).toMatchObject(metricsFor('a.com'));
    expect(server.sandbox.stats()['sandbox-basic'].billedByDomain).toEqual({ 'a.com': 2, 'b.com': 2 });
  });

  test('without Share Across Workers, the store is not used', async () => {
    const run = await execute(DapaChecker, [{ url: 'a.com' }], null);
    expect(run.storeSent).toEqual([]);
    expect(run.results[0].json.shared_store).toBeUndefined();
  });
});

describe('the DAPA Shared State API credential’s Test', () => {
  const test_ = async (data: Record<string, string>) =>
    await testSharedStateCredential.call(
      {} as ICredentialTestFunctions,
      {
        data,
      } as unknown as ICredentialsDecrypted,
    );

  test('passes when webdis answers and allows every command', async () => {
    const result = await test_({
      url: webdis.url,
      user: 'dapa',
      password: 'secret',
      secret: STORE_TEST_SECRET,
    });
    expect(result).toEqual({
      status: 'OK',
      message: 'Connection tested: webdis answers and allows every command the DAPA Checker node uses.',
    });
    expect(webdis.keys()).toEqual([]);
  });

  test('says the user or password is wrong (webdis answers 403 to its first command)', async () => {
    const result = await test_({
      url: webdis.url,
      user: 'dapa',
      password: 'wrong',
      secret: STORE_TEST_SECRET,
    });
    expect(result.status).toBe('Error');
    expect(result.message).toMatch(
      /refused PING \(HTTP 403\): the User or Password .* is wrong\. webdis answers 403 to every command when the User or Password is wrong/,
    );
  });

  test('says which command the ACL refuses (403)', async () => {
    webdis.options.disabled = ['SET'];
    const result = await test_({
      url: webdis.url,
      user: 'dapa',
      password: 'secret',
      secret: STORE_TEST_SECRET,
    });
    expect(result.status).toBe('Error');
    expect(result.message).toMatch(/refused the command SET \(HTTP 403\).*Allow the commands/);
  });

  test('says the Signing Secret is missing or too short', async () => {
    const result = await test_({ url: webdis.url, user: 'dapa', password: 'secret', secret: 'short' });
    expect(result).toEqual({
      status: 'Error',
      message:
        'The Signing Secret of the DAPA Shared State API credential must be at least 16 characters (it has 5); set the same one wherever the credential is used.',
    });
  });

  test('says the address cannot be reached, or is not webdis', async () => {
    const unreachable = await test_({ url: 'http://127.0.0.1:1', secret: STORE_TEST_SECRET });
    expect(unreachable.message).toMatch(/could not be reached .*Check the Webdis URL/);
    const notWebdis = await test_({ url: server.url, secret: STORE_TEST_SECRET });
    expect(notWebdis.message).toMatch(/did not answer like webdis \(HTTP 404 to PING\)/);
    const noScheme = await test_({ url: 'webdis:7379', secret: STORE_TEST_SECRET });
    expect(noScheme.message).toMatch(/must start with http:\/\/ or https:\/\//);
  });
});
