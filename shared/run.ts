// CheckRun: the whole check as a state machine that does no I/O and reads no clock (in the style of h11).
// The driver asks `next(now)` what to do (send a batch, wait, or stop), performs it, and hands the answer back
// with `receive`; it may keep several requests in flight (`inFlight`) for a driver that sends them together.
// When the next request may go is the plan's window's answer alone (window.ts). Every input position ends in exactly
// one Outcome, whatever the server or the network does.
import { JSON_HEADERS, endpointUrl } from './endpoints';
import { type Entry, keyOfDomain, toEntry } from './inputs';
import type { ErrorCode, Fatal, Learned, Outcome, OutcomeDetail, Report, Totals } from './outcome';
import { type Pace, PlanWindow, WINDOW_MS, type WindowSnapshot } from './window';
import { fullJitter, seededRandom } from './random';
import {
  type Answer,
  type DomainRecord,
  type HttpAnswer,
  type SkippedEntry,
  classify,
  readServerRate,
} from './wire';

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
   * Credits the run may spend: it never has more URLs sent and not yet answered than the credits left (a request
   * bills at most its URLs), so billed <= creditBudget whatever the server answers. Domains past it end as
   * retryable `credit_budget` skips, never sent (default: no ceiling).
   */
  creditBudget?: number;
}

/** RunOptions with every default filled in, once. */
type Resolved = Required<Omit<RunOptions, 'maxUrlsPerRequest' | 'window' | 'pace'>> &
  Pick<RunOptions, 'window' | 'pace'>;

function resolve(options: RunOptions, known: number | undefined): Resolved {
  const resolved: Resolved = {
    retries: 3,
    waitForRateLimits: true,
    maxWaitMs: Infinity,
    maxConsecutiveFailures: 5,
    seed: 1,
    left: 0,
    maxSend: Infinity,
    inFlight: 1,
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

/** First batch size when the plan's maximum is unknown; a 422 Limit Exceeded shrinks it. */
export const DEFAULT_BATCH_SIZE = 100;
const RATE_LIMIT_RESENDS = 25;

export interface HttpRequest {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * What the driver does next: send a request (and it may ask again before the answer, up to `inFlight` requests);
 * wait; hand back the answers of the requests in flight first (`receive`: nothing more may go before them); or stop.
 */
export type Step =
  | { type: 'send'; id: number; urls: string[]; request: HttpRequest }
  | { type: 'wait'; ms: number }
  | { type: 'receive' }
  | { type: 'done' };

/** A transport failure the driver saw instead of an HTTP answer. */
export interface NetworkFailure {
  error: string;
}

interface Domain {
  key: string;
  outcome?: Outcome;
  lookupRetries: number;
  rateRetries: number;
  missingRetries: number;
}

export class CheckRun {
  private readonly entries: Entry[];
  private readonly domains = new Map<string, Domain>();
  private queue: string[] = [];
  /** Requests sent and not answered yet, by id. */
  private readonly inflight = new Map<number, { keys: string[]; sentAt: number; probe: boolean }>();
  private nextId = 1;
  private batchSize: number;
  private readonly options: Resolved;
  /** The plan's window, and the one table of when the next request may go (its sends, limits, server word, hold). */
  private readonly pacer: PlanWindow;
  /** The latest time the driver told the run (for the report's window). */
  private lastNow = -Infinity;
  private readonly random: () => number;
  private failuresInRow = 0;
  private rateLimitsInRow = 0;
  private spentWindowsInRow = 0;
  private readonly latencies: number[] = [];
  private readonly fresh: Array<{ key: string; record: DomainRecord }> = [];
  /** How many of `fresh` the driver has been handed (newRecords). */
  private freshHanded = 0;
  private fatal?: Fatal;
  /** Set once the run has finished: the outcome of a domain whose request comes back to be sent again. */
  private finalOutcome?: (key: string) => Outcome;
  private readonly counts = {
    requests: 0,
    billed: 0,
    retries: 0,
    waitedMs: 0,
    cached: 0,
    rateLimited: 0,
    limitExceeded: 0,
    transient: 0,
  };
  private readonly endpoint: string;

  constructor(values: readonly unknown[], options: RunOptions) {
    this.endpoint = endpointUrl(options.baseUrl);
    this.entries = values.map(toEntry);
    for (const entry of this.entries) {
      if (entry.kind !== 'candidate' || this.domains.has(entry.key)) continue;
      this.domains.set(entry.key, { key: entry.key, lookupRetries: 0, rateRetries: 0, missingRetries: 0 });
      this.queue.push(entry.key);
    }
    this.pacer = new PlanWindow(options.window, options.pace);
    const known = this.pacer.limits.maxUrlsPerRequest?.value;
    this.batchSize = Math.max(1, Math.floor(options.maxUrlsPerRequest ?? known ?? DEFAULT_BATCH_SIZE));
    this.options = resolve(options, known);
    this.random = seededRandom(this.options.seed);
  }

  /** Answers from the shell's cache: those domains are done and cost nothing. */
  addCached(
    records: ReadonlyMap<string, DomainRecord> | Readonly<Record<string, DomainRecord | undefined>>,
  ): void {
    const get = (key: string) =>
      records instanceof Map ? records.get(key) : (records as Record<string, DomainRecord | undefined>)[key];
    this.queue = this.queue.filter((key) => {
      const record = get(key);
      if (!record) return true;
      this.settle(key, { kind: 'record', key, record, cached: true });
      this.counts.cached += 1;
      return false;
    });
  }

  /** What the driver should do now. */
  next(now: number): Step {
    this.lastNow = Math.max(this.lastNow, now);
    if (this.finalOutcome || this.inflight.size >= this.options.inFlight) return this.settled();
    for (const key of this.queue.splice(this.options.maxSend))
      this.settle(key, unfinished({ why: 'not_run' })(key));
    if (this.queue.length === 0)
      return this.inflight.size > 0 ? this.settled() : this.finish(unfinished({ why: 'not_run' }));
    const inFlight = [...this.inflight.values()];
    const credits = this.creditsLeft();
    if (credits <= 0)
      return this.inflight.size > 0 ? this.settled() : this.finish(budgetSkip(this.options.creditBudget));
    const wanted = Math.min(this.batchSize, this.queue.length, credits);
    const hold = this.pacer.hold;
    const slot = this.pacer.plan(
      now,
      wanted,
      Math.min(Math.max(this.queue.length, this.options.left), credits),
      inFlight.map((r) => r.keys.length),
    );
    const latency = this.latencyEstimate();
    if (slot.at > now) {
      if (this.inflight.size > 0) return { type: 'receive' }; // their answers may change the plan
      const ms = slot.at - now;
      const forFailure = hold?.cause === 'failure' && slot.at <= hold.until;
      if (!forFailure && !this.options.waitForRateLimits)
        return this.finish(rateLimitSkip({ why: 'waiting_off', waitMs: ms }));
      if (slot.at + latency > this.options.deadline)
        return this.finish(unfinished({ why: 'deadline', waitMs: ms }));
      if (this.counts.waitedMs + ms > this.options.maxWaitMs)
        return this.finish(unfinished({ why: 'wait_budget', waitMs: ms }));
      this.counts.waitedMs += ms;
      return { type: 'wait', ms };
    }
    if (now + latency > this.options.deadline) return this.finish(unfinished({ why: 'deadline' }));
    const keys = this.queue.splice(0, slot.urls);
    this.pacer.hold = undefined; // it has passed
    this.pacer.observedSince ??= now;
    const id = this.nextId++;
    this.inflight.set(id, { keys, sentAt: now, probe: slot.probe });
    this.counts.requests += 1;
    return {
      type: 'send',
      id,
      urls: keys,
      request: {
        method: 'POST',
        url: this.endpoint,
        headers: { ...JSON_HEADERS },
        body: JSON.stringify({ urls: keys }),
      },
    };
  }

  /** The answer to request `id`: an HTTP answer, or a network failure. */
  receive(id: number, response: HttpAnswer | NetworkFailure, now: number): void {
    this.lastNow = Math.max(this.lastNow, now);
    const sent = this.inflight.get(id);
    if (!sent) return; // a late answer after cancel(): ignore it
    const { keys, sentAt, probe } = sent;
    this.inflight.delete(id);
    this.latencies.push(Math.max(0, now - sentAt));
    if (this.latencies.length > 5) this.latencies.shift();
    const answer: Answer =
      'error' in response
        ? {
            kind: 'transient',
            status: 0,
            what: `a network failure (${String(response.error).slice(0, 120)})`,
          }
        : classify(response, keys.length, now);
    this.act(keys, answer, now, probe);
    // After the answer is counted, so that the server's remaining count is read against this run's own window.
    const rate = 'error' in response ? undefined : readServerRate(response, now);
    if (rate) this.pacer.heard(now, rate);
  }

  private act(keys: string[], answer: Answer, now: number, probe: boolean): void {
    switch (answer.kind) {
      case 'envelope':
        return this.onEnvelope(keys, answer, now, probe);
      case 'bad_key':
      case 'not_premium':
        return this.stop({ code: answer.kind, retryable: false, serverText: answer.message });
      case 'blocked':
        return this.stop({ code: 'network_blocked', retryable: false, detail: { status: answer.status } });
      case 'validation':
        return this.stop({ code: 'validation', retryable: false, serverText: answer.message || undefined });
      case 'not_found':
        return this.stop({ code: 'not_found', retryable: false, detail: { status: answer.status } });
      case 'limit_exceeded':
        this.pacer.accepted(now, 0); // it billed nothing, but a plan may count it against its requests per minute
        return this.onLimitExceeded(keys, answer.maximum, now);
      case 'rate_limited':
        return this.onRateLimited(keys, answer.retryAfterMs, now, probe);
      case 'transient':
        return this.onFailure(keys, answer.what, now, answer.retryAfterMs);
    }
  }

  /** Stops the run at once; what is not finished ends as `cancelled`. */
  cancel(): void {
    this.inflight.clear();
    if (!this.finalOutcome) this.finish(errorOutcome('cancelled', false));
  }

  /** One outcome per input position, the totals, what was learned, and what may be cached. */
  /** Records received since the last call: a driver hands them to the shell to keep before anything can fail. */
  newRecords(): Array<{ key: string; record: DomainRecord }> {
    const records = this.fresh.slice(this.freshHanded);
    this.freshHanded = this.fresh.length;
    return records;
  }

  report(): Report {
    const outcomes = this.entries.map((entry): Outcome => {
      if (entry.kind === 'blank') return { kind: 'skip', reason: 'empty_url', retryable: false, blank: true };
      if (entry.kind === 'rejected')
        return {
          kind: 'skip',
          reason: entry.reason,
          retryable: false,
          detail: { input: entry.problem, value: entry.value },
        };
      return this.domains.get(entry.key)?.outcome ?? unfinished({ why: 'not_run' })(entry.key);
    });
    return {
      outcomes,
      totals: this.totals(outcomes),
      learned: this.learned(),
      fresh: this.fresh.slice(),
      fatal: this.fatal,
      window: this.window(this.lastNow),
    };
  }

  /** The plan's window now: the sends of earlier executions this run started from, its own, and its limits. */
  window(now: number): WindowSnapshot {
    return this.pacer.snapshot(Number.isFinite(now) ? now : (this.options.window?.at ?? 0));
  }

  /** What is known of the plan, as plain numbers (for display and for a shell's own batch sizing). */
  private learned(): Learned {
    const learned: Learned = {};
    const limits = this.pacer.limits;
    if (limits.maxUrlsPerRequest) learned.maxUrlsPerRequest = limits.maxUrlsPerRequest.value;
    if (limits.requestsPerMinute) learned.requestsPerMinute = limits.requestsPerMinute.value;
    if (limits.urlsPerMinute) learned.urlsPerMinute = limits.urlsPerMinute.value;
    return learned;
  }

  private onEnvelope(
    keys: string[],
    answer: Extract<Answer, { kind: 'envelope' }>,
    now: number,
    probe: boolean,
  ): void {
    this.failuresInRow = 0;
    this.rateLimitsInRow = 0;
    if (answer.processed > 0) this.spentWindowsInRow = 0;
    this.counts.billed += answer.processed;
    this.pacer.accepted(now, answer.processed);
    const open = new Set(keys);
    const rateLimited: string[] = [];
    for (const skip of answer.skipped) {
      const key = this.keyOfSkip(skip, keys, open);
      if (key === undefined) continue;
      open.delete(key);
      if (skip.reason === 'rate_limit_reached') rateLimited.push(key);
      else this.onSkip(key, skip);
    }
    const { matched, unmatched } = matchRecords([...open], answer.records);
    for (const [key, record] of matched) {
      open.delete(key);
      this.fresh.push({ key, record });
      this.settle(key, { kind: 'record', key, record, cached: false });
    }
    const strays = unmatched.length + answer.malformedRecords;
    for (const key of open) {
      if (strays > 0) {
        const seen = unmatched.map((r) => r.domain);
        this.settle(key, errorOutcome('unmatched', false, { seen })(key));
      } else if (this.domain(key).missingRetries++ < this.options.retries) {
        this.requeue([key], 'back');
      } else {
        this.settle(key, errorOutcome('missing', true)(key));
      }
    }
    if (rateLimited.length > 0) this.onUrlLimit(rateLimited, answer.skipped, now, probe);
  }

  private onSkip(key: string, skip: SkippedEntry): void {
    const domain = this.domain(key);
    if (skip.reason === 'lookup_failed' && domain.lookupRetries++ < this.options.retries) {
      this.requeue([key], 'back');
      return;
    }
    this.settle(key, serverSkip(key, skip, skip.reason === 'lookup_failed'));
  }

  private onUrlLimit(keys: string[], skipped: SkippedEntry[], now: number, probe: boolean): void {
    const learned = this.pacer.learnUrlLimit(now, probe);
    const again = keys.filter(
      (key) => this.options.waitForRateLimits && this.domain(key).rateRetries++ < RATE_LIMIT_RESENDS,
    );
    const skip = skipped.find((s) => s.reason === 'rate_limit_reached');
    for (const key of keys) if (!again.includes(key) && skip) this.settle(key, serverSkip(key, skip, true));
    this.requeue(again, 'front');
    if (learned === 0) {
      // The minute's budget was spent by sends from before this run (another run with the same key). They have
      // all left the window a minute after this run's first request; until then, or when that has passed, back off.
      this.spentWindowsInRow += 1;
      const priorGone = (this.pacer.observedSince ?? now) + WINDOW_MS + 1;
      this.pacer.holdUntil(
        priorGone > now ? priorGone : now + fullJitter(this.spentWindowsInRow, this.random, 2000, 60_000),
        'rate_limit',
      );
    }
  }

  private onLimitExceeded(keys: string[], maximum: number | undefined, now: number): void {
    this.counts.limitExceeded += 1;
    if (keys.length <= 1) return this.stop({ code: 'plan_limit', retryable: false });
    this.batchSize = Math.max(1, Math.min(maximum ?? Math.floor(keys.length / 2), keys.length - 1));
    this.pacer.learnMaximum(now, this.batchSize, maximum !== undefined && maximum === this.batchSize);
    this.requeue(keys, 'front', false);
  }

  private onRateLimited(keys: string[], retryAfterMs: number | undefined, now: number, probe: boolean): void {
    this.counts.rateLimited += 1;
    this.rateLimitsInRow += 1;
    const retryAt = retryAfterMs === undefined ? undefined : now + retryAfterMs;
    this.pacer.learnRequestLimit(now, retryAt, undefined, probe);
    // The server's word decides the next attempt, not the window's guesses; the window keeps it for later runs too.
    if (retryAt !== undefined) this.pacer.holdUntil(retryAt, 'retry_after');
    if (!this.options.waitForRateLimits || this.rateLimitsInRow > RATE_LIMIT_RESENDS) {
      // Not waiting: this batch and everything not sent yet end as rate_limit_reached, with no further request.
      // Without the server's word, a whole window (the plan's unit) is when a later run may start.
      if (this.pacer.plan(now, 1).at <= now) this.pacer.holdUntil(now + WINDOW_MS, 'rate_limit');
      this.finish(rateLimitSkip({ why: 'request_limit', status: 429 }));
      return;
    }
    if (retryAt === undefined)
      this.pacer.holdUntil(now + fullJitter(this.rateLimitsInRow, this.random), 'rate_limit');
    this.requeue(keys, 'front');
  }

  private onFailure(keys: string[], what: string, now: number, retryAfterMs?: number): void {
    this.counts.transient += 1;
    this.failuresInRow += 1;
    if (this.failuresInRow >= this.options.maxConsecutiveFailures) {
      this.requeue(keys, 'front', false);
      return this.stop({
        code: 'server_error',
        retryable: true,
        detail: { failures: this.failuresInRow, cause: what },
      });
    }
    this.pacer.holdUntil(now + (retryAfterMs ?? fullJitter(this.failuresInRow, this.random)), 'failure');
    this.requeue(keys, 'front');
  }

  /** Finds the key a skipped entry speaks of: by its index when the url agrees, else by its url. */
  private keyOfSkip(skip: SkippedEntry, keys: string[], open: Set<string>): string | undefined {
    const i = skip.index;
    const byIndex = i !== undefined && Number.isInteger(i) && i >= 0 && i < keys.length ? keys[i] : undefined;
    const url = (skip.url ?? '').trim();
    if (
      byIndex !== undefined &&
      open.has(byIndex) &&
      (url === '' || url === byIndex || keyOfDomain(url) === byIndex)
    )
      return byIndex;
    if (url === '') return undefined;
    const k = keyOfDomain(url);
    return open.has(k) ? k : keys.find((key) => open.has(key) && key === url.toLowerCase());
  }

  /** Queues keys to be sent again; once the run has finished, they end with its final outcome instead. */
  private requeue(keys: string[], where: 'front' | 'back', countsAsRetry = true): void {
    if (keys.length === 0) return;
    const final = this.finalOutcome;
    if (final) return keys.forEach((key) => this.settle(key, final(key)));
    if (countsAsRetry) this.counts.retries += keys.length;
    this.queue = where === 'front' ? keys.concat(this.queue) : this.queue.concat(keys);
  }

  private settle(key: string, outcome: Outcome): void {
    this.domain(key).outcome = outcome;
  }

  private domain(key: string): Domain {
    const d = this.domains.get(key);
    if (!d) throw new Error(`CheckRun: unknown key ${key}`);
    return d;
  }

  /** Credits the run may still spend: its budget, less what was billed and what may still bill (URLs in flight). */
  private creditsLeft(): number {
    let left = this.options.creditBudget - this.counts.billed;
    for (const r of this.inflight.values()) left -= r.keys.length;
    return left;
  }

  private latencyEstimate(): number {
    return this.latencies.length > 0 ? Math.max(...this.latencies) : 0;
  }

  /**
   * Ends every unsettled domain not in flight with the outcome `outcomeOf` gives and marks the run finished; the
   * answers still in flight are taken (what they billed is kept) and end the rest of theirs the same way.
   */
  private finish(outcomeOf: (key: string) => Outcome): Step {
    const inFlight = new Set([...this.inflight.values()].flatMap((r) => r.keys));
    // Past the credits not billed yet, a domain ends on the budget (unless the run stopped on an error for all).
    let credits = this.fatal ? Infinity : this.options.creditBudget - this.counts.billed;
    for (const domain of this.domains.values()) {
      if (domain.outcome || inFlight.has(domain.key)) continue;
      domain.outcome = (credits-- > 0 ? outcomeOf : budgetSkip(this.options.creditBudget))(domain.key);
    }
    this.queue = [];
    this.finalOutcome ??= outcomeOf;
    return this.settled();
  }

  /** A finished run (or one with all its requests in flight) first takes the answers still out. */
  private settled(): Step {
    return this.inflight.size > 0 ? { type: 'receive' } : { type: 'done' };
  }

  private stop(fatal: Fatal): void {
    this.fatal = fatal;
    this.finish(errorOutcome(fatal.code, fatal.retryable, fatal.detail, fatal.serverText));
  }

  private totals(outcomes: Outcome[]): Totals {
    const skippedByReason: Record<string, number> = {};
    const errorsByCode: Record<string, number> = {};
    let records = 0;
    let blanks = 0;
    for (const o of outcomes) {
      if (o.kind === 'record') records += 1;
      else if (o.kind === 'skip') {
        skippedByReason[o.reason] = (skippedByReason[o.reason] ?? 0) + 1;
        if (o.blank) blanks += 1;
      } else errorsByCode[o.code] = (errorsByCode[o.code] ?? 0) + 1;
    }
    const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
    const c = this.counts;
    return {
      inputs: outcomes.length,
      records,
      skips: sum(skippedByReason),
      errors: sum(errorsByCode),
      blanks,
      distinct: this.domains.size,
      cached: c.cached,
      requests: c.requests,
      billed: c.billed,
      retries: c.retries,
      waitedMs: c.waitedMs,
      skippedByReason,
      errorsByCode,
      responses: { rateLimited: c.rateLimited, limitExceeded: c.limitExceeded, transient: c.transient },
    };
  }
}

/**
 * Pairs records with the keys that were sent, never by order: first by the normalized domain, then by one
 * being a subdomain of the other (a server may answer for the registrable domain), then a lone leftover pair.
 */
export function matchRecords(
  keys: readonly string[],
  records: readonly DomainRecord[],
): { matched: Map<string, DomainRecord>; unmatched: DomainRecord[] } {
  const matched = new Map<string, DomainRecord>();
  const open = new Set(keys);
  let rest: DomainRecord[] = [];
  for (const record of records) {
    const k = keyOfDomain(record.domain);
    if (open.has(k)) {
      matched.set(k, record);
      open.delete(k);
    } else if (!matched.has(k)) rest.push(record);
  }
  rest = rest.filter((record) => {
    const k = keyOfDomain(record.domain);
    const related = [...open].filter((key) => key.endsWith('.' + k) || k.endsWith('.' + key));
    if (related.length !== 1) return true;
    matched.set(related[0], record);
    open.delete(related[0]);
    return false;
  });
  if (rest.length === 1 && open.size === 1) {
    const [key] = open;
    matched.set(key, rest[0]);
    rest = [];
  }
  return { matched, unmatched: rest };
}

function errorOutcome(
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
function unfinished(detail: OutcomeDetail): (key: string) => Outcome {
  return errorOutcome('unfinished', true, detail);
}

/** The outcome of a domain not sent (or sent in vain) because of the plan's rate limit, when the run does not wait. */
function rateLimitSkip(detail: OutcomeDetail): (key: string) => Outcome {
  return (key) => ({ kind: 'skip', reason: 'rate_limit_reached', retryable: true, key, detail });
}

/** A domain not sent because the run's credit budget was spent: a later run with credits left sends it. */
function budgetSkip(budget: number): (key: string) => Outcome {
  return (key) => ({ kind: 'skip', reason: 'credit_budget', retryable: true, key, detail: { budget } });
}

/** A skip as the service reported it, with its own text when it sent one. */
function serverSkip(key: string, skip: SkippedEntry, retryable: boolean): Outcome {
  const outcome: Outcome = { kind: 'skip', reason: skip.reason, retryable, key };
  if (skip.message) outcome.serverText = skip.message;
  return outcome;
}
