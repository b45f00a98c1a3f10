// The store session: one execution's hold on the stores of the Sheets shell. It answers where the execution works (the
// spreadsheet, its document cache, lock and properties, the user's) and keeps every memory tier the store modules use
// (the properties snapshot, digests, the hidden sheets' rows, records fetched here, the lock deadline): the only
// module-level state in apps-script/src. Each tier is read and written by one store module; a test starts afresh.
// Over 300 lines: every tier's field and its handle asked once an execution sit together, so no other module keeps
// state.
import type { DomainRecord } from '../../../shared';
import { NO_SPREADSHEET } from '../messages';
import {
  type Cache,
  type DailyLimit,
  DailyLimitError,
  dailyLimitOf,
  googleDocumentCache,
  googleDocumentLock,
  googleDocumentProperties,
  googleInstallMode,
  googleUserProperties,
  type InstallMode,
  type Lock,
  notingLimits,
  type Properties,
  sha256,
  type Spreadsheet,
  userCache as googleUserCache,
  userLock as googleUserLock,
} from '../platform/gas';

export type { InstallMode } from '../platform/gas';

/** What one execution knows of a spreadsheet's hidden sheets (store-sheet.ts reads and writes it). */
export interface KnownSheets {
  store?: GoogleAppsScript.Spreadsheet.Sheet;
  versions?: GoogleAppsScript.Spreadsheet.Sheet;
  /** The log as last read, with this execution's own appends after it (others' appends since are not in it). */
  rows?: unknown[][];
}

/** The memory tier of storage.ts: the user's properties as last read, the lock deadline, the locks held. */
export interface StorageTier {
  /** The user's properties as last read, and whether under the user lock. */
  userSnapshot?: { of: Properties; at: number; values: Map<string, string>; underLock?: boolean };
  /** When this execution's lock waits must be over. */
  waitsEndBy?: number;
  /** A custom function's lock wait ends early with this quota's refusal once another execution met it. */
  waitsGiveUp?: () => DailyLimit | undefined;
  /** Which locks this execution holds now (storage.ts alone takes and returns them). */
  held: { user: boolean; document: boolean };
}

/**
 * Every memory tier of one execution. This module's own fields answer where the execution works; each other tier is
 * handed, by its accessor below, to its one owner module only (the store owners test holds that).
 */
interface StoreSession {
  /** The spreadsheet the dispatcher opened by id. */
  opened?: Spreadsheet;
  /** The execution's active spreadsheet, asked once (each ask is a service call, and it never changes). */
  active?: { via: object; sheet: Spreadsheet | null };
  /** Whether `opened` is the execution's own document. */
  own?: { sheet: Spreadsheet; is: boolean };
  /** The user's property store, asked for once. */
  userStore?: { of: object; store: Properties };
  /** How the add-on was installed. */
  installMode?: InstallMode;
  /** Digests made in this execution (digestOf). */
  digests: Map<string, string>;
  /** Google's daily quota that refused this execution a call, if one did (noteDailyLimit). */
  dailyLimit?: { of: object; limit: DailyLimit };
  /** Told the first refusal of this execution at once (a custom function notes it for the cells beside it). */
  tellDailyLimit?: (limit: DailyLimit) => void;
  /** Each spreadsheet's id, asked once (idOf; an id never changes, and each ask is a service call). */
  ids: WeakMap<object, string>;
  /** The user's cache, asked once an execution. */
  userCacheHandle?: { of: object; cache: Cache };
  /** The document's cache and lock, asked once for the spreadsheet they were asked in. */
  documentHandles?: {
    of: Spreadsheet | undefined;
    via: Array<object | undefined>;
    cache?: Cache | null;
    lock?: Lock | null;
  };
  /** The user's lock, asked once. */
  userLockHandle?: { of: object; lock: Lock };
  /** storage.ts's tier. */
  storage: StorageTier;
  /** The retention read once per spreadsheet (account.ts). */
  retention: Map<string, number>;
  /** The result index of the rows this execution knows (results.ts). */
  resultIndexes: WeakMap<object, unknown>;
  /** The hidden sheets' handles and the log's rows, per spreadsheet (store-sheet.ts). */
  sheets: Map<string, KnownSheets>;
  /** Records fetched in this execution, by service and domain (results.ts). */
  fetchedHere: Map<string, DomainRecord>;
  /** Spreadsheets whose log this execution weighed for compaction (results.ts). */
  weighed: Set<string>;
  /** The look at the version slots each formula cell was seen in (checks/formulas.ts). */
  formulaLooks: WeakMap<object, unknown>;
  /** Document cache entries read ahead in one call, each served once (storage.ts). */
  documentAhead: Map<string, string | null>;
}

function blankSession(): StoreSession {
  return {
    digests: new Map(),
    ids: new WeakMap(),
    storage: { held: { user: false, document: false } },
    retention: new Map(),
    resultIndexes: new WeakMap(),
    sheets: new Map(),
    fetchedHere: new Map(),
    weighed: new Set(),
    formulaLooks: new WeakMap(),
    documentAhead: new Map(),
  };
}

/** The execution's session (Apps Script loads the bundle afresh for every execution: one session an execution). */
let current: StoreSession = blankSession();

// ---- each tier to its one owner -----------------------------------------------------------------------------

/** storage.ts's tier: the user's properties as last read, the lock deadline, the locks held. */
export const storageTier = (): StorageTier => current.storage;
/** account.ts's tier: the retention read once per spreadsheet. */
export const retentionTier = (): Map<string, number> => current.retention;
/** results.ts's tier: the result index of the rows this execution knows. */
export const resultIndexTier = (): WeakMap<object, unknown> => current.resultIndexes;
/** store-sheet.ts's tier: the hidden sheets' handles and the log's rows, per spreadsheet. */
export const sheetsTier = (): Map<string, KnownSheets> => current.sheets;
/** results.ts's tier: records fetched in this execution, by service and domain. */
export const fetchedHereTier = (): Map<string, DomainRecord> => current.fetchedHere;
/** results.ts's tier: the spreadsheets whose log this execution weighed. */
export const weighedTier = (): Set<string> => current.weighed;
/** checks/formulas.ts's tier: the look at the version slots each formula cell was seen in. */
export const formulaLooksTier = (): WeakMap<object, unknown> => current.formulaLooks;
/** storage.ts's tier: the document cache's entries read ahead. */
export const documentAheadTier = (): Map<string, string | null> => current.documentAhead;

/** Forgets everything this execution knew: a new execution (tests start one per case). */
export function freshSession(): void {
  current = blankSession();
}

// ---- where the execution works ------------------------------------------------------------------------------

/**
 * The spreadsheet this execution works on: the one the background dispatcher opened by id (a published add-on's
 * time-driven trigger has no active spreadsheet), else the active one; null when there is none.
 */
export function currentSpreadsheet(): Spreadsheet | null {
  return current.opened ?? activeOfExecution();
}

/** The execution's own active spreadsheet (null: none, as in an add-on's time-driven trigger), asked once. */
function activeOfExecution(): Spreadsheet | null {
  if (current.active?.via !== SpreadsheetApp)
    current.active = { via: SpreadsheetApp, sheet: SpreadsheetApp.getActiveSpreadsheet() ?? null };
  return current.active.sheet;
}

/** The spreadsheet the user works in (menu, sidebar, edit trigger), or a clear error where there is none. */
export function activeSpreadsheet(): Spreadsheet {
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) throw new Error(NO_SPREADSHEET);
  return spreadsheet;
}

/** Runs `action` with `spreadsheet` as the current one (the dispatcher's turn in a spreadsheet it opened by id). */
export function inSpreadsheet<T>(spreadsheet: Spreadsheet, action: () => T): T {
  const before = current.opened;
  current.opened = spreadsheet;
  try {
    return action();
  } finally {
    current.opened = before;
  }
}

/** A spreadsheet's id, asked of Google once an execution (each background step needs it in a dozen places). */
export function idOf(spreadsheet: Spreadsheet): string {
  let id = current.ids.get(spreadsheet);
  if (id === undefined) current.ids.set(spreadsheet, (id = spreadsheet.getId()));
  return id;
}

/** The id of a spreadsheet when there is one (asked once, as idOf). */
export function idOrUndefined(spreadsheet: Spreadsheet | null | undefined): string | undefined {
  return spreadsheet ? idOf(spreadsheet) : undefined;
}

/** Whether the current spreadsheet is this execution's own document (not one the dispatcher opened by id). */
function isOwnDocument(): boolean {
  const { opened, own } = current;
  if (!opened) return true;
  if (own?.sheet === opened) return own.is;
  let is = false;
  try {
    const active = activeOfExecution();
    is = !!active && idOf(active) === idOf(opened);
  } catch {
    // no document of its own
  }
  current.own = { sheet: opened, is };
  return is;
}

/** The user's own store (API key, base URL, learned plan limits, the job, the credits), asked for once. */
export function userProperties(): Properties {
  if (current.userStore?.of !== PropertiesService)
    current.userStore = {
      of: PropertiesService,
      store: notingLimits(googleUserProperties(), noteDailyLimit),
    };
  return current.userStore.store;
}

/** The execution's document's store (DocumentProperties), when the current spreadsheet is that document. */
export function documentProperties(): Properties | null {
  const store = isOwnDocument() ? googleDocumentProperties() : null;
  return store ? notingLimits(store, noteDailyLimit) : null;
}

// ---- Google's daily quotas ----------------------------------------------------------------------------------

/** Notes a refusal by one of Google's daily quotas met in this execution (other errors are ignored); answers which. */
export function noteDailyLimit(error: unknown): DailyLimit | undefined {
  const limit = dailyLimitOf(error);
  if (!limit) return undefined;
  const first = current.dailyLimit?.of !== PropertiesService;
  current.dailyLimit = { of: PropertiesService, limit };
  if (first) current.tellDailyLimit?.(limit);
  return limit;
}

/**
 * Who is told this execution's first refusal for the day the moment a store call meets it, even where the caller goes
 * on without the value (undefined: nobody).
 */
export function tellDailyLimitTo(listener: ((limit: DailyLimit) => void) | undefined): void {
  current.tellDailyLimit = listener;
}

/** The daily quota Google refused this execution a call with (undefined: none so far). */
export function dailyLimitMet(): DailyLimit | undefined {
  return current.dailyLimit?.of === PropertiesService ? current.dailyLimit.limit : undefined;
}

/**
 * A menu item or sidebar call whose refusal by one of Google's daily quotas reaches the user in the project's words
 * (what is used up, and that DAPA goes on by itself after Google's reset), never in Google's; other errors pass as
 * they are.
 */
export function inOurWords<A extends unknown[], R>(call: (...args: A) => R): (...args: A) => R {
  return (...args: A): R => {
    let limit: DailyLimit | undefined;
    try {
      return call(...args);
    } catch (error) {
      limit = noteDailyLimit(error);
      if (!limit) throw error;
    }
    throw new DailyLimitError(limit);
  };
}

/**
 * The document's own cache, when this execution runs in the document (null in a standalone trigger, and when the
 * dispatcher works in a spreadsheet it opened by id: that one is not the execution's document).
 */
export function documentCache(): Cache | null {
  const handles = documentHandles();
  if (handles.cache === undefined) handles.cache = isOwnDocument() ? googleDocumentCache() : null;
  return handles.cache;
}

/** The lock of the current spreadsheet's state, null where there is none (storage.ts takes it). */
export function documentLock(): Lock | null {
  const handles = documentHandles();
  if (handles.lock === undefined) handles.lock = isOwnDocument() ? googleDocumentLock() : null;
  return handles.lock;
}

/** The document's handles asked in this execution for the spreadsheet it works in now (asked again on a change). */
function documentHandles(): NonNullable<StoreSession['documentHandles']> {
  const via = [services().CacheService, services().LockService];
  const handles = current.documentHandles;
  if (!handles || handles.of !== current.opened || handles.via.some((v, i) => v !== via[i]))
    current.documentHandles = { of: current.opened, via };
  return current.documentHandles as NonNullable<StoreSession['documentHandles']>;
}

/** Google's services as the execution has them (a unit test may have only some). */
function services(): Record<string, object | undefined> {
  return globalThis as unknown as Record<string, object | undefined>;
}

/** The user's cache, asked once an execution (each ask is a service call). */
export function userCache(): Cache {
  if (current.userCacheHandle?.of !== CacheService)
    current.userCacheHandle = { of: CacheService, cache: googleUserCache() };
  return current.userCacheHandle.cache;
}

/** The lock of the user's state, asked once an execution (storage.ts takes it). */
export function userLock(): Lock {
  if (current.userLockHandle?.of !== LockService)
    current.userLockHandle = { of: LockService, lock: googleUserLock() };
  return current.userLockHandle.lock;
}

/** How the add-on was installed: an Editor add-on (Marketplace or test deployment) or a bound script. */
export function installMode(): InstallMode {
  return (current.installMode ??= googleInstallMode());
}

/** How the script is installed, as a copy the execution read says (the same for every execution of the script). */
export function knownInstallMode(mode: InstallMode): void {
  current.installMode ??= mode;
}

// ---- digests ------------------------------------------------------------------------------------------------

/** A digest of a text (web-safe base64, 44 characters), made once an execution (each costs two service calls). */
export function digestOf(text: string): string {
  let digest = current.digests.get(text);
  if (digest === undefined) current.digests.set(text, (digest = sha256(text)));
  return digest;
}

/** A digest made once an execution under `name` by `make` (the keyed digests of account.ts: service calls too). */
export function rememberedDigest(name: string, make: () => string): string {
  let digest = current.digests.get(name);
  if (digest === undefined) current.digests.set(name, (digest = make()));
  return digest;
}

/**
 * The digest every cache key is derived from (the record caches, the formulas' queue, the credit lists): the one
 * place that decides how a cache key hides what it is made of.
 */
export function cacheKeyDigest(text: string): string {
  return digestOf(text);
}

export type { Cache, Lock, Properties, Spreadsheet };
