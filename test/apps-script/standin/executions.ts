// Starting executions: each one an Execution record run by the worker pool (a fresh realm per execution), with the
// per-user limit on simultaneous executions and the record of every execution the harness started.
import type { SharedClock } from '../../sandbox/virtual';
import { buildSync } from 'esbuild';
import path from 'node:path';
import type { SpreadsheetDocument } from './document';
import { type AuthMode, Execution, type ExecutionKind, type ExecutionRecord } from './execution';
import { CUSTOM_FUNCTION_MS, EXECUTION_MS, TOO_MANY_SIMULTANEOUS_MESSAGE } from './limits';
import { AppsScriptError, WorkerPool } from './pool';
import type { Session } from './session';

let workerBundle: string | undefined;

function workerCode(): string {
  workerBundle ??= buildSync({
    entryPoints: [path.join(__dirname, 'worker.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  }).outputFiles[0].text;
  return workerBundle;
}

/** One execution to start. */
export interface ExecutionRequest {
  functionName: string;
  args: unknown[];
  kind: ExecutionKind;
  authMode: AuthMode;
  /** A custom function's formula cell. */
  cell?: { sheetId: number; row: number; column: number };
  /** Who runs it (default: the owner for a custom function, else the current user). */
  user?: string;
  /** The document it runs in (default: the current spreadsheet); null: none. */
  document?: SpreadsheetDocument | null;
  triggerKind?: 'CLOCK' | 'ON_EDIT';
}

/** How an execution ended, for callers that go on whatever happened (a trigger, a sidebar call). */
export interface Settled {
  ok: boolean;
  value?: unknown;
  error?: string;
  /** Its record; undefined when it was refused before it started (too many simultaneous executions). */
  record?: ExecutionRecord;
}

export interface ExecutionLimits {
  /** Executions of one user that may run at once ("Simultaneous executions per user: 30"). */
  simultaneous: number;
  /** Executions of the script, all users together, that may run at once ("Simultaneous executions per script"). */
  scriptSimultaneous: number;
  /** May a custom function recalculated for the owner set the owner's user properties? */
  customFunctionsSetUserProperties: 'owner' | 'nobody';
  /** Whose user cache a custom function recalculated for an editor gets (LoadOptions.customFunctionUserCache). */
  customFunctionUserCache?: 'owner' | 'editor';
}

export class Executions {
  private readonly pool: WorkerPool;
  /** Every execution started, in order. */
  readonly list: Execution[] = [];
  private nextId = 1;
  /** Executions refused because the user already had `simultaneous` running. */
  readonly tooManySimultaneous: Array<{
    user: string;
    functionName: string;
    kind: ExecutionKind;
    at: number;
  }> = [];
  /** The most executions of one user running at one moment. */
  maxSimultaneous = 0;
  /** The most executions of the script (every user) running at one moment. */
  maxScriptSimultaneous = 0;

  constructor(
    code: string,
    private readonly session: Session,
    private readonly limits: ExecutionLimits,
  ) {
    this.pool = new WorkerPool(workerCode(), code, session.world, session.clock);
  }

  private get clock(): SharedClock {
    return this.session.clock;
  }

  /** Starts one execution; resolves with its value, rejects with an AppsScriptError carrying the script's error. */
  async execute(request: ExecutionRequest): Promise<unknown> {
    const { functionName, kind, authMode } = request;
    const document = request.document === undefined ? this.session.doc : request.document;
    const custom = kind === 'custom-function';
    // A custom function runs as its spreadsheet's owner (a spreadsheet of another user: that user).
    const owner = document?.owner ?? this.session.owner;
    const runAs = request.user ?? (custom ? owner : this.session.user);
    const execution: Execution = new Execution(
      this.nextId++,
      functionName,
      kind,
      authMode,
      runAs,
      custom || kind === 'trigger' ? '' : runAs,
      this.clock.now(),
      custom ? CUSTOM_FUNCTION_MS : EXECUTION_MS,
      this.clock,
      request.cell,
    );
    // A custom function recalculated for an editor who is not the owner reads the owner's user properties only.
    // A spreadsheet of another user recalculates for that user, who has it open.
    execution.userPropertiesReadOnly =
      custom &&
      ((document?.owner === undefined && this.session.user !== this.session.owner) ||
        this.limits.customFunctionsSetUserProperties === 'nobody');
    if (custom && this.limits.customFunctionUserCache === 'editor') execution.userCacheOf = this.session.user;
    execution.document = document;
    execution.triggerKind = request.triggerKind;
    const all = this.list.filter((e) => e.status === 'running');
    const running = all.filter((e) => e.user === runAs).length;
    if (running >= this.limits.simultaneous || all.length >= this.limits.scriptSimultaneous) {
      this.tooManySimultaneous.push({ user: runAs, functionName, kind, at: this.clock.now() });
      throw new AppsScriptError(TOO_MANY_SIMULTANEOUS_MESSAGE, 'Error');
    }
    this.list.push(execution);
    this.maxSimultaneous = Math.max(this.maxSimultaneous, running + 1);
    this.maxScriptSimultaneous = Math.max(this.maxScriptSimultaneous, all.length + 1);
    return this.pool.execute(execution, request.args);
  }

  /** Starts one execution and tells how it ended, never rejecting. */
  async settle(request: ExecutionRequest): Promise<Settled> {
    const id = this.nextId;
    let settled: Settled;
    try {
      settled = { ok: true, value: await this.execute(request) };
    } catch (e) {
      settled = { ok: false, error: (e as Error).message };
    }
    settled.record = this.list.find((e) => e.id === id)?.record();
    return settled;
  }

  get records(): ExecutionRecord[] {
    return this.list.map((e) => e.record());
  }

  /** Starts `count` workers ahead of the executions (WorkerPool.warm). */
  warm(count: number): Promise<void> {
    return this.pool.warm(count);
  }

  /** How many worker threads the stand-in has started (WorkerPool.started). */
  get workersStarted(): number {
    return this.pool.started;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
