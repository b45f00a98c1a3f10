// ScriptApp's installable triggers as Apps Script enforces them: time-driven (after, at, everyMinutes/Hours/Days)
// and spreadsheet onEdit triggers, at most 20 per user per script, none from a custom function or AuthMode.NONE.
// Installed as an Editor add-on (TriggerRules.installAs), Google's add-on rules apply on top: one trigger of each
// type per user per document, and no time-driven trigger more often than hourly (a one-off after()/at() under an
// hour is undocumented: `addOnShortAfter` picks a reading). getInstallationSource() tells the script which it is.
// The table lives on the main thread; the harness fires what is due on the stand-in clock (late by a set delay).
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import {
  ADD_ON_MIN_INTERVAL_MS,
  ADD_ON_RECURRENCE_MESSAGE,
  ADD_ON_TOO_MANY_CLOCK_MESSAGE,
  ADD_ON_TOO_MANY_EDIT_MESSAGE,
  TRIGGERS_PER_USER,
} from './limits';

/** How the script is installed: bound to the spreadsheet (clasp, copy-paste) or as an Editor add-on. */
export type InstallAs = 'script' | 'addon' | 'domain-addon';

/** ScriptApp.InstallationSource for each install mode (Google's enum has no plain "ADD_ON"). */
export const INSTALLATION_SOURCE: Record<InstallAs, string> = {
  script: 'NONE',
  addon: 'WEB_STORE_ADD_ON',
  'domain-addon': 'APPS_MARKETPLACE_DOMAIN_ADD_ON',
};

export interface TriggerRules {
  installAs: InstallAs;
  /** Add-on only: a one-off after()/at() due in under an hour. Not documented either way. */
  addOnShortAfter: 'allowed' | 'refused';
}

/** A trigger creation Apps Script refused, with the message it threw. */
export interface RefusedTrigger {
  user: string;
  handler: string;
  kind: TriggerKind;
  message: string;
  at: number;
}

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
  /** Every creation Apps Script refused (the script saw the exception). */
  readonly refused: RefusedTrigger[] = [];
  /** The most time-driven triggers one user had listed at any moment. */
  maxClockTriggers = 0;
  rules: TriggerRules = { installAs: 'script', addOnShortAfter: 'refused' };
  private nextId = 1;

  get isAddOn(): boolean {
    return this.rules.installAs !== 'script';
  }

  /** Throws (and records) Apps Script's refusal. */
  refuse(record: Pick<TriggerRecord, 'user' | 'handler' | 'kind'>, message: string, at: number): never {
    this.refused.push({ user: record.user, handler: record.handler, kind: record.kind, message, at });
    throw new AppsScriptException(message);
  }

  add(record: Omit<TriggerRecord, 'id'>): TriggerRecord {
    const own = this.triggers.filter((t) => t.user === record.user);
    if (own.length >= TRIGGERS_PER_USER) {
      this.refuse(
        record,
        'This script has too many triggers. Triggers must be deleted from the script before more can be added.',
        record.createdAt,
      );
    }
    // Editor add-on: one trigger of each type per user per document (a fired one-off still counts until deleted).
    if (this.isAddOn && own.some((t) => t.kind === record.kind)) {
      this.refuse(
        record,
        record.kind === 'CLOCK' ? ADD_ON_TOO_MANY_CLOCK_MESSAGE : ADD_ON_TOO_MANY_EDIT_MESSAGE,
        record.createdAt,
      );
    }
    const trigger = { ...record, id: String(1_000_000 + this.nextId++) };
    this.triggers.push(trigger);
    this.created.push(trigger);
    const clocks = this.triggers.filter((t) => t.user === record.user && t.kind === 'CLOCK').length;
    this.maxClockTriggers = Math.max(this.maxClockTriggers, clocks);
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
  /** How far ahead a one-off after()/at() asked for, when it asked. */
  private aheadMs?: number;
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
    this.aheadMs = n;
    return this;
  }
  at(date: unknown): this {
    const t = date instanceof Date ? date.getTime() : Number(date);
    if (!Number.isFinite(t)) throw new AppsScriptException('Invalid argument: date');
    this.dueAt = t;
    this.aheadMs = t - this.context.now();
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
    const { table } = this.context;
    if (this.type === 'CLOCK' && table.isAddOn) {
      const now = this.context.now();
      const tooOften =
        this.everyMs !== undefined
          ? this.everyMs < ADD_ON_MIN_INTERVAL_MS
          : table.rules.addOnShortAfter === 'refused' && (this.aheadMs ?? 0) < ADD_ON_MIN_INTERVAL_MS;
      if (tooOften)
        table.refuse(
          { user: this.execution.user, handler: this.handler, kind: 'CLOCK' },
          ADD_ON_RECURRENCE_MESSAGE,
          now,
        );
    }
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

  /** How the script is installed (Apps Script answers in every mode, custom functions included). */
  getInstallationSource(): string {
    return INSTALLATION_SOURCE[this.context.table.rules.installAs];
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

  /** The current user's installable triggers in this spreadsheet, for this script or add-on only. */
  getUserTriggers(_document: unknown): Trigger[] {
    this._allowed('ScriptApp.getUserTriggers');
    return this.getProjectTriggers();
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
