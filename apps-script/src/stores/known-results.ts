// What a check already knows before it sends: the results the store keeps (within the retention, or since a time),
// then those the caches hold, and which kept ones saved a credit (reused after the cache let them go). A read of two
// stores' owners (result-store.ts, result-cache.ts) behind one operation, for every check: formulas, the sidebar, the
// background, the estimates.
import type { DomainRecord } from '../../../shared';
import { readCachedRecords } from './result-cache';
import type { Kept } from './result-rows';
import { storedHits } from './result-store';
import { pastTheCache } from './saved-credits';

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
