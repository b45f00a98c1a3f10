// Worker threads that run executions: one execution per worker at a time, any number side by side (as Apps Script
// runs a sidebar call, a menu item and custom functions concurrently). The main thread answers their calls and
// stops a worker whose execution passes its time limit, like Apps Script ends the execution.
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { SharedClock } from '../../sandbox/virtual';
import { ExecutionKilled } from './errors';
import type { Execution } from './execution';
import { SLEEP_MAX_MS } from './limits';
import {
  type DoneMessage,
  type ExecuteMessage,
  FLAG,
  type ReadyMessage,
  type RpcReply,
  type RpcRequest,
} from './protocol';
import type { World } from './world';

/** How a failed execution is reported: the message Apps Script shows (in #ERROR! or a failure handler). */
export class AppsScriptError extends Error {
  constructor(
    message: string,
    readonly errorName: string,
  ) {
    super(message);
    this.name = 'AppsScriptError';
  }
}

class Slot {
  readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  execution?: Execution;
  dead = false;
  private settle?: (done: DoneMessage) => void;
  /** Resolves once the worker has started and compiled the script, or has stopped. */
  readonly ready: Promise<void>;
  private markReady!: () => void;

  constructor(
    workerCode: string,
    code: string,
    private readonly world: World,
    private readonly clock: SharedClock,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(workerCode, {
      eval: true,
      workerData: { code, filename: 'Code.js', flag: this.flag, clockOffset: clock.offset, port: port2 },
      transferList: [port2],
    });
    this.port.on('message', (request: RpcRequest) => void this.answer(request));
    this.ready = new Promise<void>((resolve) => (this.markReady = resolve));
    this.worker.on('message', (message: DoneMessage | ReadyMessage) => {
      if (message.type === 'ready') this.markReady();
      else this.settle?.(message);
    });
    this.worker.on('error', (error) => this.fail(`the stand-in's worker failed: ${error.message}`));
    this.worker.on('exit', () => {
      this.dead = true;
      this.markReady(); // a worker that stopped before it was ready no longer holds up warm() (execute skips it)
      this.fail("the stand-in's worker exited");
    });
  }

  private fail(message: string): void {
    this.settle?.({
      type: 'done',
      executionId: this.execution?.id ?? 0,
      ok: false,
      error: {
        name: this.execution?.status === 'killed' ? 'ExecutionKilled' : 'Error',
        message: this.execution?.error ?? message,
      },
    });
  }

  run(message: ExecuteMessage): Promise<DoneMessage> {
    return new Promise((resolve) => {
      this.settle = (done) => {
        this.settle = undefined;
        resolve(done);
      };
      this.worker.postMessage(message);
    });
  }

  kill(): void {
    if (this.dead) return;
    this.dead = true;
    Atomics.store(this.flag, 0, FLAG.killed);
    Atomics.notify(this.flag, 0);
    void this.worker.terminate();
    this.fail('Exceeded maximum execution time');
  }

  private async answer(request: RpcRequest): Promise<void> {
    const execution = this.execution;
    if (!execution) return;
    let reply: RpcReply;
    try {
      if (request.op === 'call')
        reply = await this.world.call(execution, request.target, request.method, request.args);
      else if (request.op === 'sleep') reply = await this.sleep(execution, request.ms);
      else {
        this.world.logs.push({ executionId: execution.id, level: request.level, text: request.text });
        reply = { ok: true, value: undefined };
      }
    } catch (error) {
      if (error instanceof ExecutionKilled) return; // the worker is being stopped
      reply = { ok: false, error: { name: 'Error', message: (error as Error).message } };
    }
    if (this.dead) return;
    this.port.postMessage(reply);
    Atomics.store(this.flag, 0, FLAG.replied);
    Atomics.notify(this.flag, 0);
  }

  private async sleep(execution: Execution, ms: number): Promise<RpcReply> {
    execution.checkTime();
    const wait = Math.min(Math.max(0, ms), SLEEP_MAX_MS);
    if (wait > execution.remainingMs()) {
      // The limit comes first: time runs out during the sleep and the execution is stopped there.
      await this.world.timeline.sleep(execution.id, Math.max(0, execution.remainingMs()));
      execution.kill('Exceeded maximum execution time');
    }
    await this.world.timeline.sleep(execution.id, wait);
    execution.checkTime();
    return { ok: true, value: undefined };
  }
}

export class WorkerPool {
  private readonly idle: Slot[] = [];
  private readonly all = new Set<Slot>();

  constructor(
    private readonly workerCode: string,
    private readonly code: string,
    private readonly world: World,
    private readonly clock: SharedClock,
  ) {}

  /**
   * Starts workers until `count` wait idle, and waits until each has started and compiled the script. Starting a
   * Node worker thread is the stand-in's own cost, not Apps Script's: thirty started at once on a 2-core machine take
   * about a second each, which an execution started on a new worker would count as its own time. Each execution
   * still evaluates the whole script in a fresh realm, as Apps Script loads the script for every execution.
   */
  /** How many workers have been started (and not stopped). */
  get started(): number {
    return this.all.size;
  }

  async warm(count: number): Promise<void> {
    while (this.idle.length < count) {
      const slot = new Slot(this.workerCode, this.code, this.world, this.clock);
      this.all.add(slot);
      this.idle.push(slot);
    }
    await Promise.all(this.idle.map((slot) => slot.ready));
  }

  async execute(execution: Execution, args: unknown[]): Promise<unknown> {
    // On a virtual clock the execution starts when it gets the turn (at once if nobody computes).
    await this.world.timeline.enter(execution.id);
    let slot = this.idle.pop();
    while (slot && slot.dead) slot = this.idle.pop();
    if (!slot) {
      slot = new Slot(this.workerCode, this.code, this.world, this.clock);
      this.all.add(slot);
    }
    const running = slot;
    running.execution = execution;
    execution.onKill = () => running.kill();
    const watchdog = setInterval(() => {
      if (
        execution.status === 'running' &&
        this.world.timeline.computing(execution.id) &&
        this.clock.now() > execution.deadline
      ) {
        try {
          execution.kill('Exceeded maximum execution time');
        } catch {
          // kill() throws to stop its caller; here there is none.
        }
      }
    }, 50);
    try {
      const done = await running.run({
        type: 'execute',
        executionId: execution.id,
        functionName: execution.functionName,
        args,
        authMode: execution.authMode,
      });
      if (execution.status === 'running' && this.clock.now() > execution.deadline) {
        execution.status = 'killed';
        execution.error = 'Exceeded maximum execution time';
      }
      execution.endedAt ??= this.clock.now();
      if (execution.status === 'killed')
        throw new AppsScriptError('Exceeded maximum execution time', 'ExecutionKilled');
      if (!done.ok) {
        execution.status = 'error';
        execution.error = done.error.message;
        throw new AppsScriptError(done.error.message, done.error.name);
      }
      execution.status = 'ok';
      return done.value;
    } finally {
      clearInterval(watchdog);
      execution.endedAt ??= this.clock.now();
      this.world.locks.releaseAll(execution.id);
      this.world.timeline.leave(execution.id);
      running.execution = undefined;
      if (running.dead) this.all.delete(running);
      else this.idle.push(running);
    }
  }

  async close(): Promise<void> {
    const slots = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}
