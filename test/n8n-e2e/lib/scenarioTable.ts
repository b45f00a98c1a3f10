// The real-n8n scenarios as data: one row per workflow (its items, node parameters, plan, sandbox faults and what
// to expect), walked by e2e.ts and checked by lib/scenarioChecks.ts's `checkRow`. A row whose checks no other row
// shares carries them in a small named function (`extra`).
import {
  DEFAULT_CONFIG,
  checkEntry,
  hasNoSpamData,
  metricsFor,
  type SandboxConfig,
} from '../../sandbox/handler';
import { domainPool, itemsOverDomains, spell, thousandItemsOver400Domains, type TestItem } from './datasets';
import { outputOf, pairedIndex, type OutputItem } from './n8n';
import {
  billedTwice,
  distinctValidDomains,
  nodeTimeMs,
  resultDomains,
  type Expected,
  type ScenarioRun,
} from './scenarioChecks';
import { Tally, clip } from './tally';
import type { DapaNodeOptions } from './workflows';

export const WRONG_KEY = 'e2e-wrong-key-7f3a9c';

/** The built-in keys plus plans that make the scenarios' limits matter. */
export const KEYS: SandboxConfig['keys'] = {
  ...DEFAULT_CONFIG.keys,
  // Small batches whose maximum the node must learn (the fault scenario hides the number in the 422 message).
  'e2e-small': { maxUrlsPerRequest: 10, requestsPerMinute: 1000, urlsPerMinute: 10_000 },
  // Three requests and 60 URLs a minute: 80 domains need a 429 / rate_limit_reached wait of about a minute.
  'e2e-paced': { maxUrlsPerRequest: 25, requestsPerMinute: 3, urlsPerMinute: 60 },
};

/** The API key of each plan a row can run on (one credential each). */
export const PLAN_KEYS = {
  premium: 'sandbox-premium',
  wrong: WRONG_KEY,
  expired: 'sandbox-expired',
  small: 'e2e-small',
  paced: 'e2e-paced',
} as const;
export type Plan = keyof typeof PLAN_KEYS;

export interface ScenarioRow {
  /** The workflow id (at most 21 characters); `E2E_ONLY` selects rows by it. */
  id: string;
  title: string;
  items: TestItem[];
  plan: Plan;
  /**
   * The workflow: Start → Source (the items) → DAPA (default); `probes` adds a pairing probe after each DAPA
   * output; `httpBaseline` has n8n's own HTTP Request node instead of DAPA; `twoInputs` feeds DAPA from two Code
   * nodes (Source with the first `splitAt` items, Source 2 with the rest), so that n8n runs it twice in one execution.
   */
  shape?: 'probes' | 'httpBaseline' | 'twoInputs';
  /** For `twoInputs`: how many items the first Source emits. */
  splitAt?: number;
  /** The DAPA node's URL, options and On Error setting (default: the node's defaults). */
  node?: DapaNodeOptions;
  /** The sandbox's fault config for this row (default: none). */
  faults?: SandboxConfig['faults'];
  /** Run the workflow twice, each time in a new `n8n execute` process (default once). */
  twice?: boolean;
  timeoutMs?: number;
  expect: Expected;
  /** Checks that only this row makes, after `expect`'s. */
  extra?: (t: Tally, s: string, run: ScenarioRun) => void;
}

// ---- checks only one row makes --------------------------------------------------------------------------------

/** The harness row: one envelope per item from n8n's HTTP Request node, with the sandbox's metrics. */
function checkHttpEnvelopes(t: Tally, s: string, { exec, items }: ScenarioRun) {
  const out = outputOf(exec.run, 'HTTP');
  const records = out.map((item) => (item.json.data as Array<Record<string, unknown>> | undefined)?.[0]);
  t.check(
    s,
    'one envelope per item with the sandbox metrics',
    out.length === items.length &&
      records.every((r, i) => r !== undefined && r.site_da === metricsFor(String(items[i].url)).site_da),
    clip(out.map((o) => o.json)),
  );
}

/** Valid items on Results, input fields left out, the URL shown, and n8n's `$('Source').item` after both outputs. */
function checkPairing(t: Tally, s: string, { exec, items, results, skipped }: ScenarioRun) {
  const validRows = items.filter((item) => checkEntry(item.site).ok).map((item) => item.row);
  t.equal(
    s,
    'valid items on Results, the others on Skipped',
    results.map(pairedIndex).sort((a, b) => (a ?? 0) - (b ?? 0)),
    validRows,
  );
  const extra = [...results, ...skipped].filter((item) => 'note' in item.json || 'row' in item.json);
  t.check(
    s,
    'with "Include Input Fields" off, input fields are not copied',
    extra.length === 0,
    clip(extra[0]?.json),
  );
  const urlShown = results.every((item) => {
    const row = pairedIndex(item);
    return row !== undefined && item.json.url === items[row].site;
  });
  t.check(
    s,
    'with input fields off, each item still shows the URL it was checked for',
    urlShown,
    clip(results[0]?.json),
  );
  checkProbes(t, s, { exec, items, results, skipped });
}

/** The pairing probes after both outputs: n8n resolves `$('Source').item` for every item to its own row. */
function checkProbes(
  t: Tally,
  s: string,
  { exec, items, results, skipped }: Pick<ScenarioRun, 'exec' | 'items' | 'results' | 'skipped'>,
) {
  for (const [probe, dapa] of [
    ['Results paired', results],
    ['Skipped paired', skipped],
  ] as const) {
    // A probe item pairs with the DAPA output item it came from, which pairs with its Source row.
    const probed = outputOf(exec.run, probe);
    const bad = probed.filter((item) => {
      const dapaItem = dapa[pairedIndex(item) ?? -1] as OutputItem | undefined;
      const row = dapaItem ? pairedIndex(dapaItem) : undefined;
      return (
        row === undefined || item.json.sourceRow !== row || item.json.sourceUrl !== (items[row].url ?? null)
      );
    });
    t.check(
      s,
      `n8n resolves $('Source').item for every item after ${probe.split(' ')[0]} (${dapa.length} items)`,
      probed.length === dapa.length && bad.length === 0,
      `probe saw ${probed.length}, mismatched ${clip(bad.map((b) => b.json))}`,
    );
  }
}

/** Most domains still end with a result, and the sandbox did inject every kind of fault. */
function checkFaultsInjected(t: Tally, s: string, { exec, key, results, skipped }: ScenarioRun) {
  const delivered = resultDomains(results).size;
  t.check(
    s,
    `most domains end with a result despite the faults (${delivered} of 60)`,
    delivered >= 50,
    `${delivered} results; skips: ${clip(skipped.map((k) => k.json.reason))}`,
  );
  const served = key.responsesByStatus;
  console.log(
    `        (sandbox answered ${JSON.stringify(served)}, lookup_failed ${key.lookupFailedSkips}; ` +
      `DAPA node ${nodeTimeMs(exec, 'DAPA')} ms)`,
  );
  t.check(
    s,
    'the sandbox did inject 500s, 502 pages, lookup_failed and 422 Limit Exceeded',
    (served['500'] ?? 0) > 0 &&
      (served['502'] ?? 0) > 0 &&
      key.lookupFailedSkips > 0 &&
      (served['422'] ?? 0) > 0,
    clip(served) + ` lookup_failed=${key.lookupFailedSkips}`,
  );
}

/** Without waiting: at most one minute's URLs billed, all delivered, and the node returns at once. */
function checkNoWait(t: Tally, s: string, { exec, key, results }: ScenarioRun) {
  t.equal(
    s,
    'billed = domains on Results, at most the 60 URLs of one minute',
    [key.billed, key.billed <= 60],
    [resultDomains(results).size, true],
  );
  const ms = nodeTimeMs(exec, 'DAPA') ?? Infinity;
  t.check(s, 'the node does not wait for the limit to reset', ms < 20_000, `node took ${ms} ms`);
}

function checkLimitsWaitedOut(t: Tally, s: string, { exec, key }: ScenarioRun) {
  t.check(
    s,
    'the plan limits were hit (429 or rate_limit_reached) and waited out',
    (key.responsesByStatus['429'] ?? 0) + key.rateLimitSkips > 0,
    clip(key),
  );
  console.log(
    `        (sandbox answered ${JSON.stringify(key.responsesByStatus)}, rate_limit_reached ${key.rateLimitSkips}; ` +
      `DAPA node ${nodeTimeMs(exec, 'DAPA')} ms)`,
  );
}

function checkNoDataMetrics(t: Tally, s: string, { results }: ScenarioRun) {
  const wrong = results.filter((item) => {
    const domain = String(item.json.domain);
    const none = hasNoSpamData(domain, 0.4);
    const expected = metricsFor(domain, 0.4);
    return none
      ? item.json.spam_score !== null || JSON.stringify(item.json.no_data) !== '["spam_score"]'
      : item.json.spam_score !== expected.spam_score || JSON.stringify(item.json.no_data) !== '[]';
  });
  const flagged = results.filter((item) => Array.isArray(item.json.no_data) && item.json.no_data.length);
  t.check(
    s,
    'a no-data spam score is null and named in no_data; the others have no_data []',
    wrong.length === 0 && flagged.length > 0 && flagged.length < results.length,
    `${wrong.length} wrong: ${clip(wrong.slice(0, 3).map((i) => i.json))}; flagged ${flagged.length}`,
  );
}

/** The first execution learns the plan's maximum per request; the second starts from it (static data). */
function checkLearnedOnce(t: Tally, s: string, { items, results, limitExceeded, first }: ScenarioRun) {
  t.equal(
    s,
    `both executions put all ${items.length} on Results`,
    [first?.results.length, results.length],
    [items.length, items.length],
  );
  t.check(
    s,
    'the first execution learns the maximum per request (a 422 Limit Exceeded)',
    (first?.limitExceeded ?? 0) >= 1,
    `${first?.limitExceeded}`,
  );
  t.equal(s, 'the second execution sends no learning request (no 422 Limit Exceeded)', limitExceeded, 0);
}

function checkLoadRequests(t: Tally, s: string, { exec, key }: ScenarioRun) {
  const floor = Math.ceil(400 / 50);
  t.check(
    s,
    `requests near ceil(400/50) = ${floor} (at most ${floor + 2}, counting the plan-size probe)`,
    key.requests >= floor && key.requests <= floor + 2,
    `requests ${key.requests}, by status ${clip(key.responsesByStatus)}`,
  );
  console.log(
    `        (DAPA node: ${nodeTimeMs(exec, 'DAPA')} ms for 1,000 items; ${key.requests} requests)`,
  );
}

/** The budget's message on every item past it, naming the budget. */
const budgetSays = (budget: number) => `this execution's Credit Budget (${budget} credits) is spent`;

/**
 * 400 distinct domains, a Credit Budget of 150: the first 150 in input order on Results, the other 250 on Skipped in
 * input order with the budget's message, and n8n's own pairing resolves every item after both outputs.
 */
function checkCreditBudget(t: Tally, s: string, run: ScenarioRun) {
  const { items, results, skipped, key } = run;
  t.equal(
    s,
    'the first 150 items (in input order) on Results, the other 250 on Skipped in input order',
    [results.map(pairedIndex), skipped.map(pairedIndex)],
    [items.slice(0, 150).map((item) => item.row), items.slice(150).map((item) => item.row)],
  );
  const unsaid = skipped.filter((item) => !String(item.json.message).includes(budgetSays(150)));
  t.check(s, 'each skipped item says the budget (150) is spent', unsaid.length === 0, clip(unsaid[0]?.json));
  checkProbes(t, s, run);
  console.log(
    `        (sandbox: ${key.requests} requests, ${key.billed} billed, by status ${JSON.stringify(key.responsesByStatus)}; ` +
      `DAPA node ${nodeTimeMs(run.exec, 'DAPA')} ms)`,
  );
}

/**
 * The node run twice in one execution (two inputs feed it): one budget for both runs. The first run (40 domains)
 * spends 40 of 50, the second (40 more) only the 10 left, so the execution bills 50, not 80.
 */
function checkBudgetPerExecution(t: Tally, s: string, { exec, items, key }: ScenarioRun) {
  const runs = exec.run?.data.resultData.runData.DAPA ?? [];
  const outs = runs.map((nodeRun) => ({
    results: nodeRun.data?.main[0] ?? [],
    skipped: nodeRun.data?.main[1] ?? [],
  }));
  t.equal(s, 'n8n ran the DAPA node twice in the execution', runs.length, 2);
  t.equal(
    s,
    'run 1: 40 on Results; run 2: 10 on Results and 30 on Skipped (what the first run left of the budget)',
    outs.map((out) => [out.results.length, out.skipped.length]),
    [
      [40, 0],
      [10, 30],
    ],
  );
  const second = items.slice(40);
  const skipped = outs[1]?.skipped ?? [];
  t.equal(
    s,
    "run 2's skips are its last 30 input items, in input order, paired, each with the budget's reason",
    skipped.map((item) => [pairedIndex(item), item.json.row, item.json.reason]),
    second.slice(10).map((item, i) => [10 + i, item.row, 'credit_budget']),
  );
  t.check(
    s,
    "each says the execution's budget (50) is spent",
    skipped.every((item) => String(item.json.message).includes(budgetSays(50))),
    clip(skipped[0]?.json),
  );
  t.equal(
    s,
    'the execution billed its budget, 50 (not 2 x 50), no domain twice',
    [key.billed, billedTwice(key)],
    [50, []],
  );
}

// ---- items ----------------------------------------------------------------------------------------------------

const numbered = (urls: unknown[]): TestItem[] => urls.map((url, row) => ({ row, url, note: `item ${row}` }));

/** Pairing: 24 valid items under a custom field `site` (a decoy in `url`), with a bad one after every fourth. */
function pairingItems(): TestItem[] {
  const odd: unknown[] = ['', 'not a domain', '   ', 'localhost', 42, 'https://'];
  const items: TestItem[] = [];
  itemsOverDomains(24, 10, 202, 'pairing-').forEach((item, i) => {
    items.push({
      row: items.length,
      site: item.url,
      url: 'decoy.invalid-field',
      note: `item ${items.length}`,
    });
    if (i % 4 === 1) items.push({ row: items.length, site: odd[(i - 1) / 4], note: `item ${items.length}` });
  });
  return items;
}

/** Skips: each bad input with the reason it must be skipped for; a valid domain after every fourth. */
function skipItems(): { items: TestItem[]; each: Array<{ row: number; input: unknown; reason: string }> } {
  const bad: Array<[unknown, string]> = [
    ['', 'empty_url'],
    ['    ', 'empty_url'],
    [null, 'empty_url'],
    [undefined, 'empty_url'],
    ['not a url', 'invalid_url_format'],
    ['localhost', 'invalid_url_format'],
    ['http://', 'invalid_url_format'],
    ['exa mple.com', 'invalid_url_format'],
    [12345, 'invalid_url_format'],
    [true, 'invalid_url_format'],
  ];
  const validDomains = domainPool(3, 'skips-');
  const items: TestItem[] = [];
  const each: Array<{ row: number; input: unknown; reason: string }> = [];
  bad.forEach(([input, reason], i) => {
    const item: TestItem = { row: items.length, note: `item ${items.length}` };
    if (input !== undefined) item.url = input;
    each.push({ row: item.row, input, reason });
    items.push(item);
    if (i % 4 === 0)
      items.push({ row: items.length, url: spell(validDomains[i / 4], 1), note: `item ${items.length}` });
  });
  return { items, each };
}

// ---- the table ------------------------------------------------------------------------------------------------

/** The scenarios, in the order they run. */
export function scenarioTable(): ScenarioRow[] {
  const values = itemsOverDomains(40, 25, 101, 'values-');
  const skips = skipItems();
  const paced = itemsOverDomains(100, 80, 606, 'paced-');
  const expired = numbered(domainPool(6, 'expired-'));
  const planExpired: Expected['errorsOn'] = {
    output: 0,
    error: {
      says: 'each item carries the "plan expired" error',
      matches: [/plan/i, /expired/i],
      notMatches: [/wrong api key/i],
    },
  };
  return [
    {
      id: 'e2eHarnessHttp',
      title: 'harness: HTTP Request node reaches the sandbox',
      items: numbered(domainPool(3)),
      plan: 'premium',
      shape: 'httpBaseline',
      expect: { counters: { requests: 3, billed: 3 } },
      extra: checkHttpEnvelopes,
    },
    {
      id: 'e2eValues',
      title: 'values',
      items: values,
      plan: 'premium',
      expect: {
        outputs: { results: 40, skipped: 0 },
        everyItemOnce: true,
        values: {},
        noErrors: true,
        billedDomains: distinctValidDomains(values).size,
        counters: { requests: 1 },
      },
    },
    {
      id: 'e2ePairing',
      title: 'pairing',
      items: pairingItems(),
      plan: 'premium',
      shape: 'probes',
      node: { url: '={{ $json.site }}', options: { includeInputFields: false } },
      faults: { shuffleData: true, seed: 5 },
      expect: { everyItemOnce: true, values: { urlField: 'site', inputFieldsKept: false } },
      extra: checkPairing,
    },
    {
      id: 'e2eSkips',
      title: 'skips',
      items: skips.items,
      plan: 'premium',
      expect: {
        everyItemOnce: true,
        noErrors: true,
        values: {},
        skipReasons: { each: skips.each },
        counters: { billed: 3, requests: 1 },
      },
    },
    {
      id: 'e2eAllSkipped',
      title: 'all skipped',
      items: numbered(['', 'nope', 'also not a url', 7]),
      plan: 'premium',
      expect: {
        outputs: { results: 0, skipped: 4 },
        everyItemOnce: true,
        noErrors: true,
        counters: { billed: 0 },
      },
    },
    {
      // 5xx, HTML 502 pages, lookup_failed, a hidden per-request maximum, shuffled data, odd spellings of `domain`,
      // numeric strings, latency: every item must end on an output; paid results are never dropped.
      id: 'e2eFaults',
      title: 'faults',
      items: itemsOverDomains(150, 60, 505, 'faults-'),
      plan: 'small',
      faults: {
        seed: 17,
        lookupFailedRate: 0.2,
        serverErrorRate: 0.15,
        html502Rate: 0.1,
        latencyMs: [5, 60],
        retryAfter: 'date',
        limitMessageWithNumber: false,
        shuffleData: true,
        domainSpelling: 'mixed',
        numericStrings: true,
      },
      expect: {
        everyItemOnce: true,
        values: {},
        noErrors: true,
        billedAreResults: true,
        skipReasons: { never: ['invalid_url_format', 'empty_url'] },
      },
      extra: checkFaultsInjected,
    },
    {
      id: 'e2eRateNoWait',
      title: 'rate limits, no wait',
      items: paced,
      plan: 'paced',
      node: { options: { waitForRateLimits: false } },
      expect: {
        everyItemOnce: true,
        noErrors: true,
        values: { onlyIfAny: true },
        skipReasons: { all: 'rate_limit_reached' },
      },
      extra: checkNoWait,
    },
    {
      // 429s (Retry-After as an HTTP date) and rate_limit_reached skips are waited for.
      id: 'e2eRateWait',
      title: 'rate limits, waited out',
      items: paced,
      plan: 'paced',
      faults: { retryAfter: 'date' },
      timeoutMs: 240_000,
      expect: {
        outputs: { results: 100, skipped: 0 },
        everyItemOnce: true,
        values: {},
        billedDomains: 80,
        max429: 3,
      },
      extra: checkLimitsWaitedOut,
    },
    {
      id: 'e2eWrongKey',
      title: 'wrong key',
      items: numbered(domainPool(5, 'wrongkey-')),
      plan: 'wrong',
      expect: {
        fails: {
          message: {
            says: 'the message says the API key is wrong',
            matches: [/(wrong|incorrect|invalid) api key/i],
            notMatches: [/expired/i],
          },
          description: {
            says: 'the description says what to do (fix the key in the credential)',
            matches: [/credential/i],
          },
        },
        counters: { key: '(unknown)', requests: 1, billed: 0 },
      },
    },
    {
      // The service blocks this network (a 403 nginx page for every request): its own error, not a wrong key.
      id: 'e2eNetworkBlocked',
      title: 'network blocked (403 page)',
      items: numbered(domainPool(5, 'blocked-')),
      plan: 'premium',
      faults: { blockNetwork: true },
      expect: {
        fails: {
          message: {
            says: 'the message says the network is blocked, not the key',
            matches: [/^Network blocked/, /not your API key/],
          },
          description: {
            says: 'the description says what to do (self-hosted n8n, another network, ask support)',
            matches: [/self-hosted n8n/, /support/],
          },
        },
        counters: { key: '*', requests: 1 },
      },
    },
    {
      // Metrics the service has no data for (-1): null, named in no_data; no_data is [] on every other result.
      id: 'e2eNoData',
      title: 'no-data metrics',
      items: numbered(domainPool(30, 'nodata-')),
      plan: 'premium',
      faults: { noDataRate: 0.4 },
      expect: { outputs: { results: 30, skipped: 0 } },
      extra: checkNoDataMetrics,
    },
    {
      // A second execution (a new n8n process) starts from the plan kept in the static data.
      id: 'e2eLearnedOnce',
      title: 'plan learned once',
      items: numbered(domainPool(35, 'learned-')),
      plan: 'small',
      twice: true,
      expect: { counters: { requests: 4 } },
      extra: checkLearnedOnce,
    },
    {
      id: 'e2eExpiredRegular',
      title: 'expired plan, continueRegularOutput',
      items: expired,
      plan: 'expired',
      node: { onError: 'continueRegularOutput' },
      expect: { errorsOn: planExpired, everyItemOnce: true, counters: { billed: 0 } },
    },
    {
      id: 'e2eExpiredErrorOut',
      title: 'expired plan, continueErrorOutput',
      items: expired,
      plan: 'expired',
      node: { onError: 'continueErrorOutput' },
      expect: { errorsOn: { ...planExpired, output: 2 }, everyItemOnce: true, counters: { billed: 0 } },
    },
    {
      id: 'e2eLoad1000',
      title: '1,000 items / 400 domains',
      items: thousandItemsOver400Domains(),
      plan: 'premium',
      expect: {
        outputs: { results: 1000, skipped: 0 },
        everyItemOnce: true,
        values: {},
        billedDomains: 400,
        max429: 0,
      },
      extra: checkLoadRequests,
    },
    {
      // Issue 21: 400 items, a Credit Budget of 150, on a plan fast enough for it to take seconds.
      id: 'e2eCreditBudget',
      title: 'credit budget 150 over 400 items',
      items: numbered(domainPool(400, 'budget-')),
      plan: 'premium',
      shape: 'probes',
      node: { options: { creditBudget: 150 } },
      expect: {
        outputs: { results: 150, skipped: 250 },
        everyItemOnce: true,
        values: {},
        noErrors: true,
        skipReasons: { all: 'credit_budget' },
        billedDomains: 150,
        max429: 0,
      },
      extra: checkCreditBudget,
    },
    {
      // The budget is per execution: the node run twice in one execution (two inputs) shares one budget.
      id: 'e2eBudgetTwoRuns',
      title: 'credit budget 50, node run twice in one execution',
      items: numbered(domainPool(80, 'budget2-')),
      plan: 'premium',
      shape: 'twoInputs',
      splitAt: 40,
      node: { options: { creditBudget: 50 } },
      expect: { counters: { billed: 50 } },
      extra: checkBudgetPerExecution,
    },
  ];
}
