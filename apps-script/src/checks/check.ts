// One check against the service, as one Apps Script execution runs it: the check session (hold the credits → run the
// core's CheckRun synchronously, UrlFetchApp + Utilities.sleep, caching each record as it comes in → keep what was
// learned → settle), which a formula's round, a sidebar turn and a background step all go through; and checkValues,
// the sidebar's and the background's check of a list of cell values (cached and kept results first), in one of two
// modes whose options are resolved once (policyOf), within the user's monthly credit budget.
import {
  CheckRun,
  type DomainRecord,
  type HttpAnswer,
  type Report,
  type RunOptions,
  runSync,
  runSyncAll,
  toEntry,
  type WindowSnapshot,
} from '../../../shared';
import { DailyLimitError, fetchAnswer, fetchAnswers, now, sleep } from '../platform/gas';
import { type Books, holdForCheck, type QueueMove, settleCheck, type Spend } from '../stores/books';
import { loadWindow } from '../stores/account';
import { dailyLimitMet, noteDailyLimit } from '../stores/session';
import { cacheRecords, type Known, noteSaved, readKnown, type Reuse, storeRecords } from '../stores/results';
export { type Known, readKnown, type Reuse } from '../stores/results';

/** The reuse of a job or a refresh: "Check again" (`fresh`), results since `since`, or all. */
export function reuseOf(fresh?: boolean, since?: number): Reuse {
  if (fresh) return { kind: 'none' };
  return since === undefined ? { kind: 'all' } : { kind: 'since', at: since };
}

/** A hold outlives its check's deadline by this much, then counts as spent (the execution ended without settling). */
export const HOLD_MARGIN_MS = 60_000;

/** How a session's run goes: side by side or one request at a time, when it stops early, what it is told. */
export interface RunHow {
  /** Every request the window allows goes out together (runSyncAll over fetchAll). */
  parallel: boolean;
  cancelled?: () => boolean;
  /** Records as they come in (after they are cached). */
  received?: (records: ReadonlyArray<{ key: string; record: DomainRecord }>) => void;
  /** The answers of the requests sent side by side. */
  answered?: (answers: readonly HttpAnswer[]) => void;
  /** A send that threw (Google refused the call, the network failed); the run goes on as the core decides. */
  failed?: (error: unknown) => void;
}

/**
 * One check session: hold the credits it may spend, run the core's CheckRun (every record cached the moment it is in:
 * an execution stopped later never pays twice), keep what it learned, and settle (its credits, the window it left, for
 * a formula's round the queue) in one hold of the locks. A settle that fails costs a count or an optimisation, never a
 * result: it is said in the execution log, never with the key.
 */
export class CheckSession {
  private spend?: Spend;

  constructor(
    readonly books: Books,
    readonly deadline: number,
  ) {}

  /** The credits the check may spend (undefined: no budget is set, or nothing was held). */
  get budget(): number | undefined {
    return this.spend?.budget;
  }

  /** Holds `want` credits (`move`: a formula's round marks its batch in the queue in the same hold). Throws if busy. */
  hold(want: number, move?: QueueMove): number | undefined {
    this.spend = holdForCheck(this.books, want, this.deadline + HOLD_MARGIN_MS, move);
    return this.spend.budget;
  }

  run(run: CheckRun, how: RunHow): Report {
    const { apiKey, baseUrl } = this.books;
    const received = (records: ReadonlyArray<{ key: string; record: DomainRecord }>) => {
      cacheRecords(baseUrl, records);
      how.received?.(records);
    };
    // Google refusing a fetch for the day ends the run: nothing more can be sent before its reset.
    const cancelled = () => dailyLimitMet() !== undefined || (how.cancelled?.() ?? false);
    const driver = { sleep, now, cancelled, received };
    const sent = <T>(send: () => T): T => {
      try {
        return send();
      } catch (error) {
        noteDailyLimit(error);
        how.failed?.(error);
        throw error;
      }
    };
    if (!how.parallel) return runSync(run, { ...driver, send: (r) => sent(() => fetchAnswer(r, apiKey)) });
    return runSyncAll(run, {
      ...driver,
      sendAll: (requests) =>
        sent(() => {
          const answers = fetchAnswers(requests, apiKey);
          how.answered?.(answers);
          return answers;
        }),
    });
  }

  /**
   * Keeps what the run learned, each part on its own (a failure of one costs only that part): the records not yet
   * cached (those `kept` handed the run were read from the caches), every record in the result store, and the credits
   * kept results saved. A formula's round does not keep (a custom function cannot write the sheet): its records are
   * cached as they come in, and the background keeps them from there.
   */
  keep(report: Report, kept: Known): void {
    const { baseUrl } = this.books;
    try {
      cacheRecords(
        baseUrl,
        report.fresh.filter(({ key }) => !kept.handed.has(key)),
      );
    } catch {
      // The records are in the report; only a later recalculation would pay for them again.
    }
    try {
      storeRecords(baseUrl, [...kept.fromCache, ...report.fresh]);
    } catch (error) {
      // Not kept: a later check pays for them again. Said in the execution log, never with the key.
      console.warn(`DAPA: results not kept (${error instanceof Error ? error.message : String(error)})`);
    }
    try {
      noteSaved(kept.saved);
    } catch {
      // So is the count.
    }
  }

  /**
   * Settles the check: billed what its report says (none: at most what it held), the window it left, and `move` on
   * the formulas' queue. Never throws.
   */
  settle(report: Report | undefined, move?: QueueMove): void {
    const billed = report?.totals.billed ?? this.spend?.budget ?? 0;
    try {
      settleCheck(this.books, this.spend, billed, report?.window, move);
    } catch (error) {
      if (this.spend || move)
        console.warn(
          `DAPA: a check was not settled (${error instanceof Error ? error.message : String(error)})`,
        );
    }
  }
}

/**
 * Where a list check runs, which decides what it may do (a formula's rounds go through the check session directly:
 * formula/cell-check.ts):
 * - `sidebar`: a turn of the sidebar's job: waits out the limits, one request at a time, keeps results, and stops
 *   when `cancelled` says so (the sidebar's Cancel);
 * - `background`: a background step (formulas or the job): sends at most `maxSend` domains (what the plan's window
 *   allows now) together with UrlFetchApp.fetchAll, never waits, keeps results.
 * `left`: URLs left in the whole work (judges whether a probe is worth it, as the planner does).
 */
export type CheckMode =
  | { kind: 'sidebar'; reuse: Reuse; left: number; cancelled: () => boolean }
  | { kind: 'background'; reuse: Reuse; left: number; maxSend: number; cancelled?: () => boolean };

export interface Check {
  mode: CheckMode;
  apiKey: string;
  baseUrl: string;
  /** Absolute time (ms since epoch) by which the run stops and reports what is unfinished. */
  deadline: number;
  /** The plan's window as the caller just read it (a background step reads it once per decision); else read here. */
  window?: WindowSnapshot;
}

/** A mode's options, resolved once: the core's run options, the reuse of results, the driver. */
export interface Policy {
  run: Pick<RunOptions, 'waitForRateLimits' | 'maxSend' | 'left' | 'inFlight' | 'firstAlone'>;
  reuse: Reuse;
  /** Every request the window allows goes out together (runSyncAll over fetchAll). */
  parallel: boolean;
  cancelled?: () => boolean;
}

export function policyOf(mode: CheckMode): Policy {
  if (mode.kind === 'sidebar')
    return {
      run: { left: mode.left },
      reuse: mode.reuse,
      parallel: false,
      cancelled: mode.cancelled,
    };
  return {
    // An execution's first request goes alone whatever the last one saw (a block may start between two).
    run: {
      waitForRateLimits: false,
      maxSend: mode.maxSend,
      left: mode.left,
      inFlight: Infinity,
      firstAlone: true,
    },
    reuse: mode.reuse,
    parallel: true,
    cancelled: mode.cancelled,
  };
}

/** The distinct domain keys among cell values (what a check can be billed for at most). */
export function distinctKeys(values: readonly unknown[]): string[] {
  return [...new Set(values.map(toEntry).flatMap((e) => (e.kind === 'candidate' ? [e.key] : [])))];
}

/**
 * Checks the values (one per input position) and returns one outcome per position. Never throws for the server.
 * The check holds what it may be billed (its new domains, capped by the monthly budget left) and settles it with
 * what the service billed (account.ts).
 */
export function checkValues(values: readonly unknown[], check: Check): Report {
  const { baseUrl, apiKey } = check;
  const policy = policyOf(check.mode);
  const distinct = distinctKeys(values);
  const kept = readKnown(baseUrl, distinct, policy.reuse);
  const want = Math.min(distinct.length - kept.known.size, policy.run.maxSend ?? Infinity);
  const session = new CheckSession({ apiKey, baseUrl }, check.deadline);
  const creditBudget = want > 0 ? session.hold(want) : undefined;
  let report: Report | undefined;
  try {
    const run = new CheckRun(values, {
      baseUrl,
      deadline: check.deadline,
      window: check.window ?? loadWindow(baseUrl),
      seed: now() % 2147483647,
      creditBudget,
      ...policy.run,
    });
    if (kept.known.size > 0) run.addCached(kept.known);
    report = session.run(run, {
      parallel: policy.parallel,
      cancelled: policy.cancelled,
      received: (records) => records.forEach(({ key }) => kept.handed.add(key)),
    });
    session.keep(report, kept);
  } finally {
    session.settle(report);
  }
  // Google refused a fetch for the day: what came in is kept; the caller stops and says why (not a service failure).
  const limit = dailyLimitMet();
  if (limit) throw new DailyLimitError(limit);
  return report;
}
