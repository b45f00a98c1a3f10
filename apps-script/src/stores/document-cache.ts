// The document's cache, owned here alone (CacheService's cache of the spreadsheet: shared by everyone in it, custom
// functions included, with no daily quota): each entry DAPA keeps there is read and written through this module's
// operations for it: the formulas' queue (formula-queue.ts decides what it holds), the credit lists formulas could not
// write to the ledger (credit-ledger.ts), the copies of the retention (retention.ts) and of the owner's base URL
// (settings.ts), and the records' shelf (result-cache.ts). There is none outside the document's own executions (a
// standalone trigger, a spreadsheet the dispatcher opened by id: session.ts tells which); then reads find nothing and
// writes are left out.
import type { Cache } from '../platform/gas';
import { documentCache } from './session';
import { CACHE_SECONDS } from './storage-keys';

/** The copies kept an hour: one cell reads the setting for the next hour's cells. */
const COPY_SECONDS = 3_600;
/** The retention's copy (retention.ts) and the owner's base URL as this spreadsheet's =DAPA cells read it (settings.ts). */
const RETENTION_COPY = 'dapa.retentionDays';
const BASE_URL_COPY = 'dapa.formulaBaseUrl';

/** Whether this execution has the document's cache (it runs in the document). */
export function documentCacheHere(): boolean {
  return documentCache() !== null;
}

// ---- the formulas' queue (formula-queue.ts: its key, what it holds, under the document lock) ------------------------

export function readQueueEntry(key: string): string | null {
  return documentCache()?.get(key) ?? null;
}

export function writeQueueEntry(key: string, text: string, seconds: number): void {
  documentCache()?.put(key, text, seconds);
}

// ---- the credit lists formulas left (credit-ledger.ts: their keys and what they hold) --------------------------------

export function readCreditList(key: string): string | null {
  return documentCache()?.get(key) ?? null;
}

/** Keeps a list for the cache's 6 hours (undefined: the list goes); `required`: throws where there is no cache. */
export function writeCreditList(key: string, text: string | undefined, required = false): void {
  const cache = documentCache();
  if (!cache && required)
    throw new Error('The credits could not be counted here (no document to note them in).');
  if (text === undefined) cache?.remove(key);
  else cache?.put(key, text, CACHE_SECONDS);
}

// ---- the copies of settings every cell reads ------------------------------------------------------------------------

export function readRetentionCopy(): string | null {
  return documentCache()?.get(RETENTION_COPY) ?? null;
}

export function keepRetentionCopy(days: number): void {
  documentCache()?.put(RETENTION_COPY, String(days), COPY_SECONDS);
}

export function readBaseUrlCopy(): string | null {
  return documentCache()?.get(BASE_URL_COPY) ?? null;
}

export function keepBaseUrlCopy(url: string): void {
  documentCache()?.put(BASE_URL_COPY, url, COPY_SECONDS);
}

export function dropBaseUrlCopy(): void {
  documentCache()?.remove(BASE_URL_COPY);
}

// ---- the records (result-cache.ts: their keys and what they hold) ----------------------------------------------------

/** The shelf the result cache keeps records on in the document (null: none here). */
export function recordShelf(): Cache | null {
  return documentCache();
}
