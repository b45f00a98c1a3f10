// `npm run demo`: the main job against the built-in sandbox, no key or internet needed. Starts the sandbox,
// checks a sample list through the core (one line per input, then the totals), then runs a second time to show
// what the learned plan maximum saves.
import { CheckRun, runAsync, type Learned, type Outcome, type Report } from '../shared';
import { startSandbox } from './sandbox/server';

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
  ...Array.from({ length: 60 }, (_, i) => `shop${i + 1}.example.net`),
];

function cell(text: string, width: number): string {
  const t = text.length > width ? text.slice(0, width - 1) + '…' : text;
  return t.padEnd(width) + ' ';
}

function describe(o: Outcome): string {
  if (o.kind === 'record') {
    const r = o.record;
    return `DA ${r.site_da}  PA ${r.site_pa}  MR ${r.site_mr}  Spam ${r.spam_score}${o.cached ? '  (cached)' : ''}`;
  }
  if (o.kind === 'skip') return o.blank ? '(blank)' : `${o.reason}: ${o.message}`;
  return `${o.code}: ${o.message}`;
}

async function check(url: string, values: unknown[], learned: Learned): Promise<Report> {
  const run = new CheckRun(values, {
    baseUrl: url,
    deadline: Date.now() + 120_000,
    maxUrlsPerRequest: learned.maxUrlsPerRequest,
  });
  return runAsync(run, {
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    send: async (request) => {
      const res = await fetch(request.url, {
        method: request.method,
        headers: { ...request.headers, Authorization: 'Bearer sandbox-premium' },
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

async function main(): Promise<void> {
  const sandbox = await startSandbox({ port: 0 });
  try {
    console.log(
      `Sandbox DAPA API at ${sandbox.url} (key sandbox-premium: 50 URLs/request, 60 requests/min)\n`,
    );
    const first = await check(sandbox.url, SAMPLE, {});
    console.log(`${cell('#', 4)}${cell('input', 42)}result`);
    first.outcomes.forEach((o, i) => {
      const input = typeof SAMPLE[i] === 'string' ? JSON.stringify(SAMPLE[i]) : String(SAMPLE[i]);
      console.log(`${cell(String(i + 1), 4)}${cell(input, 42)}${describe(o)}`);
    });
    console.log('');
    printTotals('First run', first);
    const again = await check(sandbox.url, SAMPLE, first.learned);
    printTotals('Second run, starting from the learned maximum', again);
    const sheets = await import('./apps-script/demo-sheet').catch(() => undefined);
    if (sheets) {
      console.log(
        '\nGoogle Sheets: =DAPA(A2:A21, "da,pa,mr,spam", TRUE) through the built Apps Script bundle\n',
      );
      console.log(await sheets.demoSheet(sandbox.url, 'sandbox-premium'));
    }
  } finally {
    await sandbox.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
