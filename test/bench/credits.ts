// Section 6 of `npm run bench`: a credit budget on the entry plan. 5,000 distinct domains, a budget of 1,000 a month,
// under each fault the sandbox plays (and a 429 with Retry-After that the bench's transport puts in front of it),
// then the next month's run with the same budget and the first month's records as its store. Every figure comes
// from the sandbox's own counters and from reading each row's outcome.
import { CheckRun, runSync, type DomainRecord, type Report } from '../../shared';
import { seededRandom } from '../../shared/random';
import { CREDIT_PERIOD_MS, DEFAULT_CONFIG, createSandbox, type FaultConfig } from '../sandbox/handler';
import { sandboxAnswers, VirtualClock, virtualIo } from '../sandbox/virtual';
import { duration } from './report';

const KEY = 'sandbox-basic';
const DOMAINS = 5_000;
const BUDGET = 1_000;
const EPOCH = Date.UTC(2026, 0, 5, 9, 0, 0);
const LATENCY: [number, number] = [150, 400];

interface Fault {
  name: string;
  faults: FaultConfig;
  /** Share of requests the transport answers 429 with a Retry-After of 1–5 s, before the sandbox sees them. */
  tooMany?: number;
}

export const CREDIT_FAULTS: Fault[] = [
  { name: 'none', faults: {} },
  {
    name: 'records shuffled, domains spelled its own way',
    faults: { shuffleData: true, domainSpelling: 'mixed' },
  },
  { name: '10% lookup_failed', faults: { lookupFailedRate: 0.1 } },
  { name: '10% HTTP 500 + 5% HTML 502', faults: { serverErrorRate: 0.1, html502Rate: 0.05 } },
  { name: '5% 429 with Retry-After', faults: {}, tooMany: 0.05 },
  {
    name: 'all of them at once',
    faults: {
      shuffleData: true,
      domainSpelling: 'mixed',
      lookupFailedRate: 0.1,
      serverErrorRate: 0.1,
      html502Rate: 0.05,
    },
    tooMany: 0.05,
  },
];

export interface MonthFigures {
  billed: number;
  records: number;
  budgetRows: number;
  /** Rows with neither a record nor the budget outcome (an error or another skip): lost. */
  lost: number;
  billedTwice: number;
  /** Domains this month billed that an earlier month had billed already. */
  billedAgain: number;
  requests: number;
  tooMany: number;
  timeMs: number;
}

export interface CreditRow {
  fault: string;
  months: MonthFigures[];
}

const list = Array.from({ length: DOMAINS }, (_, i) => `credit-site-${i + 1}.com`);

/** One month's run: the budget, the store of earlier months as the cache, on a virtual clock from `start`. */
function month(
  sandbox: ReturnType<typeof createSandbox>,
  fault: Fault,
  start: number,
  store: Map<string, DomainRecord>,
  budget: number | null,
  seed: number,
): { report: Report; end: number; tooMany: number; requests: number } {
  let tooMany = 0;
  let requests = 0;
  const random = seededRandom(seed);
  const clock = new VirtualClock(start);
  const answers = sandboxAnswers(sandbox, KEY);
  const run = new CheckRun(list, {
    baseUrl: 'http://sandbox.virtual',
    deadline: start + 24 * 3_600_000,
    creditBudget: budget ?? undefined,
    seed,
  });
  run.addCached(store);
  const io = virtualIo(clock, {
    handle: (request, now) => {
      requests += 1;
      if (!fault.tooMany || random() >= fault.tooMany) return answers.handle(request, now);
      tooMany += 1;
      const after = 1 + Math.floor(random() * 5);
      return {
        status: 429,
        headers: { 'retry-after': String(after) },
        body: '{"message":"Too Many Attempts."}',
        latencyMs: 50,
      };
    },
  });
  const report = runSync(run, io);
  return { report, end: clock.now(), tooMany, requests };
}

/** Two months of the same list and budget under one fault. */
export function creditRun(fault: Fault, budget: number | null = BUDGET, months = 2): CreditRow {
  const sandbox = createSandbox({
    keys: DEFAULT_CONFIG.keys,
    faults: { ...fault.faults, latencyMs: LATENCY, seed: 7 },
  });
  const store = new Map<string, DomainRecord>();
  const billedBefore = new Set<string>();
  const figures: MonthFigures[] = [];
  let start = EPOCH;
  for (let m = 0; m < months; m += 1) {
    const before = { ...(sandbox.stats()[KEY]?.billedByDomain ?? {}) };
    const { report, end, tooMany, requests } = month(sandbox, fault, start, store, budget, 11 + m);
    const byDomain = sandbox.stats()[KEY]?.billedByDomain ?? {};
    const thisMonth = Object.entries(byDomain)
      .map(([d, n]) => [d, n - (before[d] ?? 0)] as const)
      .filter(([, n]) => n > 0);
    let budgetRows = 0;
    let lost = 0;
    for (const o of report.outcomes) {
      if (o.kind === 'record') continue;
      if (o.kind === 'skip' && o.reason === 'credit_budget') budgetRows += 1;
      else lost += 1;
    }
    figures.push({
      billed: thisMonth.reduce((a, [, n]) => a + n, 0),
      records: report.outcomes.filter((o) => o.kind === 'record' && !o.cached).length,
      budgetRows,
      lost,
      billedTwice: thisMonth.filter(([, n]) => n > 1).length,
      billedAgain: thisMonth.filter(([d]) => billedBefore.has(d)).length,
      requests,
      tooMany,
      timeMs: end - start,
    });
    for (const [d] of thisMonth) billedBefore.add(d);
    for (const { key, record } of report.fresh) store.set(key, record);
    start += CREDIT_PERIOD_MS; // the sandbox's credits period turns; so does the budget's month
  }
  return { fault: fault.name, months: figures };
}

export function creditSuite(): { rows: CreditRow[]; unbudgeted: CreditRow } {
  return {
    rows: CREDIT_FAULTS.map((f) => creditRun(f)),
    unbudgeted: creditRun(CREDIT_FAULTS[CREDIT_FAULTS.length - 1], null, 1),
  };
}

export interface CreditTarget {
  what: string;
  met: boolean;
}

/** The targets: billed <= budget, 4,000 rows on the budget, 0 lost, none billed twice, the next 1,000 next month. */
export function creditTargets({ rows }: { rows: CreditRow[] }): CreditTarget[] {
  return rows.flatMap(({ fault, months: [first, second] }) => [
    {
      what: `${fault}: month 1 billed ${first.billed} <= ${BUDGET}, ${first.budgetRows} rows on the budget, ${first.lost} lost, ${first.billedTwice} billed twice`,
      met:
        first.billed <= BUDGET &&
        first.budgetRows === DOMAINS - BUDGET &&
        first.lost === 0 &&
        first.billedTwice === 0,
    },
    {
      what: `${fault}: month 2 billed ${second.billed} new domains, ${second.billedAgain} billed again, ${second.budgetRows} rows on the budget`,
      met:
        second.billed === BUDGET &&
        second.billedAgain === 0 &&
        second.budgetRows === DOMAINS - 2 * BUDGET &&
        second.lost === 0,
    },
  ]);
}

export function creditTable({ rows, unbudgeted }: { rows: CreditRow[]; unbudgeted: CreditRow }): string {
  const head =
    '| faults | month | billed | new records | rows on the budget | rows lost | billed twice | billed again | requests (429 put in) | time |\n' +
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |';
  const line = (fault: string, label: string, m: MonthFigures) =>
    `| ${fault} | ${label} | ${m.billed.toLocaleString('en-US')} | ${m.records.toLocaleString('en-US')} | ${m.budgetRows.toLocaleString('en-US')} | ${m.lost} | ${m.billedTwice} | ${m.billedAgain} | ${m.requests} (${m.tooMany}) | ${duration(m.timeMs)} |`;
  const body = rows.flatMap((r) => r.months.map((m, i) => line(i === 0 ? r.fault : '', `${i + 1}`, m)));
  body.push(line(`no budget (baseline), ${unbudgeted.fault}`, '1', unbudgeted.months[0]));
  return [head, ...body].join('\n');
}

export const CREDIT_BUDGET = BUDGET;
export const CREDIT_DOMAINS = DOMAINS;
