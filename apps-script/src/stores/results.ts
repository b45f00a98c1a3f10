// Results, in one module: the 6-hour caches, the durable result store (the hidden sheet's log) and its rows, what a
// check already knows before it sends, the credits kept results saved, and the store's upkeep (compaction and
// retention). Each section below says its part.
// Over 300 lines: every read and write of a result and of the rows that keep it, so a result is kept in one place.
import {
  cacheHere,
  type CacheName,
  deleteKeys,
  digitsOf,
  finite,
  isRecord,
  keepEntries,
  placesIn,
  readEntries,
  readValue,
  updateValue,
  utf8Bytes,
} from './storage';
import type { DomainRecord } from '../../../shared';
import { now, type Spreadsheet } from '../platform/gas';
import {
  cacheKeyDigest,
  currentSpreadsheet,
  digestOf,
  fetchedHereTier,
  idOf,
  installMode,
  resultIndexTier,
  weighedTier,
} from './session';
import { CACHE_PREFIX, CACHE_SECONDS, DOCUMENT_PROPERTY, USER_PROPERTY } from './storage-keys';
import { DAY_MS, retentionDays } from './account';
import {
  appendStore,
  claimRow,
  compactLog,
  deadClaimRows,
  readStore,
  returnStepLease,
  STEP_CLAIM,
  storeRows,
  takeStepLease,
  walkClaims,
  weighLog,
} from './store-sheet';

// ─── result cache ──────────────────────────────────────────────────────────────────────────────────────────────────
// Fetched records cached for 6 hours, one entry per domain: a recalculation, a reopened sheet or the same domain in
// another formula costs no request. Only records are cached, never a skip or an error. Two caches hold them (see
// shelves()): the document's own, and a published add-on's user cache (the same domain in the user's other
// spreadsheets, and what the dispatcher, which has no document, reads of what the user's formulas fetched). Never the
// script cache: in a published add-on every user of the add-on writes it, and its 1,000 items turn over in seconds.
// Records fetched in this execution are remembered too. What must outlive a cache is kept in the result store.
/** CacheService takes a limited batch comfortably; larger lists are split. */
const BATCH = 500;
/** A cache value holds at most 100 KB (UTF-8 bytes); a record is ~100 bytes, so only a freak answer comes near. */
const MAX_VALUE_BYTES = 96 * 1024;

/** The cache key of a domain at a service: never the API key. */
export function cacheKeyOf(baseUrl: string, domainKey: string): string {
  // The domain as it is behind the service's short id: no digest per domain (two service calls each, and a sender
  // looks up hundreds a round); a key too long for the cache's 250 characters is hashed instead.
  const plain = `${CACHE_PREFIX}${cacheKeyDigest(baseUrl).slice(0, 12)}:${domainKey}`;
  return plain.length <= MAX_KEY_CHARS ? plain : CACHE_PREFIX + cacheKeyDigest(baseUrl + '\n' + domainKey);
}

/** CacheService takes keys of up to 250 characters. */
const MAX_KEY_CHARS = 240;

/**
 * The caches this execution reads and writes records in (storage.ts): the document's own cache in the document's
 * executions, and a published add-on's user cache in every execution (the dispatcher has no document cache; a bound
 * script lives in one spreadsheet, where the user's cache would only repeat the document's).
 */
function shelves(): CacheName[] {
  const found: CacheName[] = [];
  if (cacheHere('document')) found.push('document');
  try {
    if (installMode() === 'addon' && cacheHere('user')) found.push('user');
  } catch {
    // no install mode to ask: the document's cache alone
  }
  return found;
}

/** Records fetched in this execution (service + domain key): a dispatcher turn in another spreadsheet reuses them. */
function fetchedHere(): Map<string, DomainRecord> {
  return fetchedHereTier();
}

/** What a cache entry holds: the record and when it was fetched (ms), so its 6 hours never stretch. */
export interface CachedRecord extends DomainRecord {
  fetchedAt: number;
}

function parseRecord(text: string | undefined): CachedRecord | undefined {
  if (!text) return undefined;
  try {
    return cachedRecordOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** A cached record read back (from a cache entry, or as the spreadsheet's DAPA_CACHE cell relayed it); else undefined. */
export function cachedRecordOf(value: unknown): CachedRecord | undefined {
  const r = (value ?? {}) as Partial<CachedRecord>;
  const metric = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  if (typeof r.domain !== 'string' || typeof r.fetchedAt !== 'number') return undefined;
  const record: CachedRecord = {
    domain: r.domain,
    site_da: metric(r.site_da),
    site_pa: metric(r.site_pa),
    site_mr: metric(r.site_mr),
    spam_score: metric(r.spam_score),
    fetchedAt: r.fetchedAt,
  };
  // Metrics the service marked "no data" stay null (a blank cell), never a number.
  if (Array.isArray(r.noData) && r.noData.length > 0) record.noData = r.noData;
  return record;
}

/**
 * The cached records among these domain keys. The records found are put back with the rest of their 6 hours:
 * CacheService keeps about 1,000 items and drops the oldest-written first, so a domain in use stays cached
 * through a long sidebar job instead of being paid for again. A =DAPA cell's look does not (`putBack` false): its cell
 * shows the record once read, and 30 cells at once would write the cache for nothing.
 */
export function readCachedRecords(
  baseUrl: string,
  domainKeys: readonly string[],
  fetchedAt?: Map<string, number>,
  putBack = true,
): Map<string, DomainRecord> {
  const found = new Map<string, DomainRecord>();
  for (const key of domainKeys) {
    const here = fetchedHere().get(baseUrl + '\n' + key);
    if (here) found.set(key, here);
    if (here) fetchedAt?.set(key, now());
  }
  for (const shelf of shelves()) {
    const missing = domainKeys.filter((k) => !found.has(k));
    if (missing.length === 0) break;
    readShelf(shelf, baseUrl, missing, found, fetchedAt, putBack);
  }
  return found;
}

function readShelf(
  shelf: CacheName,
  baseUrl: string,
  domainKeys: readonly string[],
  found: Map<string, DomainRecord>,
  fetchedAt?: Map<string, number>,
  putBack = true,
): void {
  const at = now();
  for (let i = 0; i < domainKeys.length; i += BATCH) {
    const keys = domainKeys.slice(i, i + BATCH);
    const cacheKeys = keys.map((k) => cacheKeyOf(baseUrl, k));
    const values = readEntries(shelf, cacheKeys);
    const refresh = new Map<number, Record<string, string>>();
    keys.forEach((key, j) => {
      const text = values[cacheKeys[j]];
      const cached = parseRecord(text);
      const secondsLeft = cached ? Math.floor((cached.fetchedAt + CACHE_SECONDS * 1000 - at) / 1000) : 0;
      if (!cached || secondsLeft < 1) return;
      const { fetchedAt: _fetchedAt, ...record } = cached;
      found.set(key, record);
      fetchedAt?.set(key, cached.fetchedAt);
      const group = refresh.get(secondsLeft) ?? {};
      group[cacheKeys[j]] = text as string;
      refresh.set(secondsLeft, group);
    });
    if (putBack) for (const [seconds, group] of refresh) keepEntries(shelf, group, seconds);
  }
}

/** Caches freshly fetched records for 6 hours. */
export function cacheRecords(
  baseUrl: string,
  fresh: ReadonlyArray<{ key: string; record: DomainRecord }>,
): void {
  if (fresh.length === 0) return;
  for (const { key, record } of fresh) fetchedHere().set(baseUrl + '\n' + key, record);
  const fetchedAt = now();
  let failure: unknown;
  for (const shelf of shelves()) {
    try {
      for (let i = 0; i < fresh.length; i += BATCH) {
        const values: Record<string, string> = {};
        for (const { key, record } of fresh.slice(i, i + BATCH)) {
          const text = JSON.stringify({ ...record, fetchedAt });
          if (utf8Bytes(text) <= MAX_VALUE_BYTES) values[cacheKeyOf(baseUrl, key)] = text;
        }
        keepEntries(shelf, values, CACHE_SECONDS);
      }
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure) throw failure;
}

/** Which of these domain keys are not (or no longer) cached. */
export function uncachedKeys(baseUrl: string, domainKeys: readonly string[]): string[] {
  const cached = readCachedRecords(baseUrl, domainKeys);
  return domainKeys.filter((k) => !cached.has(k));
}

// ─── result store ──────────────────────────────────────────────────────────────────────────────────────────────────
// The durable result store: results kept for the retention the user chose (30 days by default) in the hidden sheet's
// append log (store-sheet.ts). Writes append batches of results (one row holds hundreds: a 5,000-result run is a few
// dozen appendRow calls) and take no lock, so the dispatcher, which has no document lock, writes as safely as an
// editor's sidebar: appendRow is atomic and nothing is overwritten. Reads take the newest result per key and service
// from the rows read once per execution (custom functions read too; only sidebar, menu and background code write).
/** A short, stable name of the service a result came from (never the key): results of two services never mix. */
export function serviceId(baseUrl: string): string {
  // A letter first: a hash starting with "-", "=" or digits would be read by Sheets as a formula or a number.
  return 's' + digestOf(baseUrl).slice(0, 12);
}

/** Up to this many keys are looked up row by row (findResults) rather than through the whole log's index. */
const FEW_KEYS = 20;

/** The index of the rows this execution knows (the same rows object grows with its own appends). */
function index(spreadsheet: Spreadsheet): ResultIndex {
  const rows = storeRows(spreadsheet);
  const indexes = resultIndexTier() as WeakMap<object, ResultIndex>;
  let found = indexes.get(rows);
  if (!found) indexes.set(rows, (found = new ResultIndex(rows)));
  return found.catchUp();
}

/** The newest kept results among these domain keys checked no earlier than `since` (their row, place and time). */
export function storedHits(
  baseUrl: string,
  keys: readonly string[],
  since = now() - retentionDays() * DAY_MS,
): Map<string, Kept> {
  const found = new Map<string, Kept>();
  const spreadsheet = keys.length > 0 ? currentSpreadsheet() : null;
  if (!spreadsheet) return found;
  const service = serviceId(baseUrl);
  // A few keys (a =DAPA cell) where nothing indexed the log yet: only the rows that hold them are parsed.
  const rows = storeRows(spreadsheet);
  const few = keys.length <= FEW_KEYS && !resultIndexTier().has(rows);
  const hits = few ? findResults(rows, service, keys) : undefined;
  const kept = few ? undefined : index(spreadsheet);
  for (const key of keys) {
    const hit = hits ? hits.get(key) : kept?.get(service, key);
    if (hit && hit.at >= since) found.set(key, hit);
  }
  return found;
}

/** The stored results among these domain keys, checked no earlier than `since` (default: the retention). */
export function readStoredRecords(
  baseUrl: string,
  keys: readonly string[],
  since = now() - retentionDays() * DAY_MS,
  onHit?: (checkedAt: number) => void,
): Map<string, DomainRecord> {
  const found = new Map<string, DomainRecord>();
  for (const [key, hit] of storedHits(baseUrl, keys, since)) {
    found.set(key, hit.record);
    onHit?.(hit.at);
  }
  return found;
}

/** When each of these keys was last checked (only results within the retention). */
export function checkedAt(baseUrl: string, keys: readonly string[]): Map<string, number> {
  const at = new Map<string, number>();
  for (const [key, hit] of storedHits(baseUrl, keys, now() - retentionDays() * DAY_MS)) at.set(key, hit.at);
  return at;
}

/**
 * Keeps fresh results: appended in batches (no lock, nothing overwritten; the newest row wins for a key). Never
 * compacts (that is the upkeep step's: the store compaction section). Not callable from a custom function (it writes).
 */
export function storeRecords(
  baseUrl: string,
  fresh: ReadonlyArray<{ key: string; record: DomainRecord }>,
  at = now(),
): void {
  if (fresh.length === 0) return;
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) throw new Error('There is no spreadsheet here to keep results in.');
  appendStore(spreadsheet, batchRows(serviceId(baseUrl), fresh, at));
}

// ─── known results ─────────────────────────────────────────────────────────────────────────────────────────────────
// What a check already knows before it sends: the results the store keeps (within the retention, or since a time), then
// those the caches hold, and which kept ones saved a credit (reused after the cache let them go). A read of two stores'
// owners (the result store section, the result cache section) behind one operation, for every check: formulas, the
// sidebar, the background, the estimates.
/**
 * Which earlier results a check reuses: every cached and kept one, only those kept since a time (a scheduled
 * refresh; the cache is skipped), or none ("Check again").
 */
export type Reuse = { kind: 'all' } | { kind: 'since'; at: number } | { kind: 'none' };

/** What is already known before sending: kept results, cached ones, and the kept ones that saved a credit. */
export interface Known {
  known: Map<string, DomainRecord>;
  /** The records found in the cache (kept in the store too when the check keeps its results). */
  fromCache: Array<{ key: string; record: DomainRecord }>;
  /** Kept results reused after the cache had let them go (counted once per user by noteSaved). */
  saved: Kept[];
  /** Fresh records already cached as they came in. */
  handed: Set<string>;
}

/** Reads the kept, then the cached results for the distinct keys (none for "Check again"). */
export function readKnown(baseUrl: string, distinct: readonly string[], reuse: Reuse): Known {
  const kept: Known = { known: new Map(), fromCache: [], saved: [], handed: new Set() };
  if (reuse.kind === 'none' || distinct.length === 0) return kept;
  const since = reuse.kind === 'since' ? reuse.at : undefined;
  try {
    const stored = storedHits(baseUrl, distinct, since);
    for (const [k, hit] of stored) kept.known.set(k, hit.record);
    kept.saved = pastTheCache(stored.values());
  } catch {
    // An unavailable store (or its retention unreadable today) only costs requests; the cache is still read.
  }
  try {
    const rest = distinct.filter((k) => !kept.known.has(k));
    if (since === undefined && rest.length > 0)
      for (const [key, record] of readCachedRecords(baseUrl, rest)) {
        kept.known.set(key, record);
        kept.fromCache.push({ key, record });
      }
  } catch {
    // An unavailable cache only costs requests; the check goes on without it.
  }
  return kept;
}

/**
 * A =DAPA cell's look: the caches first, then the store for the keys they do not hold (a cell whose record is cached
 * reads no sheet and no retention). What the caches hold is within its 6 hours, so it is never past the cache: the
 * saved ones are among the store's hits alone, as in readKnown.
 */
export function readKnownForCells(baseUrl: string, distinct: readonly string[]): Omit<Known, 'handed'> {
  const kept: Omit<Known, 'handed'> = { known: new Map(), fromCache: [], saved: [] };
  if (distinct.length === 0) return kept;
  try {
    for (const [key, record] of readCachedRecords(baseUrl, distinct, undefined, false)) {
      kept.known.set(key, record);
      kept.fromCache.push({ key, record });
    }
  } catch {
    // An unavailable cache only costs requests.
  }
  try {
    const rest = distinct.filter((k) => !kept.known.has(k));
    const stored = rest.length > 0 ? storedHits(baseUrl, rest) : new Map<string, Kept>();
    for (const [k, hit] of stored) kept.known.set(k, hit.record);
    kept.saved = pastTheCache(stored.values());
  } catch {
    // An unavailable store only costs requests.
  }
  return kept;
}

// ─── result rows ───────────────────────────────────────────────────────────────────────────────────────────────────
// The result rows of the store's log as plain data (no service call): a batch row holds many results of one service
// checked at one time ('*' | service id | {"k":[keys],"r":[records]} | checked-at ms, at most BATCH_CHARS of JSON);
// earlier versions wrote one result a row (domain key | service id | record JSON | checked-at ms), still read. The
// newest result of a key and service wins: the later checked-at, then the later row.
/** Column A of a batch row. */
export const BATCH_MARK = '*';
/** The JSON of a batch stays under this (a cell holds at most 50,000 characters). */
export const BATCH_CHARS = 45_000;

export interface Kept {
  record: DomainRecord;
  at: number;
  /** Its row's index in the rows read (row number − 1). */
  row: number;
  /** Its row's name, the same in every execution while the row lives (batchId), its place there and the row's size. */
  batch: string;
  pos: number;
  size: number;
}

interface ResultRow {
  service: string;
  at: number;
  results: Array<[key: string, record: DomainRecord]>;
}

function isDomainRecord(value: unknown): value is DomainRecord {
  return typeof value === 'object' && value !== null && typeof (value as DomainRecord).domain === 'string';
}

/** The rows that keep these fresh results of one service checked at `at`: as few as BATCH_CHARS allows. */
export function batchRows(
  service: string,
  fresh: ReadonlyArray<{ key: string; record: DomainRecord }>,
  at: number,
): unknown[][] {
  const rows: unknown[][] = [];
  let keys: string[] = [];
  let records: string[] = [];
  let chars = 0;
  const flush = () => {
    if (keys.length > 0) rows.push([BATCH_MARK, service, `{"k":[${keys}],"r":[${records}]}`, at]);
    [keys, records, chars] = [[], [], 0];
  };
  for (const { key, record } of fresh) {
    const k = JSON.stringify(key);
    const r = JSON.stringify(record);
    if (chars + k.length + r.length + 16 > BATCH_CHARS) flush();
    keys.push(k);
    records.push(r);
    chars += k.length + r.length + 2;
  }
  flush();
  return rows;
}

/** What a row of the log holds if it is a result row (a batch or an earlier version's single result). */
export function resultRow(row: readonly unknown[]): ResultRow | undefined {
  const [a, service, payload, checked] = row;
  const at = typeof checked === 'number' ? checked : Number(checked);
  if (typeof service !== 'string' || service === '' || service.startsWith('claim:')) return undefined;
  if (checked === '' || checked === null || !Number.isFinite(at)) return undefined;
  if (a === '' || a === null || a === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(String(payload));
    if (a !== BATCH_MARK)
      return { service, at, results: isDomainRecord(parsed) ? [[String(a), parsed]] : [] };
    const { k, r } = (parsed ?? {}) as { k?: unknown; r?: unknown };
    const results: ResultRow['results'] = [];
    if (Array.isArray(k) && Array.isArray(r))
      k.forEach((key, i) => {
        if (typeof key === 'string' && isDomainRecord(r[i])) results.push([key, r[i]]);
      });
    return { service, at, results };
  } catch {
    return { service, at, results: [] };
  }
}

/**
 * A result row's name: its checked-at time and its first key (rows of one check share the time), short and stable
 * (rows are appended and deleted, never rewritten), so a mark on a result survives other rows coming and going.
 */
export function batchId(row: ResultRow): string {
  const first = row.results[0]?.[0] ?? '';
  let hash = 0x811c9dc5;
  for (let i = 0; i < first.length; i++) hash = Math.imul(hash ^ first.charCodeAt(i), 0x01000193) >>> 0;
  return `${row.at.toString(36)}.${hash.toString(36)}`;
}

/** When a batch named by batchId was checked (ms), or NaN. */
export function batchTime(id: string): number {
  return parseInt(id.split('.')[0], 36);
}

/**
 * The newest results of a few keys of one service in the rows read, without indexing the rest: a row is parsed only
 * when its text holds one of the keys (a =DAPA cell asks for one or a few; a store of 50,000 results is about 150
 * rows of 45,000 characters, which the full index would parse whole). Answers what ResultIndex.get answers.
 */
export function findResults(
  rows: readonly unknown[][],
  service: string,
  keys: readonly string[],
): Map<string, Kept> {
  const found = new Map<string, Kept>();
  const quoted = keys.map((key) => [key, JSON.stringify(key)] as const);
  rows.forEach((raw, index) => {
    if (raw[1] !== service) return;
    const text = `${String(raw[0])}\n${String(raw[2])}`;
    const held = quoted.filter(([key, q]) => text.includes(q) || raw[0] === key);
    if (held.length === 0) return;
    const row = resultRow(raw);
    if (!row) return;
    const batch = batchId(row);
    row.results.forEach(([key, record], pos) => {
      if (!held.some(([k]) => k === key)) return;
      const current = found.get(key);
      if (!current || row.at >= current.at)
        found.set(key, { record, at: row.at, row: index, batch, pos, size: row.results.length });
    });
  });
  return found;
}

/**
 * The newest result of each key and service in the rows read, kept up to date as rows are added after them (the
 * execution's own appends): index once, then only the new rows.
 */
export class ResultIndex {
  private readonly newest = new Map<string, Map<string, Kept>>();
  private indexed = 0;

  constructor(readonly rows: readonly unknown[][]) {}

  /** Indexes the rows added since the last call. */
  catchUp(): this {
    for (; this.indexed < this.rows.length; this.indexed++) {
      const found = resultRow(this.rows[this.indexed]);
      if (!found) continue;
      let byKey = this.newest.get(found.service);
      if (!byKey) this.newest.set(found.service, (byKey = new Map()));
      const batch = batchId(found);
      const size = found.results.length;
      found.results.forEach(([key, record], pos) => {
        const current = byKey.get(key);
        if (!current || found.at >= current.at)
          byKey.set(key, { record, at: found.at, row: this.indexed, batch, pos, size });
      });
    }
    return this;
  }

  get(service: string, key: string): Kept | undefined {
    return this.newest.get(service)?.get(key);
  }

  /** Every newest result, of every service. */
  *all(): IterableIterator<Kept> {
    for (const byKey of this.newest.values()) yield* byKey.values();
  }
}

/**
 * The rows (indexes) that keep nothing a reader would take: result rows older than `oldest`, or whose every result
 * a newer row supersedes, or that hold none readable; blank rows. Row 1 (the header) is never among them.
 */
export function deadResultRows(rows: readonly unknown[][], oldest: number): number[] {
  const live = new Set<number>();
  for (const kept of new ResultIndex(rows).catchUp().all()) if (kept.at >= oldest) live.add(kept.row);
  const dead: number[] = [];
  rows.forEach((row, i) => {
    if (i === 0 || live.has(i)) return;
    const blank = row.every((cell) => cell === '' || cell === null || cell === undefined);
    if (blank || resultRow(row)) dead.push(i);
  });
  return dead;
}

// ─── saved credits ─────────────────────────────────────────────────────────────────────────────────────────────────
// Credits the result store saved a user in one spreadsheet, the one module that reads and writes that count: a kept
// result reused after the 6-hour cache would have let it go (without the store it would be billed again) counts once
// for that user, however often formulas recalculate. The marks live in the user's own properties (only the user's
// executions write them, under the user lock: no increment is lost, whoever else uses the spreadsheet), one short
// entry per result row of the store: '*' and the row's size when every result of the row is counted, else a bitmap of
// the counted ones.
// Marks of rows past the retention fold into a plain number. Counts of earlier versions (one per spreadsheet) are
// still read. Writing a mark writes nothing to any cache.
/** The user's marks in one spreadsheet: counted results of rows since gone, and per row what is counted. */
interface Marks {
  base: number;
  rows: Record<string, string>;
}

const ALL = '*';

function parseMarks(raw: unknown): Marks | undefined {
  if (!isRecord(raw)) return undefined;
  const rows: Record<string, string> = {};
  if (isRecord(raw.rows))
    for (const [id, bits] of Object.entries(raw.rows)) if (typeof bits === 'string') rows[id] = bits;
  return { base: finite(raw.base) ?? 0, rows };
}

/** The places a row's mark counts: all of the row's size, or those of its bitmap (storage.ts's place digits). */
function placesOf(bits: string | undefined): Set<number> {
  if (!bits?.startsWith(ALL)) return placesIn(bits ?? '');
  const places = new Set<number>();
  for (let p = 0, size = Number(bits.slice(1)) || 0; p < size; p++) places.add(p);
  return places;
}

function bitsOf(places: ReadonlySet<number>, size: number): string {
  return size > 0 && places.size >= size ? ALL + size : digitsOf(places);
}

/** How many results a mark counts. */
function countOf(bits: string): number {
  return bits.startsWith(ALL) ? Number(bits.slice(1)) || 0 : placesIn(bits).size;
}

function keyHere(): string | undefined {
  const spreadsheet = currentSpreadsheet();
  return spreadsheet ? USER_PROPERTY.savedPrefix + idOf(spreadsheet) : undefined;
}

/** The kept results among `hits` that the cache could no longer hold: checked more than its 6 hours ago. */
export function pastTheCache(hits: Iterable<Kept>, at = now()): Kept[] {
  return [...hits].filter((hit) => hit.at < at - CACHE_SECONDS * 1_000);
}

/** A row's counted places and its hits not counted yet. */
interface RowHits {
  places: Set<number>;
  hits: Kept[];
}

/** `hits` not counted yet for this user, by row (each row's mark parsed once): rows with none are left out. */
function uncounted(marks: Marks | undefined, hits: readonly Kept[]): Map<string, RowHits> {
  const byRow = new Map<string, RowHits>();
  for (const hit of hits) {
    let row = byRow.get(hit.batch);
    if (!row) byRow.set(hit.batch, (row = { places: placesOf(marks?.rows[hit.batch]), hits: [] }));
    if (!row.places.has(hit.pos)) row.hits.push(hit);
  }
  for (const [id, row] of byRow) if (row.hits.length === 0) byRow.delete(id);
  return byRow;
}

/**
 * Counts, once for this user, the kept results a check reused after the cache had let them go. Reads the marks from
 * the user's properties (the execution's one bulk read) only when some hit is past the cache, and writes only when one
 * is new. Throws when the user lock is busy or Google refuses (a caller that only counts catches).
 */
export function noteSaved(hits: readonly Kept[]): number {
  const past = pastTheCache(hits);
  const key = past.length > 0 ? keyHere() : undefined;
  if (!key || uncounted(readValue('user', key, parseMarks), past).size === 0) return 0;
  let added = 0;
  updateValue('user', key, parseMarks, (current) => {
    const marks: Marks = { base: current?.base ?? 0, rows: { ...current?.rows } };
    added = 0;
    for (const [row, { places, hits: list }] of uncounted(current, past)) {
      for (const hit of list) places.add(hit.pos);
      added += list.length;
      marks.rows[row] = bitsOf(places, list[0].size);
    }
    // Rows past the retention are gone from the store: their counts become a number.
    const oldest = now() - retentionDays() * DAY_MS;
    for (const [row, bits] of Object.entries(marks.rows))
      if (!(batchTime(row) >= oldest)) {
        marks.base += countOf(bits);
        delete marks.rows[row];
      }
    return marks;
  });
  return added;
}

/** Credits the store saved this user in this spreadsheet (with what earlier versions counted for everyone). */
export function savedCredits(): number {
  const key = keyHere();
  const marks = key ? readValue('user', key, parseMarks) : undefined;
  let count = marks?.base ?? 0;
  for (const bits of Object.values(marks?.rows ?? {})) count += countOf(bits);
  const legacy = (name: string) => finite(Number(readValue('document', name, (v) => v))) ?? 0;
  return count + legacy(DOCUMENT_PROPERTY.savedCredits) + legacy(DOCUMENT_PROPERTY.savedCreditsAway);
}

/** Forgets this user's count in a spreadsheet ("Remove DAPA from this spreadsheet"). */
export function forgetSaved(spreadsheetId: string): void {
  deleteKeys('user', USER_PROPERTY.savedPrefix + spreadsheetId);
}

// ─── store compaction ──────────────────────────────────────────────────────────────────────────────────────────────
// The result store's upkeep, one explicit step (never a side effect of storing results or refreshing formulas): rows
// older than the retention, rows whose every result a newer row supersedes, claims long ended (store-sheet.ts) and
// blank rows are deleted, runs at a time and bottom-up, for at most COMPACTION_MS at a time, never a cell overwritten;
// the legacy per-formula version columns (F on) go once no formula refers to them; half-made sheets go. Whoever holds
// the step lease does it (a background step, the published add-on's dispatcher, which has no document lock, the menu,
// the sidebar): the lease, decided by the log's row order, keeps two compactions from meeting, and a writer appending
// meanwhile loses nothing: its rows are below every row this compaction read, and only rows it read as dead go.
/** A compaction is worth its service calls when this many rows, and a quarter of the log, are dead. */
const MIN_DEAD_ROWS = 8;
/**
 * A compaction deletes for at most this long, then leaves the rest to the next one (a step's upkeep comes out of its
 * budget; a formula beside it never waits for it: it holds no lock).
 */
export const COMPACTION_MS = 2_000;
/** The lease the menu or the sidebar takes for an upkeep of their own: the compaction and its read, with room. */
const UPKEEP_LEASE_MS = 60_000;

/** The rows (indexes) of the log that hold nothing anyone reads any more. */
export function deadRows(rows: readonly unknown[][], at: number, days = retentionDays()): number[] {
  const oldest = at - days * DAY_MS;
  return [...new Set([...deadResultRows(rows, oldest), ...deadClaimRows(rows, at)])];
}

export interface Compaction {
  /** Rows deleted. */
  rows: number;
  /** Legacy columns deleted. */
  columns: number;
}

/** Whether `holder` holds the step lease in these rows until at least `until`. */
function holdsLease(rows: readonly unknown[][], holder: string, until: number): boolean {
  const claims = rows.flatMap((row) => {
    const claim = claimRow(row);
    return claim?.name === STEP_CLAIM ? [claim] : [];
  });
  const current = walkClaims(claims).holder;
  return current?.holder === holder && current.until >= until;
}

/**
 * Compacts the log now, as the holder of the step lease `lease`: reads it again, checks the lease there, and deletes
 * what it read as dead (and, when no formula refers to them any more, the legacy version columns). Undefined when the
 * lease is not `lease`'s (someone else's compaction may run), or when something failed (the next upkeep does it).
 */
export function compactStore(
  spreadsheet: Spreadsheet,
  lease: string,
  legacyFree = false,
): Compaction | undefined {
  try {
    weighedTier().add(idOf(spreadsheet));
    const started = now();
    const read = readStore(spreadsheet);
    if (!holdsLease(read, lease, started + COMPACTION_MS)) return undefined;
    const dead = deadRows(read, started).map((i) => i + 1);
    return compactLog(spreadsheet, read, {
      rows: dead,
      legacyColumns: legacyFree,
      until: started + COMPACTION_MS,
    });
  } catch (error) {
    console.warn(`DAPA: results not compacted (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
}

/** What a look at the log's rows finds (no service call): its dead rows, and when its oldest result was checked. */
export interface Weight {
  /** Rows (indexes) that hold nothing anyone reads any more (deadRows). */
  dead: number[];
  /** When the oldest result kept was checked (Infinity: none kept). */
  oldest: number;
  /** Results kept are older than the retention the privacy policy states. */
  expired: boolean;
}

/** Weighs the log's rows at `at`, results being kept `days`: the dead rows, the oldest result, any past the retention. */
export function weigh(rows: readonly unknown[][], at: number, days = retentionDays()): Weight {
  let oldest = Infinity;
  for (const kept of new ResultIndex(rows).catchUp().all()) oldest = Math.min(oldest, kept.at);
  return { dead: deadRows(rows, at, days), oldest, expired: oldest < at - days * DAY_MS };
}

/** An upkeep for the retention comes this long after the oldest result passes it (never sooner than this from now). */
const UPKEEP_SLACK_MS = 60_000;

/** What an upkeep is told: the step lease its caller holds (else it takes one for itself), and the legacy columns. */
export interface UpkeepOptions {
  lease?: string;
  /** A look at every formula found none reading the legacy version columns. */
  legacyFree?: boolean;
}

/**
 * The upkeep step: weighs the log (once an execution and spreadsheet) and compacts it when worth it (a quarter of it
 * dead and at least a few rows, or any result older than the retention the privacy policy states, or legacy columns
 * to give back), under the step lease the caller holds, or one it takes for the while (the menu, the sidebar; when
 * another execution holds it, that one's upkeep does it). Never throws.
 */
export function upkeep(spreadsheet: Spreadsheet, options: UpkeepOptions = {}): Compaction | undefined {
  return stepUpkeep(spreadsheet, options, false).compaction;
}

/**
 * The upkeep, and when the next one is wanted for the retention (when the oldest result kept passes it; undefined:
 * none kept, or the log unreadable): the background's wanted table holds it, so an add-on nobody opens keeps nothing
 * past the retention. One read of the log (the execution's rows), weighed in pure code; a compaction reads it again.
 */
export function stepUpkeep(
  spreadsheet: Spreadsheet,
  { lease, legacyFree = false }: UpkeepOptions,
  due = true,
): { compaction?: Compaction; dueAt?: number } {
  let compaction: Compaction | undefined;
  let weight: Weight | undefined;
  try {
    const id = idOf(spreadsheet);
    const weighed = weighedTier();
    if (!weighed.has(id) || legacyFree) {
      weighed.add(id);
      const log = weighLog(spreadsheet, legacyFree);
      weight = weigh(log.rows, now());
      const worth =
        weight.dead.length >= Math.max(MIN_DEAD_ROWS, log.rows.length / 4) ||
        weight.expired ||
        log.extraColumns > 0;
      const holder = worth ? (lease ?? takeStepLease(now() + UPKEEP_LEASE_MS)) : undefined;
      if (holder) {
        weight = undefined; // the rows change
        try {
          compaction = compactStore(spreadsheet, holder, legacyFree);
        } finally {
          if (!lease) returnStepLease(holder);
        }
      }
    }
  } catch (error) {
    console.warn(`DAPA: results not compacted (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    const oldest = due ? (weight ?? weigh(weighLog(spreadsheet, false).rows, now())).oldest : Infinity;
    if (Number.isFinite(oldest))
      return { compaction, dueAt: Math.max(oldest + retentionDays() * DAY_MS, now()) + UPKEEP_SLACK_MS };
  } catch {
    // the next step's look says
  }
  return { compaction };
}
