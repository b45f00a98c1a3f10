// Fetched records cached for 6 hours in the document cache, one entry per domain: a recalculation, a reopened sheet
// or the same domain in another formula costs no request. Only records are cached, never a skip or an error.
import type { DomainRecord } from '../../shared';
import { documentCache, sha256 } from './gas';
import { CACHE_PREFIX, CACHE_SECONDS } from './storage-keys';

/** CacheService takes a limited batch comfortably; larger lists are split. */
const BATCH = 500;
/** A cache value holds at most 100 KB; a record is ~100 bytes, so only a freak answer comes near. */
const MAX_VALUE_CHARS = 50_000;

/** The cache key of a domain at a service: hashed, 50 characters, never the API key. */
export function cacheKeyOf(baseUrl: string, domainKey: string): string {
  return CACHE_PREFIX + sha256(baseUrl + '\n' + domainKey);
}

function parseRecord(text: string | undefined): DomainRecord | undefined {
  if (!text) return undefined;
  try {
    const r = JSON.parse(text) as Partial<DomainRecord>;
    const metric = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    if (typeof r.domain !== 'string') return undefined;
    return {
      domain: r.domain,
      site_da: metric(r.site_da),
      site_pa: metric(r.site_pa),
      site_mr: metric(r.site_mr),
      spam_score: metric(r.spam_score),
    };
  } catch {
    return undefined;
  }
}

/** The cached records among these domain keys. */
export function readCachedRecords(baseUrl: string, domainKeys: readonly string[]): Map<string, DomainRecord> {
  const found = new Map<string, DomainRecord>();
  if (domainKeys.length === 0) return found;
  const cache = documentCache();
  for (let i = 0; i < domainKeys.length; i += BATCH) {
    const keys = domainKeys.slice(i, i + BATCH);
    const cacheKeys = keys.map((k) => cacheKeyOf(baseUrl, k));
    const values = cache.getAll(cacheKeys);
    keys.forEach((key, j) => {
      const record = parseRecord(values[cacheKeys[j]]);
      if (record) found.set(key, record);
    });
  }
  return found;
}

/** Caches freshly fetched records for 6 hours. */
export function cacheRecords(
  baseUrl: string,
  fresh: ReadonlyArray<{ key: string; record: DomainRecord }>,
): void {
  if (fresh.length === 0) return;
  const cache = documentCache();
  for (let i = 0; i < fresh.length; i += BATCH) {
    const values: Record<string, string> = {};
    for (const { key, record } of fresh.slice(i, i + BATCH)) {
      const text = JSON.stringify(record);
      if (text.length <= MAX_VALUE_CHARS) values[cacheKeyOf(baseUrl, key)] = text;
    }
    cache.putAll(values, CACHE_SECONDS);
  }
}

/** Which of these domain keys are not (or no longer) cached. */
export function uncachedKeys(baseUrl: string, domainKeys: readonly string[]): string[] {
  const cached = readCachedRecords(baseUrl, domainKeys);
  return domainKeys.filter((k) => !cached.has(k));
}
