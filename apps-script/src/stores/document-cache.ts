// The document's cache, owned here alone (CacheService's cache of the spreadsheet: shared by everyone in it, custom
// functions included, with no daily quota): every entry DAPA keeps there is read and written through these operations,
// by the module that decides what the entry holds: the formulas' queue (formula-queue.ts), the credit lists formulas
// could not write to the ledger (credit-ledger.ts), the copies of the retention (retention.ts) and of the owner's base
// URL (settings.ts), and the records (result-cache.ts, through recordShelf). There is none outside the document's own
// executions (a standalone trigger, a spreadsheet the dispatcher opened by id: session.ts tells which); then reads
// find nothing and writes are left out.
import type { Cache } from '../platform/gas';
import { documentCache } from './session';

/** Whether this execution has the document's cache (it runs in the document). */
export function documentCacheHere(): boolean {
  return documentCache() !== null;
}

/** An entry's text (null: none, or no cache here). */
export function readEntry(key: string): string | null {
  return documentCache()?.get(key) ?? null;
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
