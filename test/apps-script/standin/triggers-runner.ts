// Time-driven triggers on the stand-in clock: runTriggers fires what is due in order (each firing late as Google's
// "the time may be slightly randomized"), interleaved with the open sidebar's calls, within the owner's daily
// trigger runtime quota; fire() runs one trigger's execution (edits.ts fires onEdit triggers through it).
import type { SharedClock } from '../../sandbox/virtual';
import { DailyQuota, type QuotaReset } from './daily-quota';
import type { Executions } from './executions';
import { DEFAULT_TRIGGER_LATENESS_MS, TRIGGER_QUOTA_MESSAGE } from './limits';
import type { Recalculation } from './recalculation';
import type { InstallAs, TriggerRecord } from './script-app';
import type { Session } from './session';
import type { SidebarTimer } from './sidebar-timer';
import { DEFAULT_SPREADSHEET_ID } from './world';

/** A seeded lateness uniform between the default bounds (0–60 s), so a run repeats exactly. */
export function uniformLateness(
  seed: number,
  minMs: number = DEFAULT_TRIGGER_LATENESS_MS.min,
  maxMs: number = DEFAULT_TRIGGER_LATENESS_MS.max,
): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return Math.round(minMs + (s / 2 ** 32) * (maxMs - minMs));
  };
}

/** A due trigger that did not run, and when. */
export interface UnfiredTrigger {
  id: string;
  handler: string;
  at: number;
}

export interface TriggerRunnerOptions {
  /** How late each firing is (drawn once per firing). */
  delay: (trigger: TriggerRecord) => number;
  /** The daily trigger runtime quota per user (ms). */
  quotaMs: number;
  /** When a user's trigger runtime comes back (default: 24 hours after their first trigger of the window). */
  reset?: QuotaReset;
  /** A trigger due while another execution runs fires beside it (LoadOptions.overlappingTriggers). */
  overlapping?: boolean;
}

export class TriggerRunner {
  /** Trigger runtime per user: the window (see daily-quota.ts) and the report per UTC day. */
  readonly runtime: DailyQuota;
  /** Trigger executions refused because the day's quota was spent. */
  readonly refused: UnfiredTrigger[] = [];
  /** Lateness drawn for each firing ("id:dueAt"), so a deferred firing keeps its draw. */
  private readonly lateness = new Map<string, number>();
  /** Disabling an add-on stops its triggers from firing until it is enabled. */
  addOnEnabled = true;
  /** Due triggers that did not run because the add-on was disabled. */
  readonly skipped: UnfiredTrigger[] = [];

  constructor(
    private readonly session: Session,
    private readonly executions: Executions,
    private readonly recalculation: Recalculation,
    private readonly sidebar: SidebarTimer,
    private readonly options: TriggerRunnerOptions,
  ) {
    this.runtime = new DailyQuota(
      () => this.clock.now(),
      options.quotaMs,
      TRIGGER_QUOTA_MESSAGE,
      options.reset ?? 'first-request',
    );
  }

  private get clock(): SharedClock {
    return this.session.clock;
  }

  private get installAs(): InstallAs {
    return this.session.world.triggers.rules.installAs;
  }

  /** Trigger runtime used (ms): on one UTC day (day number = floor(ms / 86,400,000)), or on all days. */
  runtimeMs(day?: number): number {
    return this.runtime.total(undefined, day);
  }

  /** Runs one trigger's execution as its owner, unless the owner's trigger runtime for the day is spent. */
  async fire(trigger: TriggerRecord, event: Record<string, unknown>): Promise<void> {
    const world = this.session.world;
    const started = this.clock.now();
    if (!this.runtime.allows(trigger.user)) {
      this.refused.push({ id: trigger.id, handler: trigger.handler, at: started });
      world.logs.push({
        executionId: 0,
        level: 'error',
        text: `${trigger.handler}: ${TRIGGER_QUOTA_MESSAGE}`,
      });
      return;
    }
    // The document a trigger runs in: an edit trigger's spreadsheet; for a time-driven trigger the bound
    // spreadsheet of a bound script, and none for an add-on (a standalone project).
    const document =
      trigger.kind === 'ON_EDIT'
        ? (world.documents.get(trigger.spreadsheetId ?? DEFAULT_SPREADSHEET_ID) ?? null)
        : this.installAs === 'script'
          ? world.defaultDocument
          : null;
    // A failed trigger execution is recorded in `executions`, as Apps Script lists it; the clock goes on.
    const { record } = await this.executions.settle({
      functionName: trigger.handler,
      args: [{ ...event, triggerUid: trigger.id, authMode: 'FULL' }],
      kind: 'trigger',
      authMode: 'FULL',
      user: trigger.user,
      document,
      triggerKind: trigger.kind,
    });
    const elapsed = record?.elapsedMs ?? this.clock.now() - started;
    this.runtime.add(trigger.user, elapsed);
  }

  /**
   * Fires due time-driven triggers in order, moving the clock to each (plus its delay), until none is due before
   * `until`, or `stop()` says so after a firing. Formulas made stale by a trigger recalculate after it.
   */
  async run(options: { until: number; stop?: () => boolean; maxFirings?: number }): Promise<number> {
    const world = this.session.world;
    let firings = 0;
    // With `overlapping`, the firings still running (each recalculates the formulas it made stale when it ends).
    const running = new Set<Promise<void>>();
    let stopped = false;
    const settle = async () => {
      if (running.size > 0) await Promise.race(running);
    };
    for (;;) {
      if (stopped) break;
      // Each trigger fires at its own due time plus its own lateness (of two due at once, the less late one first).
      const firesAt = (t: TriggerRecord) => (t.dueAt as number) + this.lateFor(t);
      const next = world.triggers.nextClock(firesAt);
      const fireAt = next ? firesAt(next) : Infinity;
      const sidebarAt = this.sidebar.nextAt;
      const at = Math.min(fireAt, sidebarAt);
      if (at === Infinity || at > options.until) {
        if (running.size === 0) break;
        await settle(); // a running firing may still set a trigger
        continue;
      }
      if (at > this.clock.now()) {
        // Executions running beside (runWith, overlapping firings) go on until then, or until a firing ends (it may
        // have set a trigger due sooner); what is due may have changed meanwhile.
        await (running.size > 0
          ? world.timeline.waitUntilOr(at, Promise.race(running))
          : world.timeline.waitUntil(at));
        continue;
      }
      if (sidebarAt <= fireAt) {
        await this.sidebar.runCall();
        if (options.stop?.()) break;
        continue;
      }
      const trigger = next as TriggerRecord;
      this.lateness.delete(`${trigger.id}:${trigger.dueAt}`);
      if (trigger.everyMs !== undefined) {
        while ((trigger.dueAt as number) <= this.clock.now())
          trigger.dueAt = (trigger.dueAt as number) + trigger.everyMs;
      } else trigger.spent = true;
      if (!this.addOnEnabled && this.installAs !== 'script') {
        this.skipped.push({ id: trigger.id, handler: trigger.handler, at: this.clock.now() });
        continue;
      }
      firings += 1;
      const firing = this.fire(trigger, {}).then(() => this.recalculation.recalculate());
      if (this.options.overlapping && trigger.kind === 'CLOCK') {
        const tracked: Promise<void> = firing.then(() => {
          running.delete(tracked);
          if (options.stop?.()) stopped = true;
        });
        running.add(tracked);
        if (firings >= (options.maxFirings ?? Infinity)) break;
        continue;
      }
      await firing;
      if (options.stop?.() || firings >= (options.maxFirings ?? Infinity)) break;
    }
    await Promise.all(running);
    return firings;
  }

  /** How late this firing of the trigger is (drawn once per firing). */
  private lateFor(trigger: TriggerRecord): number {
    const key = `${trigger.id}:${trigger.dueAt}`;
    let late = this.lateness.get(key);
    if (late === undefined) {
      late = Math.max(0, this.options.delay(trigger));
      this.lateness.set(key, late);
    }
    return late;
  }
}
