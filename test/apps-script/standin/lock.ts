// LockService: script, document and per-user locks that really exclude concurrent executions (each runs in its own
// worker), with tryLock/waitLock timeouts and release when the execution ends; how long each user's executions held
// each kind of lock; and the other users of a published add-on taking the script lock (`otherUsers`).
import type { SharedClock } from '../../sandbox/virtual';
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { LOCK_MAX_WAIT_MS, TIME_LIMIT_MESSAGE } from './limits';
import type { Timeline } from './timeline';

interface Holder {
  execution: number;
  user: string;
  since: number;
}

interface Waiter {
  execution: number;
  user: string;
  /** When it asked (first come, first served with the other users' sections). */
  at: number;
  grant: () => void;
}

/**
 * Other users' sections on the script lock: one asks every `periodMs` from `start` and holds it `sectionMs`, so that
 * the lock is busy `sectionMs / periodMs` of the time when nobody else wants it.
 */
interface OthersOnLock {
  sectionMs: number;
  periodMs: number;
  start: number;
  /** Index of the next section that has not asked yet. */
  next: number;
  /** The other users hold the lock until then (their sections that asked are served back to back). */
  until: number;
  /** Times a wake-up is already set for. */
  timers: Set<number>;
}

export type LockKind = 'script' | 'document' | 'user';

const SCRIPT = 'script';

function kindOf(name: string): LockKind {
  return name === SCRIPT ? 'script' : name.startsWith('document:') ? 'document' : 'user';
}

/** Who holds each named lock, and who waits for it. */
export class LockTable {
  private readonly holders = new Map<string, Holder>();
  private readonly waiters = new Map<string, Waiter[]>();
  /** Milliseconds each user's executions held each kind of lock ("kind|user"). */
  private readonly held = new Map<string, number>();
  private others?: OthersOnLock;
  /** Set by the world: how a waiting execution waits (on a virtual clock others run meanwhile). */
  timeline?: Timeline;
  /** Set by the world: the stand-in clock. */
  clock?: SharedClock;

  private now(): number {
    return this.clock ? this.clock.now() : Date.now();
  }

  holder(name: string): number | undefined {
    return this.holders.get(name)?.execution;
  }

  /**
   * Other users of the published add-on hold the script lock `busy` of the time (0..1) in sections of `sectionMs`,
   * from now on: Google's getScriptLock "prevents any user from concurrently running a section of code". Their
   * sections ask on a fixed schedule (every sectionMs / busy) and queue with this stand-in's executions first come,
   * first served; while one of ours holds the lock theirs wait. Computed when the lock is used, no execution runs
   * for them. Document and user locks are not affected.
   */
  heldByOthers(busy: number, sectionMs: number): void {
    if (!(busy > 0) || !(sectionMs > 0)) {
      this.others = undefined;
      return;
    }
    const start = this.now();
    this.others = {
      sectionMs,
      periodMs: sectionMs / Math.min(1, busy),
      start,
      next: 0,
      until: start,
      timers: new Set(),
    };
  }

  /** How long `user`'s executions (default: everyone's) held locks of `kind`, up to now for a lock still held. */
  heldMs(kind: LockKind, user?: string): number {
    let total = 0;
    for (const [key, ms] of this.held) {
      const [k, who] = key.split('|');
      if (k === kind && (user === undefined || who === user)) total += ms;
    }
    const now = this.now();
    for (const [name, h] of this.holders)
      if (kindOf(name) === kind && (user === undefined || h.user === user)) total += now - h.since;
    return total;
  }

  private take(name: string, execution: number, user: string, since: number): void {
    this.holders.set(name, { execution, user, since });
  }

  private queue(name: string): Waiter[] {
    let queue = this.waiters.get(name);
    if (!queue) this.waiters.set(name, (queue = []));
    return queue;
  }

  /**
   * Brings the other users' use of the script lock up to now: their sections that asked before our first waiter
   * are served back to back; our first waiter gets the lock when they are done (a wake-up is set for then).
   */
  private settle(): void {
    const o = this.others;
    if (!o) return;
    const now = this.now();
    for (;;) {
      if (this.holders.has(SCRIPT)) return;
      const queue = this.queue(SCRIPT);
      const first = queue[0];
      const asks = o.start + o.next * o.periodMs;
      if (first && first.at < asks) {
        const at = Math.max(o.until, first.at);
        if (at > now) {
          if (!o.timers.has(at)) {
            o.timers.add(at);
            this.timeline?.at(at, () => {
              o.timers.delete(at);
              this.settle();
            });
          }
          return;
        }
        queue.shift();
        this.take(SCRIPT, first.execution, first.user, at);
        first.grant();
        return;
      }
      if (asks > now) return;
      o.until = Math.max(asks, o.until) + o.sectionMs;
      o.next += 1;
    }
  }

  async acquire(name: string, execution: number, user: string, timeoutMs: number): Promise<boolean> {
    const others = name === SCRIPT ? this.others : undefined;
    if (others) this.settle();
    const holder = this.holders.get(name);
    if (holder?.execution === execution) return true;
    const now = this.now();
    if (holder === undefined && (!others || (others.until <= now && this.queue(name).length === 0))) {
      this.take(name, execution, user, now);
      return true;
    }
    if (timeoutMs <= 0) return false;
    let waiter: Waiter | undefined;
    const drop = () => {
      const q = this.waiters.get(name) ?? [];
      this.waiters.set(
        name,
        q.filter((w) => w !== waiter),
      );
      return false;
    };
    const register = (wake: (value: boolean) => void) => {
      waiter = { execution, user, at: now, grant: () => wake(true) };
      this.queue(name).push(waiter);
      if (others) this.settle();
    };
    if (this.timeline) return this.timeline.block(execution, register, timeoutMs, drop);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(drop()), timeoutMs);
      register((value) => {
        clearTimeout(timer);
        resolve(value);
      });
    });
  }

  release(name: string, execution: number): void {
    const holder = this.holders.get(name);
    if (holder?.execution !== execution) return;
    const now = this.now();
    const key = `${kindOf(name)}|${holder.user}`;
    this.held.set(key, (this.held.get(key) ?? 0) + (now - holder.since));
    this.holders.delete(name);
    if (name === SCRIPT && this.others) {
      // The other users' sections that asked meanwhile waited: they are served from now, in turn with ours.
      this.others.until = Math.max(this.others.until, now);
      this.settle();
      return;
    }
    const next = (this.waiters.get(name) ?? []).shift();
    if (next) {
      this.take(name, next.execution, next.user, now);
      next.grant();
    }
  }

  /** Everything an execution holds is released when it ends, as in Apps Script. */
  releaseAll(execution: number): void {
    // Its waits first, so that no lock it gives back is handed to it again.
    for (const [name, queue] of this.waiters) {
      this.waiters.set(
        name,
        queue.filter((w) => w.execution !== execution),
      );
    }
    for (const [name, holder] of [...this.holders])
      if (holder.execution === execution) this.release(name, execution);
  }
}

function waitMs(timeoutInMillis: unknown): number {
  const ms = Number(timeoutInMillis);
  if (!Number.isFinite(ms) || ms < 0) throw new AppsScriptException('Invalid argument: timeoutInMillis');
  if (ms > LOCK_MAX_WAIT_MS)
    throw new AppsScriptException(`Invalid argument: timeoutInMillis (at most ${LOCK_MAX_WAIT_MS})`);
  return ms;
}

export class Lock extends AppsScriptObject {
  readonly kind = 'Lock';

  constructor(
    private readonly table: LockTable,
    private readonly name: string,
    private readonly execution: Execution,
  ) {
    super();
  }

  /**
   * Waits at most `timeoutInMillis` for the lock. The execution's own limit comes first: a wait that outlasts the
   * time left is not cut short, the execution is stopped in it ("Exceeded maximum execution time"), as Apps Script
   * stops an execution at its limit whatever it waits for.
   */
  async tryLock(timeoutInMillis: unknown): Promise<boolean> {
    const ms = waitMs(timeoutInMillis);
    const remaining = Math.max(0, this.execution.remainingMs());
    if (ms <= remaining) return this.table.acquire(this.name, this.execution.id, this.execution.user, ms);
    const got = await this.table.acquire(this.name, this.execution.id, this.execution.user, remaining);
    if (!got) this.execution.kill(TIME_LIMIT_MESSAGE);
    return got;
  }

  async waitLock(timeoutInMillis: unknown): Promise<void> {
    if (!(await this.tryLock(timeoutInMillis))) {
      throw new AppsScriptException('Lock timeout: another process was holding the lock for too long.');
    }
  }

  hasLock(): boolean {
    return this.table.holder(this.name) === this.execution.id;
  }

  releaseLock(): void {
    this.table.release(this.name, this.execution.id);
  }
}

export class LockService extends AppsScriptObject {
  readonly kind = 'LockService';

  constructor(
    private readonly execution: Execution,
    private readonly table: LockTable,
  ) {
    super();
  }

  /** The current document's lock name, or null without a current document. */
  private _documentLockName(): string | null {
    return this.execution.document?.lockName ?? null;
  }

  private _lock(name: string, what: string): Lock {
    if (this.execution.authMode === 'NONE') throw noPermission(`LockService.${what}`);
    return new Lock(this.table, name, this.execution);
  }

  getScriptLock(): Lock {
    return this._lock('script', 'getScriptLock');
  }

  /** One lock per document; null outside the context of a containing document (Google's reference). */
  getDocumentLock(): Lock | null {
    if (this.execution.authMode === 'NONE') throw noPermission('LockService.getDocumentLock');
    const name = this._documentLockName();
    return name === null ? null : this._lock(name, 'getDocumentLock');
  }

  getUserLock(): Lock {
    return this._lock(`user:${this.execution.user}`, 'getUserLock');
  }
}
