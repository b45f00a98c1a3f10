// LockService: script, document and per-user locks that really exclude concurrent executions (each runs in its own
// worker), with tryLock/waitLock timeouts and release when the execution ends.
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { LOCK_MAX_WAIT_MS, TIME_LIMIT_MESSAGE } from './limits';
import type { Timeline } from './timeline';

interface Waiter {
  execution: number;
  grant: () => void;
}

/** Who holds each named lock, and who waits for it. */
export class LockTable {
  private readonly holders = new Map<string, number>();
  private readonly waiters = new Map<string, Waiter[]>();
  /** Set by the world: how a waiting execution waits (on a virtual clock others run meanwhile). */
  timeline?: Timeline;

  holder(name: string): number | undefined {
    return this.holders.get(name);
  }

  async acquire(name: string, execution: number, timeoutMs: number): Promise<boolean> {
    const holder = this.holders.get(name);
    if (holder === undefined || holder === execution) {
      this.holders.set(name, execution);
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
      waiter = { execution, grant: () => wake(true) };
      const queue = this.waiters.get(name) ?? [];
      queue.push(waiter);
      this.waiters.set(name, queue);
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
    if (this.holders.get(name) !== execution) return;
    const next = (this.waiters.get(name) ?? []).shift();
    if (next) {
      this.holders.set(name, next.execution);
      next.grant();
    } else this.holders.delete(name);
  }

  /** Everything an execution holds is released when it ends, as in Apps Script. */
  releaseAll(execution: number): void {
    for (const [name, holder] of [...this.holders]) if (holder === execution) this.release(name, execution);
    for (const [name, queue] of this.waiters) {
      this.waiters.set(
        name,
        queue.filter((w) => w.execution !== execution),
      );
    }
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
    if (ms <= remaining) return this.table.acquire(this.name, this.execution.id, ms);
    const got = await this.table.acquire(this.name, this.execution.id, remaining);
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
