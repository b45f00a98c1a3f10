/**
 * Apps Script stand-in: loads the real built `apps-script/dist/Code.js` into a bare node:vm realm (a fresh one per
 * execution, in a worker thread) with fakes of UrlFetchApp (real HTTP), PropertiesService, CacheService,
 * LockService, Utilities, HtmlService, SpreadsheetApp (+ Ui), Session, Logger and console that enforce Apps Script's
 * documented limits (standin/limits.ts): 30 s for a custom function, 6 min for other executions (an execution
 * past its limit is stopped and fails with "Exceeded maximum execution time"), cache key/value/expiration limits,
 * property sizes, read-only sheets and no UI inside custom functions, no property access in AuthMode.NONE.
 *
 * The state (sheet, stores, clock, HTTP) lives on the calling thread and every API below is safe to use while
 * the sandbox server runs in the same process. Stable API (the sidebar's browser test depends on it):
 *
 *   const gas = await loadAppsScript({ clock?: 'real' | 'virtual', owner?, user?, projectDir?, code?, virtualLatencyMs?,
 *     installAs?: 'script' | 'addon' | 'domain-addon', addOnShortAfter?: 'allowed' | 'refused',
 *     triggerDelayMs? (default: seeded 0–60 s), triggerLatenessSeed?, keepsIdenticalResults? });
 *                                                options: see LoadOptions and standin/README.md
 *   await gas.run(name, ...args)                 one execution of a top-level function (google.script.run, a menu
 *                                                item); resolves with its (serialised) value, rejects with an
 *                                                AppsScriptError carrying the script's error message
 *   await gas.runWithAuthMode('NONE', 'onOpen', { authMode: 'NONE' })   the same in a given ScriptApp.AuthMode
 *   await gas.runCustomFunction('=DAPA(A2:A21, "da,pa", TRUE)', { cell?: 'B2' })
 *                                                a custom-function execution; with `cell` the formula is written
 *                                                there and its result spills into the sheet; resolves with the
 *                                                result grid, rejects with the #ERROR! message
 *   await gas.recalculate()                      runs every formula whose inputs changed (as Sheets would)
 *   gas.sheet.setValues('Sheet1!A1:A3', [[..], ..]) / getValues / getDisplayValues / getFormulas / getNote /
 *     setFormula / select('A2:A21') / addSheet(name) / print('A1:F22')   the fake spreadsheet, read as a user sees it
 *   gas.properties.user(email?) / document() / script()   snapshots of the property stores
 *   gas.cache.document / script / user(email)     the cache stores (keys(), entries)
 *   gas.ui.events / gas.ui.respond({ button: 'OK', text })   what the script showed; answers for prompts and alerts
 *   gas.fetches, gas.logs, gas.executions        every UrlFetchApp call, log line and execution (with elapsed time)
 *   gas.clock.now() / gas.clock.advance(ms)      stand-in time ('virtual': Utilities.sleep returns at once)
 *   gas.asUser(email)                            later run(), edit() and sidebar calls execute as that user, and
 *                                                formulas recalculate for them (custom functions always read the
 *                                                owner's user properties; read-only for anyone else)
 *   await gas.edit('B2', '=DAPA(A2:A9)')         a user's edit: the input is written as typed, installable onEdit
 *                                                triggers fire and the formulas recalculate
 *   gas.triggers                                 the installable triggers (ScriptApp), with when each is due
 *   await gas.runTriggers({ until, stop? })      fires the due time-driven triggers in order on the stand-in clock
 *                                                (each late by `triggerDelayMs`, default 0–60 s seeded), moving the
 *                                                clock to each; honours
 *                                                the daily trigger runtime quota (`account`)
 *   gas.triggerRuntimeMs(day?)                   trigger runtime used (all days, or one UTC day number)
 *   gas.propertiesCalls(user?, day?)             Properties calls (all three stores) of a user / everyone, one UTC day / all
 *   gas.urlFetchCalls(user?, day?)               URL fetches of a user / everyone, one UTC day / all
 *   gas.spendDailyQuota(user, service, n)        a user's use of a daily quota elsewhere ('properties' | 'urlfetch' |
 *                                                'trigger-runtime', ms); gas.dailyQuotaOf(user, service): used, limit,
 *                                                when it comes back (24 h after the first use, or `quotaReset`),
 *                                                when Google first refused a use of this window
 *   gas.scriptLockHeldMs(user?) / documentLockHeldMs(user?) / userLockHeldMs(user?)   how long a user's executions
 *                                                held each kind of lock
 *   gas.cellsIn(id?) / hiddenCellsIn(id?) / sheetSizes(id?)   a spreadsheet's grid cells (all sheets / hidden ones /
 *                                                each sheet), what Sheets counts against its 10 million
 *   gas.refusedTriggerCreations / gas.maxClockTriggers   trigger creations Google refused (with its message); the most
 *                                                time-driven triggers one user had at any moment
 *   gas.openSidebar({ call, args?, everyMs }) / closeSidebar() / runSidebarCall() / sidebarCalls   an open sidebar
 *                                                calling a server function every everyMs (interleaved by runTriggers)
 *   gas.setAddOnEnabled(false)                   an add-on's triggers stop firing (skippedTriggers)
 *   gas.keptResults                              recalculations skipped under keepsIdenticalResults
 *   gas.addSpreadsheet(name?, { owner? }) => id / useSpreadsheet(id) / deleteSpreadsheet(id) / revokeAccess(id, user)
 *     / shareWith(user, id?)                     an editor more (Spreadsheet.getEditors)
 *                                                several spreadsheets; later harness operations happen in the used one
 *   gas.grantScopes(user, scopes) / revokeScopes(user, scopes) / grantedScopes(user) / declaredScopes /
 *     authorizationPrompts                       granular consent (options oauthScopes, grantedScopes)
 *   await gas.runWith({ user?, spreadsheetId?, at?, authMode? }, name, ...args)   a server execution that may run
 *                                                beside others (Promise.all with runTriggers or another runWith)
 *   await gas.waitUntil(at)                      resolves at stand-in time `at` (work beside runTriggers)
 *   gas.maxScriptSimultaneous                    the most executions of every user at one moment (1,000 allowed)
 *   await gas.close()                            stops the worker threads
 *
 * This file is the façade: the work is done in standin/ (session.ts: who acts and where; executions.ts: starting
 * executions; recalculation.ts: formulas; triggers-runner.ts: time-driven triggers; edits.ts: a user's edit;
 * sidebar-timer.ts: an open sidebar; sheet-api.ts: `sheet`; options.ts: LoadOptions). standin/README.md tells more.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CacheStore } from './standin/cache';
import type { DailyService } from './standin/daily-quota';
import { SharedClock } from '../sandbox/virtual';
import type { MetadataVisibility } from './standin/developer-metadata';
import { Edits } from './standin/edits';
import type { AuthMode, ExecutionRecord } from './standin/execution';
import { Executions } from './standin/executions';
import {
  SIMULTANEOUS_EXECUTIONS_PER_SCRIPT,
  SIMULTANEOUS_EXECUTIONS_PER_USER,
  TRIGGER_RUNTIME_PER_DAY_MS,
} from './standin/limits';
import { configureWorld, type LoadOptions, type OtherUsers } from './standin/options';
import { AppsScriptError } from './standin/pool';
import { customFunctionNames, Recalculation } from './standin/recalculation';
import { type AuthorizationPrompt, SCOPES } from './standin/scopes';
import type { InstallAs, RefusedTrigger, TriggerRecord } from './standin/script-app';
import { Session } from './standin/session';
import { type SheetApi, sheetApi } from './standin/sheet-api';
import type { CellValue } from './standin/sheet-model';
import { type SidebarCall, type SidebarOptions, SidebarTimer } from './standin/sidebar-timer';
import { TriggerRunner, uniformLateness, type UnfiredTrigger } from './standin/triggers-runner';
import type { ScriptedResponse, UiEvent } from './standin/ui';
import type { FetchRecord } from './standin/url-fetch';
import { DEFAULT_SPREADSHEET_ID, type LogLine, World } from './standin/world';

export { AppsScriptError, DEFAULT_SPREADSHEET_ID, SCOPES, uniformLateness };
export type {
  AuthorizationPrompt,
  CellValue,
  ExecutionRecord,
  FetchRecord,
  InstallAs,
  LoadOptions,
  LogLine,
  OtherUsers,
  RefusedTrigger,
  SidebarOptions,
  TriggerRecord,
  UiEvent,
};

export const DIST_DIR = path.resolve(__dirname, '../../apps-script/dist');

export class AppsScriptStandIn {
  readonly clock: SharedClock;
  private readonly world: World;
  private readonly session: Session;
  private readonly executor: Executions;
  private readonly recalculation: Recalculation;
  private readonly sidebar: SidebarTimer;
  private readonly triggerRunner: TriggerRunner;
  private readonly edits: Edits;
  /** Trigger executions refused because the day's quota was spent. */
  readonly refusedTriggers: UnfiredTrigger[];
  /** Due triggers that did not run because the add-on was disabled. */
  readonly skippedTriggers: UnfiredTrigger[];
  /** Executions refused because the user already had `simultaneousExecutions` running. */
  readonly tooManySimultaneous: Executions['tooManySimultaneous'];
  /** Every call the open sidebar made (google.script.run), with how it ended. */
  readonly sidebarCalls: SidebarCall[];
  /** The fake spreadsheet, as a user sees and edits it. */
  readonly sheet: SheetApi;

  constructor(
    code: string,
    projectDir: string,
    options: LoadOptions,
    readonly owner = options.owner ?? 'owner@example.com',
  ) {
    this.clock = new SharedClock(options.clock ?? 'real');
    this.world = new World(this.clock, projectDir);
    configureWorld(this.world, options, projectDir);
    this.session = new Session(this.world, this.clock, this.owner, options.user ?? this.owner);
    this.executor = new Executions(code, this.session, {
      simultaneous: options.simultaneousExecutions ?? SIMULTANEOUS_EXECUTIONS_PER_USER,
      scriptSimultaneous: options.scriptSimultaneousExecutions ?? SIMULTANEOUS_EXECUTIONS_PER_SCRIPT,
      customFunctionsSetUserProperties: options.customFunctionsSetUserProperties ?? 'owner',
      customFunctionUserCache: options.customFunctionUserCache ?? 'owner',
    });
    this.recalculation = new Recalculation(this.session, this.executor, {
      customFunctions: customFunctionNames(code),
      atOnce: Math.max(1, options.customFunctionsAtOnce ?? 4),
      keepsIdenticalResults: options.keepsIdenticalResults ?? false,
    });
    this.sidebar = new SidebarTimer(this.session, this.executor, this.recalculation);
    const delay = options.triggerDelayMs ?? uniformLateness(options.triggerLatenessSeed ?? 1);
    this.triggerRunner = new TriggerRunner(this.session, this.executor, this.recalculation, this.sidebar, {
      delay: typeof delay === 'function' ? delay : () => delay,
      quotaMs: options.triggerQuotaMs ?? TRIGGER_RUNTIME_PER_DAY_MS[options.account ?? 'consumer'],
      reset: options.quotaReset,
      overlapping: options.overlappingTriggers,
    });
    this.edits = new Edits(this.session, this.triggerRunner, this.recalculation);
    this.refusedTriggers = this.triggerRunner.refused;
    this.skippedTriggers = this.triggerRunner.skipped;
    this.tooManySimultaneous = this.executor.tooManySimultaneous;
    this.sidebarCalls = this.sidebar.calls;
    this.sheet = sheetApi(this.session);
  }

  /**
   * Later run(), edit() and sidebar calls execute as this user, and formulas recalculate for them (a custom
   * function then still reads the owner's user properties, read-only unless the user is the owner).
   */
  asUser(email: string): this {
    this.session.user = email;
    return this;
  }

  get user(): string {
    return this.session.user;
  }

  /** The most executions of one user running at one moment. */
  get maxSimultaneous(): number {
    return this.executor.maxSimultaneous;
  }

  /** The most executions of the script, every user together, running at one moment. */
  get maxScriptSimultaneous(): number {
    return this.executor.maxScriptSimultaneous;
  }

  /** Recalculations Sheets skipped because the formula and its arguments were unchanged. */
  get keptResults(): number {
    return this.recalculation.keptResults;
  }

  /**
   * A new spreadsheet (its own sheets, named ranges, formulas, document properties, cache and lock); its id. With
   * `owner`, it is that user's own spreadsheet (issue 46: another user of a published add-on): its custom functions
   * run as `owner` and recalculate for them.
   */
  addSpreadsheet(name?: string, options: { owner?: string } = {}): string {
    const doc = this.world.addDocument(name);
    doc.owner = options.owner;
    return doc.id;
  }

  /**
   * Later sheet edits, formulas, print/select, run() of server functions and menu items, edit(), openSidebar
   * and the recalculations they cause happen in this spreadsheet, as the current user.
   */
  useSpreadsheet(id: string): this {
    const doc = this.world.document(id);
    if (doc.deleted) throw new Error(`Spreadsheet ${id} was deleted`);
    this.session.docId = id;
    return this;
  }

  /** The spreadsheet harness operations happen in. */
  get spreadsheetId(): string {
    return this.session.docId;
  }

  /** Every spreadsheet's id (deleted ones included), the default one first. */
  get spreadsheetIds(): string[] {
    return [...this.world.documents.keys()];
  }

  /** The spreadsheet is deleted: openById fails for everyone, its edit triggers no longer fire. */
  deleteSpreadsheet(id: string): void {
    const doc = this.world.document(id);
    doc.deleted = true;
    if (this.session.docId === id) this.session.docId = DEFAULT_SPREADSHEET_ID;
  }

  /** `user` loses access to the spreadsheet: openById/openByUrl fail for them with Google's error. */
  revokeAccess(id: string, user: string): void {
    this.world.document(id).revoked.add(user);
  }

  /** Shares the current spreadsheet (or `id`) with another person as an editor. */
  shareWith(user: string, id?: string): void {
    this.world.document(id ?? this.session.docId).editors.add(user);
  }

  /** The user grants these scopes (those the project declares). */
  grantScopes(user: string, scopes: string[]): void {
    this.world.scopes.grant(user, scopes);
  }

  /** The user takes these scopes back (or never granted them). */
  revokeScopes(user: string, scopes: string[]): void {
    this.world.scopes.revoke(user, scopes);
  }

  /** The scopes the user has granted of those the project declares. */
  grantedScopes(user: string): string[] {
    return this.world.scopes.declared.filter((scope) => this.world.scopes.has(user, scope));
  }

  /** The scopes the project declares (manifest or `oauthScopes`). */
  get declaredScopes(): string[] {
    return this.world.scopes.declared.slice();
  }

  /** Every authorization prompt requireScopes / requireAllScopes rendered (user, scopes, execution kind, ...). */
  get authorizationPrompts(): AuthorizationPrompt[] {
    return this.world.prompts.map((p) => ({ ...p, scopes: p.scopes.slice() }));
  }

  /** A spreadsheet's developer metadata (default: the current one), for tests. */
  developerMetadata(
    id: string = this.session.docId,
  ): Array<{ id: number; key: string; value: string | null; visibility: MetadataVisibility }> {
    return this.world.document(id).metadata.snapshot();
  }

  /** Every developer metadata entry of a spreadsheet: its own and every sheet's columns'. */
  allDeveloperMetadata(
    id: string = this.session.docId,
  ): Array<{ id: number; key: string; value: string | null; visibility: MetadataVisibility }> {
    const doc = this.world.document(id);
    return [doc.metadata, ...doc.model.sheets.map((s) => s.metadata)].flatMap((m) => m.snapshot());
  }

  /**
   * Adds developer metadata as the user's own tools would (another script, DOCUMENT visibility): on the current
   * spreadsheet, or on a whole column (from 1) of one of its sheets.
   */
  addDeveloperMetadata(key: string, value: string, on?: { sheet: string; column: number }): void {
    const doc = this.world.document(this.session.docId);
    const store = on ? doc.model.sheetByName(on.sheet)?.metadata : doc.metadata;
    if (!store) throw new Error(`No sheet "${on?.sheet}" to add developer metadata to.`);
    store.add(key, value, 'DOCUMENT', on?.column);
  }

  get installAs(): InstallAs {
    return this.world.triggers.rules.installAs;
  }

  /** Trigger creations Apps Script refused, with Google's message (what the script caught or the user saw). */
  get refusedTriggerCreations(): RefusedTrigger[] {
    return this.world.triggers.refused.map((r) => ({ ...r }));
  }

  /** The most time-driven triggers one user had installed at any moment. */
  get maxClockTriggers(): number {
    return this.world.triggers.maxClockTriggers;
  }

  /** Disabling an add-on (Extensions > Add-ons > Manage) stops its triggers from firing until it is enabled. */
  setAddOnEnabled(enabled: boolean): void {
    this.triggerRunner.addOnEnabled = enabled;
  }

  /**
   * The sidebar is open for `user` (default: the current user) and its page calls `call(...args)` through
   * google.script.run every `everyMs` after the previous call returned (the first at once). Each call is its own
   * execution (6-minute limit; not trigger runtime). runTriggers() interleaves the calls with the triggers on the
   * clock; runSidebarCall() makes one now. closeSidebar() stops them.
   */
  openSidebar(options: SidebarOptions): void {
    this.sidebar.open(options);
  }

  closeSidebar(): void {
    this.sidebar.close();
  }

  get sidebarOpen(): boolean {
    return this.sidebar.isOpen;
  }

  /** One call of the open sidebar, now; the next is due `everyMs` after it returns. */
  async runSidebarCall(): Promise<void> {
    await this.sidebar.runCall();
  }

  /** One execution of a top-level function, then the recalculation of formulas it made stale. */
  async run<T = unknown>(name: string, ...args: unknown[]): Promise<T> {
    return this.runWithAuthMode('FULL', name, ...args);
  }

  async runWithAuthMode<T = unknown>(authMode: AuthMode, name: string, ...args: unknown[]): Promise<T> {
    try {
      return (await this.executor.execute({ functionName: name, args, kind: 'server', authMode })) as T;
    } finally {
      await this.recalculate();
    }
  }

  /**
   * One server execution (a menu item, a sidebar's google.script.run) of `user` in spreadsheet `spreadsheetId`
   * (defaults: the current user and spreadsheet, taken when called), starting at stand-in time `at` (default
   * now). Meant to run beside other work: `Promise.all([gas.runTriggers(...), gas.runWith({ user: b, at }, 'fn')])`
   * starts b's call at `at` while a trigger's execution sleeps or fetches; on a virtual clock the two take turns
   * at each sleep, lock wait and fetch.
   */
  async runWith<T = unknown>(
    options: { user?: string; spreadsheetId?: string; at?: number; authMode?: AuthMode },
    name: string,
    ...args: unknown[]
  ): Promise<T> {
    const user = options.user ?? this.session.user;
    const doc =
      options.spreadsheetId === undefined ? this.session.doc : this.world.document(options.spreadsheetId);
    if (options.at !== undefined && options.at > this.clock.now())
      await this.world.timeline.waitUntil(options.at);
    try {
      return (await this.executor.execute({
        functionName: name,
        args,
        kind: 'server',
        authMode: options.authMode ?? 'FULL',
        user,
        document: doc,
      })) as T;
    } finally {
      await this.recalculate();
    }
  }

  /**
   * Resolves when the stand-in clock reaches `at`; on a virtual clock, executions due earlier run first. Meant for
   * work beside runTriggers (issue 46: users whose edits come one after another while the triggers run).
   */
  async waitUntil(at: number): Promise<void> {
    if (at > this.clock.now()) await this.world.timeline.waitUntil(at);
  }

  /** Evaluates a custom-function formula; with `cell`, writes it there (its result spills into the sheet). */
  async runCustomFunction(formula: string, options: { cell?: string } = {}): Promise<CellValue[][]> {
    return this.recalculation.runFormula(formula, options.cell);
  }

  /** Runs every formula whose inputs changed or that was (re)written, as Sheets does (recalculation.ts). */
  async recalculate(): Promise<void> {
    await this.recalculation.recalculate();
  }

  /** The installable triggers of every user, as ScriptApp keeps them. */
  get triggers(): TriggerRecord[] {
    return this.world.triggers.triggers.map((t) => ({ ...t }));
  }

  /** Every trigger ever created (deleted ones included). */
  get createdTriggers(): TriggerRecord[] {
    return this.world.triggers.created.map((t) => ({ ...t }));
  }

  /** Trigger runtime used (ms): on one UTC day (day number = floor(ms / 86,400,000)), or on all days. */
  triggerRuntimeMs(day?: number): number {
    return this.triggerRunner.runtimeMs(day);
  }

  /**
   * Properties calls (user, document and script stores together) of `user` (default: everyone) on UTC day `day`
   * (floor(ms / 86,400,000); default: all days). The quota counts them per user, 50,000 in 24 hours (properties.ts).
   */
  propertiesCalls(user?: string, day?: number): number {
    return this.world.propertyQuota.calls(user, day);
  }

  /** Items the script wrote into every cache (script, users', documents'), each key of a putAll one. */
  cacheWrites(): number {
    let total = this.world.scriptCache.written;
    for (const cache of this.world.userCaches.values()) total += cache.written;
    for (const doc of this.world.documents.values()) total += doc.cache.written;
    return total;
  }

  /** URL fetches of `user` (default: everyone) on UTC day `day` (default: all days); 20,000 a user in 24 hours. */
  urlFetchCalls(user?: string, day?: number): number {
    return this.world.fetchQuota.total(user, day);
  }

  /** One of Google's daily per-user quotas: Properties calls, URL fetches, trigger runtime (ms). */
  private dailyQuota(service: DailyService) {
    if (service === 'properties') return this.world.propertyQuota;
    if (service === 'urlfetch') return this.world.fetchQuota;
    return this.triggerRunner.runtime;
  }

  /**
   * What `user` spent of a daily quota elsewhere (other spreadsheets, other scripts): `amount` calls (or ms of trigger
   * runtime) counted now in their window, as if used a moment ago (their window opens now if none is open); not in
   * this script's reports (propertiesCalls, urlFetchCalls, triggerRuntimeMs).
   */
  spendDailyQuota(user: string, service: DailyService, amount: number): void {
    this.dailyQuota(service).add(user, amount, false);
  }

  /** What `user` has used of a daily quota in their current window, and when it comes back (ms; undefined: none open). */
  dailyQuotaOf(
    user: string,
    service: DailyService,
  ): { used: number; limit: number; resetsAt?: number; firstRefusedAt?: number } {
    const quota = this.dailyQuota(service);
    return {
      used: quota.used(user),
      limit: quota.limit,
      resetsAt: quota.resetsAt(user),
      firstRefusedAt: quota.firstRefusedAt(user),
    };
  }

  /** How long `user`'s executions (default: everyone's) held the script lock (ms). */
  scriptLockHeldMs(user?: string): number {
    return this.world.locks.heldMs('script', user);
  }

  /** How long `user`'s executions (default: everyone's) held a document lock, any document (ms). */
  documentLockHeldMs(user?: string): number {
    return this.world.locks.heldMs('document', user);
  }

  /** How long `user`'s executions (default: everyone's) held their user lock (ms). */
  userLockHeldMs(user?: string): number {
    return this.world.locks.heldMs('user', user);
  }

  /** Each sheet of a spreadsheet (default: the current one) with its grid: maxRows × maxColumns, filled or not. */
  sheetSizes(
    id: string = this.session.docId,
  ): Array<{ name: string; hidden: boolean; rows: number; columns: number; cells: number }> {
    return this.world.document(id).model.sheets.map((s) => ({
      name: s.name,
      hidden: s.hidden,
      rows: s.maxRows,
      columns: s.maxColumns,
      cells: s.gridCells,
    }));
  }

  /** A spreadsheet's grid cells, all sheets (Google's limit: 10 million for the whole spreadsheet). */
  cellsIn(id?: string): number {
    return this.sheetSizes(id).reduce((total, s) => total + s.cells, 0);
  }

  /** The grid cells of a spreadsheet's hidden sheets (where the product keeps its stores). */
  hiddenCellsIn(id?: string): number {
    return this.sheetSizes(id).reduce((total, s) => total + (s.hidden ? s.cells : 0), 0);
  }

  /** Fires due time-driven triggers and the open sidebar's calls in order until `until` (triggers-runner.ts). */
  async runTriggers(options: { until: number; stop?: () => boolean; maxFirings?: number }): Promise<number> {
    return this.triggerRunner.run(options);
  }

  /** A user's edit of one cell, as typed: onEdit triggers fire, formulas recalculate (edits.ts). */
  async edit(a1: string, input: unknown): Promise<void> {
    await this.edits.edit(a1, input);
  }

  readonly properties = {
    user: (email?: string): Record<string, string> => this.world.userStore(email ?? this.owner).snapshot(),
    /** The document properties of a spreadsheet (default: the current one). */
    document: (id?: string): Record<string, string> =>
      this.world.document(id ?? this.session.docId).properties.snapshot(),
    script: (): Record<string, string> => this.world.scriptProperties.snapshot(),
  };

  get cache(): { document: CacheStore; script: CacheStore; user(email: string): CacheStore } {
    return {
      document: this.session.doc.cache,
      script: this.world.scriptCache,
      user: (email: string) => this.world.userCache(email),
    };
  }

  get ui(): { events: UiEvent[]; respond(response: ScriptedResponse): void } {
    return { events: this.world.ui.events, respond: (response) => this.world.ui.responses.push(response) };
  }

  get fetches(): FetchRecord[] {
    return this.world.fetches;
  }

  get logs(): LogLine[] {
    return this.world.logs;
  }

  get executions(): ExecutionRecord[] {
    return this.executor.records;
  }

  /** Starts `count` of the stand-in's workers now, before any execution (LoadOptions.warmWorkers). */
  warm(count: number): Promise<void> {
    return this.executor.warm(count);
  }

  /** How many worker threads have been started for executions so far. */
  get workersStarted(): number {
    return this.executor.workersStarted;
  }

  async close(): Promise<void> {
    await this.executor.close();
  }
}

/** Loads the built bundle (or `code`) into a new stand-in. */
export async function loadAppsScript(options: LoadOptions = {}): Promise<AppsScriptStandIn> {
  const projectDir = options.projectDir ?? DIST_DIR;
  let code = options.code;
  if (code === undefined) {
    const file = path.join(projectDir, 'Code.js');
    if (!fs.existsSync(file))
      throw new Error(`${file} is missing: run "npm run build" (or node apps-script/build.mjs) first`);
    code = fs.readFileSync(file, 'utf8');
  }
  const standIn = new AppsScriptStandIn(code, projectDir, options);
  if (options.warmWorkers) await standIn.warm(options.warmWorkers);
  return standIn;
}
