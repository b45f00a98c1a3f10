// The two caches DAPA keeps entries in, owned here alone: the document's (CacheService's cache of the spreadsheet:
// shared by everyone in it, custom functions included, with no daily quota) and the user's (one per user of the script:
// a published add-on's records across the user's spreadsheets, and the background's marks). Every entry is read and
// written through these operations, by the module that decides what the entry holds: the formulas' queue
// (formula-queue.ts), the credit lists formulas could not write to the ledger (credit-ledger.ts), the copies of the
// retention (retention.ts), of the owner's settings (settings.ts) and of the background's state and marks
// (background-store.ts), and the records (result-cache.ts). There is no document cache outside the document's own
// executions (a standalone trigger, a spreadsheet the dispatcher opened by id: session.ts tells which); then reads find
// nothing and writes are left out. The user's cache may be refused (a custom function): its operations then throw.
import { documentAheadTier, documentCache, userCache } from './session';

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
