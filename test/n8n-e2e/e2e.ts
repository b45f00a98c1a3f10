// The real-n8n end-to-end suite: starts the sandbox API in this process, imports credentials and one workflow per
// scenario into a fresh n8n user folder, runs each with `n8n execute`, and asserts on what n8n printed and on the
// sandbox's own request/billing counters. Run by test/n8n-e2e/run.sh; ends with `N passed, N failed`.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_CONFIG,
  checkEntry,
  emptyStats,
  hasNoSpamData,
  metricsFor,
  normalizeDomain,
  type KeyStats,
  type SandboxConfig,
  type SandboxStats,
} from '../sandbox/handler';
import { startSandbox } from '../sandbox/server';
import {
  domainPool,
  itemsOverDomains,
  spell,
  thousandItemsOver400Domains,
  type TestItem,
} from './lib/datasets';
import {
  E2E_DIR,
  N8nCli,
  NODE_DIST,
  outputOf,
  snapshotNodePackage,
  pairedIndex,
  tail,
  type CredentialJson,
  type Execution,
  type OutputItem,
  type WorkflowJson,
} from './lib/n8n';
import { Tally, clip, runSuite } from './lib/tally';
import { withMetricDrift } from './lib/templateSandbox';
import {
  NEW_ONLY_ID,
  WATCH_ID,
  driftedMetrics,
  instantiate,
  newOnlyItems,
  runNewOnly,
  runWatch,
  startTemplateServer,
  watchItems,
  withWebhook,
} from './lib/templates';
import {
  dapaChecker,
  dapaCredential,
  bearerHeaderCredential,
  httpRequestDapa,
  manualTrigger,
  pairingProbe,
  sourceItems,
  workflow,
} from './lib/workflows';

const WORK_DIR = path.join(E2E_DIR, 'work', `e2e-${process.env.E2E_N8N_DIR ?? 'n8n'}`);
const WRONG_KEY = 'e2e-wrong-key-7f3a9c';

/** The built-in keys plus plans that make the scenarios' limits matter. */
const KEYS: SandboxConfig['keys'] = {
  ...DEFAULT_CONFIG.keys,
  // Small batches whose maximum the node must learn (the fault scenario hides the number in the 422 message).
  'e2e-small': { maxUrlsPerRequest: 10, requestsPerMinute: 1000, urlsPerMinute: 10_000 },
  // Three requests and 60 URLs a minute: 80 domains need a 429 / rate_limit_reached wait of about a minute.
  'e2e-paced': { maxUrlsPerRequest: 25, requestsPerMinute: 3, urlsPerMinute: 60 },
};
const PLAIN: SandboxConfig = { keys: KEYS };

interface Context {
  baseUrl: string;
  credentials: Record<'premium' | 'wrong' | 'expired' | 'small' | 'paced' | 'httpPremium', CredentialJson>;
}

interface Observed {
  exec: Execution;
  stats: SandboxStats;
  /** 422 Limit Exceeded answers (a 422 without an envelope): the requests the node learns the maximum from. */
  limitExceeded: number;
  /** For a scenario run twice: what the first execution did (the sandbox is reset between the two). */
  first?: Observed;
}

interface Scenario {
  id: string;
  title: string;
  items: TestItem[];
  /** API keys the scenario uses: none may appear in anything n8n prints. */
  keys: string[];
  sandbox: SandboxConfig;
  build(ctx: Context): WorkflowJson;
  evaluate(t: Tally, observed: Observed): void;
  timeoutMs?: number;
  /** Run the workflow twice, each time in a new `n8n execute` process (default once). */
  twice?: boolean;
}

// ---- evaluation helpers ------------------------------------------------------------------------------------

function statsOf(stats: SandboxStats, key: string): KeyStats {
  return stats[key] ?? emptyStats();
}

function billedTwice(stats: KeyStats): string[] {
  return Object.entries(stats.billedByDomain)
    .filter(([, times]) => times > 1)
    .map(([domain, times]) => `${domain} x${times}`);
}

function distinctValidDomains(items: TestItem[], field = 'url'): Set<string> {
  const domains = new Set<string>();
  for (const item of items) {
    const checked = checkEntry(item[field]);
    if (checked.ok) domains.add(checked.domain);
  }
  return domains;
}

/** Where each input row ended: every output item is located by its pairedItem. */
function locate(outputs: Record<string, OutputItem[]>): {
  byRow: Map<number, Array<{ output: string; item: OutputItem }>>;
  unpaired: number;
} {
  const byRow = new Map<number, Array<{ output: string; item: OutputItem }>>();
  let unpaired = 0;
  for (const [output, items] of Object.entries(outputs)) {
    for (const item of items) {
      const row = pairedIndex(item);
      if (row === undefined) {
        unpaired += 1;
        continue;
      }
      const list = byRow.get(row) ?? [];
      list.push({ output, item });
      byRow.set(row, list);
    }
  }
  return { byRow, unpaired };
}

/** Every input item comes out exactly once, on one of the outputs, paired with itself. */
function checkEveryItemOnce(
  t: Tally,
  scenario: string,
  items: TestItem[],
  outputs: Record<string, OutputItem[]>,
) {
  const { byRow, unpaired } = locate(outputs);
  const missing = items.filter((item) => !byRow.has(item.row)).map((item) => item.row);
  const twice = [...byRow.entries()].filter(([, list]) => list.length > 1).map(([row]) => row);
  const outside = [...byRow.keys()].filter((row) => row < 0 || row >= items.length);
  const total = Object.values(outputs).reduce((n, list) => n + list.length, 0);
  t.check(
    scenario,
    `every one of the ${items.length} items comes out exactly once, paired with its input item`,
    missing.length === 0 &&
      twice.length === 0 &&
      unpaired === 0 &&
      outside.length === 0 &&
      total === items.length,
    `out=${total} missing rows ${clip(missing)} twice ${clip(twice)} unpaired ${unpaired} out of range ${clip(outside)}`,
  );
}

/** Results carry the sandbox's metrics for the item's own domain, as numbers, with the input fields kept. */
function checkResultValues(
  t: Tally,
  scenario: string,
  items: TestItem[],
  results: OutputItem[],
  opts: { urlField?: string; inputFieldsKept?: boolean } = {},
) {
  const urlField = opts.urlField ?? 'url';
  const wrong: string[] = [];
  const notNumbers: string[] = [];
  const fieldsLost: number[] = [];
  for (const result of results) {
    const row = pairedIndex(result) ?? -1;
    const source = items[row] as TestItem | undefined;
    if (!source) {
      wrong.push(`unpaired result ${clip(result.json, 80)}`);
      continue;
    }
    const domain = normalizeDomain(String(source[urlField]));
    const expected = metricsFor(domain);
    const json = result.json;
    const got = {
      site_da: json.site_da,
      site_pa: json.site_pa,
      site_mr: json.site_mr,
      spam_score: json.spam_score,
    };
    const sameDomain = typeof json.domain === 'string' && normalizeDomain(json.domain) === domain;
    if (!sameDomain || Object.entries(expected).some(([k, v]) => Number(got[k as keyof typeof got]) !== v)) {
      wrong.push(
        `row ${row} ${domain}: got ${clip({ domain: json.domain, ...got }, 120)} expected ${clip(expected)}`,
      );
    }
    if (Object.values(got).some((v) => typeof v !== 'number'))
      notNumbers.push(`row ${row}: ${clip(got, 100)}`);
    if (opts.inputFieldsKept !== false && (json.row !== source.row || json.note !== source.note))
      fieldsLost.push(row);
  }
  t.check(
    scenario,
    `all ${results.length} results carry the DA/PA/MR/spam score of their own domain`,
    wrong.length === 0 && results.length > 0,
    `${wrong.length} wrong: ${wrong.slice(0, 5).join('; ')}`,
  );
  t.check(
    scenario,
    'metrics are numbers (also when the server sends numeric strings)',
    notNumbers.length === 0,
    notNumbers.slice(0, 5).join('; '),
  );
  if (opts.inputFieldsKept !== false) {
    t.check(scenario, 'results keep the input fields', fieldsLost.length === 0, `rows ${clip(fieldsLost)}`);
  }
}

function checkNoErrorsOn(t: Tally, scenario: string, outputs: Record<string, OutputItem[]>) {
  const withError = Object.entries(outputs).flatMap(([name, items]) =>
    items.filter((item) => item.json.error !== undefined).map((item) => `${name}#${pairedIndex(item)}`),
  );
  t.check(
    scenario,
    'no item carries json.error (a skip is not an error)',
    withError.length === 0,
    clip(withError),
  );
}

function checkSucceeded(t: Tally, scenario: string, exec: Execution): boolean {
  return t.check(
    scenario,
    'the execution succeeds',
    exec.exitCode === 0 && exec.run?.status === 'success',
    `exit ${exec.exitCode}${exec.timedOut ? ' (timed out)' : ''}, status ${exec.run?.status}: ${tail(exec.stdout + exec.stderr, 12)}`,
  );
}

function checkBilling(
  t: Tally,
  scenario: string,
  stats: KeyStats,
  results: OutputItem[],
  expectedDomains: number,
) {
  const resultDomains = new Set(results.map((r) => normalizeDomain(String(r.json.domain))));
  const billedDomains = new Set(Object.keys(stats.billedByDomain));
  t.equal(
    scenario,
    `billed queries = ${expectedDomains} distinct valid domains`,
    stats.billed,
    expectedDomains,
  );
  t.check(scenario, 'no domain is billed twice', billedTwice(stats).length === 0, clip(billedTwice(stats)));
  const paidNotDelivered = [...billedDomains].filter((d) => !resultDomains.has(d));
  t.check(
    scenario,
    'every billed domain reaches the Results output',
    paidNotDelivered.length === 0,
    clip(paidNotDelivered),
  );
}

function nodeTimeMs(exec: Execution, nodeName: string): number | undefined {
  return exec.run?.data.resultData.runData[nodeName]?.[0]?.executionTime;
}

// ---- scenarios -------------------------------------------------------------------------------------------

function scenarios(): Scenario[] {
  const list: Scenario[] = [];
  const dapaOutputs = (exec: Execution, node = 'DAPA') => ({
    results: outputOf(exec.run, node, 0),
    skipped: outputOf(exec.run, node, 1),
  });

  // 0. The harness itself: n8n reaches the sandbox with n8n's own HTTP Request node (the benchmark's baseline).
  {
    const items = domainPool(3).map((domain, row) => ({ row, url: domain, note: `item ${row}` }));
    list.push({
      id: 'e2eHarnessHttp',
      title: 'harness: HTTP Request node reaches the sandbox',
      items,
      keys: ['sandbox-premium'],
      sandbox: PLAIN,
      build: (ctx) =>
        workflow(
          'e2eHarnessHttp',
          'e2e harness: HTTP Request baseline',
          [
            manualTrigger(),
            sourceItems(items),
            httpRequestDapa('HTTP', ctx.baseUrl, ctx.credentials.httpPremium),
          ],
          [
            ['Start', 'Source'],
            ['Source', 'HTTP'],
          ],
        ),
      evaluate(t, { exec, stats }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        const out = outputOf(exec.run, 'HTTP');
        const records = out.map(
          (item) => (item.json.data as Array<Record<string, unknown>> | undefined)?.[0],
        );
        t.check(
          s,
          'one envelope per item with the sandbox metrics',
          out.length === 3 &&
            records.every((r, i) => r !== undefined && r.site_da === metricsFor(items[i].url).site_da),
          clip(out.map((o) => o.json)),
        );
        t.equal(
          s,
          'three requests, three billed',
          [statsOf(stats, 'sandbox-premium').requests, statsOf(stats, 'sandbox-premium').billed],
          [3, 3],
        );
      },
    });
  }

  // 1. Values: many spellings of 25 domains; each result has its domain's metrics; each domain billed once.
  {
    const items = itemsOverDomains(40, 25, 101, 'values-');
    list.push({
      id: 'e2eValues',
      title: 'values',
      items,
      keys: ['sandbox-premium'],
      sandbox: PLAIN,
      build: (ctx) =>
        workflow(
          'e2eValues',
          'e2e values',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.premium)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec, stats }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        const { results, skipped } = dapaOutputs(exec);
        t.equal(s, 'all 40 items on Results, none on Skipped', [results.length, skipped.length], [40, 0]);
        checkEveryItemOnce(t, s, items, { results, skipped });
        checkResultValues(t, s, items, results);
        checkNoErrorsOn(t, s, { results, skipped });
        const key = statsOf(stats, 'sandbox-premium');
        checkBilling(t, s, key, results, distinctValidDomains(items).size);
        t.equal(s, 'one request for 25 distinct domains', key.requests, 1);
      },
    });
  }

  // 2. Pairing: a custom URL field, input fields off, skips interleaved; n8n's own $('Source').item must resolve.
  {
    const valid = itemsOverDomains(24, 10, 202, 'pairing-');
    const odd: unknown[] = ['', 'not a domain', '   ', 'localhost', 42, 'https://'];
    const items: TestItem[] = [];
    valid.forEach((item, i) => {
      items.push({
        row: items.length,
        site: item.url,
        url: 'decoy.invalid-field',
        note: `item ${items.length}`,
      });
      if (i % 4 === 1)
        items.push({ row: items.length, site: odd[(i - 1) / 4], note: `item ${items.length}` });
    });
    list.push({
      id: 'e2ePairing',
      title: 'pairing',
      items,
      keys: ['sandbox-premium'],
      sandbox: { keys: KEYS, faults: { shuffleData: true, seed: 5 } },
      build: (ctx) =>
        workflow(
          'e2ePairing',
          'e2e pairing',
          [
            manualTrigger(),
            sourceItems(items),
            dapaChecker('DAPA', ctx.credentials.premium, {
              url: '={{ $json.site }}',
              options: { includeInputFields: false },
            }),
            pairingProbe('Results paired'),
            pairingProbe('Skipped paired'),
          ],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
            ['DAPA', 'Results paired', 0],
            ['DAPA', 'Skipped paired', 1],
          ],
        ),
      evaluate(t, { exec }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        const { results, skipped } = dapaOutputs(exec);
        checkEveryItemOnce(t, s, items, { results, skipped });
        checkResultValues(t, s, items, results, { urlField: 'site', inputFieldsKept: false });
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
              row === undefined ||
              item.json.sourceRow !== row ||
              item.json.sourceUrl !== (items[row].url ?? null)
            );
          });
          t.check(
            s,
            `n8n resolves $('Source').item for every item after ${probe.split(' ')[0]} (${dapa.length} items)`,
            probed.length === dapa.length && bad.length === 0,
            `probe saw ${probed.length}, mismatched ${clip(bad.map((b) => b.json))}`,
          );
        }
      },
    });
  }

  // 3. Skips: empty, blank, not text, not a domain, missing field; each on Skipped with its reason and a message.
  {
    const expected: Array<[unknown, string]> = [
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
    expected.forEach(([url], i) => {
      const item: TestItem = { row: items.length, note: `item ${items.length}` };
      if (url !== undefined) item.url = url;
      items.push(item);
      if (i % 4 === 0) {
        const domain = validDomains[i / 4];
        items.push({ row: items.length, url: spell(domain, 1), note: `item ${items.length}` });
      }
    });
    list.push({
      id: 'e2eSkips',
      title: 'skips',
      items,
      keys: ['sandbox-premium'],
      sandbox: PLAIN,
      build: (ctx) =>
        workflow(
          'e2eSkips',
          'e2e skips',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.premium)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec, stats }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        const { results, skipped } = dapaOutputs(exec);
        checkEveryItemOnce(t, s, items, { results, skipped });
        checkNoErrorsOn(t, s, { results, skipped });
        checkResultValues(t, s, items, results);
        const reasons = new Map(skipped.map((item) => [pairedIndex(item), item.json]));
        const wrong: string[] = [];
        let row = 0;
        expected.forEach(([url, reason], i) => {
          const got = reasons.get(row);
          const message = got?.message;
          if (
            got?.reason !== reason ||
            typeof message !== 'string' ||
            message.trim() === '' ||
            got.row !== row
          ) {
            wrong.push(`${clip(url)}: got ${clip(got)}`);
          }
          row += i % 4 === 0 ? 2 : 1;
        });
        t.check(
          s,
          `each of the ${expected.length} bad inputs is on Skipped with its reason and a message`,
          wrong.length === 0,
          wrong.join('; '),
        );
        const key = statsOf(stats, 'sandbox-premium');
        t.equal(s, 'only the 3 valid domains are billed, in one request', [key.billed, key.requests], [3, 1]);
      },
    });
  }

  // 4. Nothing valid at all: every item on Skipped, the execution still succeeds, nothing is billed.
  {
    const items: TestItem[] = ['', 'nope', 'also not a url', 7].map((url, row) => ({
      row,
      url,
      note: `item ${row}`,
    }));
    list.push({
      id: 'e2eAllSkipped',
      title: 'all skipped',
      items,
      keys: ['sandbox-premium'],
      sandbox: PLAIN,
      build: (ctx) =>
        workflow(
          'e2eAllSkipped',
          'e2e all skipped',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.premium)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec, stats }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        const { results, skipped } = dapaOutputs(exec);
        t.equal(s, 'no Results, 4 Skipped', [results.length, skipped.length], [0, 4]);
        checkEveryItemOnce(t, s, items, { results, skipped });
        checkNoErrorsOn(t, s, { results, skipped });
        t.equal(s, 'nothing billed', statsOf(stats, 'sandbox-premium').billed, 0);
      },
    });
  }

  // 5. Faults: 5xx, HTML 502 pages, lookup_failed, a hidden per-request maximum, shuffled data, odd spellings of
  //    `domain`, numeric strings, latency. Every item must end on an output; paid results are never dropped.
  {
    const items = itemsOverDomains(150, 60, 505, 'faults-');
    list.push({
      id: 'e2eFaults',
      title: 'faults',
      items,
      keys: ['e2e-small'],
      sandbox: {
        keys: KEYS,
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
      },
      build: (ctx) =>
        workflow(
          'e2eFaults',
          'e2e faults',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.small)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec, stats }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        const { results, skipped } = dapaOutputs(exec);
        checkEveryItemOnce(t, s, items, { results, skipped });
        checkResultValues(t, s, items, results);
        checkNoErrorsOn(t, s, { results, skipped });
        const key = statsOf(stats, 'e2e-small');
        const resultDomains = new Set(results.map((r) => normalizeDomain(String(r.json.domain))));
        t.check(s, 'no domain is billed twice', billedTwice(key).length === 0, clip(billedTwice(key)));
        const billed = Object.keys(key.billedByDomain).sort();
        t.equal(
          s,
          'the billed domains are exactly the domains on Results',
          billed,
          [...resultDomains].sort(),
        );
        const badSkips = skipped.filter(
          (item) =>
            typeof item.json.message !== 'string' ||
            ['invalid_url_format', 'empty_url'].includes(String(item.json.reason)),
        );
        t.check(
          s,
          'valid URLs are skipped only for retryable reasons, with a message',
          badSkips.length === 0,
          clip(badSkips.map((b) => b.json)),
        );
        t.check(
          s,
          `most domains end with a result despite the faults (${resultDomains.size} of 60)`,
          resultDomains.size >= 50,
          `${resultDomains.size} results; skips: ${clip(skipped.map((k) => k.json.reason))}`,
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
      },
    });
  }

  // 6. Rate limits, not waited for: URLs beyond the plan's minute go to Skipped as rate_limit_reached, at once.
  const pacedItems = itemsOverDomains(100, 80, 606, 'paced-');
  list.push({
    id: 'e2eRateNoWait',
    title: 'rate limits, no wait',
    items: pacedItems,
    keys: ['e2e-paced'],
    sandbox: PLAIN,
    build: (ctx) =>
      workflow(
        'e2eRateNoWait',
        'e2e rate limits without waiting',
        [
          manualTrigger(),
          sourceItems(pacedItems),
          dapaChecker('DAPA', ctx.credentials.paced, { options: { waitForRateLimits: false } }),
        ],
        [
          ['Start', 'Source'],
          ['Source', 'DAPA'],
        ],
      ),
    evaluate(t, { exec, stats }) {
      const s = this.title;
      checkSucceeded(t, s, exec);
      const { results, skipped } = dapaOutputs(exec);
      checkEveryItemOnce(t, s, pacedItems, { results, skipped });
      checkNoErrorsOn(t, s, { results, skipped });
      if (results.length > 0) checkResultValues(t, s, pacedItems, results);
      const key = statsOf(stats, 'e2e-paced');
      const resultDomains = new Set(results.map((r) => normalizeDomain(String(r.json.domain))));
      t.equal(
        s,
        'billed = domains on Results, at most the 60 URLs of one minute',
        [key.billed, key.billed <= 60],
        [resultDomains.size, true],
      );
      const otherReasons = skipped.filter((item) => item.json.reason !== 'rate_limit_reached');
      t.check(
        s,
        'the rest are on Skipped as rate_limit_reached',
        skipped.length > 0 && otherReasons.length === 0,
        clip(otherReasons.map((o) => o.json)),
      );
      const ms = nodeTimeMs(exec, 'DAPA') ?? Infinity;
      t.check(s, 'the node does not wait for the limit to reset', ms < 20_000, `node took ${ms} ms`);
    },
  });

  // 7. Rate limits waited out: 429s (Retry-After as an HTTP date) and rate_limit_reached skips are waited for.
  list.push({
    id: 'e2eRateWait',
    title: 'rate limits, waited out',
    items: pacedItems,
    keys: ['e2e-paced'],
    sandbox: { keys: KEYS, faults: { retryAfter: 'date' } },
    timeoutMs: 240_000,
    build: (ctx) =>
      workflow(
        'e2eRateWait',
        'e2e rate limits waited out',
        [manualTrigger(), sourceItems(pacedItems), dapaChecker('DAPA', ctx.credentials.paced)],
        [
          ['Start', 'Source'],
          ['Source', 'DAPA'],
        ],
      ),
    evaluate(t, { exec, stats }) {
      const s = this.title;
      checkSucceeded(t, s, exec);
      const { results, skipped } = dapaOutputs(exec);
      t.equal(s, 'all 100 items on Results after the wait', [results.length, skipped.length], [100, 0]);
      checkEveryItemOnce(t, s, pacedItems, { results, skipped });
      checkResultValues(t, s, pacedItems, results);
      const key = statsOf(stats, 'e2e-paced');
      checkBilling(t, s, key, results, 80);
      t.check(
        s,
        'the plan limits were hit (429 or rate_limit_reached) and waited out',
        (key.responsesByStatus['429'] ?? 0) + key.rateLimitSkips > 0,
        clip(key),
      );
      t.check(
        s,
        'no 429 storm: at most 3 answers 429',
        (key.responsesByStatus['429'] ?? 0) <= 3,
        clip(key.responsesByStatus),
      );
      console.log(
        `        (sandbox answered ${JSON.stringify(key.responsesByStatus)}, rate_limit_reached ${key.rateLimitSkips}; ` +
          `DAPA node ${nodeTimeMs(exec, 'DAPA')} ms)`,
      );
    },
  });

  // 8. Wrong key: the execution fails with the node's own message, nothing is retried or billed.
  {
    const items = domainPool(5, 'wrongkey-').map((url, row) => ({ row, url, note: `item ${row}` }));
    list.push({
      id: 'e2eWrongKey',
      title: 'wrong key',
      items,
      keys: [WRONG_KEY],
      sandbox: PLAIN,
      build: (ctx) =>
        workflow(
          'e2eWrongKey',
          'e2e wrong key',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.wrong)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec, stats }) {
        const s = this.title;
        const error = exec.run?.data.resultData.error;
        t.check(
          s,
          'the execution fails',
          exec.exitCode !== 0 && exec.run?.status === 'error',
          `exit ${exec.exitCode}, status ${exec.run?.status}`,
        );
        t.check(s, 'the error names the DAPA node', error?.node?.name === 'DAPA', clip(error?.node));
        t.equal(s, 'the error is a NodeApiError', error?.name, 'NodeApiError');
        t.check(
          s,
          'the message says the API key is wrong',
          /(wrong|incorrect|invalid) api key/i.test(error?.message ?? '') &&
            !/expired/i.test(error?.message ?? ''),
          clip(error?.message),
        );
        t.check(
          s,
          'the description says what to do (fix the key in the credential)',
          /credential/i.test(error?.description ?? ''),
          clip(error?.description),
        );
        const unknown = statsOf(stats, '(unknown)');
        t.equal(s, 'one refused request, nothing billed', [unknown.requests, unknown.billed], [1, 0]);
      },
    });
  }

  // 8b. The service blocks this network (a 403 nginx page for every request): its own error, not a wrong key.
  {
    const items = domainPool(5, 'blocked-').map((url, row) => ({ row, url, note: `item ${row}` }));
    list.push({
      id: 'e2eNetworkBlocked',
      title: 'network blocked (403 page)',
      items,
      keys: ['sandbox-premium'],
      sandbox: { keys: KEYS, faults: { blockNetwork: true } },
      build: (ctx) =>
        workflow(
          'e2eNetworkBlocked',
          'e2e network blocked',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.premium)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec, stats }) {
        const s = this.title;
        const error = exec.run?.data.resultData.error;
        t.check(s, 'the execution fails', exec.run?.status === 'error', `status ${exec.run?.status}`);
        t.equal(
          s,
          'the error is a NodeApiError of the DAPA node',
          [error?.name, error?.node?.name],
          ['NodeApiError', 'DAPA'],
        );
        t.check(
          s,
          'the message says the network is blocked, not the key',
          /^Network blocked/.test(error?.message ?? '') && /not your API key/.test(error?.message ?? ''),
          clip(error?.message),
        );
        t.check(
          s,
          'the description says what to do (self-hosted n8n, another network, ask support)',
          /self-hosted n8n/.test(error?.description ?? '') && /support/.test(error?.description ?? ''),
          clip(error?.description),
        );
        const all = Object.values(stats).reduce((n, k) => n + k.requests, 0);
        t.equal(s, 'one request, not retried', all, 1);
      },
    });
  }

  // 8c. Metrics the service has no data for (-1): null, named in no_data; no_data is [] on every other result.
  {
    const items = domainPool(30, 'nodata-').map((url, row) => ({ row, url, note: `item ${row}` }));
    list.push({
      id: 'e2eNoData',
      title: 'no-data metrics',
      items,
      keys: ['sandbox-premium'],
      sandbox: { keys: KEYS, faults: { noDataRate: 0.4 } },
      build: (ctx) =>
        workflow(
          'e2eNoData',
          'e2e no-data metrics',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.premium)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        const { results } = dapaOutputs(exec);
        t.equal(s, 'all 30 on Results', results.length, 30);
        const wrong = results.filter((item) => {
          const domain = String(item.json.domain);
          const none = hasNoSpamData(domain, 0.4);
          const expected = metricsFor(domain, 0.4);
          return none
            ? item.json.spam_score !== null || JSON.stringify(item.json.no_data) !== '["spam_score"]'
            : item.json.spam_score !== expected.spam_score || JSON.stringify(item.json.no_data) !== '[]';
        });
        const flagged = results.filter(
          (item) => Array.isArray(item.json.no_data) && item.json.no_data.length,
        );
        t.check(
          s,
          'a no-data spam score is null and named in no_data; the others have no_data []',
          wrong.length === 0 && flagged.length > 0 && flagged.length < results.length,
          `${wrong.length} wrong: ${clip(wrong.slice(0, 3).map((i) => i.json))}; flagged ${flagged.length}`,
        );
      },
    });
  }

  // 8d. Learned once: a second execution (a new n8n process) starts from the plan kept in the static data.
  {
    const items = domainPool(35, 'learned-').map((url, row) => ({ row, url, note: `item ${row}` }));
    list.push({
      id: 'e2eLearnedOnce',
      title: 'plan learned once',
      items,
      keys: ['e2e-small'],
      sandbox: PLAIN,
      twice: true,
      build: (ctx) =>
        workflow(
          'e2eLearnedOnce',
          'e2e plan learned once',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.small)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec, stats, limitExceeded, first }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        t.equal(
          s,
          'both executions put all 35 on Results',
          [outputOf(first?.exec.run, 'DAPA', 0).length, dapaOutputs(exec).results.length],
          [35, 35],
        );
        t.check(
          s,
          'the first execution learns the maximum per request (a 422 Limit Exceeded)',
          (first?.limitExceeded ?? 0) >= 1,
          `${first?.limitExceeded}`,
        );
        t.equal(
          s,
          'the second execution sends no learning request (no 422 Limit Exceeded)',
          limitExceeded,
          0,
        );
        t.equal(
          s,
          'the second execution sends ceil(35/10) = 4 requests',
          statsOf(stats, 'e2e-small').requests,
          4,
        );
      },
    });
  }

  // 9. Expired plan, "Continue (using regular output)": every item gets the error, the run goes on.
  {
    const items = domainPool(6, 'expired-').map((url, row) => ({ row, url, note: `item ${row}` }));
    for (const mode of ['continueRegularOutput', 'continueErrorOutput'] as const) {
      const id = mode === 'continueRegularOutput' ? 'e2eExpiredRegular' : 'e2eExpiredErrorOut';
      list.push({
        id,
        title: `expired plan, ${mode}`,
        items,
        keys: ['sandbox-expired'],
        sandbox: PLAIN,
        build: (ctx) =>
          workflow(
            id,
            `e2e expired plan ${mode}`,
            [
              manualTrigger(),
              sourceItems(items),
              dapaChecker('DAPA', ctx.credentials.expired, { onError: mode }),
            ],
            [
              ['Start', 'Source'],
              ['Source', 'DAPA'],
            ],
          ),
        evaluate(t, { exec, stats }) {
          const s = this.title;
          checkSucceeded(t, s, exec);
          const errorOutput = mode === 'continueRegularOutput' ? 0 : 2;
          const errors = outputOf(exec.run, 'DAPA', errorOutput);
          const others = [0, 1, 2]
            .filter((i) => i !== errorOutput)
            .flatMap((i) => outputOf(exec.run, 'DAPA', i));
          t.equal(
            s,
            `all ${items.length} items on output ${errorOutput}, none elsewhere`,
            [errors.length, others.length],
            [items.length, 0],
          );
          checkEveryItemOnce(t, s, items, { errors });
          // n8n itself replaces the JSON of an item that carries an error with { error: message }.
          const bad = errors.filter((item) => {
            const message =
              typeof item.json.error === 'string' ? item.json.error : JSON.stringify(item.json.error ?? '');
            return !/plan/i.test(message) || !/expired/i.test(message) || /wrong api key/i.test(message);
          });
          t.check(
            s,
            'each item carries the "plan expired" error',
            bad.length === 0,
            clip(bad.map((b) => b.json)),
          );
          t.equal(s, 'nothing billed', statsOf(stats, 'sandbox-expired').billed, 0);
        },
      });
    }
  }

  // 10. Load: 1,000 items over 400 distinct domains, one execution.
  {
    const items = thousandItemsOver400Domains();
    list.push({
      id: 'e2eLoad1000',
      title: '1,000 items / 400 domains',
      items,
      keys: ['sandbox-premium'],
      sandbox: PLAIN,
      build: (ctx) =>
        workflow(
          'e2eLoad1000',
          'e2e 1000 items over 400 domains',
          [manualTrigger(), sourceItems(items), dapaChecker('DAPA', ctx.credentials.premium)],
          [
            ['Start', 'Source'],
            ['Source', 'DAPA'],
          ],
        ),
      evaluate(t, { exec, stats }) {
        const s = this.title;
        checkSucceeded(t, s, exec);
        const { results, skipped } = dapaOutputs(exec);
        t.equal(s, '1,000 items out, all on Results', [results.length, skipped.length], [1000, 0]);
        checkEveryItemOnce(t, s, items, { results, skipped });
        checkResultValues(t, s, items, results);
        const key = statsOf(stats, 'sandbox-premium');
        checkBilling(t, s, key, results, 400);
        const floor = Math.ceil(400 / 50);
        t.check(
          s,
          `requests near ceil(400/50) = ${floor} (at most ${floor + 2}, counting the plan-size probe)`,
          key.requests >= floor && key.requests <= floor + 2,
          `requests ${key.requests}, by status ${clip(key.responsesByStatus)}`,
        );
        t.equal(s, 'no 429', key.responsesByStatus['429'] ?? 0, 0);
        console.log(
          `        (DAPA node: ${nodeTimeMs(exec, 'DAPA')} ms for 1,000 items; ${key.requests} requests)`,
        );
      },
    });
  }

  return list;
}

// ---- main ------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const t = new Tally();
  const only = process.env.E2E_ONLY?.split(',').filter(Boolean);
  const lint = process.env.E2E_LINT_N8N;
  if (lint === 'passed' || lint === 'failed') {
    t.check(
      'package',
      'npm run lint:n8n (official community-node lint) passes',
      lint === 'passed',
      'see its output above',
    );
  }
  let limitExceeded = 0;
  const sandbox = await startSandbox({
    port: 0,
    config: PLAIN,
    onRequest: (entry) => {
      if (entry.status === 422 && !entry.summary) limitExceeded += 1;
    },
  });
  const n8n = new N8nCli(WORK_DIR, (line) => console.log(`        ${line}`));
  try {
    n8n.reset();
    const packageCopy = await snapshotNodePackage(WORK_DIR);
    t.check(
      'package',
      'the node and credential are built in n8n-node/dist (npm run build)',
      !!packageCopy,
      NODE_DIST,
    );
    if (packageCopy) n8n.extensionsDir = packageCopy;
    const credentials: Context['credentials'] = {
      premium: dapaCredential('e2eCredPremium', 'DAPA premium', 'sandbox-premium', sandbox.url),
      wrong: dapaCredential('e2eCredWrong', 'DAPA wrong key', WRONG_KEY, sandbox.url),
      expired: dapaCredential('e2eCredExpired', 'DAPA expired plan', 'sandbox-expired', sandbox.url),
      small: dapaCredential('e2eCredSmall', 'DAPA small plan', 'e2e-small', sandbox.url),
      paced: dapaCredential('e2eCredPaced', 'DAPA paced plan', 'e2e-paced', sandbox.url),
      httpPremium: bearerHeaderCredential('e2eCredHttp', 'Bearer premium (HTTP Request)', 'sandbox-premium'),
    };
    const ctx: Context = { baseUrl: sandbox.url, credentials };
    const selected = scenarios().filter((s) => !only || only.includes(s.id));
    console.log(
      `n8n user folder: ${n8n.userFolder}; sandbox: ${sandbox.url}; node package: ${n8n.extensionsDir}`,
    );
    await n8n.importCredentials(Object.values(credentials));
    // The shipped workflow templates (n8n-node/templates/), as a user imports them, in the same n8n.
    const templatePaths: Record<string, string> = { [NEW_ONLY_ID]: 'tpl-new-only', [WATCH_ID]: 'tpl-watch' };
    const templates = [
      instantiate('check-only-what-is-new.json', NEW_ONLY_ID, credentials.premium, newOnlyItems()),
      instantiate('monthly-watch.json', WATCH_ID, credentials.premium, watchItems()),
    ]
      .filter((template) => !only || only.includes(template.id))
      .map((template) => withWebhook(template, templatePaths[template.id]));
    await n8n.importWorkflows([...selected.map((s) => s.build(ctx)), ...templates]);

    for (const scenario of selected) {
      let first: Observed | undefined;
      if (scenario.twice) {
        sandbox.sandbox.configure(scenario.sandbox);
        limitExceeded = 0;
        console.log(`\n# ${scenario.title} (workflow ${scenario.id}, first of two executions)`);
        const firstExec = await n8n.execute(scenario.id, scenario.timeoutMs ?? 180_000);
        first = { exec: firstExec, stats: sandbox.sandbox.stats(), limitExceeded };
      }
      sandbox.sandbox.configure(scenario.sandbox);
      limitExceeded = 0;
      console.log(`\n# ${scenario.title} (workflow ${scenario.id}, ${scenario.items.length} items)`);
      const exec = await n8n.execute(scenario.id, scenario.timeoutMs ?? 180_000);
      writeFileSync(
        path.join(WORK_DIR, `${scenario.id}.out.txt`),
        exec.stdout + '\n--- stderr ---\n' + exec.stderr,
      );
      console.log(`        (n8n execute: ${exec.elapsedMs} ms, exit ${exec.exitCode})`);
      const stats = sandbox.sandbox.stats();
      try {
        scenario.evaluate(t, { exec, stats, limitExceeded, first });
      } catch (error) {
        t.check(scenario.title, 'evaluation ran', false, (error as Error).stack ?? String(error));
      }
      const leaked = scenario.keys.filter((key) => (exec.stdout + exec.stderr).includes(key));
      t.check(
        scenario.title,
        'the API key appears nowhere in what n8n printed',
        leaked.length === 0,
        `${leaked.length} key(s) found`,
      );
    }

    // The workflow templates, each executed twice, in one `n8n start` on this user folder (the Data Table node
    // needs n8n's backend modules, which `n8n execute` does not load); their Data tables live in its database.
    if (templates.length > 0) {
      sandbox.sandbox.configure(PLAIN);
      const drifting = withMetricDrift(sandbox, driftedMetrics);
      const server = await startTemplateServer(
        n8n,
        templates.map((template) => template.id),
        templatePaths,
      );
      try {
        const templateRun = {
          t,
          n8n,
          sandbox: drifting,
          key: 'sandbox-premium',
          execute: async (id: string) => {
            console.log(`\n# template workflow ${id} (through its webhook, in n8n start)`);
            const exec = await server.execute(id);
            writeFileSync(
              path.join(WORK_DIR, `${id}.out.txt`),
              exec.stdout + '\n--- stderr ---\n' + exec.stderr,
            );
            console.log(`        (execution: ${exec.elapsedMs} ms, status ${exec.run?.status})`);
            return exec;
          },
        };
        if (templates.some((template) => template.id === NEW_ONLY_ID)) await runNewOnly(templateRun);
        if (templates.some((template) => template.id === WATCH_ID)) await runWatch(templateRun);
      } finally {
        await server.stop();
      }
      const leaked = readFileSync(path.join(n8n.workDir, 'template-server.log'), 'utf8').includes(
        'sandbox-premium',
      );
      t.check('templates', 'the API key appears nowhere in what n8n start printed', !leaked);
    }
  } finally {
    await sandbox.close();
  }

  if (t.failures.length > 0) {
    console.log('\nFailures:');
    for (const failure of t.failures) console.log(`  - ${failure}`);
  }
  console.log(t.summary());
  return t.failed === 0 ? 0 : 1;
}

runSuite(main);
