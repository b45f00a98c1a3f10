// The durable result store: results kept for the retention the user chose (30 days by default) in the hidden sheet's
// append log (store-sheet.ts). Writes append batches of results (one row holds hundreds: a 5,000-result run is a few
// dozen appendRow calls) and take no lock, so the dispatcher, which has no document lock, writes as safely as an
// editor's sidebar: appendRow is atomic and nothing is overwritten. Reads take the newest result per key and service
// from the rows read once per execution (custom functions read too; only sidebar, menu and background code write).
import type { DomainRecord } from '../../../shared';
import { now, type Spreadsheet } from '../platform/gas';
import { currentSpreadsheet, digestOf, resultIndexTier } from './session';
import { batchRows, findResults, type Kept, ResultIndex } from './result-rows';
import { DAY_MS, retentionDays } from './retention';
import { appendStore, storeRows } from './store-sheet';

export { DEFAULT_RETENTION_DAYS, retentionDays, setRetentionDays } from './retention';

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
 * compacts (that is the upkeep step's: store-compaction.ts). Not callable from a custom function (it writes).
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
