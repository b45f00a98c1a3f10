// The assertions of the real-n8n scenario table: `checkRow` turns one row's expectations (lib/scenarioTable.ts)
// into named checks on what n8n printed and on the sandbox's counters; the helpers below are shared by the rows.
import {
  checkEntry,
  emptyStats,
  metricsFor,
  normalizeDomain,
  type KeyStats,
  type SandboxStats,
} from '../../sandbox/handler';
import type { TestItem } from './datasets';
import { outputOf, pairedIndex, tail, type Execution, type OutputItem } from './n8n';
import { Tally, clip } from './tally';

/** A piece of text that must match every pattern of `matches` and none of `notMatches`. */
export interface TextExpectation {
  /** The check's name: what the text must say. */
  says: string;
  matches: RegExp[];
  notMatches?: RegExp[];
}

/** What one row expects; every field present is checked, in the order of `checkRow`. */
export interface Expected {
  /** The execution fails with a NodeApiError of the DAPA node saying this (default: it succeeds). */
  fails?: { message: TextExpectation; description: TextExpectation };
  /** How many items come out on Results and on Skipped. */
  outputs?: { results: number; skipped: number };
  /** With "Continue" on error: every item comes out on this output, carrying an error that says this. */
  errorsOn?: { output: number; error: TextExpectation };
  /** Every input item comes out exactly once (on Results and Skipped, or on `errorsOn`), paired with itself. */
  everyItemOnce?: boolean;
  /** Results carry their own domain's metrics as numbers (and the input fields, unless `inputFieldsKept` is false). */
  values?: { urlField?: string; inputFieldsKept?: boolean; onlyIfAny?: boolean };
  /** No output item carries json.error. */
  noErrors?: boolean;
  /** Why items are on Skipped: each bad input's own reason, one reason for all, or never these reasons. */
  skipReasons?:
    { each: Array<{ row: number; input: unknown; reason: string }> } | { all: string } | { never: string[] };
  /** Billed queries = this many distinct valid domains, none twice, each delivered on Results. */
  billedDomains?: number;
  /** No domain billed twice, and the billed domains are exactly the domains on Results. */
  billedAreResults?: boolean;
  /** The sandbox's counters for `key` (default: the row's key; `*`: all keys together). */
  counters?: { key?: string; requests?: number; billed?: number };
  /** At most this many answers 429. */
  max429?: number;
}

/** What one execution of a row left: n8n's run, the sandbox's counters, and the DAPA node's two outputs. */
export interface ScenarioRun {
  items: TestItem[];
  exec: Execution;
  stats: SandboxStats;
  /** The counters of the row's own API key. */
  key: KeyStats;
  results: OutputItem[];
  skipped: OutputItem[];
  /** 422 Limit Exceeded answers (a 422 without an envelope): the requests the node learns the maximum from. */
  limitExceeded: number;
  /** For a row run twice: what the first execution did (the sandbox is reset between the two). */
  first?: ScenarioRun;
}

export function statsOf(stats: SandboxStats, key: string): KeyStats {
  return stats[key] ?? emptyStats();
}

export function billedTwice(stats: KeyStats): string[] {
  return Object.entries(stats.billedByDomain)
    .filter(([, times]) => times > 1)
    .map(([domain, times]) => `${domain} x${times}`);
}

export function distinctValidDomains(items: TestItem[], field = 'url'): Set<string> {
  const domains = new Set<string>();
  for (const item of items) {
    const checked = checkEntry(item[field]);
    if (checked.ok) domains.add(checked.domain);
  }
  return domains;
}

export function resultDomains(results: OutputItem[]): Set<string> {
  return new Set(results.map((r) => normalizeDomain(String(r.json.domain))));
}

export function nodeTimeMs(exec: Execution, nodeName: string): number | undefined {
  return exec.run?.data.resultData.runData[nodeName]?.[0]?.executionTime;
}

function says(text: string, expectation: TextExpectation): boolean {
  return (
    expectation.matches.every((pattern) => pattern.test(text)) &&
    !(expectation.notMatches ?? []).some((pattern) => pattern.test(text))
  );
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

/** The execution's outcome: it succeeds, or it fails with the DAPA node's NodeApiError saying what is expected. */
function checkOutcome(t: Tally, s: string, exec: Execution, fails: Expected['fails']) {
  if (!fails) {
    t.check(
      s,
      'the execution succeeds',
      exec.exitCode === 0 && exec.run?.status === 'success',
      `exit ${exec.exitCode}${exec.timedOut ? ' (timed out)' : ''}, status ${exec.run?.status}: ${tail(exec.stdout + exec.stderr, 12)}`,
    );
    return;
  }
  const error = exec.run?.data.resultData.error;
  t.check(
    s,
    'the execution fails',
    exec.exitCode !== 0 && exec.run?.status === 'error',
    `exit ${exec.exitCode}, status ${exec.run?.status}`,
  );
  t.check(s, 'the error names the DAPA node', error?.node?.name === 'DAPA', clip(error?.node));
  t.equal(s, 'the error is a NodeApiError', error?.name, 'NodeApiError');
  t.check(s, fails.message.says, says(error?.message ?? '', fails.message), clip(error?.message));
  t.check(
    s,
    fails.description.says,
    says(error?.description ?? '', fails.description),
    clip(error?.description),
  );
}

function checkSkipReasons(t: Tally, s: string, skipped: OutputItem[], expected: Expected['skipReasons']) {
  if (!expected) return;
  if ('each' in expected) {
    const reasons = new Map(skipped.map((item) => [pairedIndex(item), item.json]));
    const wrong = expected.each
      .filter(({ row, reason }) => {
        const got = reasons.get(row);
        const message = got?.message;
        return (
          got?.reason !== reason || typeof message !== 'string' || message.trim() === '' || got.row !== row
        );
      })
      .map(({ row, input }) => `${clip(input)}: got ${clip(reasons.get(row))}`);
    t.check(
      s,
      `each of the ${expected.each.length} bad inputs is on Skipped with its reason and a message`,
      wrong.length === 0,
      wrong.join('; '),
    );
  } else if ('all' in expected) {
    const otherReasons = skipped.filter((item) => item.json.reason !== expected.all);
    t.check(
      s,
      `the rest are on Skipped as ${expected.all}`,
      skipped.length > 0 && otherReasons.length === 0,
      clip(otherReasons.map((o) => o.json)),
    );
  } else {
    const badSkips = skipped.filter(
      (item) => typeof item.json.message !== 'string' || expected.never.includes(String(item.json.reason)),
    );
    t.check(
      s,
      `valid URLs are skipped only for retryable reasons, with a message (never ${expected.never.join(', ')})`,
      badSkips.length === 0,
      clip(badSkips.map((b) => b.json)),
    );
  }
}

/** Checks one row's expectations on one execution; `s` names the row in every check. */
export function checkRow(t: Tally, s: string, expected: Expected, run: ScenarioRun): void {
  const { exec, items, results, skipped, key } = run;
  checkOutcome(t, s, exec, expected.fails);
  if (expected.outputs) {
    t.equal(
      s,
      `${expected.outputs.results} items on Results, ${expected.outputs.skipped} on Skipped`,
      [results.length, skipped.length],
      [expected.outputs.results, expected.outputs.skipped],
    );
  }
  let errors: OutputItem[] = [];
  if (expected.errorsOn) {
    const { output, error } = expected.errorsOn;
    errors = outputOf(exec.run, 'DAPA', output);
    const others = [0, 1, 2].filter((i) => i !== output).flatMap((i) => outputOf(exec.run, 'DAPA', i));
    t.equal(
      s,
      `all ${items.length} items on output ${output}, none elsewhere`,
      [errors.length, others.length],
      [items.length, 0],
    );
    // n8n itself replaces the JSON of an item that carries an error with { error: message }.
    const bad = errors.filter((item) => {
      const message =
        typeof item.json.error === 'string' ? item.json.error : JSON.stringify(item.json.error ?? '');
      return !says(message, error);
    });
    t.check(s, error.says, bad.length === 0, clip(bad.map((b) => b.json)));
  }
  if (expected.everyItemOnce) {
    checkEveryItemOnce(t, s, items, expected.errorsOn ? { errors } : { results, skipped });
  }
  if (expected.values && (!expected.values.onlyIfAny || results.length > 0)) {
    checkResultValues(t, s, items, results, expected.values);
  }
  if (expected.noErrors) {
    const withError = [...results, ...skipped]
      .filter((item) => item.json.error !== undefined)
      .map((item) => `#${pairedIndex(item)}`);
    t.check(
      s,
      'no item carries json.error (a skip is not an error)',
      withError.length === 0,
      clip(withError),
    );
  }
  checkSkipReasons(t, s, skipped, expected.skipReasons);
  if (expected.billedDomains !== undefined) {
    t.equal(
      s,
      `billed queries = ${expected.billedDomains} distinct valid domains`,
      key.billed,
      expected.billedDomains,
    );
  }
  if (expected.billedDomains !== undefined || expected.billedAreResults) {
    t.check(s, 'no domain is billed twice', billedTwice(key).length === 0, clip(billedTwice(key)));
  }
  const billed = Object.keys(key.billedByDomain).sort();
  if (expected.billedDomains !== undefined) {
    const delivered = resultDomains(results);
    const paidNotDelivered = billed.filter((d) => !delivered.has(d));
    t.check(
      s,
      'every billed domain reaches the Results output',
      paidNotDelivered.length === 0,
      clip(paidNotDelivered),
    );
  }
  if (expected.billedAreResults) {
    t.equal(
      s,
      'the billed domains are exactly the domains on Results',
      billed,
      [...resultDomains(results)].sort(),
    );
  }
  if (expected.counters) {
    const { key: name, ...want } = expected.counters;
    const counters =
      name === '*'
        ? Object.values(run.stats).reduce(
            (sum, k) => ({ requests: sum.requests + k.requests, billed: sum.billed + k.billed }),
            { requests: 0, billed: 0 },
          )
        : name
          ? statsOf(run.stats, name)
          : key;
    const got = Object.fromEntries(
      Object.keys(want).map((field) => [field, counters[field as 'requests' | 'billed']]),
    );
    t.equal(s, `sandbox counters of ${name ?? 'its key'}: ${clip(want)}`, got, want);
  }
  if (expected.max429 !== undefined) {
    t.check(
      s,
      `at most ${expected.max429} answers 429`,
      (key.responsesByStatus['429'] ?? 0) <= expected.max429,
      clip(key.responsesByStatus),
    );
  }
}
