// How long the result store keeps a result: the spreadsheet's own setting (1 to 365 days, 30 by default), read once an
// execution (every check reads it; only the user changes it).
import { keepEntry, readEntry } from './caches';
import { currentSpreadsheet, idOrUndefined, retentionTier } from './session';
import { finite, readValue, writeValue } from './storage';
import { DOCUMENT_PROPERTY } from './storage-keys';

export const DAY_MS = 86_400_000;
export const DEFAULT_RETENTION_DAYS = 30;

/**
 * A copy of the setting in the document's cache (an hour): every =DAPA cell reads the retention, and a spreadsheet that
 * never set it would cost a Properties call each time (the value of earlier versions is looked for in
 * DocumentProperties); one cell reads it for the next hour's cells.
 */
export const RETENTION_COPY = 'dapa.retentionDays';

function keepCopy(days: number): void {
  try {
    keepEntry(RETENTION_COPY, String(days), 3_600);
  } catch {
    // read from the setting next time
  }
}

export function retentionDays(): number {
  const retention = retentionTier();
  const id = idOrUndefined(currentSpreadsheet()) ?? '';
  const known = retention.get(id);
  if (known !== undefined) return known;
  let copy: number | undefined;
  try {
    copy = finite(Number(readEntry(RETENTION_COPY) ?? NaN));
  } catch {
    // no cache here
  }
  if (copy !== undefined && copy >= 1 && copy <= 365) {
    retention.set(id, copy);
    return copy;
  }
  const days = readValue('document', DOCUMENT_PROPERTY.retentionDays, finite) ?? 0;
  const kept = days >= 1 && days <= 365 ? Math.floor(days) : DEFAULT_RETENTION_DAYS;
  retention.set(id, kept);
  keepCopy(kept);
  return kept;
}

export function setRetentionDays(days: unknown): number {
  const n = Number(days);
  if (!Number.isInteger(n) || n < 1 || n > 365)
    throw new Error(`Keep results for 1 to 365 days, not "${String(days).slice(0, 20)}".`);
  writeValue('document', DOCUMENT_PROPERTY.retentionDays, n);
  retentionTier().set(idOrUndefined(currentSpreadsheet()) ?? '', n);
  keepCopy(n);
  return n;
}
