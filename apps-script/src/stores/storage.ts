// Google's stores a script keeps values in, owned here alone behind named operations: properties and developer
// metadata (under the one lock policy), and the user's and the document's caches; with the size and shape checks every
// stored value passes (UTF-8 bytes, plain records). Each section below says its part.
// Over 300 lines: the one lock policy (its order, its deadline, a custom function's waits) and every read and write it
// guards sit together, with the caches beside them.
import {
  columnLetter,
  type DailyLimit,
  DailyLimitError,
  type Lock,
  now,
  type Properties,
  type Spreadsheet,
} from '../platform/gas';
import { OUTPUT_MARK } from './storage-keys';
import {
  currentSpreadsheet,
  documentAheadTier,
  documentCache,
  documentLock,
  documentProperties,
  storageTier,
  userCache,
  userLock,
  userProperties,
} from './session';

// ─── storage ───────────────────────────────────────────────────────────────────────────────────────────────────────
// The one storage layer of the Sheets shell: values kept in the user's properties or in the spreadsheet's own
// developer metadata (keys in storage-keys.ts), JSON read through a validating parse, and one lock policy for every
// read-modify-write. The spreadsheet's values live in its developer metadata, not in DocumentProperties: a published
// add-on's time-driven trigger has no document, and its dispatcher reaches a spreadsheet only by opening it by id.
// The one owner of DAPA's developer metadata: the spreadsheet's values, the output columns' marks, their removal.
// Over 300 lines: the one lock policy (its order, its deadline, and a custom function's waits that end at a refusal
// for the day met elsewhere) sits with the reads and writes it guards, and all of the metadata with its one owner.
/** Whose values: the user's own (key, settings, job, plan, background) or the spreadsheet's (everyone's). */
export type Scope = 'user' | 'document';

/** Turns stored JSON (anything, maybe damaged or of an older shape) into a valid value, or undefined. */
export type Parse<T> = (raw: unknown) => T | undefined;

/**
 * The lock policy (apps-script/CONCURRENCY.md has the whole table): a read-modify-write takes the lock of the state it
 * changes, never the script lock (in a published add-on that one is every user's, in every spreadsheet): one user's
 * state (their properties) the user lock, one spreadsheet's state the document lock. It re-reads what it changes under
 * it, waits for it at most this long (sections hold it for milliseconds), and otherwise throws BUSY. What only saves
 * work (learned limits, a count) is written by callers that catch; what the user asked for says to try again. Nothing
 * holds a lock across a request or a sleep: a background step claims a spreadsheet with a lease (store-sheet.ts).
 */
export const LOCK_WAIT_MS = 10_000;
export const BUSY = 'Another DAPA step is saving its state; try again in a few seconds.';

/** The visibility of the add-on's developer metadata: only this project sees it (when the enum is there). */
function projectOnly(): GoogleAppsScript.Spreadsheet.DeveloperMetadataVisibility | undefined {
  try {
    return SpreadsheetApp.DeveloperMetadataVisibility?.PROJECT;
  } catch {
    return undefined;
  }
}

/** Marks (in developer metadata) a spreadsheet whose DocumentProperties hold nothing of an earlier version. */
const LEGACY_MOVED = 'dapa.legacyMoved';

/**
 * The current spreadsheet's values as a property store: one developer metadata entry per key. Values stored in
 * DocumentProperties by earlier versions are read when the spreadsheet has none of its own, and moved on write; once
 * none is left there the spreadsheet is marked (LEGACY_MOVED) and the old store is not asked again.
 */
function spreadsheetStore(): Properties {
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) throw new Error('There is no spreadsheet here to keep DAPA settings in.');
  const all = () => spreadsheet.getDeveloperMetadata();
  const add = (key: string, value: string) => {
    const visibility = projectOnly();
    if (visibility) spreadsheet.addDeveloperMetadata(key, value, visibility);
    else spreadsheet.addDeveloperMetadata(key, value);
  };
  /** The earlier versions' store while it may hold something (`listed`: the spreadsheet's entries just read). */
  const legacy = (listed: ReturnType<typeof all>): Properties | undefined => {
    if (listed.some((m) => m.getKey() === LEGACY_MOVED)) return undefined;
    try {
      const props = documentProperties() ?? undefined;
      if (!props || props.getKeys().some((key) => key.startsWith('dapa.'))) return props;
    } catch {
      return undefined;
    }
    try {
      add(LEGACY_MOVED, '1');
    } catch {
      // asked again next time
    }
    return undefined;
  };
  const store = {
    getProperty: (key: string) => {
      const listed = all();
      const own = listed.find((m) => m.getKey() === key);
      return own ? own.getValue() : (legacy(listed)?.getProperty(key) ?? null);
    },
    setProperty: (key: string, value: string) => {
      const listed = all();
      const [first, ...extra] = listed.filter((m) => m.getKey() === key);
      if (first) first.setValue(value);
      else add(key, value);
      for (const m of extra) m.remove();
      legacy(listed)?.deleteProperty(key);
      return store;
    },
    setProperties: (values: Record<string, string>) => {
      for (const [key, value] of Object.entries(values)) store.setProperty(key, value);
      return store;
    },
    deleteProperty: (key: string) => {
      const listed = all();
      for (const m of listed) if (m.getKey() === key) m.remove();
      legacy(listed)?.deleteProperty(key);
      return store;
    },
    getKeys: () => [
      ...new Set(
        all()
          .map((m) => m.getKey())
          .filter((key) => key.startsWith('dapa.') && key !== LEGACY_MOVED),
      ),
    ],
  };
  return store as unknown as Properties;
}

/**
 * The user's properties as this execution read them last: one getProperties call instead of one call a key (Google
 * counts every call against 50,000 a day, and 5,000 =DAPA cells are 5,000 executions). Read again after SNAPSHOT_MS
 * (another execution may have changed them: a Cancel, a new key) and whenever the user lock is taken, so every
 * read-modify-write reads what it changes under its lock. Writes go through and into the snapshot.
 */
const SNAPSHOT_MS = 5_000;

function userValues(): { props: Properties; values: Map<string, string> } {
  const props = userProperties();
  const at = now();
  const tiers = storageTier();
  const snapshot = tiers.userSnapshot;
  if (snapshot?.of !== props || at - snapshot.at > SNAPSHOT_MS || at < snapshot.at)
    tiers.userSnapshot = {
      of: props,
      at,
      values: new Map(Object.entries(props.getProperties() ?? {})),
      underLock: tiers.held.user,
    };
  return { props, values: (tiers.userSnapshot as { values: Map<string, string> }).values };
}

/** The user's store, read through the snapshot. */
function userStore(): Properties {
  const store = {
    getProperty: (key: string) => userValues().values.get(key) ?? null,
    setProperty: (key: string, value: string) => store.setProperties({ [key]: value }),
    setProperties: (values: Record<string, string>) => {
      const { props, values: known } = userValues();
      props.setProperties(values);
      for (const [key, value] of Object.entries(values)) known.set(key, value);
      return store;
    },
    deleteProperty: (key: string) => {
      const { props, values } = userValues();
      props.deleteProperty(key);
      values.delete(key);
      return store;
    },
    getKeys: () => {
      // A listing (the dispatcher's, a deletion by prefix) reads what is there now, unless the values were read under
      // the user lock this execution still holds (the section began with that read, milliseconds ago, and the keys
      // listed, the spreadsheets' dapa.bg.*, are written only under that lock).
      const tiers = storageTier();
      if (!(tiers.held.user && tiers.userSnapshot?.underLock)) tiers.userSnapshot = undefined;
      return [...userValues().values.keys()];
    },
  };
  return store as unknown as Properties;
}

function properties(scope: Scope): Properties {
  return scope === 'user' ? userStore() : spreadsheetStore();
}

/** The keys of the user's properties (the dispatcher's list of spreadsheets is a prefix of them). */
export function userKeys(): string[] {
  return properties('user').getKeys();
}

/** A stored text (settings, the key), or undefined. */
export function readText(scope: Scope, key: string): string | undefined {
  return properties(scope).getProperty(key) ?? undefined;
}

/** Writes texts at once; undefined deletes the key. */
export function writeTexts(scope: Scope, values: Record<string, string | undefined>): void {
  const props = properties(scope);
  const set: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) props.deleteProperty(key);
    else set[key] = value;
  }
  if (Object.keys(set).length > 0) props.setProperties(set);
}

/** PropertiesService keeps at most 9 KB a value (UTF-8 bytes): longer JSON is kept in parts ("#n", then key#0...). */
const PART_BYTES = 8_000;

function partsOf(head: string | undefined): number {
  return Number(/^#(\d+)$/.exec(head ?? '')?.[1] ?? 0);
}

/** A stored JSON value as `parse` accepts it; a missing, unreadable or invalid one is undefined. */
export function readValue<T>(scope: Scope, key: string, parse: Parse<T>): T | undefined {
  let text = readText(scope, key);
  const parts = partsOf(text);
  if (parts > 0) text = Array.from({ length: parts }, (_, i) => readText(scope, `${key}#${i}`)).join('');
  if (!text) return undefined;
  try {
    return parse(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** Stores a value as JSON (in parts when long); undefined deletes it. */
export function writeValue(scope: Scope, key: string, value: unknown): void {
  const text = value === undefined ? '' : JSON.stringify(value);
  const values: Record<string, string | undefined> = {};
  for (let i = partsOf(readText(scope, key)); i-- > 0;) values[`${key}#${i}`] = undefined;
  const pieces = utf8Bytes(text) > PART_BYTES ? byteParts(text, PART_BYTES) : [];
  pieces.forEach((piece, i) => (values[`${key}#${i}`] = piece));
  values[key] = pieces.length > 0 ? `#${pieces.length}` : text || undefined;
  writeTexts(scope, values);
}

/** Deletes every key of a scope that starts with `prefix`. */
export function deleteKeys(scope: Scope, prefix: string): void {
  const props = properties(scope);
  for (const key of props.getKeys()) if (key.startsWith(prefix)) props.deleteProperty(key);
}

/** Forgets what earlier versions kept in DocumentProperties; answers how many. */
function forgetLegacyValues(): number {
  const legacy = documentProperties();
  const keys = (legacy?.getKeys() ?? []).filter((key) => key.startsWith('dapa.'));
  for (const key of keys) legacy?.deleteProperty(key);
  return keys.length;
}

/**
 * "Remove DAPA from this spreadsheet": every developer metadata entry of DAPA's, on the spreadsheet or any column
 * (keys "dapa." and "dapa-": its values, the output columns' marks), and what earlier versions kept in
 * DocumentProperties; a user's own entries stay. Answers how many went.
 */
export function forgetAllMetadata(spreadsheet: Spreadsheet): number {
  let count = forgetLegacyValues();
  for (const m of spreadsheet.createDeveloperMetadataFinder().find())
    if (/^dapa[.-]/.test(m.getKey())) {
      m.remove();
      count += 1;
    }
  return count;
}

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;

/** A whole column of a sheet: its metadata moves with it when columns are inserted or deleted, and stays through sorts. */
function wholeColumn(sheet: Sheet, column: number): GoogleAppsScript.Spreadsheet.Range {
  const letter = columnLetter(column);
  return sheet.getRange(`${letter}:${letter}`);
}

/** Our output marks (OUTPUT_MARK) on a whole column. */
function marksOn(
  range: GoogleAppsScript.Spreadsheet.Range,
): GoogleAppsScript.Spreadsheet.DeveloperMetadata[] {
  return range.getDeveloperMetadata().filter((m) => m.getKey() === OUTPUT_MARK);
}

/** The values of our output marks on one whole column of a sheet (what they mean: job-run.ts). */
export function readColumnMarks(sheet: Sheet, column: number): string[] {
  return marksOn(wholeColumn(sheet, column)).map((m) => `${m.getValue()}`);
}

/** Marks a whole column with `value` under OUTPUT_MARK, visible to this project only, in place of its earlier mark. */
export function markColumn(sheet: Sheet, column: number, value: string): void {
  const range = wholeColumn(sheet, column);
  for (const m of marksOn(range)) m.remove();
  range.addDeveloperMetadata(OUTPUT_MARK, value, SpreadsheetApp.DeveloperMetadataVisibility.PROJECT);
}

/**
 * An execution with a hard end (a custom function: 30 seconds, waits included) waits for the lock only until
 * `by`; past it, a section that needs the lock is given up at once (BUSY) instead of being killed inside the wait.
 * undefined: the ordinary policy. Set at the start of such an execution and cleared at its end.
 */
export function lockWaitsEndBy(by: number | undefined, giveUp?: () => DailyLimit | undefined): void {
  storageTier().waitsEndBy = by;
  storageTier().waitsGiveUp = giveUp;
}

/** Waits for `lock` up to `wait` ms; with `giveUp`, in half-second tries that end at a refusal met elsewhere. */
function waitFor(lock: Lock, wait: number, giveUp: (() => DailyLimit | undefined) | undefined): boolean {
  if (!giveUp) return lock.tryLock(wait);
  for (const end = now() + wait; ;) {
    const limit = giveUp();
    if (limit) throw new DailyLimitError(limit);
    if (lock.tryLock(Math.max(0, Math.min(500, end - now())))) return true;
    if (now() >= end) return false;
  }
}

/**
 * Runs `action` with lock waits of at most `ms` (a =DAPA cell's ask: it answers at once rather than queue behind the
 * cells asking beside it, whose sender sends for it anyway).
 */
export function withLockWaitsUpTo<T>(ms: number, action: () => T): T {
  const tiers = storageTier();
  const before = tiers.waitsEndBy;
  tiers.waitsEndBy = Math.min(before ?? Infinity, now() + ms);
  try {
    return action();
  } finally {
    tiers.waitsEndBy = before;
  }
}

/** Whose state a section changes: one user's (the user lock) or the current spreadsheet's (the document lock). */
export type Guard = Scope;

/**
 * The lock that guards `guard`'s state here. A spreadsheet without a document lock (the published add-on's dispatcher
 * works in spreadsheets it opened by id) gets the user lock: what the dispatcher writes there is either its user's
 * own (one dispatcher per user) or written so that writers under different locks cannot lose it (appended rows,
 * claims; CONCURRENCY.md).
 */
function lockOf(guard: Guard): { lock: Lock; ofUser: boolean } {
  const document = guard === 'document' ? documentLock() : null;
  return document ? { lock: document, ofUser: false } : { lock: userLock(), ofUser: true };
}

/** Said (in the execution log) when a section would take the user lock inside the document's: a bug, never a user's. */
export const LOCK_ORDER = 'DAPA: the user lock is taken before the document lock, never inside it.';

/**
 * Runs `action` under the lock of `guard` (see the policy above). Nested calls on the same lock run inside the outer
 * hold (Apps Script's lock is one per execution: an inner release would free the outer section). The one lock order,
 * enforced here for every section of every store: the user lock, then the document lock; asking for the user lock
 * while holding only the document's throws (two executions taking them in opposite orders would wait for each other).
 * Private to apps-script/src/stores (the architecture test holds every other folder to that).
 */
export function locked<T>(guard: Guard, action: () => T): T {
  const { lock, ofUser } = lockOf(guard);
  const tiers = storageTier();
  const kind = ofUser ? 'user' : 'document'; // only this function takes and returns locks: no hasLock() to ask
  if (tiers.held[kind]) return action();
  if (guard === 'user' && tiers.held.document) throw new Error(LOCK_ORDER);
  const { waitsEndBy } = tiers;
  const wait =
    waitsEndBy === undefined ? LOCK_WAIT_MS : Math.min(LOCK_WAIT_MS, Math.floor(waitsEndBy - now()));
  if (wait < 0 || !waitFor(lock, wait, tiers.waitsGiveUp)) throw new Error(BUSY);
  tiers.held[kind] = true;
  if (ofUser) tiers.userSnapshot = undefined; // the user's values are read again under their lock
  try {
    return action();
  } finally {
    tiers.held[kind] = false;
    lock.releaseLock();
  }
}

/** Reads a value, lets `change` return its next state (undefined deletes it), stores and answers it, under the lock. */
export function updateValue<T>(
  scope: Scope,
  key: string,
  parse: Parse<T>,
  change: (current: T | undefined) => T | undefined,
): T | undefined {
  return locked(scope, () => {
    const next = change(readValue(scope, key, parse));
    writeValue(scope, key, next);
    return next;
  });
}

// ─── byte size ─────────────────────────────────────────────────────────────────────────────────────────────────────
// Sizes as Google's caps count them: UTF-8 bytes (9 KB a property value, 100 KB a cache value), not characters; a
// name with accents takes more bytes than characters. Pure code (Apps Script has no TextEncoder).
/** The UTF-8 bytes of a text (Apps Script has no TextEncoder): what Google's caps on values count. */
export function utf8Bytes(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? (i++, 4) : 3;
  }
  return n;
}

/** A text cut into pieces of at most `maxBytes` UTF-8 bytes each, never inside a character. */
export function byteParts(text: string, maxBytes: number): string[] {
  const parts: string[] = [];
  let [start, bytes] = [0, 0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c < 0xdc00;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > maxBytes) [parts[parts.length], start, bytes] = [text.slice(start, i), i, 0];
    bytes += size;
    if (pair) i++;
  }
  if (start < text.length) parts.push(text.slice(start));
  return parts;
}

// ─── validate ──────────────────────────────────────────────────────────────────────────────────────────────────────
// Small validators for the parse functions of stored values (storage.ts re-exports them): no I/O.
/** A plain object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A finite number, or undefined. */
export function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

// ─── caches ────────────────────────────────────────────────────────────────────────────────────────────────────────
// The two caches DAPA keeps entries in, owned here alone: the document's (CacheService's cache of the spreadsheet:
// shared by everyone in it, custom functions included, with no daily quota) and the user's (one per user of the script:
// a published add-on's records across the user's spreadsheets, and the background's marks). Every entry is read and
// written through these operations, by the module that decides what the entry holds: the formulas' queue
// (books.ts), the credit lists formulas could not write to the ledger (account.ts), the copies of the
// retention (account.ts), of the owner's settings (account.ts) and of the background's state and marks
// (background-store.ts), and the records (results.ts). There is no document cache outside the document's own
// executions (a standalone trigger, a spreadsheet the dispatcher opened by id: session.ts tells which); then reads find
// nothing and writes are left out. The user's cache may be refused (a custom function): its operations then throw.
/** Which cache: the document's or the user's. */
export type CacheName = 'document' | 'user';

/** Whether this execution has the document's cache (it runs in the document). */
export function documentCacheHere(): boolean {
  return documentCache() !== null;
}

/** Whether this execution has that cache (the user's may be refused a custom function: never throws). */
export function cacheHere(name: CacheName): boolean {
  if (name === 'document') return documentCacheHere();
  try {
    return userCache() !== null;
  } catch {
    return false;
  }
}

/** An entry's text in the document's cache (null: none, or no cache here); one read ahead is served once. */
export function readEntry(key: string): string | null {
  const ahead = documentAheadTier();
  if (ahead.has(key)) {
    const text = ahead.get(key) ?? null;
    ahead.delete(key);
    return text;
  }
  return documentCache()?.get(key) ?? null;
}

/**
 * Reads these entries of the document's cache in one call (a =DAPA execution's copies: the owner's settings, the
 * retention, whether background checks go on), each served once to the first readEntry of its key in this execution.
 */
export function readAhead(keys: readonly string[]): void {
  const cache = documentCache();
  if (!cache || keys.length === 0) return;
  const values = cache.getAll([...keys]);
  const ahead = documentAheadTier();
  for (const key of keys) ahead.set(key, values[key] ?? null);
}

/**
 * Keeps an entry's text in the document's cache for `seconds` (undefined: the entry goes); with `why`, throws `why`
 * where there is no cache.
 */
export function keepEntry(key: string, text: string | undefined, seconds: number, why?: string): void {
  const cache = documentCache();
  if (!cache && why) throw new Error(why);
  if (text === undefined) cache?.remove(key);
  else cache?.put(key, text, seconds);
}

/** The cache itself where this execution has it (null: none here; the user's may throw). */
function cacheOf(name: CacheName): GoogleAppsScript.Cache.Cache | null {
  return name === 'document' ? documentCache() : userCache();
}

/** These entries' texts, in one call per cache read (an entry not there is left out; no cache here: none). */
export function readEntries(name: CacheName, keys: readonly string[]): Record<string, string> {
  return (cacheOf(name)?.getAll([...keys]) ?? {}) as Record<string, string>;
}

/** Keeps these entries for `seconds`, in one call (no cache here: left out). */
export function keepEntries(name: CacheName, values: Record<string, string>, seconds: number): void {
  if (Object.keys(values).length === 0) return;
  cacheOf(name)?.putAll(values, seconds);
}

/** Drops these entries, in one call. */
export function dropEntries(name: CacheName, keys: readonly string[]): void {
  cacheOf(name)?.removeAll([...keys]);
}

// ─── place digits ──────────────────────────────────────────────────────────────────────────────────────────────────
// Sets of places (small whole numbers: a result's place in a store row, a row of a job's range) as the short strings
// kept in the user's properties: one base-32 digit ('0'-'9', 'a'-'v') holds five places, place p being bit p % 5 of
// digit p / 5; trailing places set nothing. The one format of the saved-credit marks and the job's retry rows.
const DIGITS = '0123456789abcdefghijklmnopqrstuv';

/** The places `digits` holds (a character that is not a digit holds none). */
export function placesIn(digits: string): Set<number> {
  const places = new Set<number>();
  for (let i = 0; i < digits.length; i++)
    for (let d = DIGITS.indexOf(digits[i]), b = 0; d > 0; d >>= 1, b++) if (d & 1) places.add(i * 5 + b);
  return places;
}

/** The digits that hold `places` ('' for none). */
export function digitsOf(places: Iterable<number>): string {
  const digits: number[] = [];
  for (const p of places) digits[Math.floor(p / 5)] = (digits[Math.floor(p / 5)] ?? 0) | (1 << (p % 5));
  return Array.from(digits, (d) => DIGITS[d ?? 0]).join('');
}
