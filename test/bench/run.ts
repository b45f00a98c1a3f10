// `npm run bench`: runs scenarios 1–4 (virtual clock, then real HTTP for the short ones), prints the tables and
// regenerates test/bench/RESULTS.md and test/bench/rate-bound.svg. `--virtual-only` skips the real-HTTP runs.
// `--help` prints this and does nothing else.
import { writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { appsScriptLoad, bundleSizes, cpuPer10kRows, median } from './cost';
import { FIXED_BATCH_SIZE, FIXED_MAX_RETRIES, FIXED_PAUSE_MS } from './baselines';
import { httpEnv } from './http';
import {
  CALM,
  ENTRY_PLAN,
  ENTRY_PLAN_HEADERS,
  FAULTY,
  ORDER_NOT_PROMISED,
  PLAN,
  REQUEST_BOUND_PLAN,
  REQUEST_BOUND_PLAN_HEADERS,
  RATE_BOUND_DEADLINE_MS,
  SHEET_DEADLINE_MS,
  faultSeedSweep,
  rateBoundScenario,
  rateBoundTargets,
  sheetScenario,
  targetsOf,
} from './scenarios';
import {
  costTable,
  duration,
  planTable,
  requestBreakdown,
  rateBoundSvg,
  rateBoundTable,
  sheetTable,
  targetsTable,
  trace,
} from './report';
import { BENCH_KEY } from './env';
import { virtualEnv } from './virtual';
import { TOGETHER_GAPS_MS, concurrentSuite, concurrentTable, concurrentTargets } from './concurrent';
import { CREDIT_BUDGET, CREDIT_DOMAINS, creditSuite, creditTable, creditTargets } from './credits';
import { exitWithHelpIfAsked } from '../cliHelp';

const HERE = __dirname;
const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

function command(): string {
  const args = process.argv.slice(2).join(' ');
  const script = `tsx ${path.relative(process.cwd(), process.argv[1] ?? 'test/bench/run.ts')}${args ? ' ' + args : ''}`;
  return process.env.npm_lifecycle_event === 'bench'
    ? `\`npm run bench${args ? ' -- ' + args : ''}\` (which runs \`${script}\`)`
    : `\`${script}\``;
}

function machine(): string {
  const cpus = os.cpus();
  return [
    `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores`,
    `${(os.totalmem() / 2 ** 30).toFixed(1)} GB memory`,
    `Node ${process.version}`,
    `${os.platform()} ${os.release()} ${os.arch()}`,
  ].join('; ');
}

function step(label: string): () => void {
  const started = Date.now();
  process.stderr.write(`bench: ${label} …`);
  return () => process.stderr.write(` ${duration(Date.now() - started)}\n`);
}

async function main(): Promise<void> {
  const httpToo = !process.argv.includes('--virtual-only');
  let done = step('scenario 1, sheet of 500 rows (virtual clock)');
  const sheet = await sheetScenario(virtualEnv, CALM);
  const order = await sheetScenario(virtualEnv, ORDER_NOT_PROMISED, { again: false, perRow: false });
  done();
  done = step('scenario 2, rate-bound 5,000 domains (virtual clock)');
  const rate = await rateBoundScenario(virtualEnv);
  done();
  done = step('scenario 3, faults (virtual clock, and a sweep of 20 fault seeds)');
  const faulty = await sheetScenario(virtualEnv, FAULTY, { again: false });
  const sweep = await faultSeedSweep(virtualEnv, SEEDS);
  done();
  done = step('scenarios 1–3 on the entry plan, with and without rate-limit headers (virtual clock)');
  const entrySheet = await sheetScenario(virtualEnv, CALM, { plan: ENTRY_PLAN });
  const entryRate = await rateBoundScenario(virtualEnv, CALM, ENTRY_PLAN);
  const entryFaulty = await sheetScenario(virtualEnv, FAULTY, { again: false, plan: ENTRY_PLAN });
  const entryRateHeaders = await rateBoundScenario(virtualEnv, CALM, ENTRY_PLAN_HEADERS);
  const requestBound = await rateBoundScenario(virtualEnv, CALM, REQUEST_BOUND_PLAN);
  const requestBoundHeaders = await rateBoundScenario(virtualEnv, CALM, REQUEST_BOUND_PLAN_HEADERS);
  done();
  done = step('scenario 5, 2–4 runs sharing one entry-plan key, together and staggered (virtual clock)');
  const shared = concurrentSuite();
  done();
  done = step('scenario 6, a credit budget on the entry plan under each fault, two months (virtual clock)');
  const credits = creditSuite();
  const creditMissed = creditTargets(credits).filter((t) => !t.met);
  done();
  let sheetHttp;
  let faultyHttp;
  if (httpToo) {
    done = step(
      'scenarios 1 and 3 over real HTTP (about three minutes: the sandbox sleeps its latency for real)',
    );
    sheetHttp = await sheetScenario(httpEnv, CALM, { perRowAgain: false });
    faultyHttp = await sheetScenario(httpEnv, FAULTY, { again: false, perRow: false });
    done();
  }
  done = step('scenario 4, CPU, load time and sizes');
  const cpu = cpuPer10kRows();
  const load = appsScriptLoad();
  const sizes = bundleSizes();
  done();

  const entryTargets = [
    ...targetsOf(entrySheet, entryRate, entryFaulty),
    ...[entryRateHeaders, requestBound, requestBoundHeaders].flatMap(rateBoundTargets),
  ];
  const targets = [...targetsOf(sheet, rate, faulty), ...entryTargets, ...concurrentTargets(shared)];
  const missed = [
    ...targets.filter((t) => !t.met),
    ...creditMissed.map((t) => ({
      scenario: '6 credit budget',
      what: t.what,
      actual: 'missed',
      target: 'met',
    })),
  ];
  const side = (scenario: string, figures: typeof sheet) => ({
    scenario,
    plan: figures.plan.name,
    run: figures.core.first,
    boundMs: figures.lowerBoundMs,
    requestsFewest: figures.fewest,
  });
  const sideRate = (figures: typeof rate) => ({
    scenario: `2 rate-bound, ${figures.domains.toLocaleString('en-US')} domains`,
    plan: figures.plan.name,
    run: figures.core,
    boundMs: figures.lowerBoundMs,
  });
  const plansSideBySide = planTable([
    side('1 sheet, first run', sheet),
    side('1 sheet, first run', entrySheet),
    sideRate(rate),
    sideRate(entryRate),
    sideRate(entryRateHeaders),
    sideRate(requestBound),
    sideRate(requestBoundHeaders),
    side('3 faults, first run', faulty),
    side('3 faults, first run', entryFaulty),
  ]);
  const sweepRatios = sweep.map((s) => s.requests / sheet.core.first.requests);
  const plan = `\`${BENCH_KEY}\`: ${PLAN.maxUrlsPerRequest} URLs per request, ${PLAN.requestsPerMinute} requests per minute, ${PLAN.urlsPerMinute} URLs per minute`;
  const strictBoundMs =
    (Math.ceil(rate.domains / PLAN.urlsPerMinute) - 1) * 60_000 + (CALM.latencyMs?.[0] ?? 0);
  const { column } = sheet;
  const faultyTrace = trace(faulty.core.first.exchanges);
  const limitProbes = rate.core.exchanges.filter(
    (e) => e.status === 422 && e.sent > PLAN.maxUrlsPerRequest,
  ).length;
  const spentMinutes = rate.core.exchanges.filter(
    (e) => e.status === 422 && e.sent <= PLAN.maxUrlsPerRequest && e.processed === 0,
  ).length;

  const md = `# Benchmark results

Generated by ${command()} on ${new Date().toISOString()}.
Machine: ${machine()}.
This file and [rate-bound.svg](rate-bound.svg) are regenerated by the command above; do not edit them by hand.

The core (\`shared/\`) runs against the sandbox's own request handling (\`test/sandbox/handler.ts\`) in the same
process on a virtual clock: waits and the sandbox's simulated latency move time forward instead of passing, so the
figures repeat exactly. Every contender gets a fresh sandbox on the plan ${plan}, and every figure comes from the
sandbox's own counters and from checking each row's result against its own domain. Ratios are against the core
(baselines) or the plan's bound; absolute times are shown, never asserted.

- **core**: \`CheckRun\` driven by \`runSync\` (virtual clock) or \`runAsync\` with Node's fetch (real HTTP), with
  the deadline of a sidebar step (${duration(SHEET_DEADLINE_MS)}; ${duration(RATE_BOUND_DEADLINE_MS)} for the rate-bound run).
  A *later run* starts from the maximum the first run learned, with an empty cache; a *recalculation* also gets the
  first run's records as its cache (what the Sheets shell keeps in CacheService).
- **per row**: what a per-cell fetch formula does: one request per row, duplicates and blanks included, one after
  the other with no pause and no retry; a failed request is an error cell; a recalculation sends it all again.
- **fixed batches**: what n8n's HTTP Request node with Batching does: ${FIXED_BATCH_SIZE} rows per request in sheet
  order, no de-duplication, ${FIXED_PAUSE_MS / 1000} s between batches, a retry after ${FIXED_PAUSE_MS / 1000} s on 429
  (at most ${FIXED_MAX_RETRIES}), records mapped back by order to the entries not skipped; any other failure loses
  the batch.
- **rows lost**: rows left with an error or nothing (a \`lookup_failed\` or \`rate_limit_reached\` skip, a 429 or
  5xx, an unfinished run), plus rows showing another domain's record. Blanks and invalid entries answered with
  their reason are not lost.

## The plans side by side (virtual clock)

The real service's entry plan (5 URLs per request, 60 URLs per minute, about 10,000 credits a month; the sandbox's
\`sandbox-basic\`) makes nearly every list rate-bound: its bound is the distinct domains / 60 per minute, whatever
the client. Each line is the core's first run against its plan's bound, max(⌈URLs / per request⌉ / requests per
minute, URLs / URLs per minute). A time below the bound is possible because the first minute's quota is spent at once.
The *request-bound* plan (\`sandbox-rpm\`: 50 per request, 10 requests a minute) shows what Laravel's
\`X-RateLimit-*\` headers buy: the core paces from them before any 429, where without them it needs one 429 to learn.

${plansSideBySide}

## Targets (virtual clock; asserted by \`test/bench/targets.test.ts\`)

${targetsTable(targets)}

${missed.length === 0 ? 'All targets met.' : `**${missed.length} target(s) missed:** ${missed.map((t) => `${t.scenario}, ${t.what} = ${t.actual} (target ${t.target})`).join('; ')}.`}

On scenario 3's literal target: 1.3 × the fault-free first run allows one request more than it, but the faults
themselves cost more than that for any client: every HTTP 500 or 502 answer has to be sent again, and every
\`lookup_failed\` draw (10% of each send) has to be sent again in a later request, which needs a further request
whenever the last batch had one. The test therefore asserts 1.3 × the fewest requests the same fault draws allow
any client (learning requests + failed answers + full batches for every send needed); with no faults that bound
is the fault-free run itself. See the seed sweep below for how much the figure depends on the draw.

## 1. Sheet of ${column.rows} rows

${column.distinctValid} distinct domains in eight spellings (case, scheme, \`www.\`, path, query, spaces) over
${column.rows - column.blank - column.invalid} rows, ${column.invalid} invalid entries, ${column.blank} blank cells.
The fewest possible requests: ⌈${column.distinctValid} / ${PLAN.maxUrlsPerRequest}⌉ = ${sheet.fewest}. Each answer takes ${CALM.latencyMs?.[0]} ms.
The core's first run learned a maximum of ${sheet.core.learnedMax ?? 'nothing'} URLs per request.

${sheetTable(sheet)}

Same sheet, but the server answers \`data\` in another order and spells \`domain\` its own way (the spec promises
neither); the core matches records by domain, the fixed-batches baseline by order:

${sheetTable(order)}

## 2. Rate-bound: ${rate.domains.toLocaleString('en-US')} distinct domains, first run

Lower bound = max(⌈${rate.domains} / ${PLAN.maxUrlsPerRequest}⌉ requests / ${PLAN.requestsPerMinute} per minute,
${rate.domains} URLs / ${PLAN.urlsPerMinute} per minute) = ${duration(rate.lowerBoundMs)}. Each answer takes ${CALM.latencyMs?.[0]} ms.

${rateBoundTable(rate)}

![Records billed against time, rate-bound run](rate-bound.svg)

The issue's bound counts ${Math.ceil(rate.domains / PLAN.urlsPerMinute)} full minutes, but the first minute's quota
is spent at once, so the earliest any client can finish is ${duration(strictBoundMs)} (the last minute's quota opens
at ${Math.ceil(rate.domains / PLAN.urlsPerMinute) - 1} minutes, plus one answer): the core took
${(rate.core.timeMs / strictBoundMs).toFixed(3)} × that.
Of the core's ${rate.core.requests} requests, ${limitProbes} carried more than the plan's maximum (not known yet)
and were answered 422 Limit Exceeded, and ${spentMinutes} came back with every URL \`rate_limit_reached\` (the
minute's quota was spent; from then on the core paced itself).

## 3. Faults: scenario 1 with ${(FAULTY.lookupFailedRate ?? 0) * 100}% \`lookup_failed\`, ${(FAULTY.serverErrorRate ?? 0) * 100}% HTTP 500, ${(FAULTY.html502Rate ?? 0) * 100}% HTML 502 pages, latency ${FAULTY.latencyMs?.[0]} ms – ${(FAULTY.latencyMs?.[1] ?? 0) / 1000} s (seed ${FAULTY.seed})

${sheetTable(faulty)}

Requests against the fault-free first run (${sheet.core.first.requests}): ${(faulty.core.first.requests / sheet.core.first.requests).toFixed(2)}.
The core's requests, in order (status, URLs processed / sent, when): ${faultyTrace}.
That is ${requestBreakdown(faulty.core.first.exchanges, PLAN.maxUrlsPerRequest)}.

The same first run under fault seeds ${SEEDS[0]}–${SEEDS[SEEDS.length - 1]}: requests ${sweep.map((s) => s.requests).join(', ')}
(median ${median(sweep.map((s) => s.requests))}, ratio to the fault-free run ${Math.min(...sweepRatios).toFixed(2)}–${Math.max(...sweepRatios).toFixed(2)},
at most 1.3 in ${sweepRatios.filter((r) => r <= 1.3).length} of ${sweep.length}); rows lost ${sweep.reduce((a, s) => a + s.lost, 0)} in all;
domains billed twice ${sweep.reduce((a, s) => a + s.billedTwice, 0)} in all.

## Over real HTTP (loopback, real clock)

${
  sheetHttp && faultyHttp
    ? `The sandbox server (\`startSandbox\`) on 127.0.0.1, Node's fetch, \`runAsync\`; the server sleeps its latency
for real. Between runs the sandbox's rate windows are reset (real minutes cannot be skipped).

Scenario 1 (the per-row recalculation, the same ${column.rows} requests again, is left out here):

${sheetTable(sheetHttp)}

Scenario 3:

${sheetTable(faultyHttp, `not run over HTTP: ${column.rows} requests of ${FAULTY.latencyMs?.[0]} ms – ${(FAULTY.latencyMs?.[1] ?? 0) / 1000} s each take about 20 minutes`)}`
    : 'Skipped (`--virtual-only`).'
}

## 1–3 on the entry plan

The same sheet, list and faults as above on \`sandbox-basic\`. The fixed-batches baseline sends 5 rows per request
here (the plan's maximum, as a user who read the plan would set it); per row and fixed batches lose every row the
plan's minute has no room for. Not run over real HTTP: the plan's minutes would have to pass for real.

Scenario 1, ${entrySheet.column.distinctValid} distinct domains (bound ${duration(entrySheet.lowerBoundMs)}):

${sheetTable(entrySheet)}

Scenario 2, ${entryRate.domains.toLocaleString('en-US')} distinct domains (bound ${duration(entryRate.lowerBoundMs)}):

${rateBoundTable(entryRate)}

The same with the server's rate-limit headers:

${rateBoundTable(entryRateHeaders)}

Scenario 3:

${sheetTable(entryFaulty)}

## 4. Cost in CPU and size (real clock)

${costTable(cpu, load, sizes)}

The CPU figure is the client's own work per 10,000 rows against a server that answers at once (its time is left
out): the core normalizes every entry, de-duplicates, parses each answer with zod and matches records by domain;
the fixed-batches client only slices and maps by order. Load time is compile plus top-level run of
\`apps-script/dist/Code.js\` in a fresh \`node:vm\` context (the first load is cold; V8 caches the compile after it).

## 5. Runs sharing one key (entry plan)

k runs of the core at once on one \`sandbox-basic\` key (5 URLs per request, 60 URLs per minute), as k n8n
executions in queue mode or a formula, a background step and a sidebar in one sheet: one sandbox, one virtual clock,
and an event loop (\`test/bench/concurrent.ts\`) that always moves the run whose next step is due first. Each run
has ${CALM.latencyMs?.[0]} ms answers, nothing learned before, an hour's budget, and its own domains overlapping the
others' by half (half shared by every run, half its own; each run pays for each of its domains). *Together*: the
runs start ${TOGETHER_GAPS_MS.join(', ')} ms apart, as queue workers pick executions up one after another (a gap
of exactly 0 is a tie no real key sees); the row shows the worst gap, *every gap* the last run's end / bound at each.
*Staggered*: each run starts half of one run's own bound after the one before. The bound is the URLs the key billed
at 60 a minute, from the first run's start; the target is the issue's: the last run done within 1.25 × it, 0 rows
lost, at most three 429s, no domain billed twice within a run.

${concurrentTable(shared)}

Before the core kept one window for the plan (issue 14; measured at commit 3e608ef), a run took its own share of a
minute that other runs had used as the plan's URL rate and only ever lowered it: the run that lost the first
minute's race crawled at 5 URLs a minute to its end. Together, 3 × 40 ended at 7.0 min = 3.52 × the bound (URLs billed
per minute 60, 30, 5, 5, 5, 5, 5, 5) and 4 × 30 at 5.0 min = 2.52 ×, with and without the headers (which state the
request limit, not the URL limit); staggered, 0.85 and 0.89 × as now.

## 6. A credit budget (entry plan)

${CREDIT_DOMAINS.toLocaleString('en-US')} distinct domains on \`sandbox-basic\` with a credit budget of ${CREDIT_BUDGET.toLocaleString('en-US')} a month
(\`RunOptions.creditBudget\`), answers of 150–400 ms, under each fault the sandbox plays, and a 429 with a Retry-After
of 1–5 s that the bench's transport answers in front of the sandbox (the sandbox's entry plan never answers 429 to
one client). The second month starts one credits period later, with the same budget and the first month's records
as its store (what the Sheets shell keeps for 30 days, n8n's Data table in the templates). *Billed* is the sandbox's
own count of what it charged that month; *billed again*, domains an earlier month had paid for. The core never has
more URLs sent and unanswered than the credits left, so billed <= budget holds whatever the answers are; the rows
past it end \`credit_budget\` (retryable, never sent). The baseline is the same core with no budget: what a
client with no ceiling bills for the same list.

${creditTable(credits)}

${creditMissed.length === 0 ? 'Every credit-budget target met (asserted by `test/bench/targets.test.ts`).' : `**Missed:** ${creditMissed.map((t) => t.what).join('; ')}.`}
`;

  writeFileSync(path.join(HERE, 'RESULTS.md'), md);
  writeFileSync(path.join(HERE, 'rate-bound.svg'), rateBoundSvg(rate));
  console.log(md);
  console.log(`Wrote ${path.relative(process.cwd(), path.join(HERE, 'RESULTS.md'))} and rate-bound.svg.`);
  if (missed.length > 0) console.log(`${missed.length} target(s) missed; see the Targets table.`);
}

exitWithHelpIfAsked(__filename);
main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
