// Scenario 5: k runs of the core sharing one key (as k n8n executions in queue mode, or a formula, a background
// step and a sidebar in one sheet), on the virtual clock. One sandbox, one clock, and a small event loop that
// always moves the run whose next step is due first: a run waiting for the plan sleeps while the others send.
// Each run's domains overlap the others' by half (every run has the shared half, and half of its own).
import type { Report, RunOptions } from '../../shared';
import { CheckRun } from '../../shared';
import { createSandbox, emptyStats, type FaultConfig, type KeyStats } from '../sandbox/handler';
import { sandboxAnswers, takeTurns, type Turn } from '../sandbox/virtual';
import { distinctDomains } from './datasets';
import { benchConfig, processedOf } from './env';
import { duration } from './report';
import { CALM, ENTRY_PLAN, ENTRY_PLAN_HEADERS, type BenchPlan, type Target } from './scenarios';
import { rowOfOutcome, scoreRows, type RowScore } from './score';

const EPOCH = Date.UTC(2025, 0, 6, 9, 0, 0);
const BASE_URL = 'http://sandbox.virtual';

export interface ConcurrentShape {
  /** Runs sharing the key. */
  runs: number;
  /** URLs (distinct domains) per run: half shared by all runs, half its own. */
  urls: number;
  /** How far apart the runs start, in ms. */
  gapMs: number;
}

/**
 * Runs "started together" start within a second of each other, as queue workers pick executions up one after
 * another; the figure is the worst of these gaps (on a virtual clock, a gap of exactly 0 is a tie no real key sees).
 */
export const TOGETHER_GAPS_MS = [0, 100, 200, 300, 400, 500, 750, 1000];

/** Runs "staggered" start half of one run's own bound apart (its URLs at the plan's rate), so they overlap by half. */
export function staggerMs(urls: number, plan: BenchPlan): number {
  return ((urls / plan.urlsPerMinute) * 60_000) / 2;
}

export interface RunResult {
  startedMs: number;
  /** When the run ended, from the first run's start. */
  doneMs: number;
  requests: number;
  score: RowScore;
  report: Report;
}

export interface ConcurrentFigures {
  shape: ConcurrentShape;
  plan: BenchPlan;
  runs: RunResult[];
  /** Billed URLs at the plan's URL rate: the earliest the key can have billed them all. */
  boundMs: number;
  /** When the last run ended, from the first run's start. */
  lastDoneMs: number;
  requests: number;
  billed: number;
  rateLimited: number;
  lost: number;
  /** Domains billed more often than the runs that have them (some run paid twice for one). */
  billedTwice: number;
  /** URLs the key billed in each minute from the first start. */
  perMinute: number[];
}

/** Run `r`'s URLs: the shared half, then its own half. */
export function urlsOf(shape: ConcurrentShape, r: number): string[] {
  const half = Math.floor(shape.urls / 2);
  return [...distinctDomains(half, 'shared'), ...distinctDomains(shape.urls - half, `own${r}-`)];
}

/** A run in the event loop (takeTurns): `t` is when its next step is due, `done` when it ended. */
interface Actor extends Turn {
  run: CheckRun;
  startedAt: number;
}

/** Options of each run: what a shell gives a fresh execution (nothing learned, an hour's budget). */
export type RunOptionsOf = (r: number, startAt: number) => Partial<RunOptions>;

export function concurrentScenario(
  shape: ConcurrentShape,
  plan: BenchPlan = ENTRY_PLAN,
  faults: FaultConfig = CALM,
  optionsOf: RunOptionsOf = () => ({}),
): ConcurrentFigures {
  const sandbox = createSandbox(benchConfig({ ...faults, ...plan.habits }));
  const lists = Array.from({ length: shape.runs }, (_v, r) => urlsOf(shape, r));
  const actors: Actor[] = lists.map((urls, r) => {
    const startAt = EPOCH + r * shape.gapMs;
    const run = new CheckRun(urls, {
      baseUrl: BASE_URL,
      deadline: startAt + 60 * 60_000,
      seed: r + 1,
      ...optionsOf(r, startAt),
    });
    return { run, t: startAt, startedAt: startAt };
  });
  const perMinute: number[] = [];
  const answers = sandboxAnswers(sandbox, plan.key);
  takeTurns(actors, {
    start: (actor) => actor.run,
    send: (_actor, request, now) => {
      const { status, headers, body, latencyMs } = answers.handle(request, now);
      const answer = { status, headers, body };
      const minute = Math.floor((now - EPOCH) / 60_000);
      while (perMinute.length <= minute) perMinute.push(0);
      perMinute[minute] += processedOf(answer);
      return { answer, latencyMs: latencyMs ?? 0 };
    },
    minWaitMs: 1,
  });
  return { ...figuresOf(shape, plan, actors, lists, sandbox.stats()[plan.key] ?? emptyStats()), perMinute };
}

function figuresOf(
  shape: ConcurrentShape,
  plan: BenchPlan,
  actors: Actor[],
  lists: string[][],
  stats: KeyStats,
): Omit<ConcurrentFigures, 'perMinute'> {
  const runs = actors.map((a, r): RunResult => {
    const report = a.run.report();
    return {
      startedMs: a.startedAt - EPOCH,
      doneMs: (a.done ?? a.t) - EPOCH,
      requests: report.totals.requests,
      score: scoreRows(lists[r], report.outcomes.map(rowOfOutcome)),
      report,
    };
  });
  const having = new Map<string, number>();
  for (const list of lists) for (const d of list) having.set(d, (having.get(d) ?? 0) + 1);
  const billedTwice = [...having].filter(([d, n]) => (stats.billedByDomain[d] ?? 0) > n).length;
  return {
    shape,
    plan,
    runs,
    boundMs: (stats.billed / plan.urlsPerMinute) * 60_000,
    lastDoneMs: Math.max(...runs.map((r) => r.doneMs)),
    requests: stats.requests,
    billed: stats.billed,
    rateLimited: stats.responsesByStatus['429'] ?? 0,
    lost: runs.reduce((n, r) => n + r.score.lost, 0),
    billedTwice,
  };
}

export interface ConcurrentCase {
  runs: number;
  urls: number;
  together: boolean;
}

/** The shapes the issue judges: k = 2, 3, 4 runs (40 URLs each for three, 30 for two and four), together and staggered. */
export const CONCURRENT_CASES: ConcurrentCase[] = [2, 3, 4].flatMap((runs) =>
  [true, false].map((together) => ({ runs, urls: runs === 3 ? 40 : 30, together })),
);

/** One case on one plan: every start gap it covers, and the worst of them (the last run's end against the bound). */
export function concurrentCase(
  c: ConcurrentCase,
  plan: BenchPlan = ENTRY_PLAN,
  optionsOf?: RunOptionsOf,
): { worst: ConcurrentFigures; all: ConcurrentFigures[] } {
  const gaps = c.together ? TOGETHER_GAPS_MS : [staggerMs(c.urls, plan)];
  const all = gaps.map((gapMs) =>
    concurrentScenario({ runs: c.runs, urls: c.urls, gapMs }, plan, CALM, optionsOf),
  );
  const ratio = (f: ConcurrentFigures) => f.lastDoneMs / f.boundMs;
  const worst = all.reduce((w, f) => (ratio(f) > ratio(w) ? f : w));
  return { worst, all };
}

export function concurrentSuite(optionsOf?: RunOptionsOf): Array<ReturnType<typeof concurrentCase>> {
  return [ENTRY_PLAN, ENTRY_PLAN_HEADERS].flatMap((plan) =>
    CONCURRENT_CASES.map((c) => concurrentCase(c, plan, optionsOf)),
  );
}

export function shapeName(shape: ConcurrentShape): string {
  return `${shape.runs} runs × ${shape.urls} URLs, ${shape.gapMs === 0 ? 'at once' : `${shape.gapMs / 1000} s apart`}`;
}

export type CaseFigures = ReturnType<typeof concurrentCase>;

/**
 * The issue's target for each case: the last run done within 1.25 × the bound (at the worst start gap), and at every
 * gap 0 rows lost, at most three 429s, no domain billed twice within a run.
 */
export function concurrentTargets(cases: CaseFigures[]): Target[] {
  const t: Target[] = [];
  for (const { worst, all } of cases) {
    const { runs, urls, gapMs } = worst.shape;
    const together = all.length > 1;
    const scenario = `5 shared key · ${worst.plan.name}`;
    const name = `${runs} runs × ${urls}, ${together ? 'together' : 'staggered'}`;
    const add = (what: string, actual: number, target: string, met: boolean) =>
      t.push({
        scenario,
        what: `${name}: ${what}`,
        actual: String(Math.round(actual * 1000) / 1000),
        target,
        met,
      });
    const ratio = worst.lastDoneMs / worst.boundMs;
    add(`last done / bound${together ? ` (worst gap, ${gapMs} ms)` : ''}`, ratio, '≤ 1.25', ratio <= 1.25);
    const most = (f: (c: ConcurrentFigures) => number) => Math.max(...all.map(f));
    add(
      '429s',
      most((c) => c.rateLimited),
      '≤ 3',
      most((c) => c.rateLimited) <= 3,
    );
    add(
      'rows lost',
      most((c) => c.lost),
      '= 0',
      most((c) => c.lost) === 0,
    );
    add(
      'domains billed twice in a run',
      most((c) => c.billedTwice),
      '= 0',
      most((c) => c.billedTwice) === 0,
    );
  }
  return t;
}

/** The cases as a markdown table: the worst start gap of each, every run's start and end, the key's minutes. */
export function concurrentTable(cases: CaseFigures[]): string {
  const head = [
    'runs × URLs',
    'start',
    'plan',
    'runs (start → done)',
    'last done',
    'bound',
    'last / bound',
    'every gap',
    'requests',
    '429s',
    'lost',
    'billed twice in a run',
    'URLs billed per minute',
  ];
  const rows = cases.map(({ worst: f, all }) => [
    `${f.shape.runs} × ${f.shape.urls}`,
    all.length > 1 ? `together (worst gap ${f.shape.gapMs} ms)` : `staggered ${duration(f.shape.gapMs)}`,
    f.plan.name,
    f.runs.map((r) => `${duration(r.startedMs)} → ${duration(r.doneMs)}`).join(', '),
    duration(f.lastDoneMs),
    duration(f.boundMs),
    (f.lastDoneMs / f.boundMs).toFixed(2),
    all.map((a) => (a.lastDoneMs / a.boundMs).toFixed(2)).join(' '),
    String(f.requests),
    String(Math.max(...all.map((a) => a.rateLimited))),
    String(Math.max(...all.map((a) => a.lost))),
    String(Math.max(...all.map((a) => a.billedTwice))),
    f.perMinute.join(', '),
  ]);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}
