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
 *   gas.refusedTriggerCreations / gas.maxClockTriggers   trigger creations Google refused (with its message); the most
 *                                                time-driven triggers one user had at any moment
 *   gas.openSidebar({ call, args?, everyMs }) / closeSidebar() / runSidebarCall() / sidebarCalls   an open sidebar
 *                                                calling a server function every everyMs (interleaved by runTriggers)
 *   gas.setAddOnEnabled(false)                   an add-on's triggers stop firing (skippedTriggers)
 *   gas.keptResults                              recalculations skipped under keepsIdenticalResults
 *   gas.addSpreadsheet(name?) => id / useSpreadsheet(id) / deleteSpreadsheet(id) / revokeAccess(id, user)
 *                                                several spreadsheets; later harness operations happen in the used one
 *   gas.grantScopes(user, scopes) / revokeScopes(user, scopes) / grantedScopes(user) / declaredScopes /
 *     authorizationPrompts                       granular consent (options oauthScopes, grantedScopes)
 *   await gas.runWith({ user?, spreadsheetId?, at?, authMode? }, name, ...args)   a server execution that may run
 *                                                beside others (Promise.all with runTriggers or another runWith)
 *   await gas.close()                            stops the worker threads
 */
import { buildSync } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { formatA1, parseA1, type A1 } from './standin/a1';
import type { CacheStore } from './standin/cache';
import { SharedClock, type ClockMode } from '../sandbox/virtual';
import { type AuthMode, Execution, type ExecutionKind, type ExecutionRecord } from './standin/execution';
import { parseFormula } from './standin/formula';
import {
  CUSTOM_FUNCTION_MS,
  DEFAULT_TRIGGER_LATENESS_MS,
  EXECUTION_MS,
  SIMULTANEOUS_EXECUTIONS_PER_USER,
  TOO_MANY_SIMULTANEOUS_MESSAGE,
  TRIGGER_QUOTA_MESSAGE,
  TRIGGER_RUNTIME_PER_DAY_MS,
} from './standin/limits';
import { AppsScriptError, WorkerPool } from './standin/pool';
import type { SpreadsheetDocument } from './standin/document';
import type { MetadataVisibility } from './standin/developer-metadata';
import { type AuthorizationPrompt, KNOWN_SCOPES, manifestScopes, SCOPES, ScopeTable } from './standin/scopes';
import {
  type CellValue,
  cellKey,
  displayOf,
  parseCellKey,
  type Rect,
  type SheetModel,
  type SpreadsheetModel,
} from './standin/sheet-model';
import type { InstallAs, RefusedTrigger, TriggerRecord } from './standin/script-app';
import type { ScriptedResponse, UiEvent } from './standin/ui';
import type { FetchRecord } from './standin/url-fetch';
import { manifestAllowlist } from './standin/allowlist';
import { DEFAULT_SPREADSHEET_ID, type LogLine, World } from './standin/world';

export { AppsScriptError, DEFAULT_SPREADSHEET_ID, SCOPES };
export type {
  AuthorizationPrompt,
  CellValue,
  ExecutionRecord,
  FetchRecord,
  InstallAs,
  LogLine,
  RefusedTrigger,
  TriggerRecord,
  UiEvent,
};

const DAY_MS = 86_400_000;

export const DIST_DIR = path.resolve(__dirname, '../../apps-script/dist');

export interface LoadOptions {
  /** 'real' (default): Utilities.sleep waits. 'virtual': it moves the clock at once (fetches still take real time). */
  clock?: ClockMode;
  /** The spreadsheet's owner: custom functions use this user's properties. Default owner@example.com. */
  owner?: string;
  /** Who runs run() calls. Default: the owner. */
  user?: string;
  /** Where Code.js and the .html files are. Default apps-script/dist. */
  projectDir?: string;
  /** Script source to load instead of Code.js (to test the stand-in itself). */
  code?: string;
  /** Virtual clock only: stand-in milliseconds each fetch takes on top of its real time (a slow network). */
  virtualLatencyMs?: number;
  /** Virtual clock only: stand-in ms each service call takes (Apps Script's per-call overhead). Default 0. */
  serviceCallMs?: number;
  /**
   * How late a time-driven trigger fires after it is due (ms; a number or a function per firing). Default: varying
   * uniformly between 0 and 60 s, seeded (`triggerLatenessSeed`), so a run repeats exactly.
   */
  triggerDelayMs?: number | ((trigger: TriggerRecord) => number);
  /** Seed of the default varying lateness (default 1). */
  triggerLatenessSeed?: number;
  /**
   * 'script' (default): bound to the spreadsheet (clasp or copy-paste), ScriptApp.getInstallationSource() is NONE.
   * 'addon' (WEB_STORE_ADD_ON) or 'domain-addon' (APPS_MARKETPLACE_DOMAIN_ADD_ON): an Editor add-on, with Google's
   * add-on trigger rules (one trigger of each type per user per document, nothing more often than hourly).
   */
  installAs?: InstallAs;
  /**
   * Add-on only, not documented by Google: may a one-off after()/at() be due in under an hour? 'refused' (default)
   * throws the recurrence error; 'allowed' creates it (the one-trigger-per-type rule still applies).
   */
  addOnShortAfter?: 'allowed' | 'refused';
  /**
   * "Sheets keeps a custom function's result for identical arguments": a formula written again with the same text
   * (setFormula with the identical text, clear and write back) while its arguments read the same values shows its
   * last result without running. A change of text or of a value it reads still recalculates. Default false.
   */
  keepsIdenticalResults?: boolean;
  /** The daily trigger runtime quota: 'consumer' (90 min, default) or 'workspace' (6 h). */
  account?: 'consumer' | 'workspace';
  /** A daily trigger runtime quota of this many ms instead (to test what happens when it runs out). */
  triggerQuotaMs?: number;
  /**
   * The scopes the project declares, instead of the manifest's oauthScopes (appsscript.json beside Code.js; a
   * manifest without oauthScopes declares every scope the stand-in knows, as Apps Script detects them).
   */
  oauthScopes?: string[];
  /**
   * What the owner and every user granted at first (granular consent); default: every declared scope. Change it
   * per user with gas.grantScopes / gas.revokeScopes.
   */
  grantedScopes?: string[];
  /**
   * Add-on only, Google's "one trigger of each type, per user, per document" read for time-driven triggers:
   * 'user' (default, the stricter: one per user across all documents of the add-on) or 'document'. Edit triggers
   * are counted per user per document either way.
   */
  addOnClockTriggersPer?: 'user' | 'document';
  /**
   * Not documented: does ScriptApp.getUserTriggers(spreadsheet) list the user's time-driven triggers created in
   * that spreadsheet ('document', default) or only the spreadsheet's own (onEdit) triggers ('none')?
   */
  userTriggersListClock?: 'document' | 'none';
  /**
   * Google's custom-function guide: "getUserProperties() only gets the properties of the spreadsheet owner.
   * Spreadsheet editors can't set user properties in a custom function." Whether the owner's own recalculation may
   * set them is not said: 'owner' (default, the earlier behaviour) lets it, 'nobody' refuses every custom function.
   */
  customFunctionsSetUserProperties?: 'owner' | 'nobody';
  /**
   * How many formula cells Sheets recalculates side by side, each its own custom-function execution ("Each time a
   * custom function is used in a spreadsheet, Sheets makes a separate call to the Apps Script server"). Google does
   * not document the number; default 4. At most the per-user limit below can run.
   */
  customFunctionsAtOnce?: number;
  /**
   * Not documented: with granular consent, is a custom function's UrlFetchApp call refused when the owner did not
   * grant "Connect to an external service"? 'free' (default): custom functions fetch on their own terms; 'needs-grant':
   * refused with Google's permission error, as users of per-cell fetch formulas report.
   */
  customFunctionFetch?: 'free' | 'needs-grant';
  /**
   * "Simultaneous executions per user: 30" (quotas page): one more execution of that user (a formula, a trigger, a
   * server call) is refused with "There are too many scripts running simultaneously for this Google user account."
   */
  simultaneousExecutions?: number;
  /**
   * The manifest's urlFetchWhitelist as Google applies it: 'test-deployment' (default) enforces none ("optional when
   * you install a test deployment"); 'manifest' enforces the one of appsscript.json beside Code.js, as a versioned
   * deployment does; a list enforces those prefixes (standin/allowlist.ts).
   */
  urlFetchAllowlist?: 'test-deployment' | 'manifest' | string[];
}

/** A seeded lateness uniform between the default bounds (0–60 s), so a run repeats exactly. */
export function uniformLateness(
  seed: number,
  minMs: number = DEFAULT_TRIGGER_LATENESS_MS.min,
  maxMs: number = DEFAULT_TRIGGER_LATENESS_MS.max,
): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return Math.round(minMs + (s / 2 ** 32) * (maxMs - minMs));
  };
}

/** An open sidebar's page calling the server (google.script.run) on a timer. */
export interface SidebarOptions {
  /** The server function the page calls. */
  call: string;
  args?: unknown[];
  /** ms after a call returned until the next, unless `next` names a time. */
  everyMs: number;
  /** When the page calls again, from the call's answer (ms since epoch; undefined: `everyMs` later). */
  next?: (answer: unknown, now: number) => number | undefined;
  /** Whose sidebar (default: the current user). */
  user?: string;
}

let workerBundle: string | undefined;

function workerCode(): string {
  workerBundle ??= buildSync({
    entryPoints: [path.join(__dirname, 'standin', 'worker.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  }).outputFiles[0].text;
  return workerBundle;
}

/** Names of the script's custom functions: top-level functions whose JSDoc says @customfunction. */
function customFunctionNames(code: string): Set<string> {
  const names = new Set<string>();
  for (const m of code.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*function\s+([A-Za-z_$][\w$]*)\s*\(/g)) {
    if (/@customfunction\b/.test(m[1])) names.add(m[2]);
  }
  return names;
}

function normalizeResult(value: unknown): CellValue[][] {
  const cell = (v: unknown): CellValue => {
    if (v === null || v === undefined) return '';
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string' || v instanceof Date)
      return v;
    return String(v);
  };
  if (!Array.isArray(value)) return [[cell(value)]];
  if (value.length === 0) return [['']];
  const rows = value.map((row) => (Array.isArray(row) ? row.map(cell) : [cell(row)]));
  const width = Math.max(1, ...rows.map((r) => r.length));
  return rows.map((r) => (r.length < width ? [...r, ...new Array<CellValue>(width - r.length).fill('')] : r));
}

export class AppsScriptStandIn {
  readonly clock: SharedClock;
  private readonly world: World;
  private readonly pool: WorkerPool;
  private readonly customFunctions: Set<string>;
  private readonly executionList: Execution[] = [];
  private nextExecution = 1;
  private activeUser: string;
  private readonly triggerDelay: (trigger: TriggerRecord) => number;
  private readonly triggerQuotaMs: number;
  /** Trigger runtime per user and UTC day ("user:day" → ms). */
  private readonly triggerRuntime = new Map<string, number>();
  /** Trigger executions refused because the day's quota was spent. */
  readonly refusedTriggers: Array<{ id: string; handler: string; at: number }> = [];
  /** Lateness drawn for each firing ("id:dueAt"), so a deferred firing keeps its draw. */
  private readonly lateness = new Map<string, number>();
  private readonly keepsIdenticalResults: boolean;
  private readonly customFunctionsSetUserProperties: 'owner' | 'nobody';
  private readonly customFunctionsAtOnce: number;
  private readonly simultaneousExecutions: number;
  /** Executions refused because the user already had `simultaneousExecutions` running. */
  readonly tooManySimultaneous: Array<{
    user: string;
    functionName: string;
    kind: ExecutionKind;
    at: number;
  }> = [];
  /** The most executions of one user running at one moment. */
  maxSimultaneous = 0;
  /** The last result of each formula cell and what produced it (keepsIdenticalResults). */
  private readonly lastResults = new Map<string, { signature: string; grid: CellValue[][] }>();
  /** Recalculations Sheets skipped because the formula and its arguments were unchanged. */
  keptResults = 0;
  private addOnEnabled = true;
  /** Due triggers that did not run because the add-on was disabled. */
  readonly skippedTriggers: Array<{ id: string; handler: string; at: number }> = [];
  private sidebarState?: SidebarOptions & {
    args: unknown[];
    user: string;
    nextAt: number;
    doc: SpreadsheetDocument;
  };
  /** Every call the open sidebar made (google.script.run), with how it ended. */
  readonly sidebarCalls: Array<{ at: number; name: string; ok: boolean; error?: string; elapsedMs: number }> =
    [];

  /** The spreadsheet later harness operations happen in (useSpreadsheet). */
  private currentDocId = DEFAULT_SPREADSHEET_ID;

  constructor(
    code: string,
    projectDir: string,
    options: LoadOptions,
    readonly owner = options.owner ?? 'owner@example.com',
  ) {
    this.clock = new SharedClock(options.clock ?? 'real');
    this.world = new World(this.clock, projectDir);
    const declared = options.oauthScopes ?? manifestScopes(projectDir) ?? KNOWN_SCOPES;
    this.world.scopes = new ScopeTable(declared, options.grantedScopes ?? declared);
    this.world.scopes.customFunctionFetchNeedsGrant = options.customFunctionFetch === 'needs-grant';
    this.world.extraLatencyMs = options.virtualLatencyMs ?? 0;
    this.world.serviceCallMs = options.serviceCallMs ?? 0;
    const allowlist = options.urlFetchAllowlist ?? 'test-deployment';
    if (allowlist === 'manifest')
      this.world.urlFetchAllowlist =
        manifestAllowlist(fs.readFileSync(path.join(projectDir, 'appsscript.json'), 'utf8')) ?? [];
    else if (Array.isArray(allowlist)) this.world.urlFetchAllowlist = allowlist;
    this.pool = new WorkerPool(workerCode(), code, this.world, this.clock);
    this.customFunctions = customFunctionNames(code);
    this.activeUser = options.user ?? this.owner;
    const delay = options.triggerDelayMs ?? uniformLateness(options.triggerLatenessSeed ?? 1);
    this.triggerDelay = typeof delay === 'function' ? delay : () => delay;
    this.world.triggers.rules = {
      installAs: options.installAs ?? 'script',
      addOnShortAfter: options.addOnShortAfter ?? 'refused',
      addOnClockTriggersPer: options.addOnClockTriggersPer ?? 'user',
      userTriggersListClock: options.userTriggersListClock ?? 'document',
    };
    this.keepsIdenticalResults = options.keepsIdenticalResults ?? false;
    this.customFunctionsSetUserProperties = options.customFunctionsSetUserProperties ?? 'owner';
    this.customFunctionsAtOnce = Math.max(1, options.customFunctionsAtOnce ?? 4);
    this.simultaneousExecutions = options.simultaneousExecutions ?? SIMULTANEOUS_EXECUTIONS_PER_USER;
    this.triggerQuotaMs = options.triggerQuotaMs ?? TRIGGER_RUNTIME_PER_DAY_MS[options.account ?? 'consumer'];
  }

  /**
   * Later run(), edit() and sidebar calls execute as this user, and formulas recalculate for them (a custom
   * function then still reads the owner's user properties, read-only unless the user is the owner).
   */
  asUser(email: string): this {
    this.activeUser = email;
    return this;
  }

  get user(): string {
    return this.activeUser;
  }

  /** The spreadsheet harness operations happen in (see useSpreadsheet). */
  private get doc(): SpreadsheetDocument {
    return this.world.document(this.currentDocId);
  }

  private get model(): SpreadsheetModel {
    return this.doc.model;
  }

  /** A new spreadsheet (its own sheets, named ranges, formulas, document properties, cache and lock); its id. */
  addSpreadsheet(name?: string): string {
    return this.world.addDocument(name).id;
  }

  /**
   * Later sheet edits, formulas, print/select, run() of server functions and menu items, edit(), openSidebar
   * and the recalculations they cause happen in this spreadsheet, as the current user.
   */
  useSpreadsheet(id: string): this {
    const doc = this.world.document(id);
    if (doc.deleted) throw new Error(`Spreadsheet ${id} was deleted`);
    this.currentDocId = id;
    return this;
  }

  /** The spreadsheet harness operations happen in. */
  get spreadsheetId(): string {
    return this.currentDocId;
  }

  /** Every spreadsheet's id (deleted ones included), the default one first. */
  get spreadsheetIds(): string[] {
    return [...this.world.documents.keys()];
  }

  /** The spreadsheet is deleted: openById fails for everyone, its edit triggers no longer fire. */
  deleteSpreadsheet(id: string): void {
    const doc = this.world.document(id);
    doc.deleted = true;
    if (this.currentDocId === id) this.currentDocId = DEFAULT_SPREADSHEET_ID;
  }

  /** `user` loses access to the spreadsheet: openById/openByUrl fail for them with Google's error. */
  revokeAccess(id: string, user: string): void {
    this.world.document(id).revoked.add(user);
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
    id: string = this.currentDocId,
  ): Array<{ id: number; key: string; value: string | null; visibility: MetadataVisibility }> {
    return this.world.document(id).metadata.snapshot();
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
    this.addOnEnabled = enabled;
  }

  /**
   * The sidebar is open for `user` (default: the current user) and its page calls `call(...args)` through
   * google.script.run every `everyMs` after the previous call returned (the first at once). Each call is its own
   * execution (6-minute limit; not trigger runtime). runTriggers() interleaves the calls with the triggers on the
   * clock; runSidebarCall() makes one now. closeSidebar() stops them.
   */
  openSidebar(options: SidebarOptions): void {
    this.sidebarState = {
      ...options,
      args: options.args ?? [],
      user: options.user ?? this.activeUser,
      nextAt: this.clock.now(),
      doc: this.doc,
    };
  }

  closeSidebar(): void {
    this.sidebarState = undefined;
  }

  get sidebarOpen(): boolean {
    return this.sidebarState !== undefined;
  }

  /** One call of the open sidebar, now; the next is due `everyMs` after it returns. */
  async runSidebarCall(): Promise<void> {
    const state = this.sidebarState;
    if (!state) throw new Error('The sidebar is not open: call openSidebar() first');
    const at = this.clock.now();
    const id = this.nextExecution;
    let ok = true;
    let error: string | undefined;
    let answer: unknown;
    try {
      answer = await this.execute(state.call, state.args, 'server', 'FULL', undefined, state.user, state.doc);
    } catch (e) {
      ok = false;
      error = (e as Error).message;
    }
    const record = this.executionList.find((e) => e.id === id)?.record();
    this.sidebarCalls.push({
      at,
      name: state.call,
      ok,
      error,
      elapsedMs: record?.elapsedMs ?? this.clock.now() - at,
    });
    if (this.sidebarState === state) {
      const now = this.clock.now();
      const asked = ok && state.next ? state.next(answer, now) : undefined;
      state.nextAt =
        asked === undefined || !Number.isFinite(asked) ? now + state.everyMs : Math.max(now, asked);
    }
    await this.recalculate();
  }

  private async execute(
    functionName: string,
    args: unknown[],
    kind: ExecutionKind,
    authMode: AuthMode,
    cell?: { sheetId: number; row: number; column: number },
    user?: string,
    /** The document it runs in (default: the current spreadsheet); null: none. */
    document: SpreadsheetDocument | null = this.doc,
    triggerKind?: 'CLOCK' | 'ON_EDIT',
  ): Promise<unknown> {
    const custom = kind === 'custom-function';
    const runAs = user ?? (custom ? this.owner : this.activeUser);
    const execution: Execution = new Execution(
      this.nextExecution++,
      functionName,
      kind,
      authMode,
      runAs,
      custom || kind === 'trigger' ? '' : runAs,
      this.clock.now(),
      custom ? CUSTOM_FUNCTION_MS : EXECUTION_MS,
      this.clock,
      cell,
    );
    // A custom function recalculated for an editor who is not the owner reads the owner's user properties only.
    execution.userPropertiesReadOnly =
      custom && (this.activeUser !== this.owner || this.customFunctionsSetUserProperties === 'nobody');
    execution.document = document;
    execution.triggerKind = triggerKind;
    const running = this.executionList.filter((e) => e.user === runAs && e.status === 'running').length;
    if (running >= this.simultaneousExecutions) {
      this.tooManySimultaneous.push({ user: runAs, functionName, kind, at: this.clock.now() });
      throw new AppsScriptError(TOO_MANY_SIMULTANEOUS_MESSAGE, 'Error');
    }
    this.executionList.push(execution);
    this.maxSimultaneous = Math.max(this.maxSimultaneous, running + 1);
    return this.pool.execute(execution, args);
  }

  /** One execution of a top-level function, then the recalculation of formulas it made stale. */
  async run<T = unknown>(name: string, ...args: unknown[]): Promise<T> {
    return this.runWithAuthMode('FULL', name, ...args);
  }

  async runWithAuthMode<T = unknown>(authMode: AuthMode, name: string, ...args: unknown[]): Promise<T> {
    try {
      return (await this.execute(name, args, 'server', authMode)) as T;
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
    const user = options.user ?? this.activeUser;
    const doc = options.spreadsheetId === undefined ? this.doc : this.world.document(options.spreadsheetId);
    if (options.at !== undefined && options.at > this.clock.now())
      await this.world.timeline.waitUntil(options.at);
    try {
      return (await this.execute(
        name,
        args,
        'server',
        options.authMode ?? 'FULL',
        undefined,
        user,
        doc,
      )) as T;
    } finally {
      await this.recalculate();
    }
  }

  /** Evaluates a custom-function formula; with `cell`, writes it there (its result spills into the sheet). */
  async runCustomFunction(formula: string, options: { cell?: string } = {}): Promise<CellValue[][]> {
    if (options.cell) {
      const { sheet, rect } = this.resolve(options.cell);
      this.model.write(sheet, rect.row, rect.column, formula, true);
      await this.evaluate(cellKey(sheet.id, rect.row, rect.column));
      const data = sheet.get(rect.row, rect.column);
      if (data && /^#(ERROR!|REF!|NAME\?)/.test(String(data.value)))
        throw new AppsScriptError(data.note ?? String(data.value), 'Error');
      const rows = data?.spill ? Math.max(rect.row, ...data.spill.map(([r]) => r)) - rect.row + 1 : 1;
      const columns = data?.spill
        ? Math.max(rect.column, ...data.spill.map(([, c]) => c)) - rect.column + 1
        : 1;
      return this.gridOf(sheet, rect.row, rect.column, rows, columns, (s, r, c) => s.value(r, c));
    }
    const sheet = this.model.activeSheet();
    const call = parseFormula(formula);
    if (!call || !this.customFunctions.has(call.name))
      throw new AppsScriptError(`Unknown function: ${formula}`, 'Error');
    const args = call.args.map((arg) => this.argumentValue(arg, sheet));
    const value = await this.execute(call.name, args, 'custom-function', 'CUSTOM_FUNCTION', {
      sheetId: sheet.id,
      row: 1,
      column: 1,
    });
    return normalizeResult(value);
  }

  private argumentValue(
    arg: ReturnType<typeof parseFormula> extends infer F
      ? F extends { args: Array<infer A> }
        ? A
        : never
      : never,
    sheet: SheetModel,
    model: SpreadsheetModel = this.model,
  ): unknown {
    if (arg.kind === 'omitted') return undefined;
    if (arg.kind === 'value') return arg.value;
    const { sheet: source, rect } =
      arg.kind === 'name' ? this.resolveName(arg.name, model) : this.resolveRef(arg.ref, sheet, model);
    const grid = this.gridOf(source, rect.row, rect.column, rect.rows, rect.columns, (s, r, c) =>
      s.value(r, c),
    );
    return rect.rows === 1 && rect.columns === 1 ? grid[0][0] : grid;
  }

  /** Recalculates one formula cell as Sheets does: a custom-function execution, its result spilled. */
  private async evaluate(key: string, doc: SpreadsheetDocument = this.doc): Promise<void> {
    const model = doc.model;
    const { sheetId, row, column } = parseCellKey(key);
    const sheet = model.sheetById(sheetId);
    const formula = sheet?.get(row, column)?.formula;
    if (!sheet || !formula) return;
    const call = parseFormula(formula);
    const inputs: Rect[] = [];
    for (const arg of call?.args ?? []) {
      if (arg.kind === 'range' || arg.kind === 'name') {
        try {
          inputs.push(
            arg.kind === 'name'
              ? this.resolveName(arg.name, model).rect
              : this.resolveRef(arg.ref, sheet, model).rect,
          );
        } catch {
          // an unknown sheet or name: the execution below reports it
        }
      }
    }
    model.formulaInputs.set(key, inputs);
    const setError = (value: string, note: string) => {
      const cell = sheet.get(row, column);
      if (!cell || cell.formula !== formula) return;
      model.clearSpill(sheet, row, column);
      cell.value = value;
      cell.note = note;
    };
    if (!call || !this.customFunctions.has(call.name)) {
      setError(
        '#NAME?',
        `The stand-in evaluates only =CUSTOMFUNCTION(arguments) of the script's @customfunction functions: ${formula}`,
      );
      return;
    }
    let value: unknown;
    let signature: string | undefined;
    try {
      const args = call.args.map((arg) => this.argumentValue(arg, sheet, model));
      if (this.keepsIdenticalResults) {
        signature = JSON.stringify([formula, args]);
        const last = this.lastResults.get(`${doc.id}|${key}`);
        if (last && last.signature === signature) {
          this.keptResults += 1;
          this.spill(sheet, row, column, last.grid, model);
          return;
        }
      }
      value = await this.execute(
        call.name,
        args,
        'custom-function',
        'CUSTOM_FUNCTION',
        { sheetId, row, column },
        undefined,
        doc,
      );
    } catch (error) {
      setError('#ERROR!', (error as Error).message);
      return;
    }
    const cell = sheet.get(row, column);
    if (!cell || cell.formula !== formula) return; // rewritten meanwhile: that write recalculates it
    const grid = normalizeResult(value);
    if (signature !== undefined) this.lastResults.set(`${doc.id}|${key}`, { signature, grid });
    this.spill(sheet, row, column, grid, model);
  }

  private spill(
    sheet: SheetModel,
    row: number,
    column: number,
    grid: CellValue[][],
    model: SpreadsheetModel = this.model,
  ): void {
    const cell = sheet.get(row, column);
    if (!cell) return;
    model.clearSpill(sheet, row, column);
    const rows = grid.length;
    const columns = grid[0].length;
    if (row + rows - 1 > sheet.maxRows || column + columns - 1 > sheet.maxColumns) {
      cell.value = '#REF!';
      cell.note = `Result was not automatically expanded, please insert more rows (${row + rows - 1 - sheet.maxRows}).`;
      return;
    }
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < columns; c++) {
        if ((r > 0 || c > 0) && sheet.hasContent(row + r, column + c)) {
          cell.value = '#REF!';
          cell.note = `Array result was not expanded because it would overwrite data in ${formatA1(row + r, column + c)}.`;
          return;
        }
      }
    }
    const key = cellKey(sheet.id, row, column);
    const spill: Array<[number, number]> = [];
    grid.forEach((line, r) =>
      line.forEach((value, c) => {
        if (r === 0 && c === 0) return;
        sheet.put(row + r, column + c, { value, spillOf: key });
        spill.push([row + r, column + c]);
      }),
    );
    cell.value = grid[0][0];
    cell.note = undefined;
    cell.spill = spill;
    model.changed({ sheetId: sheet.id, row, column, rows, columns });
    model.dirty.delete(key);
  }

  /**
   * Runs every formula whose inputs changed or that was (re)written, a few side by side, as Sheets does: each in
   * its own spreadsheet (a change in one spreadsheet makes only its own formulas stale).
   */
  async recalculate(): Promise<void> {
    for (const doc of this.world.documents.values()) {
      const model = doc.model;
      if (doc.deleted) continue;
      for (let round = 0; round < 10 && model.dirty.size > 0; round++) {
        const keys = [...model.dirty];
        model.dirty.clear();
        const queue = keys.slice();
        const workers = Array.from(
          { length: Math.min(this.customFunctionsAtOnce, queue.length) },
          async () => {
            for (let key = queue.shift(); key !== undefined; key = queue.shift())
              await this.evaluate(key, doc);
          },
        );
        await Promise.all(workers);
      }
    }
  }

  private resolveRef(
    ref: A1,
    fallback: SheetModel,
    model: SpreadsheetModel = this.model,
  ): { sheet: SheetModel; rect: Rect } {
    const sheet = ref.sheetName === undefined ? fallback : model.sheetByName(ref.sheetName);
    if (!sheet) throw new Error(`No sheet named ${ref.sheetName}`);
    const row = ref.row ?? 1;
    const column = ref.column ?? 1;
    const lastRow =
      ref.lastRow ?? (ref.row !== undefined && ref.lastColumn === undefined ? ref.row : sheet.maxRows);
    const lastColumn =
      ref.lastColumn ??
      (ref.column !== undefined && ref.lastRow === undefined ? ref.column : sheet.maxColumns);
    return {
      sheet,
      rect: { sheetId: sheet.id, row, column, rows: lastRow - row + 1, columns: lastColumn - column + 1 },
    };
  }

  private resolveName(name: string, model: SpreadsheetModel = this.model): { sheet: SheetModel; rect: Rect } {
    const rect = model.namedRanges.get(name);
    const sheet = rect && model.sheetById(rect.sheetId);
    if (!rect || !sheet) throw new Error(`Unknown range name: ${name}`);
    return { sheet, rect };
  }

  private resolve(a1: string): { sheet: SheetModel; rect: Rect } {
    const ref = parseA1(a1);
    if (!ref) throw new Error(`Not an A1 reference: ${a1}`);
    return this.resolveRef(ref, this.model.activeSheet());
  }

  private gridOf<T>(
    sheet: SheetModel,
    row: number,
    column: number,
    rows: number,
    columns: number,
    read: (sheet: SheetModel, row: number, column: number) => T,
  ): T[][] {
    const grid: T[][] = [];
    for (let r = 0; r < rows; r++) {
      const line: T[] = [];
      for (let c = 0; c < columns; c++) line.push(read(sheet, row + r, column + c));
      grid.push(line);
    }
    return grid;
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
    let total = 0;
    for (const [key, ms] of this.triggerRuntime)
      if (day === undefined || key.endsWith(`:${day}`)) total += ms;
    return total;
  }

  /** Runs one trigger's execution as its owner, unless the owner's trigger runtime for the day is spent. */
  private async fireTrigger(trigger: TriggerRecord, event: Record<string, unknown>): Promise<void> {
    const started = this.clock.now();
    const key = `${trigger.user}:${Math.floor(started / DAY_MS)}`;
    if ((this.triggerRuntime.get(key) ?? 0) >= this.triggerQuotaMs) {
      this.refusedTriggers.push({ id: trigger.id, handler: trigger.handler, at: started });
      this.world.logs.push({
        executionId: 0,
        level: 'error',
        text: `${trigger.handler}: ${TRIGGER_QUOTA_MESSAGE}`,
      });
      return;
    }
    const id = this.nextExecution;
    // The document a trigger runs in: an edit trigger's spreadsheet; for a time-driven trigger the bound
    // spreadsheet of a bound script, and none for an add-on (a standalone project).
    const document =
      trigger.kind === 'ON_EDIT'
        ? (this.world.documents.get(trigger.spreadsheetId ?? DEFAULT_SPREADSHEET_ID) ?? null)
        : this.installAs === 'script'
          ? this.world.defaultDocument
          : null;
    try {
      await this.execute(
        trigger.handler,
        [{ ...event, triggerUid: trigger.id, authMode: 'FULL' }],
        'trigger',
        'FULL',
        undefined,
        trigger.user,
        document,
        trigger.kind,
      );
    } catch {
      // A failed trigger execution is recorded in `executions`, as Apps Script lists it; the clock goes on.
    }
    const record = this.executionList.find((e) => e.id === id)?.record();
    const elapsed = record?.elapsedMs ?? this.clock.now() - started;
    this.triggerRuntime.set(key, (this.triggerRuntime.get(key) ?? 0) + elapsed);
  }

  /**
   * Fires due time-driven triggers in order, moving the clock to each (plus its delay), until none is due before
   * `until`, or `stop()` says so after a firing. Formulas made stale by a trigger recalculate after it.
   */
  async runTriggers(options: { until: number; stop?: () => boolean; maxFirings?: number }): Promise<number> {
    let firings = 0;
    for (;;) {
      const next = this.world.triggers.nextClock();
      const fireAt = next && next.dueAt !== undefined ? next.dueAt + this.lateFor(next) : Infinity;
      const sidebarAt = this.sidebarState?.nextAt ?? Infinity;
      const at = Math.min(fireAt, sidebarAt);
      if (at === Infinity || at > options.until) break;
      if (at > this.clock.now()) {
        // Executions running beside (runWith) go on until then; what is due may have changed meanwhile.
        await this.world.timeline.waitUntil(at);
        continue;
      }
      if (sidebarAt <= fireAt) {
        await this.runSidebarCall();
        if (options.stop?.()) break;
        continue;
      }
      const trigger = next as TriggerRecord;
      this.lateness.delete(`${trigger.id}:${trigger.dueAt}`);
      if (trigger.everyMs !== undefined) {
        while ((trigger.dueAt as number) <= this.clock.now())
          trigger.dueAt = (trigger.dueAt as number) + trigger.everyMs;
      } else trigger.spent = true;
      if (!this.addOnEnabled && this.installAs !== 'script') {
        this.skippedTriggers.push({ id: trigger.id, handler: trigger.handler, at: this.clock.now() });
        continue;
      }
      await this.fireTrigger(trigger, {});
      await this.recalculate();
      firings += 1;
      if (options.stop?.() || firings >= (options.maxFirings ?? Infinity)) break;
    }
    return firings;
  }

  /** How late this firing of the trigger is (drawn once per firing). */
  private lateFor(trigger: TriggerRecord): number {
    const key = `${trigger.id}:${trigger.dueAt}`;
    let late = this.lateness.get(key);
    if (late === undefined) {
      late = Math.max(0, this.triggerDelay(trigger));
      this.lateness.set(key, late);
    }
    return late;
  }

  /**
   * A user's edit of one cell (a value or a formula, as typed): installable onEdit triggers fire with the edit's
   * range while the formulas recalculate.
   */
  async edit(a1: string, input: unknown): Promise<void> {
    const { sheet, rect } = this.resolve(a1);
    const isFormula = typeof input === 'string' && input.startsWith('=');
    this.model.write(sheet, rect.row, rect.column, input, isFormula);
    this.model.changed({ ...rect, rows: 1, columns: 1 });
    const doc = this.doc;
    const onEdit = this.world.triggers.triggers.filter(
      (t) => t.kind === 'ON_EDIT' && (t.spreadsheetId ?? DEFAULT_SPREADSHEET_ID) === doc.id,
    );
    // In Sheets the onEdit trigger and the recalculation run side by side; here one after the other, so that on a
    // virtual clock neither execution's time counts the other's network waits.
    for (const trigger of onEdit) {
      await this.fireTrigger(trigger, {
        a1: formatA1(rect.row, rect.column),
        sheetName: sheet.name,
        value: input,
      });
    }
    await this.recalculate();
  }

  /** The fake spreadsheet, as a user sees and edits it. */
  readonly sheet = {
    setValues: (a1: string, values: unknown[][]): void => {
      const { sheet, rect } = this.resolve(a1);
      const width = Math.max(1, ...values.map((line) => line.length));
      if (rect.row + values.length - 1 > sheet.maxRows || rect.column + width - 1 > sheet.maxColumns) {
        throw new Error(
          `${a1}: ${values.length}×${width} values do not fit in ${sheet.name} (${sheet.maxRows} rows, ${sheet.maxColumns} columns)`,
        );
      }
      values.forEach((line, r) =>
        line.forEach((value, c) => this.model.write(sheet, rect.row + r, rect.column + c, value)),
      );
      this.model.changed({
        ...rect,
        rows: values.length,
        columns: Math.max(1, ...values.map((l) => l.length)),
      });
    },
    setFormula: (a1: string, formula: string): void => {
      const { sheet, rect } = this.resolve(a1);
      this.model.write(sheet, rect.row, rect.column, formula, true);
    },
    getValues: (a1: string): CellValue[][] => {
      const { sheet, rect } = this.resolve(a1);
      return this.gridOf(sheet, rect.row, rect.column, rect.rows, rect.columns, (s, r, c) => s.value(r, c));
    },
    getDisplayValues: (a1: string): string[][] => {
      const { sheet, rect } = this.resolve(a1);
      return this.gridOf(sheet, rect.row, rect.column, rect.rows, rect.columns, (s, r, c) =>
        displayOf(s.value(r, c)),
      );
    },
    getFormulas: (a1: string): string[][] => {
      const { sheet, rect } = this.resolve(a1);
      return this.gridOf(
        sheet,
        rect.row,
        rect.column,
        rect.rows,
        rect.columns,
        (s, r, c) => s.get(r, c)?.formula ?? '',
      );
    },
    getNote: (a1: string): string => {
      const { sheet, rect } = this.resolve(a1);
      return sheet.get(rect.row, rect.column)?.note ?? '';
    },
    select: (a1: string): void => {
      const { sheet, rect } = this.resolve(a1);
      this.model.activeSheetId = sheet.id;
      this.model.selection = rect;
    },
    addSheet: (name: string, rows?: number, columns?: number): void => {
      this.model.addSheet(name, rows, columns);
    },
    activate: (name: string): void => {
      const sheet = this.model.sheetByName(name);
      if (!sheet) throw new Error(`No sheet named ${name}`);
      this.model.activeSheetId = sheet.id;
    },
    lastRow: (name?: string): number =>
      (name ? this.model.sheetByName(name) : this.model.activeSheet())?.lastRow() ?? 0,
    maxColumns: (name?: string): number =>
      (name ? this.model.sheetByName(name) : this.model.activeSheet())?.maxColumns ?? 0,
    /** The range as a text table: column letters across, row numbers down, display values. */
    print: (a1: string, maxWidth = 28): string => {
      const { sheet, rect } = this.resolve(a1);
      const shown = this.gridOf(sheet, rect.row, rect.column, rect.rows, rect.columns, (s, r, c) => {
        const text = displayOf(s.value(r, c)).replace(/\s+/g, ' ');
        return text.length > maxWidth ? text.slice(0, maxWidth - 1) + '…' : text;
      });
      const letters = Array.from({ length: rect.columns }, (_, c) =>
        formatA1(1, rect.column + c).replace(/\d+$/, ''),
      );
      const table = [['', ...letters], ...shown.map((line, r) => [String(rect.row + r), ...line])];
      const widths = table[0].map((_, c) => Math.max(...table.map((line) => line[c].length)));
      const line = (cells: string[]) =>
        cells
          .map((text, c) =>
            typeof text === 'string' && /^-?\d+(\.\d+)?$/.test(text)
              ? text.padStart(widths[c])
              : text.padEnd(widths[c]),
          )
          .join(' | ');
      const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
      return [line(table[0]), rule, ...table.slice(1).map(line)].join('\n');
    },
  };

  readonly properties = {
    user: (email?: string): Record<string, string> => this.world.userStore(email ?? this.owner).snapshot(),
    /** The document properties of a spreadsheet (default: the current one). */
    document: (id?: string): Record<string, string> =>
      this.world.document(id ?? this.currentDocId).properties.snapshot(),
    script: (): Record<string, string> => this.world.scriptProperties.snapshot(),
  };

  get cache(): { document: CacheStore; script: CacheStore; user(email: string): CacheStore } {
    return {
      document: this.doc.cache,
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
    return this.executionList.map((e) => e.record());
  }

  async close(): Promise<void> {
    await this.pool.close();
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
  return new AppsScriptStandIn(code, projectDir, options);
}
