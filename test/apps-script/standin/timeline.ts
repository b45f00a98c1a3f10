// Who runs when on the stand-in clock. On a virtual clock one execution computes at a time (it holds the turn);
// it gives the turn up while it sleeps, waits for a lock or for the network, and the clock moves to the next wake
// only once nobody is ready to run: two executions overlap as in Apps Script, in a repeatable order. On a real
// clock executions run side by side in their threads and waits are real.
import type { SharedClock } from '../../sandbox/virtual';

interface Timer {
  at: number;
  seq: number;
  fire: () => void;
}

export interface Timeline {
  /** Resolves once the execution may compute (at once on a real clock). */
  enter(id: number): Promise<void>;
  /** The execution ended: the turn goes to the next ready one. */
  leave(id: number): void;
  /** Waits `ms` of stand-in time; others run meanwhile. */
  sleep(id: number, ms: number): Promise<void>;
  /**
   * Waits until `wake(value)` is called (by another execution, e.g. a lock release) or `timeoutMs` pass (then
   * `onTimeout()` gives the value).
   */
  block<T>(
    id: number,
    register: (wake: (value: T) => void) => void,
    timeoutMs: number,
    onTimeout: () => T,
  ): Promise<T>;
  /**
   * Runs real I/O of the execution (a fetch). On a virtual clock the stand-in time it took (the sandbox's latency)
   * is given back and the execution then sleeps that long, so that others run during its network wait.
   */
  during<T>(id: number, io: () => Promise<T>, extraMs: number): Promise<T>;
  /** Runs `fn` when the clock reaches `at` (virtual: once nobody is ready to run before then). */
  at(at: number, fn: () => void): void;
  /** Resolves when the clock reaches `at`; on a virtual clock, executions due earlier run first. */
  waitUntil(at: number): Promise<void>;
  /** As waitUntil, or sooner when `other` settles (then the clock is not kept moving to `at` for nobody). */
  waitUntilOr(at: number, other: Promise<unknown>): Promise<void>;
  /** Whether this execution may be stopped by the time-limit watchdog now (it is computing). */
  computing(id: number): boolean;
}

export class RealTimeline implements Timeline {
  constructor(private readonly clock: SharedClock) {}
  async enter(): Promise<void> {}
  leave(): void {}
  sleep(_id: number, ms: number): Promise<void> {
    return this.clock.sleep(ms);
  }
  block<T>(
    _id: number,
    register: (wake: (value: T) => void) => void,
    timeoutMs: number,
    onTimeout: () => T,
  ): Promise<T> {
    return new Promise<T>((resolve) => {
      let done = false;
      const timer = setTimeout(() => {
        if (done) return;
        done = true;
        resolve(onTimeout());
      }, timeoutMs);
      register((value) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(value);
      });
    });
  }
  async during<T>(_id: number, io: () => Promise<T>, extraMs: number): Promise<T> {
    const value = await io();
    this.clock.advance(extraMs);
    return value;
  }
  at(at: number, fn: () => void): void {
    setTimeout(fn, Math.max(0, at - this.clock.now()));
  }
  async waitUntil(at: number): Promise<void> {
    if (at > this.clock.now()) this.clock.advance(at - this.clock.now());
  }
  async waitUntilOr(at: number, other: Promise<unknown>): Promise<void> {
    await Promise.race([this.waitUntil(at), other]);
  }
  computing(): boolean {
    return true;
  }
}

export class VirtualTimeline implements Timeline {
  private holder?: number;
  private readonly ready: Array<{ id: number; go: () => void }> = [];
  private timers: Timer[] = [];
  private seq = 0;
  private pending = false;
  /** Executions that ended: a wake that comes later (a timer, a lock) is dropped. */
  private readonly ended = new Set<number>();

  constructor(private readonly clock: SharedClock) {}

  computing(id: number): boolean {
    return this.holder === id;
  }

  enter(id: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.ready.push({ id, go: resolve });
      this.dispatch();
    });
  }

  leave(id: number): void {
    this.ended.add(id);
    if (this.holder === id) this.holder = undefined;
    const i = this.ready.findIndex((r) => r.id === id);
    if (i >= 0) this.ready.splice(i, 1);
    this.dispatch();
  }

  /** Gives the turn up and waits to be made ready again by `register`'s wake. */
  private suspend<T>(id: number, register: (wake: (value: T) => void) => void): Promise<T> {
    return new Promise<T>((resolve) => {
      let woken = false;
      if (this.holder === id) this.holder = undefined;
      register((value) => {
        if (woken || this.ended.has(id)) return;
        woken = true;
        this.ready.push({ id, go: () => resolve(value) });
        this.dispatch();
      });
      this.dispatch();
    });
  }

  sleep(id: number, ms: number): Promise<void> {
    const at = this.clock.now() + Math.max(0, ms);
    return this.suspend<void>(id, (wake) => this.addTimer(at, () => wake(undefined)));
  }

  block<T>(
    id: number,
    register: (wake: (value: T) => void) => void,
    timeoutMs: number,
    onTimeout: () => T,
  ): Promise<T> {
    const at = this.clock.now() + Math.max(0, timeoutMs);
    return this.suspend<T>(id, (wake) => {
      let settled = false;
      const timer = this.addTimer(at, () => {
        if (settled) return;
        settled = true;
        wake(onTimeout());
      });
      register((value) => {
        if (settled) return;
        settled = true;
        this.timers = this.timers.filter((t) => t !== timer);
        wake(value);
      });
    });
  }

  async during<T>(id: number, io: () => Promise<T>, extraMs: number): Promise<T> {
    const before = this.clock.offset[0];
    let value: T | undefined;
    let failure: unknown;
    let failed = false;
    try {
      value = await io();
    } catch (error) {
      failure = error;
      failed = true;
    }
    // Hand back the stand-in time the I/O moved the clock by (the sandbox's latency): it is waited below.
    const took = Math.max(0, this.clock.offset[0] - before);
    this.clock.offset[0] = before;
    if (failed && (failure as Error)?.name === 'ExecutionKilled') throw failure;
    await this.sleep(id, took + (failed ? 0 : extraMs));
    if (failed) throw failure;
    return value as T;
  }

  waitUntil(at: number): Promise<void> {
    return new Promise<void>((resolve) => this.at(at, resolve));
  }

  waitUntilOr(at: number, other: Promise<unknown>): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = this.addTimer(at, resolve);
      this.dispatch();
      const cancel = () => {
        const i = this.timers.indexOf(timer);
        if (i < 0) return; // it fired already
        this.timers.splice(i, 1);
        resolve();
      };
      other.then(cancel, cancel);
    });
  }

  at(at: number, fn: () => void): void {
    this.addTimer(at, fn);
    this.dispatch();
  }

  private addTimer(at: number, fire: () => void): Timer {
    const timer = { at, seq: this.seq++, fire };
    this.timers.push(timer);
    this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    return timer;
  }

  private dispatch(): void {
    if (this.holder !== undefined) return;
    const next = this.ready.shift();
    if (next) {
      this.holder = next.id;
      next.go();
      return;
    }
    if (this.pending || this.timers.length === 0) return;
    // Nobody is ready: let the harness start what it is about to start (its awaits settle first), then move the
    // clock to the earliest wake.
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      if (this.holder !== undefined || this.ready.length > 0) {
        this.dispatch();
        return;
      }
      const timer = this.timers.shift();
      if (!timer) return;
      const now = this.clock.now();
      if (timer.at > now) this.clock.advance(timer.at - now);
      timer.fire();
      this.dispatch();
    });
  }
}
