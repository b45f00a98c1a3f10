// Credits the result store saved a user in one spreadsheet, the one module that reads and writes that count: a kept
// result reused after the 6-hour cache would have let it go (without the store it would be billed again) counts once
// for that user, however often formulas recalculate. The marks live in the user's own properties (only the user's
// executions write them, under the user lock: no increment is lost, whoever else uses the spreadsheet), one short
// entry per result row of the store: '*' and the row's size when every result of the row is counted, else a bitmap of
// the counted ones.
// Marks of rows past the retention fold into a plain number. Counts of earlier versions (one per spreadsheet) are
// still read. Writing a mark writes nothing to any cache.
import { now } from '../platform/gas';
import { digitsOf, placesIn } from './place-digits';
import { batchTime, type Kept } from './result-rows';
import { DAY_MS, retentionDays } from './retention';
import { currentSpreadsheet, idOf } from './session';
import { deleteKeys, finite, isRecord, readValue, updateValue } from './storage';
import { CACHE_SECONDS, DOCUMENT_PROPERTY, USER_PROPERTY } from './storage-keys';

/** The user's marks in one spreadsheet: counted results of rows since gone, and per row what is counted. */
interface Marks {
  base: number;
  rows: Record<string, string>;
}

const ALL = '*';

function parseMarks(raw: unknown): Marks | undefined {
  if (!isRecord(raw)) return undefined;
  const rows: Record<string, string> = {};
  if (isRecord(raw.rows))
    for (const [id, bits] of Object.entries(raw.rows)) if (typeof bits === 'string') rows[id] = bits;
  return { base: finite(raw.base) ?? 0, rows };
}

/** The places a row's mark counts: all of the row's size, or those of its bitmap (place-digits.ts). */
function placesOf(bits: string | undefined): Set<number> {
  if (!bits?.startsWith(ALL)) return placesIn(bits ?? '');
  const places = new Set<number>();
  for (let p = 0, size = Number(bits.slice(1)) || 0; p < size; p++) places.add(p);
  return places;
}

function bitsOf(places: ReadonlySet<number>, size: number): string {
  return size > 0 && places.size >= size ? ALL + size : digitsOf(places);
}

/** How many results a mark counts. */
function countOf(bits: string): number {
  return bits.startsWith(ALL) ? Number(bits.slice(1)) || 0 : placesIn(bits).size;
}

function keyHere(): string | undefined {
  const spreadsheet = currentSpreadsheet();
  return spreadsheet ? USER_PROPERTY.savedPrefix + idOf(spreadsheet) : undefined;
}

/** The kept results among `hits` that the cache could no longer hold: checked more than its 6 hours ago. */
export function pastTheCache(hits: Iterable<Kept>, at = now()): Kept[] {
  return [...hits].filter((hit) => hit.at < at - CACHE_SECONDS * 1_000);
}

/** A row's counted places and its hits not counted yet. */
interface RowHits {
  places: Set<number>;
  hits: Kept[];
}

/** `hits` not counted yet for this user, by row (each row's mark parsed once): rows with none are left out. */
function uncounted(marks: Marks | undefined, hits: readonly Kept[]): Map<string, RowHits> {
  const byRow = new Map<string, RowHits>();
  for (const hit of hits) {
    let row = byRow.get(hit.batch);
    if (!row) byRow.set(hit.batch, (row = { places: placesOf(marks?.rows[hit.batch]), hits: [] }));
    if (!row.places.has(hit.pos)) row.hits.push(hit);
  }
  for (const [id, row] of byRow) if (row.hits.length === 0) byRow.delete(id);
  return byRow;
}

/**
 * Counts, once for this user, the kept results a check reused after the cache had let them go. Reads the marks from
 * the user's properties (the execution's one bulk read) only when some hit is past the cache, and writes only when one
 * is new. Throws when the user lock is busy or Google refuses (a caller that only counts catches).
 */
export function noteSaved(hits: readonly Kept[]): number {
  const past = pastTheCache(hits);
  const key = past.length > 0 ? keyHere() : undefined;
  if (!key || uncounted(readValue('user', key, parseMarks), past).size === 0) return 0;
  let added = 0;
  updateValue('user', key, parseMarks, (current) => {
    const marks: Marks = { base: current?.base ?? 0, rows: { ...current?.rows } };
    added = 0;
    for (const [row, { places, hits: list }] of uncounted(current, past)) {
      for (const hit of list) places.add(hit.pos);
      added += list.length;
      marks.rows[row] = bitsOf(places, list[0].size);
    }
    // Rows past the retention are gone from the store: their counts become a number.
    const oldest = now() - retentionDays() * DAY_MS;
    for (const [row, bits] of Object.entries(marks.rows))
      if (!(batchTime(row) >= oldest)) {
        marks.base += countOf(bits);
        delete marks.rows[row];
      }
    return marks;
  });
  return added;
}

/** Credits the store saved this user in this spreadsheet (with what earlier versions counted for everyone). */
export function savedCredits(): number {
  const key = keyHere();
  const marks = key ? readValue('user', key, parseMarks) : undefined;
  let count = marks?.base ?? 0;
  for (const bits of Object.values(marks?.rows ?? {})) count += countOf(bits);
  const legacy = (name: string) => finite(Number(readValue('document', name, (v) => v))) ?? 0;
  return count + legacy(DOCUMENT_PROPERTY.savedCredits) + legacy(DOCUMENT_PROPERTY.savedCreditsAway);
}

/** Forgets this user's count in a spreadsheet ("Remove DAPA from this spreadsheet"). */
export function forgetSaved(spreadsheetId: string): void {
  deleteKeys('user', USER_PROPERTY.savedPrefix + spreadsheetId);
}
