// ScriptApp's installable triggers as Apps Script enforces them: time-driven (after, at, everyMinutes/Hours/Days)
// and spreadsheet onEdit triggers, at most 20 per user per script, none from a custom function or AuthMode.NONE.
// Installed as an Editor add-on (TriggerRules.installAs), Google's add-on rules apply on top: one trigger of each
// type per user per document, and no time-driven trigger more often than hourly (a one-off after()/at() under an
// hour is undocumented: `addOnShortAfter` picks a reading). getInstallationSource() tells the script which it is.
// The table lives on the main thread; the harness fires what is due on the stand-in clock (late by a set delay).
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { AUTHORIZATION_REQUIRED_MESSAGE, type AuthorizationPrompt, SCOPES, type ScopeTable } from './scopes';
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
  /**
   * Add-on only, not settled by Google's text ("one trigger of each type, per user, per document"): is the one
   * time-driven trigger counted per user across all documents ('user', the stricter) or per user per document?
   */
  addOnClockTriggersPer: 'user' | 'document';
  /**
   * Not documented: does ScriptApp.getUserTriggers(spreadsheet) list the user's time-driven triggers created in
   * that spreadsheet ('document'), or only triggers whose source is the spreadsheet, such as onEdit ('none')?
   */
  userTriggersListClock: 'document' | 'none';
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
  /**
   * ON_EDIT: the spreadsheet it watches (forSpreadsheet). CLOCK: the document it was created in (null: created
   * without a document), for the add-on one-trigger rule read per document.
   */
  spreadsheetId?: string | null;
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
  rules: TriggerRules = {
    installAs: 'script',
    addOnShortAfter: 'refused',
    addOnClockTriggersPer: 'user',
    userTriggersListClock: 'document',
  };
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
    // Editor add-on: one trigger of each type per user per document (a fired one-off still counts until deleted);
    // edit triggers per document, time-driven ones per user or per document (addOnClockTriggersPer).
    const sameScope = (t: TriggerRecord) =>
      record.kind === 'CLOCK' && this.rules.addOnClockTriggersPer === 'user'
        ? true
        : (t.spreadsheetId ?? null) === (record.spreadsheetId ?? null);
    if (this.isAddOn && own.some((t) => t.kind === record.kind && sameScope(t))) {
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

  /**
   * The clock trigger (not spent) that fires first: by `firesAt` (its due time plus its own lateness, the runner's),
   * by its due time without one. Each trigger is late by its own draw, so of two due at once the less late fires first.
   */
  nextClock(firesAt: (t: TriggerRecord) => number = (t) => t.dueAt as number): TriggerRecord | undefined {
    let next: TriggerRecord | undefined;
    let nextAt = Infinity;
    for (const t of this.triggers) {
      if (t.kind !== 'CLOCK' || t.spent || t.dueAt === undefined) continue;
      const at = firesAt(t);
      if (!next || at < nextAt) [next, nextAt] = [t, at];
    }
    return next;
  }
}

export interface ScriptAppContext {
  table: TriggerTable;
  scopes: ScopeTable;
  now(): number;
  /** Records an authorization prompt (requireScopes / requireAllScopes). */
  prompt(prompt: AuthorizationPrompt): void;
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
  getTriggerSourceId(): string | null {
    return this.record.kind === 'CLOCK' ? null : (this.record.spreadsheetId ?? null);
  }
}

class TriggerBuilder extends AppsScriptObject {
  readonly kind = 'TriggerBuilder';
  private dueAt?: number;
  /** How far ahead a one-off after()/at() asked for, when it asked. */
  private aheadMs?: number;
  private everyMs?: number;
  private type?: TriggerKind;
  private spreadsheetId?: string;

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
  /** The spreadsheet an onEdit trigger watches: a Spreadsheet or its id. */
  forSpreadsheet(spreadsheet: unknown): this {
    const id =
      typeof spreadsheet === 'string' ? spreadsheet : (spreadsheet as { _id?: () => string } | null)?._id?.();
    if (!id) throw new AppsScriptException('Invalid argument: spreadsheet');
    this.spreadsheetId = id;
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
      spreadsheetId:
        this.type === 'ON_EDIT'
          ? (this.spreadsheetId ?? this.execution.document?.id ?? null)
          : (this.execution.document?.id ?? null),
    });
    return new Trigger(record);
  }
}

/** ScriptApp.getAuthorizationInfo's answer. */
export class AuthorizationInfo extends AppsScriptObject {
  readonly kind = 'AuthorizationInfo';
  constructor(
    private readonly missing: string[],
    private readonly authorized: string[],
  ) {
    super();
  }
  getAuthorizationStatus(): string {
    return this.missing.length > 0 ? 'REQUIRED' : 'NOT_REQUIRED';
  }
  /** Null when no authorization is required (Google's reference). The URL is the stand-in's own. */
  getAuthorizationUrl(): string | null {
    if (this.missing.length === 0) return null;
    return `https://script.google.com/macros/d/standin/authorize?scopes=${encodeURIComponent(this.missing.join(' '))}`;
  }
  getAuthorizedScopes(): string[] {
    return this.authorized.slice();
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
    this.context.scopes.require(this.execution, what, [SCOPES.scriptApp]);
  }

  private _scopeList(scopes: unknown, what: string): string[] {
    if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string'))
      throw new AppsScriptException(`Invalid argument: oAuthScopes (${what})`);
    return scopes as string[];
  }

  /** The scopes of `wanted` (default: all the project declares) the current user has not granted. */
  private _missing(wanted: string[] | undefined): string[] {
    const { scopes } = this.context;
    return (wanted ?? scopes.declared).filter((scope) => !scopes.has(this.execution.user, scope));
  }

  /**
   * Whether the user granted the scopes (default: all the script's). Google asks scripts to call it with
   * AuthMode.FULL; custom functions run without the user's authorization and may not call it (not documented).
   */
  getAuthorizationInfo(authMode: unknown, oAuthScopes?: unknown): AuthorizationInfo {
    if (this.execution.isCustomFunction) throw noPermission('ScriptApp.getAuthorizationInfo');
    const wanted =
      oAuthScopes === undefined ? undefined : this._scopeList(oAuthScopes, 'getAuthorizationInfo');
    const { scopes } = this.context;
    const missing = String(authMode) === 'FULL' ? this._missing(wanted) : [];
    const authorized = (wanted ?? scopes.declared).filter((scope) => scopes.has(this.execution.user, scope));
    return new AuthorizationInfo(missing, authorized);
  }

  /**
   * Ends the execution with an authorization prompt for the scopes of `oAuthScopes` the user has not granted;
   * returns if none is missing.
   */
  requireScopes(authMode: unknown, oAuthScopes: unknown): void {
    this._require(authMode, this._scopeList(oAuthScopes, 'requireScopes'));
  }

  /** requireScopes for every scope the project declares. */
  requireAllScopes(authMode: unknown): void {
    this._require(authMode, undefined);
  }

  private _require(authMode: unknown, wanted: string[] | undefined): void {
    if (this.execution.isCustomFunction) throw noPermission('ScriptApp.requireScopes');
    if (String(authMode) !== 'FULL') return;
    const missing = this._missing(wanted);
    if (missing.length === 0) return;
    this.context.prompt({
      user: this.execution.user,
      scopes: missing,
      kind: this.execution.kind,
      functionName: this.execution.functionName,
      spreadsheetId: this.execution.document?.id ?? null,
      at: this.context.now(),
    });
    this.execution.end(AUTHORIZATION_REQUIRED_MESSAGE);
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

  /**
   * The current user's installable triggers in this spreadsheet, for this script or add-on only: its onEdit
   * triggers, and (userTriggersListClock 'document') the time-driven ones created in it.
   */
  getUserTriggers(spreadsheet: unknown): Trigger[] {
    this._allowed('ScriptApp.getUserTriggers');
    const id = (spreadsheet as { _id?: () => string } | null)?._id?.();
    if (!id) throw new AppsScriptException('Invalid argument: document');
    const listClock = this.context.table.rules.userTriggersListClock === 'document';
    return this.context.table.triggers
      .filter(
        (t) => t.user === this.execution.user && t.spreadsheetId === id && (t.kind !== 'CLOCK' || listClock),
      )
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
