// `npm run demo`: the main job against the built-in sandbox, no key or internet needed. Starts the sandbox on the
// real service's entry plan (`sandbox-basic`), checks a sample list through the core (one line per input, then
// the totals), runs a second time to show what the learned plan saves, and says how long the plan makes a list take.
// Builds the bundles first (npm run build; `--no-build` uses them as built); `--help` prints this and does nothing else.
import { CheckRun, outcomeText, runAsync, type Learned, type Outcome, type Report } from '../shared';
import { runOnVirtualSandbox } from './sandbox/virtual';
import { createSandbox, DEFAULT_CONFIG, type FaultConfig } from './sandbox/handler';
import { startSandbox } from './sandbox/server';
import { buildFirst, exitWithHelpIfAsked } from './cliHelp';

const KEY = 'sandbox-basic';
const PLAN = DEFAULT_CONFIG.keys[KEY];
/** The real service's habits: a spam score of -1 ("no data") for some domains. */
const FAULTS: FaultConfig = { noDataRate: 0.1 };

const SAMPLE: unknown[] = [
  'moz.com',
  ' HTTPS://www.Moz.com/blog?utm=1 ',
  'moz.com/',
  'wikipedia.org',
  'https://en.wikipedia.org/wiki/Domain_authority',
  '',
  '   ',
  'not a domain',
  'localhost',
  42,
  true,
  'github.com',
  'http://GitHub.com:443/features',
  'example.co.uk',
  'bücher.de',
  'x'.repeat(2100) + '.com',
  ...Array.from({ length: 40 }, (_, i) => `shop${i + 1}.example.net`),
];

function cell(text: string, width: number): string {
  const t = text.length > width ? text.slice(0, width - 1) + '…' : text;
  return t.padEnd(width) + ' ';
}

function describe(o: Outcome): string {
  if (o.kind === 'record') {
    const r = o.record;
    const spam = r.spam_score === null ? '— (no data)' : String(r.spam_score);
    return `DA ${r.site_da}  PA ${r.site_pa}  MR ${r.site_mr}  Spam ${spam}${o.cached ? '  (cached)' : ''}`;
  }
  if (o.kind === 'skip') return o.blank ? '(blank)' : `${o.reason}: ${outcomeText(o)}`;
  return `${o.code}: ${outcomeText(o)}`;
}

async function check(url: string, values: unknown[], learned: Learned): Promise<Report> {
  const run = new CheckRun(values, {
    baseUrl: url,
    deadline: Date.now() + 120_000,
    maxUrlsPerRequest: learned.maxUrlsPerRequest,
    pace: learned,
  });
  return runAsync(run, {
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    send: async (request) => {
      const res = await fetch(request.url, {
        method: request.method,
        headers: { ...request.headers, Authorization: `Bearer ${KEY}` },
        body: request.body,
      });
      return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
    },
  });
}

function printTotals(label: string, report: Report): void {
  const t = report.totals;
  const skips = Object.entries(t.skippedByReason)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  console.log(
    `${label}: ${t.inputs} inputs, ${t.distinct} distinct domains → ${t.requests} requests, ${t.billed} billed queries; ` +
      `${t.records} records, skipped by reason: ${skips || 'none'}; errors: ${t.errors}; retries ${t.retries}` +
      (report.learned.maxUrlsPerRequest
        ? `; learned maximum ${report.learned.maxUrlsPerRequest} URLs/request`
        : ''),
  );
}

function minutes(ms: number): string {
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** A duration as a user reads it: seconds under two minutes, else minutes. */
function duration(ms: number): string {
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : minutes(ms);
}

/** How long the plan makes lists of distinct domains take: the core on the sandbox's own handling, virtual clock. */
function planDurations(learned: Learned): string[] {
  return [60, 500, 5000].map((n) => {
    const values = Array.from({ length: n }, (_, i) => `list${i}.example.org`);
    const { report, elapsed } = runOnVirtualSandbox(
      createSandbox({ ...DEFAULT_CONFIG, faults: FAULTS }),
      KEY,
      values,
      {
        maxUrlsPerRequest: learned.maxUrlsPerRequest,
        pace: learned,
        deadline: 24 * 3_600_000,
      },
    );
    const perMinute = PLAN.urlsPerMinute ?? Infinity;
    // The plan lets a minute's URLs go at once: only what is past the first minute's allowance has to wait.
    const waiting = Math.max(0, n - perMinute);
    const t = report.totals;
    const why =
      waiting === 0
        ? `all within the first minute's ${perMinute} URLs, which the plan lets go at once`
        : `the first ${perMinute} at once, the other ${waiting} at ${perMinute} a minute: ${waiting} / ${perMinute} = ${minutes((waiting / perMinute) * 60_000)} at least`;
    return (
      `  ${String(n).padStart(5)} distinct domains: ${duration(elapsed)} (${why}); ` +
      `${t.requests} requests, ${t.billed} credits, ${t.responses.rateLimited} × 429, ${t.records} records`
    );
  });
}

/** The 5,000-domain list again with a credit budget of 1,000: what it bills and what waits for next month. */
function budgetLine(learned: Learned): string {
  const values = Array.from({ length: 5000 }, (_, i) => `list${i}.example.org`);
  const { report } = runOnVirtualSandbox(createSandbox({ ...DEFAULT_CONFIG, faults: FAULTS }), KEY, values, {
    maxUrlsPerRequest: learned.maxUrlsPerRequest,
    pace: learned,
    deadline: 24 * 3_600_000,
    creditBudget: 1000,
  });
  const t = report.totals;
  const waiting = t.skippedByReason.credit_budget ?? 0;
  const example = report.outcomes.find((o) => o.kind === 'skip' && o.reason === 'credit_budget');
  return (
    `With a credit budget of 1,000 a month, the 5,000-domain list bills ${t.billed.toLocaleString('en-US')} credits: ${t.records.toLocaleString('en-US')} records, ` +
    `${waiting.toLocaleString('en-US')} rows credit_budget (retryable, never sent): "${example ? outcomeText(example) : ''}"`
  );
}

async function main(): Promise<void> {
  const sandbox = await startSandbox({ port: 0, config: { ...DEFAULT_CONFIG, faults: FAULTS } });
  try {
    console.log(
      `Sandbox DAPA API at ${sandbox.url}, key ${KEY}: the real service's entry plan, ${PLAN.maxUrlsPerRequest} URLs per ` +
        `request, ${PLAN.urlsPerMinute} URLs per minute, ${PLAN.monthlyCredits?.toLocaleString('en-US')} credits a month.\n` +
        'The metrics below are made up: the sandbox derives them from each domain name and they are not the real ' +
        "service's figures for these domains. The counts (requests, credits, skips) are what the real service would bill.\n",
    );
    const first = await check(sandbox.url, SAMPLE, {});
    console.log(`${cell('#', 4)}${cell('input', 42)}result`);
    first.outcomes.forEach((o, i) => {
      const input = typeof SAMPLE[i] === 'string' ? JSON.stringify(SAMPLE[i]) : String(SAMPLE[i]);
      console.log(`${cell(String(i + 1), 4)}${cell(input, 42)}${describe(o)}`);
    });
    console.log('');
    printTotals('First run', first);
    // A minute later the plan's window is free again; the sandbox's reset stands for that minute.
    sandbox.sandbox.reset();
    const again = await check(sandbox.url, SAMPLE, first.learned);
    printTotals('Second run a minute later, starting from the learned plan', again);
    console.log(
      `\nHow long the entry plan makes a list take (${PLAN.urlsPerMinute} URLs a minute, whatever the client), ` +
        'measured with the core on the sandbox on a virtual clock, starting from the learned plan:',
    );
    for (const line of planDurations(first.learned)) console.log(line);
    console.log(`\n${budgetLine(first.learned)}`);
    sandbox.sandbox.reset();
    const sheets = await import('./apps-script/demo-sheet').catch(() => undefined);
    if (sheets) {
      console.log(
        '\nGoogle Sheets: =DAPA(A2:A21, "da,pa,mr,spam", TRUE) through the built Apps Script bundle (the same made-up sandbox metrics)\n',
      );
      console.log(await sheets.demoSheet(sandbox.url, KEY));
    }
  } finally {
    await sandbox.close();
  }
}

exitWithHelpIfAsked(__filename);
if (!process.argv.includes('--no-build')) buildFirst();
main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
