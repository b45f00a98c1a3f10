// The document's cache, owned here alone (CacheService's cache of the spreadsheet: shared by everyone in it, custom
// functions included, with no daily quota): every entry DAPA keeps there is read and written through these operations,
// by the module that decides what the entry holds: the formulas' queue (formula-queue.ts), the credit lists formulas
// could not write to the ledger (credit-ledger.ts), the copies of the retention (retention.ts) and of the owner's base
// URL (settings.ts), and the records (result-cache.ts, through recordShelf). There is none outside the document's own
// executions (a standalone trigger, a spreadsheet the dispatcher opened by id: session.ts tells which); then reads
// find nothing and writes are left out.
import type { Cache } from '../platform/gas';
import { documentCache, session } from './session';

/** Whether this execution has the document's cache (it runs in the document). */
export function documentCacheHere(): boolean {
  return documentCache() !== null;
}

/** An entry's text (null: none, or no cache here); one read ahead is served once, then the cache is asked again. */
export function readEntry(key: string): string | null {
  const ahead = session().documentAhead;
  if (ahead?.has(key)) {
    const text = ahead.get(key) ?? null;
    ahead.delete(key);
    return text;
  }
  return documentCache()?.get(key) ?? null;
}

/**
 * Reads these entries in one call (a =DAPA execution's copies: the owner's settings, the retention, whether
 * background checks go on), each served once to the first readEntry of its key in this execution.
 */
export function readAhead(keys: readonly string[]): void {
  const cache = documentCache();
  if (!cache || keys.length === 0) return;
  const values = cache.getAll([...keys]);
  const ahead = (session().documentAhead ??= new Map());
  for (const key of keys) ahead.set(key, values[key] ?? null);
}

/** Keeps an entry's text for `seconds` (undefined: the entry goes); `required`: throws `why` where there is no cache. */
export function keepEntry(key: string, text: string | undefined, seconds: number, why?: string): void {
  const cache = documentCache();
  if (!cache && why) throw new Error(why);
  if (text === undefined) cache?.remove(key);
  else cache?.put(key, text, seconds);
}

/** The shelf the result cache keeps records on in the document (null: none here). */
export function recordShelf(): Cache | null {
  return documentCache();
}
