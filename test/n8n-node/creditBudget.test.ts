// The node's Credit Budget option against the sandbox over real HTTP: billed <= budget by the sandbox's own counters,
// the items past it on Skipped as credit_budget in their input order and paired, duplicates of a billed domain free,
// bad values refused with a message, the summary's counts, and one budget for all runs of the node in an execution.
import { NodeOperationError, type IDataObject, type INodeExecutionData } from 'n8n-workflow';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { CREDIT_BUDGET_WHEN_ADDED } from '../../n8n-node/nodes/DapaChecker/description';
import { creditBudgetMessage } from '../../n8n-node/nodes/DapaChecker/outputs';
import { DEFAULT_CONFIG, metricsFor, normalizeDomain } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import { createExecuteContext, useSandboxServer, type ContextSetup } from './executeContext';

let server: RunningSandbox;

useSandboxServer((started) => (server = started)); // every test starts like a fresh n8n process

async function execute(setup: Omit<ContextSetup, 'credentials'>, apiKey = 'sandbox-premium') {
  const double = createExecuteContext({
    ...setup,
    credentials: { apiKey, environment: 'custom', baseUrl: server.url },
  });
  const [results, skipped] = await new DapaChecker().execute.call(double.context);
  return { results, skipped, ...double };
}

const pairedIndex = (item: INodeExecutionData) => (item.pairedItem as { item: number }).item;
const billed = (key = 'sandbox-premium') => server.sandbox.stats()[key]?.billed ?? 0;

/** `count` items over `distinct` domains, each domain first seen in order, its repeats spelled otherwise. */
function itemsWithRepeats(count: number, distinct: number, tag: string): IDataObject[] {
  return Array.from({ length: count }, (_v, row) => {
    const n = row < distinct ? row : (row * 7) % distinct;
    return {
      row,
      url: row < distinct ? `${tag}${n}.com` : `https://www.${tag.toUpperCase()}${n}.com/p${row}`,
    };
  });
}

describe('Credit Budget', () => {
  test('a budget of 0 sends nothing: every item with a domain is on Skipped as credit_budget, in input order, paired', async () => {
    const items = [
      { row: 0, url: 'a-zero.com' },
      { row: 1, url: '' },
      { row: 2, url: 'b-zero.com' },
      { row: 3, url: 'not a domain' },
      { row: 4, url: 'https://www.A-zero.com/x' },
    ];
    const { results, skipped, sent } = await execute({ items, options: { creditBudget: 0 } });
    expect(sent).toEqual([]);
    expect(results).toEqual([]);
    expect(skipped.map((item) => [pairedIndex(item), item.json.row, item.json.reason])).toEqual([
      [0, 0, 'credit_budget'],
      [1, 1, 'empty_url'],
      [2, 2, 'credit_budget'],
      [3, 3, 'invalid_url_format'],
      [4, 4, 'credit_budget'],
    ]);
    expect(skipped[0].json.message).toBe(creditBudgetMessage(0));
    expect(skipped[0].json.message).toMatch(/Credit Budget \(0 credits\) is spent/);
    expect(skipped.every((item) => item.error === undefined && item.json.error === undefined)).toBe(true);
    expect(server.sandbox.stats()['sandbox-premium']?.requests ?? 0).toBe(0);
  });

  test('a budget below the distinct domains: the first domains billed once each, their repeats free, the rest skipped in order', async () => {
    const items = itemsWithRepeats(30, 12, 'rep');
    const { results, skipped, hints } = await execute({ items, options: { creditBudget: 5 } });
    const stats = server.sandbox.stats()['sandbox-premium'];
    expect(stats.billed).toBe(5);
    expect(Object.values(stats.billedByDomain)).toEqual([1, 1, 1, 1, 1]);
    const paid = new Set(Object.keys(stats.billedByDomain));
    expect(paid).toEqual(new Set(['rep0.com', 'rep1.com', 'rep2.com', 'rep3.com', 'rep4.com']));

    // Every item out once; an item is on Results exactly when its domain was paid for (repeats included).
    expect([...results, ...skipped].map(pairedIndex).sort((a, b) => a - b)).toEqual(items.map((_i, r) => r));
    const domainOf = (row: number) => normalizeDomain(String(items[row].url));
    for (const item of results) {
      expect(paid.has(domainOf(pairedIndex(item)))).toBe(true);
      expect(item.json).toMatchObject({ row: pairedIndex(item), ...metricsFor(domainOf(pairedIndex(item))) });
    }
    const repeatsOfPaid = items.filter((item, row) => row >= 12 && paid.has(domainOf(row))).length;
    expect(repeatsOfPaid).toBeGreaterThan(0);
    expect(results).toHaveLength(5 + repeatsOfPaid);

    // Skipped: the others, in input order, each paired with its own input item, with the budget reason and message.
    const skippedRows = skipped.map(pairedIndex);
    expect(skippedRows).toEqual(items.map((_i, row) => row).filter((row) => !paid.has(domainOf(row))));
    for (const item of skipped) {
      expect(item.json).toEqual({
        ...items[pairedIndex(item)],
        reason: 'credit_budget',
        message: creditBudgetMessage(5),
        reused: false,
      });
    }
    expect(hints.map((hint) => [hint.type, hint.message])).toEqual([
      [
        'warning',
        `Credit Budget of 5 reached: ${skipped.length} items were not checked and are on the Skipped output (reason credit_budget). Raise the budget or run them again later.`,
      ],
      [
        'info',
        expect.stringMatching(
          new RegExp(
            `^30 items, 12 distinct domains: \\d+ requests, 5 billed, .*\\. ${results.length} results, ${skipped.length} skipped\\. ` +
              `Credit Budget 5: 5 billed in this execution, 0 left; ${skipped.length} items skipped for the budget \\(credit_budget\\)\\.$`,
          ),
        ),
      ],
    ]);
  });

  test('400 domains with a budget of 150 (the plan learned on the way): 150 billed, 250 skipped', async () => {
    const items = Array.from({ length: 400 }, (_v, row) => ({ row, url: `big${row}.org` }));
    const { results, skipped } = await execute({ items, options: { creditBudget: 150 } });
    expect(billed()).toBe(150);
    expect(results.map(pairedIndex)).toEqual(items.slice(0, 150).map((item) => item.row));
    expect(skipped.map(pairedIndex)).toEqual(items.slice(150).map((item) => item.row));
    expect(new Set(skipped.map((item) => item.json.reason))).toEqual(new Set(['credit_budget']));
  });

  test('faults on the way (lookup_failed, 5xx, shuffled data): still billed <= budget and every item once', async () => {
    server.sandbox.configure({
      ...DEFAULT_CONFIG,
      faults: { seed: 11, lookupFailedRate: 0.25, serverErrorRate: 0.15, shuffleData: true },
    });
    const items = Array.from({ length: 80 }, (_v, row) => ({ row, url: `fault${row % 60}.net` }));
    const { results, skipped } = await execute({
      items,
      options: { creditBudget: 20, maxUrlsPerRequest: 10 },
    });
    expect(billed()).toBeLessThanOrEqual(20);
    expect(billed()).toBeGreaterThan(10);
    expect(results.length + skipped.length).toBe(80);
    expect(new Set([...results, ...skipped].map(pairedIndex)).size).toBe(80);
    const reasons = new Set(skipped.map((item) => item.json.reason));
    expect(reasons.has('credit_budget')).toBe(true);
    expect([...reasons].every((reason) => ['credit_budget', 'lookup_failed'].includes(String(reason)))).toBe(
      true,
    );
  });

  test('a budget above what the items cost changes nothing, and the summary says what is left', async () => {
    const items = [{ url: 'one.io' }, { url: 'two.io' }, { url: 'ONE.io' }];
    const { results, skipped, hints } = await execute({ items, options: { creditBudget: 10 } });
    expect([results.length, skipped.length, billed()]).toEqual([3, 0, 2]);
    expect(hints).toHaveLength(1); // no warning: nothing was skipped for the budget
    expect(hints[0].message).toMatch(
      /Credit Budget 10: 2 billed in this execution, 8 left; 0 items skipped for the budget/,
    );
  });

  test.each([
    [-1, '-1'],
    [2.5, '2.5'],
    ['many', '"many"'],
    ['-3', '"-3"'],
    [Number.NaN, 'null'],
  ])(
    'a budget of %p fails the node with a message naming the option, before anything is sent',
    async (value, shown) => {
      const run = execute({ items: [{ url: 'example.com' }], options: { creditBudget: value } });
      const error = (await run.catch((e: unknown) => e)) as NodeOperationError;
      expect(error).toBeInstanceOf(NodeOperationError);
      expect(error.message).toBe('The option "Credit Budget" must be a whole number of credits, 0 or more');
      expect(error.description).toBe(
        `It is ${shown}. Change it in the node's options, or leave it empty for no budget.`,
      );
      expect(server.sandbox.stats()['sandbox-premium']?.requests ?? 0).toBe(0);
    },
  );

  test('a bad budget with continue on fail: every item gets the error, paired, nothing sent', async () => {
    const { results, skipped, sent } = await execute({
      items: [{ url: 'a.com' }, { url: 'b.com' }],
      options: { creditBudget: -5 },
      continueOnFail: true,
    });
    expect([skipped, sent]).toEqual([[], []]);
    expect(results.map((item) => [pairedIndex(item), item.error instanceof NodeOperationError])).toEqual([
      [0, true],
      [1, true],
    ]);
  });

  test('an empty budget (cleared in the editor) or none means no budget; a number as text is read', async () => {
    const items = Array.from({ length: 6 }, (_v, row) => ({ url: `empty${row}.de` }));
    for (const creditBudget of ['', '  ', null, undefined]) {
      const { results } = await execute({
        items,
        options: creditBudget === undefined ? {} : { creditBudget },
      });
      expect(results).toHaveLength(6);
    }
    const asText = await execute({
      items: items.map((item) => ({ url: item.url.replace('empty', 'text') })),
      options: { creditBudget: ' 2 ' },
    });
    expect([asText.results.length, asText.skipped.length]).toEqual([2, 4]);
    expect(CREDIT_BUDGET_WHEN_ADDED).toBeGreaterThan(0);
  });

  test('one budget per execution: later runs of the node in it (a loop, several inputs) get only what is left', async () => {
    const nodeContext: IDataObject = {};
    const batch = (from: number) =>
      Array.from({ length: 4 }, (_v, i) => ({ row: from + i, url: `loop${from + i}.fr` }));
    const options = { creditBudget: 6 };
    const first = await execute({ items: batch(0), options, nodeContext });
    expect([first.results.length, first.skipped.length, billed()]).toEqual([4, 0, 4]);
    const second = await execute({ items: batch(4), options, nodeContext });
    expect([second.results.length, billed()]).toEqual([2, 6]);
    expect(second.skipped.map((item) => [pairedIndex(item), item.json.row, item.json.reason])).toEqual([
      [2, 6, 'credit_budget'],
      [3, 7, 'credit_budget'],
    ]);
    expect(second.hints.map((hint) => hint.type)).toEqual(['warning', 'info']);
    expect(second.hints[1].message).toMatch(
      /Credit Budget 6: 6 billed in this execution, 0 left; 2 items skipped for the budget \(credit_budget\) \(4 billed and 0 skipped by earlier runs of this node\)\.$/,
    );
    const third = await execute({ items: batch(8), options, nodeContext });
    expect([third.results.length, third.skipped.length, third.sent.length, billed()]).toEqual([0, 4, 0, 6]);
    expect(third.skipped[0].json.message).toBe(creditBudgetMessage(6));

    // A new execution (a new context) has the whole budget again.
    const next = await execute({ items: batch(12), options, nodeContext: {} });
    expect([next.results.length, billed()]).toEqual([4, 10]);
  });

  test('without a per-execution context (a host that has none), each run counts its own credits', async () => {
    const options = { creditBudget: 2 };
    const one = await execute({
      items: [{ url: 'solo1.it' }, { url: 'solo2.it' }],
      options,
      nodeContext: null,
    });
    const two = await execute({
      items: [{ url: 'solo3.it' }, { url: 'solo4.it' }],
      options,
      nodeContext: null,
    });
    expect([one.results.length, two.results.length, billed()]).toEqual([2, 2, 4]);
  });
});
