// Executions of one key that run at the same time, in one n8n process: each distinct domain is billed once, the
// plan's per-request maximum is learned once, a domain another execution is checking is awaited at no credit, an
// execution that fails or is cancelled hands its domains back, answers are reused for "Reuse Results For" and no
// longer, and what the process keeps is bounded.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { processKey } from '../../n8n-node/nodes/DapaChecker/keyedDigest';
import {
  claim,
  MAX_ANSWERS,
  MAX_KEYS,
  publish,
  release,
  shareOf,
} from '../../n8n-node/nodes/DapaChecker/sharing/registry';
import { LEASE_MS, SENDS_KEPT } from '../../n8n-node/nodes/DapaChecker/sharing/redisShare';
import { STORE_CALL_BUDGET_MS } from '../../n8n-node/nodes/DapaChecker/sharing/open';
import { metricsFor } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import { createExecuteContext, useSandboxServer, type ContextSetup } from './executeContext';
import { startHeldService, type HeldService } from './heldService';

let server: RunningSandbox;
useSandboxServer((s) => (server = s));

const pairedIndex = (item: INodeExecutionData) => (item.pairedItem as { item: number }).item;

/** Ten domains, the second half shared with the next list: list i holds d(5i) .. d(5i + 9). */
const overlapping = (i: number) => Array.from({ length: 10 }, (_v, j) => ({ url: `d${5 * i + j}.com` }));

async function execute(setup: Partial<ContextSetup> & { items: IDataObject[] }, baseUrl = server.url) {
  const double = createExecuteContext({
    credentials: { apiKey: 'sandbox-basic', environment: 'custom', baseUrl },
    ...setup,
  });
  const [results, skipped] = await new DapaChecker().execute.call(double.context);
  return { results, skipped, sent: double.sent };
}

/** Polls a condition of the process's state (not a timing): a step of another execution has happened. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

describe('executions of one key in one process', () => {
  test('overlapping lists started together: each distinct domain billed once, one Limit Exceeded, nothing lost', async () => {
    const lists = Array.from({ length: 6 }, (_v, i) => overlapping(i));
    const runs = await Promise.all(lists.map((items) => execute({ items })));
    const stats = server.sandbox.stats()['sandbox-basic'];
    const distinct = new Set(lists.flat().map((item) => item.url));
    expect(distinct.size).toBe(35);
    expect(stats.billed).toBe(35);
    expect(Object.values(stats.billedByDomain).every((times) => times === 1)).toBe(true);
    expect(stats.responsesByStatus['422']).toBe(1); // the first learns the maximum; the others wait for it
    runs.forEach((run, i) => {
      expect(run.skipped).toEqual([]);
      expect(run.results.map(pairedIndex)).toEqual(lists[i].map((_item, j) => j));
      for (const item of run.results) {
        expect(item.json).toMatchObject({
          ...metricsFor(String(item.json.url)),
          checked_at: expect.any(String),
        });
        expect(item.json.shared_store).toBeUndefined();
      }
    });
    // What one execution was billed for is fresh there and reused by the others (0 credits to them).
    const fresh = runs.flatMap((run) => run.results.filter((item) => item.json.reused === false));
    expect(fresh).toHaveLength(35);
    expect(new Set(fresh.map((item) => item.json.url)).size).toBe(35);
  });

  test('an answer is reused for Reuse Results For, at no request; 0 reuses nothing', async () => {
    const items = overlapping(0);
    await execute({ items });
    const again = await execute({ items });
    expect(again.sent).toEqual([]);
    expect(again.results.every((item) => item.json.reused === true)).toBe(true);
    const fresh = await execute({ items, options: { reuseResultsHours: 0 } });
    expect(fresh.results.every((item) => item.json.reused === false)).toBe(true);
    expect(server.sandbox.stats()['sandbox-basic'].billed).toBe(20);
  });

  test('an answer older than Reuse Results For is checked again', async () => {
    const items = overlapping(1);
    const realNow = Date.now.bind(Date);
    await execute({ items });
    const later = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 2 * 3600_000);
    try {
      const twoHoursOn = await execute({ items, options: { reuseResultsHours: 1 } });
      expect(twoHoursOn.results.every((item) => item.json.reused === false)).toBe(true);
      const kept = await execute({ items, options: { reuseResultsHours: 3 } });
      expect(kept.results.every((item) => item.json.reused === true)).toBe(true);
    } finally {
      later.mockRestore();
    }
    expect(server.sandbox.stats()['sandbox-basic'].billed).toBe(20);
  });
});

describe('a domain another execution is checking', () => {
  let held: HeldService;
  beforeEach(async () => {
    held = await startHeldService();
  });
  afterEach(async () => {
    await held.close();
  });

  const items = ['a.com', 'b.com', 'c.com'].map((url) => ({ url }));
  const options = { maxUrlsPerRequest: 5 };
  const share = () => shareOf(processKey(held.url, 'sandbox-basic'));
  const waitersOf = (key: string) => share().claims.get(key)?.waiters.length ?? 0;

  test('is awaited, not sent again, and costs the waiting execution nothing', async () => {
    const first = execute({ items, options }, held.url);
    const request = await held.next();
    const second = execute({ items, options }, held.url);
    await until(() => waitersOf('c.com') === 1);
    request.answer();
    const [a, b] = await Promise.all([first, second]);
    expect(b.sent).toEqual([]);
    expect(b.results.map((item) => [item.json.domain, item.json.reused])).toEqual([
      ['a.com', true],
      ['b.com', true],
      ['c.com', true],
    ]);
    expect(a.results.map((item) => item.json.reused)).toEqual([false, false, false]);
    expect(b.results.map((item) => item.json.checked_at)).toEqual(
      a.results.map((item) => item.json.checked_at),
    );
    expect(held.sandbox.stats()['sandbox-basic'].billed).toBe(3);
  });

  test('is handed back when that execution fails: the waiting one checks it, billed once', async () => {
    const first = execute({ items, options }, held.url);
    const failed = expect(first).rejects.toThrow(/Plan expired/);
    const request = await held.next();
    const second = execute({ items, options }, held.url);
    await until(() => waitersOf('a.com') === 1);
    request.refuse(401, JSON.stringify({ error: 'you are not premium for this request' }));
    await failed;
    const retry = await held.next();
    expect(retry.urls).toEqual(['a.com', 'b.com', 'c.com']);
    retry.answer();
    const b = await second;
    expect(b.results.map((item) => [item.json.domain, item.json.reused])).toEqual([
      ['a.com', false],
      ['b.com', false],
      ['c.com', false],
    ]);
    expect(held.sandbox.stats()['sandbox-basic'].billed).toBe(3);
  });

  test('is handed back when that execution is cancelled: nothing lost, none billed twice', async () => {
    const cancel = new AbortController();
    const first = execute({ items, options, cancelSignal: cancel.signal }, held.url);
    await held.next(); // never answered: the cancelled request is dropped
    const second = execute({ items, options }, held.url);
    await until(() => waitersOf('b.com') === 1);
    cancel.abort();
    const a = await first;
    expect(a.results).toEqual([]);
    expect(a.skipped.map((item) => item.json.reason)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    const retry = await held.next();
    retry.answer();
    const b = await second;
    expect(b.results.map((item) => item.json.domain)).toEqual(['a.com', 'b.com', 'c.com']);
    expect(held.sandbox.stats()['sandbox-basic'].billed).toBe(3);
  });

  test('is awaited only within the waiting execution’s own time limit', async () => {
    const first = execute({ items, options }, held.url);
    const request = await held.next();
    const second = await execute({ items, options: { ...options, timeLimitSeconds: 1 } }, held.url);
    expect(second.sent).toEqual([]);
    expect(second.skipped.map((item) => item.json.reason)).toEqual([
      'unfinished',
      'unfinished',
      'unfinished',
    ]);
    request.answer();
    expect((await first).results).toHaveLength(3);
  });
});

describe('what the process keeps', () => {
  test('answers are bounded per key (the oldest go first) and keys are bounded', () => {
    const share = shareOf('bounded-test');
    const record = { domain: 'x', site_da: 1, site_pa: 1, site_mr: 1, spam_score: 1 };
    for (let i = 0; i < MAX_ANSWERS + 10; i++)
      publish(
        share,
        `k${i}.com`,
        { record: { ...record, domain: `k${i}.com` }, checkedAt: 1 },
        'o',
        3600_000,
      );
    expect(share.answers.size).toBe(MAX_ANSWERS);
    expect(share.answers.has('k0.com')).toBe(false);
    expect(share.answers.has(`k${MAX_ANSWERS + 9}.com`)).toBe(true);
    for (let i = 0; i < MAX_KEYS + 5; i++) shareOf(`other-${i}`);
    expect(shareOf('bounded-test')).not.toBe(share);
  });

  test('a claim handed back goes to the first waiter only; the others wait for it', () => {
    const share = shareOf('handover-test');
    const woken: string[] = [];
    claim(share, ['x.com'], 'A', 0, 0, () => woken.push('A'));
    claim(share, ['x.com'], 'B', 0, 0, (_key, answer) => woken.push(`B:${answer ? 'answer' : 'yours'}`));
    claim(share, ['x.com'], 'C', 0, 0, (_key, answer) => woken.push(`C:${answer ? 'answer' : 'yours'}`));
    release(share, ['x.com'], 'A');
    expect(woken).toEqual(['B:yours']);
    expect(share.claims.get('x.com')?.owner).toBe('B');
    const record = { domain: 'x.com', site_da: 1, site_pa: 1, site_mr: 1, spam_score: 1 };
    publish(share, 'x.com', { record, checkedAt: 5 }, 'B', 0);
    expect(woken).toEqual(['B:yours', 'C:answer']);
    expect(share.claims.has('x.com')).toBe(false);
    expect(share.answers.has('x.com')).toBe(false); // Reuse Results For 0: only those waiting get it
  });
});

describe('the documents', () => {
  test('the figures the README and developers.md give for what is kept are the code’s', () => {
    const readme = readFileSync(join(__dirname, '../../n8n-node/README.md'), 'utf8').replace(/\s+/g, ' ');
    const developers = readFileSync(join(__dirname, '../../docs/developers.md'), 'utf8').replace(/\s+/g, ' ');
    const answers = MAX_ANSWERS.toLocaleString('en-US');
    expect(readme).toContain(`${answers} answers per key (the oldest go first), ${MAX_KEYS} keys`);
    expect(readme).toContain(`SET … PX ${LEASE_MS}`);
    expect(developers).toContain(`at most ${answers} per key, the oldest first out; ${MAX_KEYS} keys`);
    expect(developers).toContain(`(a ${LEASE_MS / 1000} s lease, renewed every ${LEASE_MS / 3000} s`);
    expect(developers).toContain(`LTRIM to ${SENDS_KEPT}`);
    expect(developers).toContain(`budget of one call, ${STORE_CALL_BUDGET_MS / 1000} s`);
    expect(readme).toContain(`the budget of one store call, ${STORE_CALL_BUDGET_MS / 1000} s`);
  });
});
