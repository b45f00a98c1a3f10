// The durable result store: a hidden sheet `_dapa_results` (domain key | service | record JSON | checked at) kept for
// the retention the user chose (30 days by default). Read in bulk (one getValues) and indexed per execution, so
// formulas read it too; only sidebar, menu and background code write it (custom functions cannot). Several users'
// executions write it at once (a background step, an editor's sidebar check): every write re-reads the sheet under
// the shared lock and merges, so no one's results are lost.
import type { DomainRecord } from '../../../shared';
import { asCellText } from '../platform/cells';
import { writeRows } from '../platform/row-writer';
import { currentSpreadsheet, documentProperties, now, sha256 } from '../platform/gas';
import { finite, locked, readValue, updateValue, writeValue } from './storage';
import { DOCUMENT_PROPERTY, STORE_SHEET } from './storage-keys';

const DAY_MS = 86_400_000;
export const DEFAULT_RETENTION_DAYS = 30;
const HEADER = ['domain', 'service', 'record', 'checked at (ms)'];

interface Stored {
  row: number;
  record: DomainRecord;
  at: number;
}

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;

/** The store sheet's rows as this execution last read or wrote them, per spreadsheet id. */
const memo = new Map<string, unknown[][]>();

/** The retention read once per execution and spreadsheet (every check reads it; it changes only by the user). */
const retention = new Map<string, number>();

export function retentionDays(): number {
  const id = currentSpreadsheet()?.getId() ?? '';
  const known = retention.get(id);
  if (known !== undefined) return known;
  const days = readValue('document', DOCUMENT_PROPERTY.retentionDays, finite) ?? 0;
  const kept = days >= 1 && days <= 365 ? Math.floor(days) : DEFAULT_RETENTION_DAYS;
  retention.set(id, kept);
  return kept;
}

export function setRetentionDays(days: unknown): number {
  const n = Number(days);
  if (!Number.isInteger(n) || n < 1 || n > 365)
    throw new Error(`Keep results for 1 to 365 days, not "${String(days).slice(0, 20)}".`);
  writeValue('document', DOCUMENT_PROPERTY.retentionDays, n);
  retention.set(currentSpreadsheet()?.getId() ?? '', n);
  return n;
}

/** A short, stable name of the service a result came from (never the key): results of two services never mix. */
export function serviceId(baseUrl: string): string {
  // A letter first: a hash starting with "-", "=" or digits would be read by Sheets as a formula or a number.
  return 's' + sha256(baseUrl).slice(0, 12);
}

function storeSheet(): Sheet | null {
  return currentSpreadsheet()?.getSheetByName(STORE_SHEET) ?? null;
}

function readRows(sheet: Sheet | null): unknown[][] {
  const last = sheet ? sheet.getLastRow() : 0;
  return sheet && last > 1 ? sheet.getRange(2, 1, last - 1, 4).getValues() : [];
}

/** The store's rows, read once per execution and spreadsheet (writes re-read them under the lock). */
function allRows(sheet: Sheet | null): unknown[][] {
  const id = currentSpreadsheet()?.getId() ?? '';
  let rows = memo.get(id);
  if (!rows) memo.set(id, (rows = readRows(sheet)));
  return rows;
}

function parse(text: unknown): DomainRecord | undefined {
  try {
    const r = JSON.parse(String(text)) as DomainRecord;
    return typeof r.domain === 'string' ? r : undefined;
  } catch {
    return undefined;
  }
}

function index(baseUrl: string, since: number): Map<string, Stored> {
  const service = serviceId(baseUrl);
  const found = new Map<string, Stored>();
  allRows(storeSheet()).forEach((row, i) => {
    const at = Number(row[3]);
    if (row[1] !== service || !(at >= since)) return;
    const record = parse(row[2]);
    if (record) found.set(String(row[0]), { row: i + 2, record, at });
  });
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
  if (keys.length === 0) return found;
  const stored = index(baseUrl, since);
  for (const key of keys) {
    const hit = stored.get(key);
    if (hit) {
      found.set(key, hit.record);
      onHit?.(hit.at);
    }
  }
  return found;
}

/** When each of these keys was last checked (only results within the retention). */
export function checkedAt(baseUrl: string, keys: readonly string[]): Map<string, number> {
  const stored = index(baseUrl, now() - retentionDays() * DAY_MS);
  const at = new Map<string, number>();
  for (const key of keys) {
    const hit = stored.get(key);
    if (hit) at.set(key, hit.at);
  }
  return at;
}

/**
 * Keeps fresh results: new keys are appended in one write, keys already stored are updated in place (runs of rows),
 * and rows older than the retention are dropped (then the table is written once, whole). Not callable from a
 * custom function (it writes).
 */
export function storeRecords(
  baseUrl: string,
  fresh: ReadonlyArray<{ key: string; record: DomainRecord }>,
  at = now(),
): void {
  if (fresh.length === 0) return;
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) throw new Error('There is no spreadsheet here to keep results in.');
  locked('document', () => writeStore(spreadsheet, baseUrl, fresh, at));
}

/** The write itself, under the shared lock: the rows are read again here, so another user's results stay. */
function writeStore(
  spreadsheet: GoogleAppsScript.Spreadsheet.Spreadsheet,
  baseUrl: string,
  fresh: ReadonlyArray<{ key: string; record: DomainRecord }>,
  at: number,
): void {
  let sheet = spreadsheet.getSheetByName(STORE_SHEET);
  if (!sheet) {
    const active = spreadsheet.getActiveSheet();
    sheet = spreadsheet.insertSheet(STORE_SHEET);
    sheet.getRange(1, 1, 1, 4).setValues([HEADER]);
    sheet.hideSheet();
    active?.activate();
  }
  const service = serviceId(baseUrl);
  const oldest = at - retentionDays() * DAY_MS;
  const before = readRows(sheet);
  const rows = before.filter((row) => Number(row[3]) >= oldest);
  const pruned = rows.length < before.length;
  const position = new Map<string, number>();
  rows.forEach((row, i) => {
    if (row[1] === service) position.set(String(row[0]), i);
  });
  const changed = new Set<number>();
  for (const { key, record } of fresh) {
    const i = position.get(key) ?? rows.length;
    position.set(key, i);
    rows[i] = [key, service, JSON.stringify(record), at];
    changed.add(i);
  }
  // Keys are written as text (an IP-like or "-"-led key would otherwise be read as a number or a formula).
  const cells = (r: unknown[]) => [asCellText(String(r[0])), ...r.slice(1)];
  const needed = rows.length + 1 - sheet.getMaxRows();
  if (needed > 0) sheet.insertRowsAfter(sheet.getMaxRows(), needed);
  // Pruned: the table is written whole and the rows after it cleared; else only the changed and new rows.
  writeRows(sheet, 1, 2, new Map([...(pruned ? rows.keys() : changed)].map((i) => [i, cells(rows[i])])));
  if (pruned) sheet.getRange(rows.length + 2, 1, before.length - rows.length, 4).clearContent();
  memo.set(spreadsheet.getId(), rows);
}

/**
 * Credits this sheet saved: results reused from this store that were checked longer ago than the 6-hour cache
 * keeps them, so without the store they would have been billed again (counted per check that reused them). The
 * count is kept where each execution can write it: the document's properties in the document's own executions
 * (custom functions included: they may write those, not the spreadsheet's metadata), the spreadsheet's metadata
 * in the dispatcher's; it is their sum.
 */
export function savedCredits(): number {
  const own = documentProperties()?.getProperty(DOCUMENT_PROPERTY.savedCredits);
  const away = readValue('document', DOCUMENT_PROPERTY.savedCreditsAway, finite) ?? 0;
  return (finite(Number(own)) ?? 0) + away;
}

/** Adds to the count under the storage lock (throws when it is busy: a caller that only counts catches). */
export function addSavedCredits(n: number): void {
  if (n <= 0) return;
  const own = documentProperties();
  if (!own) {
    updateValue('document', DOCUMENT_PROPERTY.savedCreditsAway, finite, (count) => (count ?? 0) + n);
    return;
  }
  locked('document', () => {
    const count = finite(Number(own.getProperty(DOCUMENT_PROPERTY.savedCredits))) ?? 0;
    own.setProperty(DOCUMENT_PROPERTY.savedCredits, String(count + n));
  });
}
