// A check run that shares its key with other executions running at the same time (n8n executions in one process or
// on several workers): domains another execution is checking are set aside, awaited and never sent, until they are
// answered there (taken like a cached answer: no credit) or handed back (queued again, to be sent by this run); and
// before each decision the others' window (their answered sends, their requests in flight, the limits they learned)
// is merged into this run's, so that every execution paces to the same minute of the key's sends.
import { unfinished } from './outcome';
import { CheckRun } from './run';
import type { RunOptions } from './run-options';
import type { NetworkFailure, Step } from './step';
import { PlanWindow, type Slot } from './window';
import { mergeWindows, type WindowSnapshot } from './window-snapshot';
import type { DomainRecord, HttpAnswer } from './wire';

/** While only domains set aside are left, the run asks to wait at most this long, then looks again. */
export const AWAIT_SLICE_MS = 1000;

/** What the other executions of the key show now: their window, and the URLs of each request they have in flight. */
export interface OthersView {
  window?: WindowSnapshot;
  inFlight: number[];
  /**
   * The window holds every execution's sends of the key (all workers share through a store): a limit learned from it
   * is the plan's, not this run's share of it, so it is neither labelled a share nor probed as another run's guess.
   */
  whole?: boolean;
}

/** The plan's window with the other executions' requests in flight counted as sent now, like the run's own. */
class SharedWindow extends PlanWindow {
  others: readonly number[] = [];

  override plan(now: number, wanted: number, left = Infinity, inFlight: readonly number[] = []): Slot {
    return super.plan(now, wanted, left, inFlight.concat(this.others));
  }
}

export class SharingRun extends CheckRun {
  private readonly aside = new Set<string>();

  constructor(
    values: readonly unknown[],
    options: RunOptions,
    private readonly others: (now: number) => OthersView = () => ({ inFlight: [] }),
    /** Told after each answer is taken in (the send it billed is in `window()` from then on). */
    private readonly taken: (now: number) => void = () => {},
  ) {
    super(values, options);
  }

  /** Domains another execution is checking: this run waits for them instead of sending them. */
  setAside(keys: Iterable<string>): void {
    const set = new Set(keys);
    for (const key of this.queue) if (set.has(key)) this.aside.add(key);
    this.queue = this.queue.filter((key) => !set.has(key));
  }

  /**
   * Domains set aside that this run can no longer learn about (the shared store stopped answering): they end as
   * retryable `unfinished`, never sent here, since the execution checking them may still send them.
   */
  abandonAside(keys: Iterable<string>): void {
    for (const key of keys) if (this.aside.delete(key)) this.settle(key, unfinished({ why: 'not_run' })(key));
  }

  /** Whether the run has domains of its own still to send (not only domains others are checking). */
  hasWorkToSend(): boolean {
    return this.queue.length > 0;
  }

  /** The domains set aside and not resolved yet. */
  awaited(): string[] {
    return [...this.aside];
  }

  /**
   * A domain set aside was answered by the other execution (its record: reused, no credit), or handed back
   * (no record: this run sends it, or ends it like the rest when it has finished).
   */
  resolveAside(key: string, record?: DomainRecord): void {
    if (!this.aside.delete(key)) return;
    if (record) {
      this.settle(key, { kind: 'record', key, record, cached: true });
      this.counts.cached += 1;
    } else if (this.finalOutcome) this.settle(key, this.finalOutcome(key));
    else this.queue.push(key);
  }

  /**
   * An answer. With a window of every worker, the others' window as it is now is merged first, so that what the
   * answer teaches (a URL limit from a refusal) counts the sends they made while this request waited for its turn to
   * go, not only those seen when it was decided. A partial window (this process only) is left as the decision saw it.
   */
  override receive(id: number, response: HttpAnswer | NetworkFailure, now: number): void {
    const view = this.others(now);
    if (view.whole) this.absorb(view, now);
    super.receive(id, response, now);
    if (!view.whole) this.labelShare(now);
    this.taken(now);
  }

  /**
   * Without the store, the run sees only this process's sends: executions on other workers may have filled the same
   * minute unseen. A URL limit guessed from such a minute is labelled a share, so that it is probed upward for any
   * work left once the minute has been calm, and the run takes the whole minute when the others are done.
   */
  private labelShare(now: number): void {
    const upm = this.pacer.limits.urlsPerMinute;
    if (upm && !upm.exact && upm.at === now) upm.shared = true;
  }

  override next(now: number): Step {
    this.absorb(this.others(now), now);
    if (!this.finalOutcome && this.aside.size > 0 && this.queue.length === 0 && this.inflight.size === 0) {
      if (now >= this.options.deadline) return this.finish(unfinished({ why: 'deadline' }));
      return { type: 'wait', ms: Math.max(1, Math.min(AWAIT_SLICE_MS, this.options.deadline - now)) };
    }
    return super.next(now);
  }

  /** The others' window merged into this run's (each send counted once); a maximum they learned is kept to. */
  private absorb(view: OthersView, now: number): void {
    const window = new SharedWindow(mergeWindows(this.pacer.snapshot(now), view.window), this.options.pace);
    const since = this.pacer.observedSince;
    window.observedSince = view.whole ? -Infinity : since === -Infinity ? undefined : since;
    if (view.whole) delete window.limits.urlsPerMinute?.shared;
    window.others = view.inFlight;
    this.pacer = window;
    const maximum = this.pacer.learned().maxUrlsPerRequest;
    if (maximum !== undefined && maximum < this.batchSize) this.batchSize = maximum;
  }
}
