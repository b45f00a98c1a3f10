// CheckRun: the whole check as a state machine that does no I/O and reads no clock (in the style of h11).
// The driver asks `next(now)` what to do (send a batch, wait, or stop), performs it, and hands the answer back
// with `receive`; it may keep several requests in flight (`inFlight`) for a driver that sends them together.
// When the next request may go is the plan's window's answer alone (window.ts). Every input position ends in exactly
// one Outcome, whatever the server or the network does.
import { endpointUrl } from './endpoints';
import { type Entry, toEntry } from './inputs';
import {
  type Fatal,
  type Outcome,
  type Report,
  budgetSkip,
  errorOutcome,
  localOutcome,
  rateLimitSkip,
  serverSkip,
  unfinished,
} from './outcome';
import { keyOfSkip, matchRecords } from './pairing';
import { fullJitter, seededRandom } from './random';
import { type Domain, type Resolved, type RunOptions, resolve } from './run-options';
import { newCounts, totalsOf } from './totals';
import { type NetworkFailure, type Step, checkRequest } from './step';
import { PlanWindow, WINDOW_MS, type WindowSnapshot } from './window';
import {
  type Answer,
  type DomainRecord,
  type HttpAnswer,
  type SkippedEntry,
  classify,
  readServerRate,
} from './wire';

/** First batch size when the plan's maximum is unknown; a 422 Limit Exceeded shrinks it. */
export const DEFAULT_BATCH_SIZE = 100;
const RATE_LIMIT_RESENDS = 25;

export class CheckRun {
  private readonly entries: Entry[];
  private readonly domains = new Map<string, Domain>();
  protected queue: string[] = [];
  /** Whether any request of the run was answered (or failed): `firstAlone` holds the others until then. */
  private answeredOnce = false;
  /** Requests sent and not answered yet, by id. */
  protected readonly inflight = new Map<number, { keys: string[]; sentAt: number; probe: boolean }>();
  private nextId = 1;
  protected batchSize: number;
  protected readonly options: Resolved;
  /** The plan's window, and the one table of when the next request may go (its sends, limits, server word, hold). */
  protected pacer: PlanWindow;
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
  protected finalOutcome?: (key: string) => Outcome;
  protected readonly counts = newCounts();
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
    const known = this.pacer.learned().maxUrlsPerRequest;
    this.batchSize = Math.max(1, Math.floor(options.maxUrlsPerRequest ?? known ?? DEFAULT_BATCH_SIZE));
    this.options = resolve(options, known);
    this.random = seededRandom(this.options.seed);
  }

  /** Answers from the shell's cache: those domains are done and cost nothing. */
  addCached(
    records: ReadonlyMap<string, DomainRecord> | Readonly<Record<string, DomainRecord | undefined>>,
  ): void {
    this.queue = this.queue.filter((key) => {
      const record =
        records instanceof Map ? records.get(key) : (records as Record<string, DomainRecord>)[key];
      if (!record) return true;
      this.settle(key, { kind: 'record', key, record, cached: true });
      this.counts.cached += 1;
      return false;
    });
  }

  /** What the driver should do now. */
  next(now: number): Step {
    this.lastNow = Math.max(this.lastNow, now);
    const most = this.options.firstAlone && !this.answeredOnce ? 1 : this.options.inFlight;
    if (this.finalOutcome || this.inflight.size >= most) return this.settled();
    for (const key of this.queue.splice(this.options.maxSend))
      this.settle(key, unfinished({ why: 'not_run' })(key));
    if (this.queue.length === 0)
      return this.inflight.size > 0 ? this.settled() : this.finish(unfinished({ why: 'not_run' }));
    const inFlight = [...this.inflight.values()];
    const credits = this.creditsLeft();
    if (credits <= 0)
      return this.inflight.size > 0 ? this.settled() : this.finish(budgetSkip(this.options.creditBudget));
    const wanted = Math.min(this.batchSize, this.queue.length, credits);
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
      // A backoff after failed answers is waited out even when rate limits are not.
      if (!this.pacer.heldFor('failure', slot.at) && !this.options.waitForRateLimits)
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
    this.pacer.sent(now);
    const id = this.nextId++;
    this.inflight.set(id, { keys, sentAt: now, probe: slot.probe });
    this.counts.requests += 1;
    return {
      type: 'send',
      id,
      urls: keys,
      request: checkRequest(this.endpoint, keys),
    };
  }

  /** The answer to request `id`: an HTTP answer, or a network failure. */
  receive(id: number, response: HttpAnswer | NetworkFailure, now: number): void {
    this.answeredOnce = true;
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

  /** Records received since the last call: a driver hands them to the shell to keep before anything can fail. */
  newRecords(): Array<{ key: string; record: DomainRecord }> {
    const records = this.fresh.slice(this.freshHanded);
    this.freshHanded = this.fresh.length;
    return records;
  }

  /** One outcome per input position, the totals, what was learned, and what may be cached. */
  report(): Report {
    const outcomes = this.entries.map((entry): Outcome =>
      entry.kind === 'candidate'
        ? (this.domains.get(entry.key)?.outcome ?? unfinished({ why: 'not_run' })(entry.key))
        : localOutcome(entry),
    );
    return {
      outcomes,
      totals: totalsOf(outcomes, this.domains.size, this.counts),
      learned: this.pacer.learned(),
      fresh: this.fresh.slice(),
      fatal: this.fatal,
      window: this.window(this.lastNow),
    };
  }

  /** The plan's window now: the sends of earlier executions this run started from, its own, and its limits. */
  window(now: number): WindowSnapshot {
    return this.pacer.snapshot(Number.isFinite(now) ? now : (this.options.window?.at ?? 0));
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
      const key = keyOfSkip(skip, keys, open);
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
      const priorGone = this.pacer.othersGoneAt(now);
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

  /** Queues keys to be sent again; once the run has finished, they end with its final outcome instead. */
  private requeue(keys: string[], where: 'front' | 'back', countsAsRetry = true): void {
    if (keys.length === 0) return;
    const final = this.finalOutcome;
    if (final) return keys.forEach((key) => this.settle(key, final(key)));
    if (countsAsRetry) this.counts.retries += keys.length;
    this.queue = where === 'front' ? keys.concat(this.queue) : this.queue.concat(keys);
  }

  protected settle(key: string, outcome: Outcome): void {
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
  protected finish(outcomeOf: (key: string) => Outcome): Step {
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
}
