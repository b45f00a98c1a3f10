// One Apps Script execution as the stand-in tracks it: who runs it, in which mode, since when, until when.
import type { SharedClock } from '../../sandbox/virtual';
import type { SpreadsheetDocument } from './document';
import { ExecutionKilled } from './errors';
import { TIME_LIMIT_MESSAGE } from './limits';

/** 'trigger': an installable trigger's execution, which counts against the daily trigger runtime. */
export type ExecutionKind = 'custom-function' | 'server' | 'trigger';
export type AuthMode = 'NONE' | 'LIMITED' | 'FULL' | 'CUSTOM_FUNCTION';

/** Every fake service object the realm can call extends this; methods starting with `_` are not callable. */
export abstract class AppsScriptObject {
  abstract readonly kind: string;
}

export interface ExecutionRecord {
  id: number;
  functionName: string;
  kind: ExecutionKind;
  user: string;
  startedAt: number;
  elapsedMs?: number;
  /** The spreadsheet it ran in (null: none, as in an add-on's time-driven trigger). */
  spreadsheetId: string | null;
  status: 'running' | 'ok' | 'error' | 'killed';
  error?: string;
  /** For a custom function: the cell whose formula ran it. */
  cell?: { sheetId: number; row: number; column: number };
}

export class Execution {
  readonly handles = new Map<number, object>();
  readonly roots = new Map<string, object>();
  private nextHandle = 1;
  status: ExecutionRecord['status'] = 'running';
  error?: string;
  endedAt?: number;
  /**
   * A custom function recalculated for an editor who is not the owner: it reads the owner's user properties and
   * may not change them.
   */
  userPropertiesReadOnly = false;
  /** Whose user cache CacheService.getUserCache() gives (LoadOptions.customFunctionUserCache); else the user's. */
  userCacheOf?: string;
  /**
   * The document the execution runs in (the active spreadsheet): the formula's, the edited one, the one whose
   * menu or sidebar called, a bound script's spreadsheet in its triggers; null in an add-on's time-driven trigger.
   */
  document: SpreadsheetDocument | null = null;
  /** For a trigger's execution: which kind of trigger fired it. */
  triggerKind?: 'CLOCK' | 'ON_EDIT';
  /** Set by the pool: stops the worker running this execution. */
  onKill?: (message: string) => void;

  constructor(
    readonly id: number,
    readonly functionName: string,
    readonly kind: ExecutionKind,
    readonly authMode: AuthMode,
    /** Whose UserProperties, user cache and user lock the execution uses. */
    readonly user: string,
    /** What Session.getActiveUser().getEmail() answers ('' in custom functions). */
    readonly activeUserEmail: string,
    readonly startedAt: number,
    readonly limitMs: number,
    private readonly clock: SharedClock,
    /** For a custom function: the cell whose formula runs it. */
    readonly cell?: { sheetId: number; row: number; column: number },
  ) {}

  get deadline(): number {
    return this.startedAt + this.limitMs;
  }

  /** Milliseconds of stand-in time left before the limit. */
  remainingMs(): number {
    return this.deadline - this.clock.now();
  }

  get isCustomFunction(): boolean {
    return this.kind === 'custom-function';
  }

  register(object: object): number {
    const id = this.nextHandle++;
    this.handles.set(id, object);
    return id;
  }

  /** Throws (and stops the worker) once the execution is past its time limit. */
  checkTime(): void {
    if (this.status !== 'running') throw new ExecutionKilled(this.error ?? TIME_LIMIT_MESSAGE);
    if (this.clock.now() > this.deadline) this.kill(TIME_LIMIT_MESSAGE);
  }

  kill(message: string): never {
    if (this.status === 'running') {
      this.status = 'killed';
      this.error = message;
      this.endedAt = this.clock.now();
      this.onKill?.(message);
    }
    throw new ExecutionKilled(message);
  }

  /**
   * Ends the execution now with `message` as its error (ScriptApp.requireScopes asking for consent): whatever the
   * script catches, it does not go on.
   */
  end(message: string): never {
    if (this.status === 'running') {
      this.status = 'error';
      this.error = message;
      this.endedAt = this.clock.now();
      this.onKill?.(message);
    }
    throw new ExecutionKilled(message);
  }

  record(): ExecutionRecord {
    return {
      id: this.id,
      functionName: this.functionName,
      kind: this.kind,
      user: this.user,
      startedAt: this.startedAt,
      elapsedMs: this.endedAt === undefined ? undefined : this.endedAt - this.startedAt,
      spreadsheetId: this.document?.id ?? null,
      status: this.status,
      error: this.error,
      ...(this.cell ? { cell: { ...this.cell } } : {}),
    };
  }
}
