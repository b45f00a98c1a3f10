// One execution's part in sharing its key with the executions that run beside it: in this n8n process always
// (registry.ts), and across workers through Redis when the node's Share Across Workers is on (redisShare.ts). It
// claims the execution's domains (or finds them answered, or being checked by another execution: then the run sets
// them aside and waits), publishes each batch of answers the moment it comes, hands the merged window of the others
// to the run before each decision, lets one execution at a time learn the plan's per-request maximum, keeps one
// heartbeat for all its claims, and at the end hands back what it claimed and did not answer. Every decision is a
// pure transition elsewhere: the claims in storeClaims.ts; the minute (sends to tell, a reservation's wait, what a
// flush writes and frees, the heartbeat) in storeMinute.ts. This module only drives them, the registry, the store
// and the clock. The first failure of the store (or a call past its budget) turns the store off for this execution
// (it goes on sharing within its process) and is said on every output item (`problem`).
// Over 300 lines (100 of them comments): it is the one place that holds an execution's state across the
// run, the registry, the store and the clock, and the order of its store calls (sends before their reservations
// are freed, lessons before both, the heartbeat between waits) is what keeps two workers out of the same minute;
// cut in two classes, that order and state would be passed back and forth between them, not made simpler.
import { randomUUID } from 'node:crypto';
import { sleep, sleepWithAbort } from 'n8n-workflow';
import { mergeWindows, type DomainRecord, type WindowSnapshot } from '../../../../shared/index';
import type { OthersView, SharingRun } from '../../../../shared/sharing-run';
import { WINDOW_MS } from '../../../../shared/window';
import { processWindow } from '../planWindow';
import { REQUEST_TIMEOUT_MS } from '../transport';
import { LEASE_MS, type RedisShare } from './redisShare';
import {
  answered as answeredInStore,
  claimed,
  emptyClaims,
  handBack,
  handedOver,
  nextPoll,
  polled,
  unsettled,
  wentDown,
  type ClaimEffects,
} from './storeClaims';
import {
  answered,
  claim,
  learned,
  learnOrWait,
  othersInFlight,
  publish,
  release,
  sending,
  shareOf,
  stopWaiting,
  type Answer,
  type KeyShare,
} from './registry';
import {
  emptyMinute,
  longerForSend,
  noteSends,
  planToKeep,
  renewalDue,
  requestAnswered,
  requestBack,
  requestReturned,
  requestTaken,
  reservation,
  reserveStep,
  toFlush,
  type Heartbeat,
} from './storeMinute';

/** How often the store's window is read again; domains other workers are checking are asked about first after this,
 * then less often while nothing changes (up to POLL_MAX_MS), so that waiting costs few calls. */
const POLL_MS = 1000;
const POLL_MAX_MS = 8000;
const RENEW_MS = LEASE_MS / 3;
/**
 * A request's claims last this long from the moment it goes: nothing renews them while n8n waits for the answer, and
 * the request may take up to its timeout. The lease then goes back to LEASE_MS at the next renewal.
 */
const SENDING_LEASE_MS = REQUEST_TIMEOUT_MS + RENEW_MS;

export interface SessionSetup {
  /** The process's storage key of the window (a digest of the API key and the address). */
  storageKey: string;
  reuseMs: number;
  /** The user set the per-request maximum: nothing to learn. */
  maximumSet: boolean;
  signal?: AbortSignal;
  remote?: RedisShare;
  /** Why the store was not usable from the start (the credential), if so. */
  problem?: string;
}

export class ShareSession {
  readonly owner = randomUUID();
  /** When the service answered for each domain this execution got, for `checked_at`. */
  readonly checkedAt = new Map<string, number>();
  /** Why the shared store was not used, in the words every output item carries. */
  problem?: string;
  private readonly share: KeyShare;
  private remote?: RedisShare;
  /**
   * After the store went down: still told, without waiting (a failure ignored), this execution's heartbeat, answers
   * and end, so that once the store answers again no other worker takes the domains it is still sending.
   */
  private keeper?: RedisShare;
  /** The store went down by a call past its budget (it may have landed), not by a refusal. */
  private timedOut = false;
  private run?: SharingRun;
  /** Domains this execution claimed and has not answered. */
  private readonly mine = new Set<string>();
  /** What the store says of its domains: held by it in Redis too, or by another worker (storeClaims.ts). */
  private readonly claims = emptyClaims();
  private remoteWindow?: WindowSnapshot;
  private remoteReadAt = -Infinity;
  /** The claims' heartbeat in the store, and what the store is still to be told of the minute (storeMinute.ts). */
  private readonly beat: Heartbeat = { renewedAt: Date.now(), sendingLease: false };
  private readonly minute = emptyMinute();
  private learner = false;
  private remoteLearner = false;
  private answers = 0;
  private remoteOps: Promise<void> = Promise.resolve();
  private wake?: () => void;
  private woke = false;
  /** When domains other workers are checking are next asked about, and the wait before the one after. */
  private pollAt = 0;
  private pollEvery = POLL_MS;

  constructor(private readonly setup: SessionSetup) {
    this.share = shareOf(setup.storageKey);
    this.remote = setup.remote;
    if (setup.problem) this.down(setup.problem);
  }

  /** The window to start from: this process's and, with the store, every worker's. */
  window(now: number): WindowSnapshot | undefined {
    return mergeWindows(processWindow(this.setup.storageKey, now), this.remoteWindow);
  }

  private maximumKnown(): boolean {
    return this.setup.maximumSet || this.window(Date.now())?.limits.maxUrlsPerRequest !== undefined;
  }

  /**
   * Before the run starts: while the plan's per-request maximum is unknown, one execution at a time learns it (its
   * first request), in this process and across workers; the others wait, within `stop` (time limit, cancel).
   */
  async awaitPlan(stop: Promise<void>): Promise<void> {
    await this.guard(() => this.readRemoteWindow(Date.now(), true));
    this.learner = await learnOrWait(this.share, this.owner, () => this.maximumKnown(), stop);
    let stopped = false;
    void stop.then(() => (stopped = true));
    while (this.remote && !stopped && !this.maximumKnown() && !this.remoteLearner) {
      const remote = this.remote;
      await this.guard(async () => {
        this.remoteLearner = await remote.learn(this.owner);
        if (!this.remoteLearner) {
          await Promise.race([sleep(POLL_MS / 2), stop]);
          await this.readRemoteWindow(Date.now(), true);
        }
      });
    }
  }

  /** The others' window and requests in flight, for the run's next decision (no I/O: what was last read). */
  view(now: number): OthersView {
    const window = this.window(now);
    this.noteOwnSends(now, window);
    return { window, inFlight: othersInFlight(this.share, this.owner), whole: this.remote !== undefined };
  }

  /** The run's sends not seen before join those to add to the shared minute (with the store). */
  private noteOwnSends(now: number, window = this.window(now)): void {
    const run = this.run;
    if (!run) return;
    noteSends(this.minute, run.window(now), window, this.remote !== undefined);
  }

  /** Claims the run's domains: answered ones are taken as cached, others' are set aside to wait for. */
  async start(run: SharingRun, keys: readonly string[], now: number): Promise<void> {
    this.run = run;
    this.minute.seen = run.window(now).sends;
    const split = claim(this.share, keys, this.owner, now, this.setup.reuseMs, (key, answer) =>
      this.onWake(key, answer),
    );
    this.take(split.reused);
    run.setAside(split.busy);
    for (const key of split.mine) this.mine.add(key);
    await this.claimInStore(run, split.mine, now);
    this.abandonUnknown(split.mine);
    // Nothing of its own to send: the turn to learn the maximum goes to the next execution at once.
    if ([...this.mine].every((key) => this.claims.busy.has(key))) this.answers += 1;
  }

  /**
   * An answer kept in the store is taken when younger than Reuse Results For, or than a minute with 0 (one that came
   * while this execution looked: kept that long for those waiting).
   */
  private maxAgeMs(): number {
    return Math.max(this.setup.reuseMs, LEASE_MS);
  }

  private async claimInStore(run: SharingRun, keys: string[], now: number): Promise<void> {
    const remote = this.remote;
    if (!remote || keys.length === 0) return;
    await this.guard(async () => {
      const replies = await remote.claim(keys, this.owner, now, this.maxAgeMs());
      this.beat.renewedAt = Date.now();
      this.apply(claimed(this.claims, replies));
    });
  }

  /** What a transition of the store's claims asks of the run. */
  private apply(effects: ClaimEffects): void {
    this.take(effects.taken, true);
    if (effects.aside.length > 0) this.run?.setAside(effects.aside);
    for (const [key, answer] of effects.resolved) {
      if (answer) this.published(key, answer);
      this.run?.resolveAside(key, answer?.record);
    }
    if (effects.abandoned.length > 0) {
      this.run?.setAside(effects.abandoned);
      this.run?.abandonAside(effects.abandoned);
    }
  }

  private store() {
    return { up: this.remote !== undefined, timedOut: this.timedOut };
  }

  /**
   * The store went past its budget before saying who holds these domains: another worker may be sending them (and
   * the call may still land). They are not sent here: retryable `unfinished`, like those others were known to hold.
   */
  private abandonUnknown(keys: readonly string[]): void {
    this.apply(unsettled(this.claims, this.store(), keys, (k) => this.checkedAt.has(k)));
  }

  /** Answers found elsewhere: this run takes them as cached; those from the store also reach this process. */
  private take(found: ReadonlyMap<string, Answer>, fromStore = false): void {
    const records = new Map<string, DomainRecord>();
    for (const [key, answer] of found) {
      records.set(key, answer.record);
      this.checkedAt.set(key, answer.checkedAt);
      if (fromStore) this.published(key, answer);
    }
    this.run?.addCached(records);
  }

  private onWake(key: string, answer: Answer | undefined, inStore = false): void {
    if (!answer) this.mine.add(key);
    this.apply(handedOver(this.claims, key, answer, inStore, this.store()));
    this.nudge();
  }

  /** This run's records as they come: kept and told to every execution waiting for them, here and on other workers. */
  received(records: ReadonlyArray<{ key: string; record: DomainRecord }>, now: number): void {
    const answers: Array<[string, Answer]> = records.map(({ key, record }) => [
      key,
      { record, checkedAt: now },
    ]);
    for (const [key, answer] of answers) this.published(key, answer);
    if (!this.remote && this.keeper && answers.length > 0)
      void this.keeper.publish(answers, this.owner, this.setup.reuseMs).catch(() => undefined);
    const remote = this.remote;
    if (!remote || answers.length === 0) return;
    answeredInStore(
      this.claims,
      answers.map(([key]) => key),
    );
    this.later(() => remote.publish(answers, this.owner, this.setup.reuseMs));
  }

  private published(key: string, answer: Answer): void {
    this.checkedAt.set(key, answer.checkedAt);
    this.mine.delete(key);
    publish(this.share, key, answer, this.owner, this.setup.reuseMs);
  }

  /** A request goes out (synchronously with the run's decision): the others count its URLs from now. */
  sending(urls: number): number {
    return sending(this.share, this.owner, urls);
  }

  /**
   * The run took in an answer: its send joins those to add to the shared minute. Until every answered request has
   * been taken in, no answered reservation is freed (one answered and not yet taken in would be neither in flight nor
   * sent for the other workers; a run may have several requests out at once).
   */
  taken(now: number): void {
    requestTaken(this.minute);
    this.noteOwnSends(now);
  }

  answered(token: number): void {
    requestAnswered(this.minute);
    answered(this.share, token);
    this.answers += 1;
  }

  /**
   * Before a request goes, with the store: it is reserved among every worker's requests in flight, and waits while
   * the plan's window (this run's, with every worker's sends and the requests reserved before it: the core's
   * PlanWindow answers) has no room for it, within a minute, the run's deadline and cancel. Another worker's send
   * between two reads of the store is then seen before this request goes. Returns the reservation, to free.
   */
  async reserve(urls: number, deadline: number): Promise<string | undefined> {
    const remote = this.remote;
    const run = this.run;
    if (!remote || !run || urls === 0) return undefined;
    const entry = reservation(this.minute, this.owner, urls, Date.now());
    const giveUpAt = Math.min(deadline, Date.now() + WINDOW_MS + 5000);
    await this.guard(async () => {
      let before = await remote.reserve(entry, Date.now());
      for (;;) {
        const now = Date.now();
        await this.readRemoteWindow(now, true);
        const window = mergeWindows(run.window(now), this.window(now));
        const step = reserveStep(window, now, urls, before, giveUpAt, RENEW_MS / 2);
        if (step.go) break;
        await this.pause(step.waitMs);
        if (this.setup.signal?.aborted) return;
        await this.renewDue(Date.now());
        before = await remote.flightBefore(entry, Date.now());
      }
      await this.renewForSend(Date.now());
    });
    return entry;
  }

  /**
   * The request was answered: its reservation is freed once its send is in the shared minute (`flush`, at the next
   * step's `tick`, or at the end), so no other worker ever reads a moment where the request counts neither as in
   * flight nor as sent.
   */
  unreserve(entry: string | undefined): void {
    if (entry === undefined || !this.remote) return;
    requestBack(this.minute, entry);
    requestReturned(this.beat);
  }

  /**
   * Brings the store up to date with this run, in the order other workers rely on: the answered requests' sends and
   * what they taught of the plan first, then their reservations freed (never a moment where another worker sees a
   * request neither in flight nor sent, or a refusal's lesson missing).
   */
  private async flush(remote: RedisShare, now: number): Promise<void> {
    const plan = planToKeep(this.minute, this.run?.window(now), this.remoteWindow);
    if (plan) await remote.keepPlan(plan);
    const { sends, freed } = toFlush(this.minute);
    await remote.flush(sends, freed);
  }

  private async pause(ms: number): Promise<void> {
    try {
      if (typeof sleepWithAbort === 'function' && this.setup.signal)
        await sleepWithAbort(ms, this.setup.signal);
      else await sleep(ms);
    } catch {
      // Cancelled: the caller looks at the signal.
    }
  }

  /** Between the run's steps: the learning turn passed on, and the store brought up to date both ways. */
  async tick(now: number): Promise<void> {
    if (this.learner && this.answers > 0) {
      this.learner = false;
      learned(this.share, this.owner);
    }
    this.keepAlive(now);
    const remote = this.remote;
    if (!remote) return;
    await this.guard(async () => {
      await this.remoteOps;
      await this.flush(remote, now);
      if (this.remoteLearner && this.answers > 0) {
        this.remoteLearner = false;
        await remote.learnedBy(this.owner);
      }
      await this.renewDue(now);
      // The window matters to a run that still has domains to send; one only waiting for others' needs none.
      if (this.run?.hasWorkToSend() !== false) await this.readRemoteWindow(now);
    });
  }

  /**
   * The claims outlast the request about to go, however long it takes to be answered (up to its timeout): the
   * heartbeat is made longer, once until the request is back (`unreserve`).
   */
  private async renewForSend(now: number): Promise<void> {
    const remote = this.remote;
    if (remote && longerForSend(this.beat, now, this.claims.mine.size > 0))
      await remote.heartbeat(this.owner, SENDING_LEASE_MS);
  }

  /** With the store down: the heartbeat still sent when due, not waited for. */
  private keepAlive(now: number): void {
    if (this.remote || !this.keeper || now - this.beat.renewedAt < RENEW_MS) return;
    this.beat.renewedAt = now;
    void this.keeper.heartbeat(this.owner, SENDING_LEASE_MS).catch(() => undefined);
  }

  /** Renews this execution's heartbeat (all its claims: one call) when a third of its lease has passed. */
  private async renewDue(now: number): Promise<void> {
    const remote = this.remote;
    if (remote && renewalDue(this.beat, now, RENEW_MS)) await remote.heartbeat(this.owner);
  }

  /** The store's window, read again at most once a POLL_MS. */
  private async readRemoteWindow(now: number, force = false): Promise<void> {
    if (!this.remote || (!force && now - this.remoteReadAt < POLL_MS)) return;
    this.remoteReadAt = now;
    this.remoteWindow = await this.remote.window(now);
  }

  /**
   * Domains other workers are checking: answered (taken), or free again (claimed by this run, which sends them), in
   * one call per CHUNK; asked about less often while nothing changes.
   */
  private async pollRemote(now: number): Promise<void> {
    const remote = this.remote;
    if (!remote || this.claims.busy.size === 0 || now < this.pollAt) return;
    await this.guard(async () => {
      const asked = this.claims.busy.size;
      const replies = await remote.claim([...this.claims.busy], this.owner, now, this.maxAgeMs());
      this.beat.renewedAt = Date.now();
      this.apply(polled(this.claims, replies));
      const changed = this.claims.busy.size < asked;
      if (changed) this.woke = true;
      this.pollEvery = nextPoll(this.pollEvery, changed, POLL_MS, POLL_MAX_MS);
      this.pollAt = Date.now() + this.pollEvery;
    });
  }

  /** The run's wait: ends early when a domain waited for is answered or handed over, or the execution is stopped. */
  async sleep(ms: number): Promise<void> {
    const until = Date.now() + ms;
    const signal = this.setup.signal;
    this.woke = false;
    for (let left = ms; left > 0 && !this.woke && !signal?.aborted; left = until - Date.now()) {
      // With the store, a long wait is cut in slices: the heartbeat is renewed, and other workers' domains asked about.
      const poll = this.claims.busy.size > 0 ? Math.max(POLL_MS / 4, this.pollAt - Date.now()) : RENEW_MS;
      const slice = !this.remote ? left : Math.min(left, poll);
      const woken = new AbortController();
      this.wake = () => woken.abort();
      const signals = signal ? [signal, woken.signal] : [woken.signal];
      try {
        if (typeof sleepWithAbort === 'function') await sleepWithAbort(slice, AbortSignal.any(signals));
        else await sleep(Math.min(slice, POLL_MS));
      } catch {
        // Woken or cancelled: the loop's condition says which.
      }
      this.wake = undefined;
      if (!this.woke) await this.pollRemote(Date.now());
      // The window is read again before the run's next decision (tick), not while it waits.
      this.keepAlive(Date.now());
      await this.guard(async () => await this.renewDue(Date.now()));
    }
  }

  private nudge(): void {
    this.woke = true;
    this.wake?.();
  }

  /** The end, whatever happened: what this execution claimed and did not answer goes back to the others. */
  async end(): Promise<void> {
    stopWaiting(this.share, this.owner);
    if (this.learner) learned(this.share, this.owner);
    const unanswered = [...this.mine];
    const remote = this.remote;
    const inStore = (k: string) => (!!remote || !!this.keeper) && this.claims.mine.has(k);
    const handed = release(this.share, unanswered, this.owner, inStore);
    if (!remote && this.keeper) {
      const back = handBack(this.claims, unanswered, handed);
      void this.keeper.release(back.free, this.owner, back.passed).catch(() => undefined);
    }
    if (!remote) return;
    await this.guard(async () => {
      await this.remoteOps;
      await this.flush(remote, Date.now());
      const back = handBack(this.claims, unanswered, handed);
      await remote.release(back.free, this.owner, back.passed);
      if (this.remoteLearner) await remote.learnedBy(this.owner);
    });
  }

  /** Queues a store operation behind the others (awaited at the next step); a failure turns the store off. */
  private later(op: () => Promise<void>): void {
    this.remoteOps = this.remoteOps.then(async () => await this.guard(op));
  }

  private async guard(op: () => Promise<void>): Promise<void> {
    const remote = this.remote;
    if (!remote) return;
    try {
      await op();
    } catch (error) {
      this.timedOut ||= /no answer within/.test(remote.problem ?? '');
      this.down(remote.problem ?? (error instanceof Error ? error.message : String(error)));
    }
  }

  /**
   * The store failed (or took longer than its budget): this execution shares within its process from now on, and its
   * items say so. The domains another worker holds are not sent here (that worker may still send them): they end
   * as retryable `unfinished`, and a later run gets them, at no credit once kept.
   */
  private down(message: string): void {
    this.problem ??= `${message}: this execution shared only within its n8n process.`;
    this.keeper ??= this.remote;
    this.remote = undefined;
    this.remoteWindow = undefined;
    this.apply(wentDown(this.claims));
    this.nudge();
  }
}
