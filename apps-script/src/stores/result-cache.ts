// Fetched records cached for 6 hours, one entry per domain: a recalculation, a reopened sheet or the same domain in
// another formula costs no request. Only records are cached, never a skip or an error. Two caches hold them (see
// shelves()): the document's own, and a published add-on's user cache (the same domain in the user's other
// spreadsheets, and what the dispatcher, which has no document, reads of what the user's formulas fetched). Never the
// script cache: in a published add-on every user of the add-on writes it, and its 1,000 items turn over in seconds.
// Records fetched in this execution are remembered too. What must outlive a cache is kept in the result store.
import { utf8Bytes } from './byte-size';
import type { DomainRecord } from '../../../shared';
import { now } from '../platform/gas';
import { cacheHere, type CacheName, keepEntries, readEntries } from './caches';
import { cacheKeyDigest, fetchedHereTier, installMode } from './session';
import { CACHE_PREFIX, CACHE_SECONDS } from './storage-keys';

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
 * The caches this execution reads and writes records in (caches.ts): the document's own cache in the document's
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
