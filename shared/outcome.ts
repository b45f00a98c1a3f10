// What a check run gives back: exactly one Outcome per input position, and the totals of the run; and the
// outcomes a run ends its positions with.
import type { Entry } from './inputs';
import type { WindowSnapshot } from './window';
import type { DomainRecord, SkippedEntry } from './wire';

export type SkipReason =
  | 'invalid_url_format'
  | 'empty_url'
  | 'lookup_failed'
  | 'rate_limit_reached'
  | 'credit_budget' // not sent: the run's credit budget was spent (decided locally, never billed)
  | (string & {});

/** Why a position has no record and no skip. `retryable` says whether running again can help. */
export type ErrorCode =
  | 'bad_key' // 401 incorrect API key provided
  | 'not_premium' // 401 you are not premium for this request (or the month's credits are spent)
  | 'network_blocked' // 403 (an nginx page): the service refuses requests from this network, whatever the key
  | 'validation' // 422 Validation Error
  | 'not_found' // the base URL does not serve the endpoint
  | 'plan_limit' // the plan accepts no URL at all per request
  | 'server_error' // 5xx / network / unreadable answers kept failing
  | 'unmatched' // billed, but the record could not be told apart from others in its batch
  | 'missing' // the server kept answering without a record or a skip for it
  | 'unfinished' // the deadline or the wait budget came first
  | 'cancelled'; // the caller cancelled the run

/** Why an input was rejected locally, before any request (with `reason: 'invalid_url_format'`). */
export type InputProblem =
  | 'not_text'
  | 'too_long'
  | 'no_domain'
  | 'host_too_long'
  | 'no_extension'
  | 'empty_label'
  | 'label_too_long'
  | 'bad_characters'
  | 'bad_extension';

/** What stopped an unsent or unfinished position. */
export type StopCause =
  'deadline' | 'wait_budget' | 'waiting_off' | 'request_limit' | 'not_run' | 'cancelled';

/** Data behind an outcome, for a shell to word; never the API key. */
export interface OutcomeDetail {
  /** HTTP status of the answer behind it. */
  status?: number;
  /** How long the plan's limit still needed, when that is what stopped it. */
  waitMs?: number;
  why?: StopCause;
  /** Failed answers in a row (server_error). */
  failures?: number;
  /** What failed: 'HTTP 502', 'network', 'not_envelope'. */
  cause?: string;
  /** unmatched: the domains the service answered with (empty: records without a domain). */
  seen?: string[];
  /** A local rejection: what is wrong, and the value (clipped text, or the kind of a non-text value). */
  input?: InputProblem;
  value?: string;
  /** credit_budget: the run's credit budget. */
  budget?: number;
}

export type Outcome =
  | { kind: 'record'; key: string; record: DomainRecord; cached: boolean }
  | {
      kind: 'skip';
      reason: SkipReason;
      retryable: boolean;
      /** The service's own text for the skip, when it sent one. */
      serverText?: string;
      blank?: boolean;
      key?: string;
      detail?: OutcomeDetail;
    }
  | {
      kind: 'error';
      code: ErrorCode;
      retryable: boolean;
      /** The service's own text (a 401's message, a 422's error), when it sent one. */
      serverText?: string;
      key?: string;
      detail?: OutcomeDetail;
    };

/** Why a whole run stopped. */
export interface Fatal {
  code: ErrorCode;
  retryable: boolean;
  serverText?: string;
  detail?: OutcomeDetail;
}

export interface Totals {
  /** Input positions, and how they ended: records + skips + errors = inputs. */
  inputs: number;
  records: number;
  skips: number;
  errors: number;
  /** Blank or whitespace-only positions (counted among skips as empty_url, decided locally). */
  blanks: number;
  /** Distinct domain keys among the inputs, and how many of them the cache answered. */
  distinct: number;
  cached: number;
  /** HTTP requests sent, and billed queries (the sum of `summary.processed`). */
  requests: number;
  billed: number;
  /** Times a domain was queued again after a retryable answer (skip, 429, 5xx, network, unreadable). */
  retries: number;
  /** Milliseconds the run asked its driver to wait. */
  waitedMs: number;
  /** Final skip outcomes per reason, per position. */
  skippedByReason: Record<string, number>;
  /** Final error outcomes per code, per position. */
  errorsByCode: Record<string, number>;
  /** Answers that were not an envelope. */
  responses: { rateLimited: number; limitExceeded: number; transient: number };
}

/** What the run learned about the plan; the shell keeps it so the next run starts from it. */
export interface Learned {
  maxUrlsPerRequest?: number;
  requestsPerMinute?: number;
  urlsPerMinute?: number;
}

export interface Report {
  outcomes: Outcome[];
  totals: Totals;
  learned: Learned;
  /** Records fetched in this run (not from the cache), by key: what the shell may cache. */
  fresh: Array<{ key: string; record: DomainRecord }>;
  /** Set when the run stopped on an error that ends every unfinished position (wrong key, expired plan, ...). */
  fatal?: Fatal;
  /** The plan's window as this run left it (earlier sends it started from, its own, what it learned). */
  window: WindowSnapshot;
}

/** An error outcome for any key, with its data and the service's own text when there is one. */
export function errorOutcome(
  code: ErrorCode,
  retryable: boolean,
  detail?: OutcomeDetail,
  serverText?: string,
): (key: string) => Outcome {
  return (key) => {
    const outcome: Outcome = { kind: 'error', code, retryable, key };
    if (serverText !== undefined) outcome.serverText = serverText;
    if (detail !== undefined) outcome.detail = detail;
    return outcome;
  };
}

/** A position the run did not get to: running again can finish it. */
export function unfinished(detail: OutcomeDetail): (key: string) => Outcome {
  return errorOutcome('unfinished', true, detail);
}

/** The outcome of a domain not sent (or sent in vain) because of the plan's rate limit, when the run does not wait. */
export function rateLimitSkip(detail: OutcomeDetail): (key: string) => Outcome {
  return (key) => ({ kind: 'skip', reason: 'rate_limit_reached', retryable: true, key, detail });
}

/** A domain not sent because the run's credit budget was spent: a later run with credits left sends it. */
export function budgetSkip(budget: number): (key: string) => Outcome {
  return (key) => ({ kind: 'skip', reason: 'credit_budget', retryable: true, key, detail: { budget } });
}

/** A skip as the service reported it, with its own text when it sent one. */
export function serverSkip(key: string, skip: SkippedEntry, retryable: boolean): Outcome {
  const outcome: Outcome = { kind: 'skip', reason: skip.reason, retryable, key };
  if (skip.message) outcome.serverText = skip.message;
  return outcome;
}

/** The outcome of a position decided locally, with no request: a blank, or a value that is no domain. */
export function localOutcome(entry: Exclude<Entry, { kind: 'candidate' }>): Outcome {
  if (entry.kind === 'blank') return { kind: 'skip', reason: 'empty_url', retryable: false, blank: true };
  return {
    kind: 'skip',
    reason: entry.reason,
    retryable: false,
    detail: { input: entry.problem, value: entry.value },
  };
}
