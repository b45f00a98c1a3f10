// Scenarios 1–3 of the benchmark: the core and both baselines, each in its own fresh sandbox, run the same way;
// figures come from the sandbox's own counters (requests, 429s, billed, billed twice) and from checking every row.
import { DEFAULT_CONFIG, type FaultConfig } from '../sandbox/handler';
import { FIXED_BATCH_SIZE, fixedBatches, perRowFormula } from './baselines';
import { cacheOf, coreRun } from './core-run';
import { sheetColumn, distinctDomains, type SheetColumn } from './datasets';
import { BENCH_KEY, costBetween, type BenchEnv, type Exchange, type ServerCost } from './env';
import { scoreRows, type RowResult, type RowScore } from './score';

export type EnvFactory = (faults: FaultConfig, key: string) => BenchEnv | Promise<BenchEnv>;

/** A plan a scenario runs on, as the sandbox is configured (the bench knows it; the core has to learn it). */
export interface BenchPlan {
  key: string;
  name: string;
  maxUrlsPerRequest: number;
  requestsPerMinute: number;
  urlsPerMinute: number;
  /** The server's habits on this plan (such as Laravel's rate-limit headers), added to each scenario's faults. */
  habits: FaultConfig;
}

function planOf(key: string, name: string, habits: FaultConfig = {}): BenchPlan {
  const plan = DEFAULT_CONFIG.keys[key];
  return {
    key,
    name,
    maxUrlsPerRequest: plan.maxUrlsPerRequest ?? Infinity,
    requestsPerMinute: plan.requestsPerMinute ?? Infinity,
    urlsPerMinute: plan.urlsPerMinute ?? Infinity,
    habits,
  };
}

/** The generous sandbox plan the first benchmarks ran on. */
export const PLAN = planOf(BENCH_KEY, 'sandbox premium');
/** The real service's entry plan, which most users buy: 5 URLs per request, 60 URLs per minute. */
export const ENTRY_PLAN = planOf('sandbox-basic', 'entry plan');
/** The entry plan on a server that sends Laravel's X-RateLimit-* headers. */
export const ENTRY_PLAN_HEADERS = planOf('sandbox-basic', 'entry plan + rate-limit headers', {
  rateLimitHeaders: true,
});
/** A plan bound by its requests per minute (50 per request, 10 requests a minute), without and with the headers. */
export const REQUEST_BOUND_PLAN = planOf('sandbox-rpm', 'request-bound');
export const REQUEST_BOUND_PLAN_HEADERS = planOf('sandbox-rpm', 'request-bound + rate-limit headers', {
  rateLimitHeaders: true,
});

/** Fault-free runs: every answer takes a fixed 200 ms, the rest is the plan's rules. */
export const CALM: FaultConfig = { latencyMs: [200, 200] };

/** Scenario 3: 10% lookup_failed, 5% HTTP 500, 3% HTML 502 pages from a proxy, latency 50 ms – 5 s. */
export const FAULTY: FaultConfig = {
  seed: 1,
  lookupFailedRate: 0.1,
  serverErrorRate: 0.05,
  html502Rate: 0.03,
  latencyMs: [50, 5000],
};

/** Fault-free, but the server answers `data` in another order and spells `domain` its own way (the spec allows it). */
export const ORDER_NOT_PROMISED: FaultConfig = {
  seed: 1,
  latencyMs: [200, 200],
  shuffleData: true,
  domainSpelling: 'mixed',
};

/** A sidebar step's budget: what the Sheets shell gives one run. */
export const SHEET_DEADLINE_MS = 6 * 60_000;
/** The rate-bound run's budget (n8n: what the user sets). */
export const RATE_BOUND_DEADLINE_MS = 60 * 60_000;

export interface RunFigures extends ServerCost {
  timeMs: number;
  score: RowScore;
  /** The run's requests as the server answered them. */
  exchanges: Exchange[];
}

export interface Point {
  /** Minutes since the run started. */
  minutes: number;
  /** Records billed so far. */
  records: number;
}

async function measure(
  rows: readonly unknown[],
  env: BenchEnv,
  body: () => Promise<RowResult[]>,
): Promise<RunFigures & { series: Point[] }> {
  const before = env.stats();
  const startedAt = env.now();
  const firstExchange = env.exchanges.length;
  const results = await body();
  if (env.harnessErrors.length > 0) {
    throw new Error(`the sandbox itself failed, so the figures mean nothing:\n${env.harnessErrors[0]}`);
  }
  const timeMs = env.now() - startedAt;
  let records = 0;
  const series: Point[] = [{ minutes: 0, records: 0 }];
  const exchanges = env.exchanges.slice(firstExchange);
  for (const e of exchanges) {
    if (e.processed === 0) continue;
    records += e.processed;
    series.push({ minutes: (e.answeredAt - startedAt) / 60_000, records });
  }
  series.push({ minutes: timeMs / 60_000, records });
  return { ...costBetween(before, env.stats()), timeMs, score: scoreRows(rows, results), exchanges, series };
}

function strip<T extends { series?: unknown }>(figures: T): Omit<T, 'series'> {
  const { series: _series, ...rest } = figures;
  return rest;
}

async function inEnv<T>(
  make: EnvFactory,
  faults: FaultConfig,
  plan: BenchPlan,
  use: (env: BenchEnv) => Promise<T>,
): Promise<T> {
  const env = await make({ ...faults, ...plan.habits }, plan.key);
  try {
    return await use(env);
  } finally {
    await env.close();
  }
}

// ---- Scenario 1 and 3: a sheet of 500 rows ----------------------------------------------------------------

export interface SheetFigures {
  plan: BenchPlan;
  /** The plan's bound for the distinct valid domains: max(requests / rpm, URLs / upm). */
  lowerBoundMs: number;
  column: Omit<SheetColumn, 'rows'> & { rows: number };
  /** The fewest requests that can carry every distinct valid domain at the plan's maximum. */
  fewest: number;
  core: { first: RunFigures; later?: RunFigures; recalc?: RunFigures; learnedMax?: number };
  perRow?: { first: RunFigures; recalc?: RunFigures };
  fixed: { first: RunFigures; recalc?: RunFigures };
}

export const SHEET = () => sheetColumn(500, 200, { invalidShare: 0.05, blankShare: 0.03 });

/**
 * The sheet in three contenders' hands. `again`: also the later runs (the core with the learned maximum and an
 * empty cache, then a recalculation with its cache; a baseline simply runs again). `perRow`: include the per-row
 * formula (500 sequential requests; skipped over HTTP when the latency makes it take many minutes), and
 * `perRowAgain` its recalculation (the same 500 requests again).
 */
export async function sheetScenario(
  make: EnvFactory,
  faults: FaultConfig,
  options: { again?: boolean; perRow?: boolean; perRowAgain?: boolean; plan?: BenchPlan } = {},
): Promise<SheetFigures> {
  const { again = true, perRow = true, plan = PLAN } = options;
  const perRowAgain = options.perRowAgain ?? again;
  const column = SHEET();
  const { rows } = column;
  const fewest = Math.ceil(column.distinctValid / plan.maxUrlsPerRequest);

  const core = await inEnv(make, faults, plan, async (env) => {
    let first = undefined as Awaited<ReturnType<typeof coreRun>> | undefined;
    const firstFigures = await measure(rows, env, async () => {
      first = await coreRun(rows, env, { deadlineMs: SHEET_DEADLINE_MS });
      return first.results;
    });
    const report = first!.report;
    const out: SheetFigures['core'] = {
      first: strip(firstFigures),
      learnedMax: report.learned.maxUrlsPerRequest,
    };
    if (!again) return out;
    const learned = report.learned;
    env.later();
    out.later = strip(
      await measure(
        rows,
        env,
        async () => (await coreRun(rows, env, { deadlineMs: SHEET_DEADLINE_MS, learned })).results,
      ),
    );
    env.later();
    out.recalc = strip(
      await measure(
        rows,
        env,
        async () =>
          (await coreRun(rows, env, { deadlineMs: SHEET_DEADLINE_MS, learned, cache: cacheOf(report) }))
            .results,
      ),
    );
    return out;
  });

  const baseline = (
    contender: (rows: readonly unknown[], env: BenchEnv) => Promise<RowResult[]>,
    repeat: boolean,
  ) =>
    inEnv(make, faults, plan, async (env) => {
      const first = strip(await measure(rows, env, () => contender(rows, env)));
      if (!repeat) return { first };
      env.later();
      return { first, recalc: strip(await measure(rows, env, () => contender(rows, env))) };
    });

  return {
    plan,
    lowerBoundMs: lowerBoundMs(column.distinctValid, plan),
    column: { ...column, rows: rows.length },
    fewest,
    core,
    perRow: perRow ? await baseline(perRowFormula, perRowAgain) : undefined,
    fixed: await baseline((r, env) => fixedBatches(r, env, fixedBatchSize(plan)), again),
  };
}

/** Scenario 3's first run of the core under other fault seeds: how much the figure depends on the draw. */
export async function faultSeedSweep(
  make: EnvFactory,
  seeds: readonly number[],
): Promise<Array<{ seed: number; requests: number; lost: number; billedTwice: number }>> {
  const rows = SHEET().rows;
  const out = [];
  for (const seed of seeds) {
    const figures = await inEnv(make, { ...FAULTY, seed }, PLAN, (env) =>
      measure(rows, env, async () => (await coreRun(rows, env, { deadlineMs: SHEET_DEADLINE_MS })).results),
    );
    out.push({
      seed,
      requests: figures.requests,
      lost: figures.score.lost,
      billedTwice: figures.billedTwice,
    });
  }
  return out;
}

// ---- Scenario 2: rate-bound ---------------------------------------------------------------------------------

export interface RateBoundFigures {
  plan: BenchPlan;
  domains: number;
  /** max(requests / rpm, URLs / upm) at the plan's maximum per request. */
  lowerBoundMs: number;
  core: RunFigures & { series: Point[] };
  perRow: RunFigures & { series: Point[] };
  fixed: RunFigures & { series: Point[] };
}

export const RATE_BOUND_DOMAINS = 5000;

export function lowerBoundMs(urls: number, plan: BenchPlan = PLAN): number {
  const requests = Math.ceil(urls / plan.maxUrlsPerRequest);
  return Math.max(requests / plan.requestsPerMinute, urls / plan.urlsPerMinute) * 60_000;
}

/** What a user sets as the HTTP Request node's batch size: 50, or the plan's maximum when it is lower. */
export function fixedBatchSize(plan: BenchPlan): number {
  return Math.min(FIXED_BATCH_SIZE, plan.maxUrlsPerRequest);
}

/** 5,000 distinct domains on a first run (nothing learned yet), on the virtual clock only. */
export async function rateBoundScenario(
  make: EnvFactory,
  faults: FaultConfig = CALM,
  plan: BenchPlan = PLAN,
): Promise<RateBoundFigures> {
  const rows = distinctDomains(RATE_BOUND_DOMAINS, 'site');
  const bound = lowerBoundMs(rows.length, plan);
  const run = (contender: (env: BenchEnv) => Promise<RowResult[]>) =>
    inEnv(make, faults, plan, (env) => measure(rows, env, () => contender(env)));
  return {
    plan,
    domains: rows.length,
    lowerBoundMs: bound,
    core: await run(
      async (env) =>
        (await coreRun(rows, env, { deadlineMs: Math.max(RATE_BOUND_DEADLINE_MS, 2 * bound) })).results,
    ),
    perRow: await run((env) => perRowFormula(rows, env)),
    fixed: await run((env) => fixedBatches(rows, env, fixedBatchSize(plan))),
  };
}

// ---- Targets ----------------------------------------------------------------------------------------------------

export interface Target {
  scenario: string;
  what: string;
  actual: string;
  target: string;
  met: boolean;
}

/**
 * The fewest requests any client needs facing the same fault draws: the fault-free run's learning requests, one
 * request per failed answer (each 5xx must be re-sent), and full batches for every send the domains need
 * (each distinct valid domain once, plus once more per `lookup_failed` the server drew). Without faults this is the
 * fault-free run itself, so "≤ 1.3 × this" is the target, with the cost of the faults themselves allowed.
 */
export function faultForcedRequests(sheet: SheetFigures, faulty: SheetFigures): number {
  const learning = sheet.core.first.requests - sheet.fewest;
  const sends = sheet.column.distinctValid + faulty.core.first.lookupFailed;
  return learning + faulty.core.first.failedAnswers + Math.ceil(sends / sheet.plan.maxUrlsPerRequest);
}

/** The targets for scenarios 1–3, checked against one run's figures (printed; asserted by the test). */
export function targetsOf(sheet: SheetFigures, rate: RateBoundFigures, faulty: SheetFigures): Target[] {
  const t: Target[] = [];
  const add = targetAdder(t, sheet.plan);
  const { core, fewest, column } = sheet;
  add(
    '1 sheet',
    'first run: requests',
    core.first.requests,
    `≤ ${fewest + 2} (fewest ${fewest} + 2)`,
    core.first.requests <= fewest + 2,
  );
  if (core.later)
    add('1 sheet', 'later run: requests', core.later.requests, `= ${fewest}`, core.later.requests === fewest);
  add(
    '1 sheet',
    'first run: billed',
    core.first.billed,
    `= ${column.distinctValid} distinct valid`,
    core.first.billed === column.distinctValid,
  );
  if (core.recalc)
    add('1 sheet', 'recalculation: requests', core.recalc.requests, '= 0', core.recalc.requests === 0);
  for (const [name, run] of Object.entries({ first: core.first, later: core.later, recalc: core.recalc })) {
    if (run) add('1 sheet', `${name} run: rows lost`, run.score.lost, '= 0', run.score.lost === 0);
  }
  if (sheet.plan !== PLAN) {
    // On a rate-bound plan the sheet itself is rate-bound: its time is held to the plan's bound too.
    const sheetRatio = core.first.timeMs / sheet.lowerBoundMs;
    add('1 sheet', 'first run: time / lower bound', sheetRatio, '≤ 1.10', sheetRatio <= 1.1);
  }
  t.push(...rateBoundTargets(rate));
  add('3 faults', 'rows lost', faulty.core.first.score.lost, '= 0', faulty.core.first.score.lost === 0);
  const growth = faulty.core.first.requests / sheet.core.first.requests;
  add(
    '3 faults',
    'requests / fault-free first run (literal target)',
    growth,
    `≤ 1.3 (${faulty.core.first.requests} vs ${sheet.core.first.requests})`,
    growth <= 1.3,
  );
  const forced = faultForcedRequests(sheet, faulty);
  add(
    '3 faults',
    'requests / fewest the faults allow any client',
    faulty.core.first.requests / forced,
    `≤ 1.3 (${faulty.core.first.requests} vs ${forced})`,
    faulty.core.first.requests <= 1.3 * forced,
  );
  add(
    '3 faults',
    'domains billed twice',
    faulty.core.first.billedTwice,
    '= 0',
    faulty.core.first.billedTwice === 0,
  );
  return t;
}

function targetAdder(t: Target[], plan: BenchPlan) {
  return (scenario: string, what: string, actual: number, target: string, met: boolean) => {
    const where = plan === PLAN ? scenario : `${scenario} · ${plan.name}`;
    t.push({ scenario: where, what, actual: String(Math.round(actual * 1000) / 1000), target, met });
  };
}

/** Scenario 2's targets: time within 1.10 × the plan's bound, 429s bounded (none when the server states its limit). */
export function rateBoundTargets(rate: RateBoundFigures): Target[] {
  const t: Target[] = [];
  const add = targetAdder(t, rate.plan);
  const ratio = rate.core.timeMs / rate.lowerBoundMs;
  add('2 rate-bound', 'time / lower bound', ratio, '≤ 1.10', ratio <= 1.1);
  const most429 = rate.plan.habits.rateLimitHeaders ? 0 : 3;
  add(
    '2 rate-bound',
    'responses of 429',
    rate.core.rateLimited,
    most429 === 0 ? '= 0 (the server states its limit)' : '≤ 3',
    rate.core.rateLimited <= most429,
  );
  add('2 rate-bound', 'rows lost', rate.core.score.lost, '= 0', rate.core.score.lost === 0);
  add('2 rate-bound', 'domains billed twice', rate.core.billedTwice, '= 0', rate.core.billedTwice === 0);
  return t;
}
