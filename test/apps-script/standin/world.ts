// Everything the stand-in keeps across executions (the spreadsheet, property stores, caches, locks, UI record,
// fetch log, logs, clock) and the dispatcher that runs a realm's call on the right fake object.
import { type CacheRules, CacheService, CacheStore } from './cache';
import type { SharedClock } from '../../sandbox/virtual';
import { SpreadsheetDocument } from './document';
import { AppsScriptException } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { LockService, LockTable } from './lock';
import { PropertiesService, PropertyQuota, PropertyStore } from './properties';
import { DailyQuota } from './daily-quota';
import { URL_FETCH_CALLS_PER_DAY, URL_FETCH_QUOTA_MESSAGE } from './limits';
import type { HandleRef, RpcReply, Target } from './protocol';
import { type AuthorizationPrompt, KNOWN_SCOPES, ScopeTable } from './scopes';
import { ScriptApp, TriggerTable } from './script-app';
import type { SpreadsheetModel } from './sheet-model';
import { SpreadsheetApp } from './spreadsheet-app';
import { RealTimeline, type Timeline, VirtualTimeline } from './timeline';
import { HtmlService, UiRecorder } from './ui';
import { type FetchRecord, UrlFetchApp } from './url-fetch';

export interface LogLine {
  executionId: number;
  level: string;
  text: string;
}

class User extends AppsScriptObject {
  readonly kind = 'User';
  constructor(private readonly email: string) {
    super();
  }
  getEmail(): string {
    return this.email;
  }
}

class Session extends AppsScriptObject {
  readonly kind = 'Session';
  constructor(private readonly execution: Execution) {
    super();
  }
  getActiveUser(): User {
    return new User(this.execution.activeUserEmail);
  }
  getEffectiveUser(): User {
    return new User(this.execution.isCustomFunction ? '' : this.execution.user);
  }
  getScriptTimeZone(): string {
    return 'Etc/UTC';
  }
  getActiveUserLocale(): string {
    return 'en';
  }
}

/** The id of the spreadsheet every stand-in starts with (the bound one, and the default for the harness). */
export const DEFAULT_SPREADSHEET_ID = '1StandInSpreadsheetId0000000000000000000000';

export class World {
  /** Every spreadsheet by id, the default one first (deleted ones stay, marked). */
  readonly documents = new Map<string, SpreadsheetDocument>();
  readonly ui = new UiRecorder();
  readonly scriptProperties = new PropertyStore();
  readonly userProperties = new Map<string, PropertyStore>();
  readonly scriptCache: CacheStore;
  readonly userCaches = new Map<string, CacheStore>();
  /** What every cache does past its cap (LoadOptions.cacheEviction; set before any cache fills). */
  readonly cacheRules: CacheRules = { eviction: 'observed' };
  readonly locks = new LockTable();
  /** Properties calls per user and day, across the user, document and script stores. */
  readonly propertyQuota: PropertyQuota;
  readonly triggers = new TriggerTable();
  readonly fetches: FetchRecord[] = [];
  /** URL fetches per user: 20,000 a day, the window as the Properties quota's. */
  readonly fetchQuota: DailyQuota;
  readonly logs: LogLine[] = [];
  /** Virtual clock only: stand-in ms a fetch takes on the network (a number, or drawn per request). */
  extraLatencyMs: number | (() => number) = 0;
  /** The URL prefixes UrlFetchApp may reach (the manifest's urlFetchWhitelist); undefined: not enforced. */
  urlFetchAllowlist?: readonly string[];
  /** Virtual clock only: stand-in ms each service call takes (Apps Script's own per-call overhead). */
  serviceCallMs = 0;
  /** Who runs when: on a virtual clock executions take turns and overlap during sleeps, lock waits and fetches. */
  readonly timeline: Timeline;
  /** The scopes the project declares and each user granted. */
  scopes: ScopeTable = new ScopeTable(KNOWN_SCOPES);
  private nextDocument = 1;

  constructor(
    readonly clock: SharedClock,
    /** The pushed project (apps-script/dist): HtmlService reads its .html files. */
    readonly projectDir: string,
  ) {
    this.scriptCache = new CacheStore(clock, this.cacheRules);
    this.propertyQuota = new PropertyQuota(() => clock.now());
    this.fetchQuota = new DailyQuota(() => clock.now(), URL_FETCH_CALLS_PER_DAY, URL_FETCH_QUOTA_MESSAGE);
    this.timeline = clock.mode === 'virtual' ? new VirtualTimeline(clock) : new RealTimeline(clock);
    this.locks.timeline = this.timeline;
    this.locks.clock = clock;
    this.addDocument('DAPA stand-in', DEFAULT_SPREADSHEET_ID);
  }

  /** A new spreadsheet (ids are sequential, so that a run repeats exactly). */
  addDocument(name?: string, id?: string): SpreadsheetDocument {
    const n = this.nextDocument++;
    const docId = id ?? `1StandInSpreadsheetId${String(n).padStart(22, '0')}`;
    if (this.documents.has(docId)) throw new Error(`A spreadsheet with id ${docId} already exists`);
    const doc = new SpreadsheetDocument(docId, name ?? `Spreadsheet ${n}`, this.clock, this.cacheRules);
    this.documents.set(docId, doc);
    return doc;
  }

  document(id: string): SpreadsheetDocument {
    const doc = this.documents.get(id);
    if (!doc) throw new Error(`No spreadsheet with id ${id}`);
    return doc;
  }

  /** The default spreadsheet (the bound one). */
  get defaultDocument(): SpreadsheetDocument {
    return this.document(DEFAULT_SPREADSHEET_ID);
  }

  /** The default spreadsheet's cells (as before several spreadsheets). */
  get spreadsheet(): SpreadsheetModel {
    return this.defaultDocument.model;
  }

  get prompts(): AuthorizationPrompt[] {
    return this.scopes.prompts;
  }

  userStore(email: string): PropertyStore {
    let store = this.userProperties.get(email);
    if (!store) this.userProperties.set(email, (store = new PropertyStore()));
    return store;
  }

  userCache(email: string): CacheStore {
    let cache = this.userCaches.get(email);
    if (!cache) this.userCaches.set(email, (cache = new CacheStore(this.clock, this.cacheRules)));
    return cache;
  }

  /** The network time of `requests` fetched side by side: the slowest one's (0 on a real clock). */
  private latencyOf(requests: number): number {
    if (this.clock.mode !== 'virtual') return 0;
    const latency = this.extraLatencyMs;
    if (typeof latency === 'number') return latency;
    let slowest = 0;
    for (let i = 0; i < Math.max(1, requests); i++) slowest = Math.max(slowest, latency());
    return slowest;
  }

  private root(execution: Execution, name: string): object | undefined {
    const existing = execution.roots.get(name);
    if (existing) return existing;
    let root: object | undefined;
    switch (name) {
      case 'SpreadsheetApp':
        root = new SpreadsheetApp({ ui: this.ui, scopes: this.scopes, documents: this.documents }, execution);
        break;
      case 'PropertiesService':
        root = new PropertiesService(
          execution,
          {
            script: this.scriptProperties,
            document: execution.document?.properties ?? null,
            user: (email) => this.userStore(email),
          },
          this.propertyQuota,
        );
        break;
      case 'CacheService':
        root = new CacheService(execution, {
          script: this.scriptCache,
          document: execution.document?.cache ?? null,
          user: (email) => this.userCache(email),
        });
        break;
      case 'LockService':
        root = new LockService(execution, this.locks);
        break;
      case 'UrlFetchApp':
        root = new UrlFetchApp(execution, {
          log: this.fetches,
          count: (e) => this.fetchQuota.count(e.user),
          extraLatencyMs: (requests) => this.latencyOf(requests),
          now: () => this.clock.now(),
          scopes: this.scopes,
          allowlist: this.urlFetchAllowlist,
          during: (e, io, extraMs) => this.timeline.during(e.id, io, extraMs),
        });
        break;
      case 'HtmlService':
        root = new HtmlService(this.projectDir);
        break;
      case 'Session':
        root = new Session(execution);
        break;
      case 'ScriptApp':
        root = new ScriptApp(execution, {
          table: this.triggers,
          scopes: this.scopes,
          now: () => this.clock.now(),
          prompt: (prompt) => this.scopes.prompts.push(prompt),
        });
        break;
    }
    if (root) execution.roots.set(name, root);
    return root;
  }

  private toWire(execution: Execution, value: unknown): unknown {
    if (value instanceof AppsScriptObject) {
      const ref: HandleRef = { $handle: execution.register(value), kind: value.kind };
      return ref;
    }
    if (Array.isArray(value)) return value.map((v) => this.toWire(execution, v));
    return value;
  }

  private fromWire(execution: Execution, value: unknown): unknown {
    if (value && typeof value === 'object' && '$handle' in (value as object)) {
      return execution.handles.get((value as HandleRef).$handle);
    }
    if (Array.isArray(value)) return value.map((v) => this.fromWire(execution, v));
    return value;
  }

  /** Runs one call from the realm on its fake object; errors become the realm's exceptions. */
  async call(execution: Execution, target: Target, method: string, args: unknown[]): Promise<RpcReply> {
    try {
      // A service call is a round trip to Google's servers: the execution waits, and others run meanwhile (each
      // execution of a user runs on its own, "Simultaneous executions per user: 30").
      if (this.serviceCallMs > 0 && this.clock.mode === 'virtual')
        await this.timeline.sleep(execution.id, this.serviceCallMs);
      execution.checkTime();
      const object =
        'root' in target ? this.root(execution, target.root) : execution.handles.get(target.handle);
      if (!object)
        throw new AppsScriptException(`${'root' in target ? target.root : 'object'} is not defined`);
      const kind = object instanceof AppsScriptObject ? object.kind : 'object';
      const fn = (object as Record<string, unknown>)[method];
      if (
        typeof fn !== 'function' ||
        method.startsWith('_') ||
        method === 'constructor' ||
        method in Object.prototype
      ) {
        const error = new TypeError(`${kind}.${method} is not a function`);
        return { ok: false, error: { name: error.name, message: error.message } };
      }
      const value = await (fn as (...a: unknown[]) => unknown).apply(
        object,
        args.map((a) => this.fromWire(execution, a)),
      );
      execution.checkTime();
      return { ok: true, value: this.toWire(execution, value) };
    } catch (error) {
      if ((error as Error).name === 'ExecutionKilled') throw error;
      const e = error as Error;
      return { ok: false, error: { name: e.name || 'Exception', message: e.message } };
    }
  }
}
