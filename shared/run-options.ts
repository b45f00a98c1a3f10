// What a caller tells a check run (its deadline, the window it starts from, its budgets), and the defaults filled
// in once, so that the run reads plain values.
import type { Outcome } from './outcome';
import type { WindowSnapshot, Pace } from './window';

export interface RunOptions {
  /** Base URL of the service (see BASE_URLS); the path is added here. */
  baseUrl: string;
  /** Absolute time, on the driver's clock, by which the run must have stopped. */
  deadline: number;
  /** URLs per request the caller wants (a user setting); else the window's known maximum, else 100. */
  maxUrlsPerRequest?: number;
  /** The plan's window as earlier executions left it (their sends and what they learned): the run starts from it. */
  window?: WindowSnapshot;
  /** Rate limits the caller states as known (tests, benchmarks); the run paces to them from its first request. */
  pace?: Pace;
  /** How many times a domain is sent again after `lookup_failed` (default 3). */
  retries?: number;
  /** Whether to wait out `rate_limit_reached` skips and 429s (default true); false ends them as skips at once. */
  waitForRateLimits?: boolean;
  /** Longest total wait the run may ask for (default: no limit besides the deadline). */
  maxWaitMs?: number;
  /** Failed answers in a row (5xx, network, unreadable) after which the run gives up (default 5). */
  maxConsecutiveFailures?: number;
  /** Seed for the jitter of backoffs (default 1). */
  seed?: number;
  /** URLs left in the whole work this run is a part of (a background step's queue): whether a probe above an
   *  inferred limit is worth it is judged by it (default: the run's own queue). */
  left?: number;
  /** Distinct domains (not answered by the cache) the run may send at most; the rest end unfinished, not run. */
  maxSend?: number;
  /**
   * Requests the run may have in flight at once, for a driver that sends them together (runSyncAll; default 1).
   * More than one only once the plan's maximum per request is known when the run starts: else each would pay a 422.
   */
  inFlight?: number;
  /**
   * The run's first request goes alone, the others only once it is answered (an execution that cannot know whether
   * its network is blocked since the last one: a 403 then costs one request, not a window of them). Default false.
   */
  firstAlone?: boolean;
  /**
   * Credits the run may spend: it never has more URLs sent and not yet answered than the credits left (a request
   * bills at most its URLs), so billed <= creditBudget whatever the server answers. Domains past it end as
   * retryable `credit_budget` skips, never sent (default: no ceiling).
   */
  creditBudget?: number;
}

/** RunOptions with every default filled in, once. */
export type Resolved = Required<Omit<RunOptions, 'maxUrlsPerRequest' | 'window' | 'pace'>> &
  Pick<RunOptions, 'window' | 'pace'>;

export function resolve(options: RunOptions, known: number | undefined): Resolved {
  const resolved: Resolved = {
    retries: 3,
    waitForRateLimits: true,
    maxWaitMs: Infinity,
    maxConsecutiveFailures: 5,
    seed: 1,
    left: 0,
    maxSend: Infinity,
    inFlight: 1,
    firstAlone: false,
    creditBudget: Infinity,
    ...definedOnly(options),
  };
  resolved.maxSend = Math.max(0, Math.floor(resolved.maxSend));
  resolved.creditBudget = Math.max(0, Math.floor(resolved.creditBudget));
  resolved.inFlight = known === undefined ? 1 : Math.max(1, resolved.inFlight);
  return resolved;
}

/** The options a caller set (an explicit undefined leaves the default). */
function definedOnly(options: RunOptions): RunOptions {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as RunOptions;
}

/** What a run keeps per distinct domain: its outcome once settled, and its retries so far. */
export interface Domain {
  key: string;
  outcome?: Outcome;
  lookupRetries: number;
  rateRetries: number;
  missingRetries: number;
}
