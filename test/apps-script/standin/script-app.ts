// ScriptApp's installable triggers as Apps Script enforces them: time-driven (after, at, everyMinutes/Hours/Days)
// and spreadsheet onEdit triggers, at most 20 per user per script, none from a custom function or AuthMode.NONE.
// The table lives on the main thread; the harness fires what is due on the stand-in clock (late by a set delay).
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { TRIGGERS_PER_USER } from './limits';

export type TriggerKind = 'CLOCK' | 'ON_EDIT';

/** One installable trigger as the stand-in keeps it. */
export interface TriggerRecord {
  id: string;
  handler: string;
  kind: TriggerKind;
  /** The user who created it: the trigger runs as this user. */
  user: string;
  /** CLOCK: when it is next due (stand-in ms). */
  dueAt?: number;
  /** CLOCK: repeat period (ms) for everyMinutes/everyHours/everyDays; undefined for a one-off after()/at(). */
  everyMs?: number;
  /** A one-off trigger that has fired stays listed (and counted) until deleted, as in Apps Script. */
  spent?: boolean;
  createdAt: number;
}

export class TriggerTable {
  readonly triggers: TriggerRecord[] = [];
  /** Every creation and deletion, for tests. */
  readonly created: TriggerRecord[] = [];
  private nextId = 1;

  add(record: Omit<TriggerRecord, 'id'>): TriggerRecord {
    const own = this.triggers.filter((t) => t.user === record.user).length;
    if (own >= TRIGGERS_PER_USER) {
      throw new AppsScriptException(
        'This script has too many triggers. Triggers must be deleted from the script before more can be added.',
      );
    }
    const trigger = { ...record, id: String(1_000_000 + this.nextId++) };
    this.triggers.push(trigger);
    this.created.push(trigger);
    return trigger;
  }

  remove(id: string): void {
    const i = this.triggers.findIndex((t) => t.id === id);
    if (i >= 0) this.triggers.splice(i, 1);
  }

  /** The clock trigger due first (not spent), if any. */
  nextClock(): TriggerRecord | undefined {
    let next: TriggerRecord | undefined;
    for (const t of this.triggers) {
      if (t.kind !== 'CLOCK' || t.spent || t.dueAt === undefined) continue;
      if (!next || t.dueAt < (next.dueAt as number)) next = t;
    }
    return next;
  }
}

export interface ScriptAppContext {
  table: TriggerTable;
  now(): number;
}

export class Trigger extends AppsScriptObject {
  readonly kind = 'Trigger';
  constructor(private readonly record: TriggerRecord) {
    super();
  }
  getUniqueId(): string {
    return this.record.id;
  }
  getHandlerFunction(): string {
    return this.record.handler;
  }
  getEventType(): string {
    return this.record.kind;
  }
  getTriggerSource(): string {
    return this.record.kind === 'CLOCK' ? 'CLOCK' : 'SPREADSHEETS';
  }
}

class TriggerBuilder extends AppsScriptObject {
  readonly kind = 'TriggerBuilder';
  private dueAt?: number;
  private everyMs?: number;
  private type?: TriggerKind;

  constructor(
    private readonly context: ScriptAppContext,
    private readonly execution: Execution,
    private readonly handler: string,
  ) {
    super();
  }

  timeBased(): this {
    this.type = 'CLOCK';
    return this;
  }
  forSpreadsheet(_spreadsheet: unknown): this {
    return this;
  }
  onEdit(): this {
    this.type = 'ON_EDIT';
    return this;
  }
  after(ms: unknown): this {
    const n = Number(ms);
    if (!Number.isFinite(n) || n < 0) throw new AppsScriptException('Invalid argument: durationMilliseconds');
    this.dueAt = this.context.now() + n;
    return this;
  }
  at(date: unknown): this {
    const t = date instanceof Date ? date.getTime() : Number(date);
    if (!Number.isFinite(t)) throw new AppsScriptException('Invalid argument: date');
    this.dueAt = t;
    return this;
  }
  everyMinutes(n: unknown): this {
    if (![1, 5, 10, 15, 30].includes(Number(n)))
      throw new AppsScriptException('Invalid argument: minutes. Use 1, 5, 10, 15 or 30.');
    return this.every(Number(n) * 60_000);
  }
  everyHours(n: unknown): this {
    return this.every(Math.max(1, Number(n)) * 3_600_000);
  }
  everyDays(n: unknown): this {
    return this.every(Math.max(1, Number(n)) * 86_400_000);
  }
  private every(ms: number): this {
    this.everyMs = ms;
    this.dueAt = this.context.now() + ms;
    return this;
  }
  create(): Trigger {
    if (!this.type)
      throw new AppsScriptException('The trigger has no event source: call timeBased() or onEdit().');
    if (this.type === 'CLOCK' && this.dueAt === undefined)
      throw new AppsScriptException('A time-based trigger needs after(), at() or every...().');
    const record = this.context.table.add({
      handler: this.handler,
      kind: this.type,
      user: this.execution.user,
      dueAt: this.type === 'CLOCK' ? this.dueAt : undefined,
      everyMs: this.everyMs,
      createdAt: this.context.now(),
    });
    return new Trigger(record);
  }
}

export class ScriptApp extends AppsScriptObject {
  readonly kind = 'ScriptApp';

  constructor(
    private readonly execution: Execution,
    private readonly context: ScriptAppContext,
  ) {
    super();
  }

  private _allowed(what: string): void {
    if (this.execution.isCustomFunction || this.execution.authMode !== 'FULL') throw noPermission(what);
  }

  newTrigger(handler: unknown): TriggerBuilder {
    this._allowed('ScriptApp.newTrigger');
    if (typeof handler !== 'string' || handler === '')
      throw new AppsScriptException('Invalid argument: functionName');
    return new TriggerBuilder(this.context, this.execution, handler);
  }

  /** The current user's triggers of this project. */
  getProjectTriggers(): Trigger[] {
    this._allowed('ScriptApp.getProjectTriggers');
    return this.context.table.triggers
      .filter((t) => t.user === this.execution.user)
      .map((t) => new Trigger(t));
  }

  deleteTrigger(trigger: unknown): void {
    this._allowed('ScriptApp.deleteTrigger');
    if (!(trigger instanceof Trigger)) throw new AppsScriptException('Invalid argument: trigger');
    const id = trigger.getUniqueId();
    const record = this.context.table.triggers.find((t) => t.id === id);
    if (record && record.user !== this.execution.user) throw noPermission('ScriptApp.deleteTrigger');
    this.context.table.remove(id);
  }
}
