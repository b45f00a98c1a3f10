// Compaction of the result store's log (store-sheet.ts), and only under the document lock: rows older than the
// retention, rows whose every result a newer row supersedes, claims long ended (claims.ts) and blank rows are deleted,
// runs at a time and bottom-up, for at most COMPACTION_MS at a time, never a cell overwritten; the legacy per-formula version columns (F on) go once no
// formula refers to them. A writer without the document lock (the dispatcher) appends meanwhile and loses nothing:
// its rows are below every row this compaction read, and it deletes only rows it read as dead.
import { now, type Spreadsheet } from '../platform/gas';
import { deadClaimRows } from './claims';
import { deadResultRows } from './result-rows';
import { DAY_MS, retentionDays } from './retention';
import { session } from './session';
import { hasDocumentLock, locked } from './storage';
import {
  deleteHalfMadeSheets,
  deleteLegacyColumns,
  deleteStoreRows,
  readStore,
  STORE_COLUMNS,
  storeRows,
  storeSheet,
} from './store-sheet';

/** A compaction is worth its service calls when this many rows, and a quarter of the log, are dead. */
const MIN_DEAD_ROWS = 8;
/**
 * A compaction deletes for at most this long, then leaves the rest to the next one: it holds the document lock, which
 * formulas wait for too (a formula's waits end by its own 30 seconds).
 */
export const COMPACTION_MS = 2_000;

/** The rows (indexes) of the log that hold nothing anyone reads any more. */
export function deadRows(rows: readonly unknown[][], at: number): number[] {
  const oldest = at - retentionDays() * DAY_MS;
  return [...new Set([...deadResultRows(rows, oldest), ...deadClaimRows(rows, at)])];
}

export interface Compaction {
  /** Rows deleted. */
  rows: number;
  /** Legacy columns deleted. */
  columns: number;
}

/**
 * Compacts the log now: reads it again under the document lock and deletes what it read as dead (and, when no formula
 * refers to them any more, the legacy version columns). Undefined without a document lock, or when it is busy (the
 * next compaction does it).
 */
export function compactStore(spreadsheet: Spreadsheet, legacyFree = false): Compaction | undefined {
  if (!hasDocumentLock()) return undefined;
  try {
    return locked('document', () => {
      session().weighed.add(spreadsheet.getId());
      const started = now();
      const read = readStore(spreadsheet);
      const dead = deadRows(read, started).map((i) => i + 1);
      const rows = deleteStoreRows(spreadsheet, read, dead, started + COMPACTION_MS);
      const columns = legacyFree ? deleteLegacyColumns(spreadsheet) : 0;
      deleteHalfMadeSheets(spreadsheet);
      return { rows, columns };
    });
  } catch (error) {
    console.warn(`DAPA: results not compacted (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
}

/** Compacts (weighed at most once an execution, with the document lock only) when enough of the known rows are dead. */
export function compactIfWorthIt(spreadsheet: Spreadsheet): Compaction | undefined {
  if (!hasDocumentLock()) return undefined;
  const id = spreadsheet.getId();
  const { weighed } = session();
  if (weighed.has(id)) return undefined;
  weighed.add(id);
  const rows = storeRows(spreadsheet);
  if (deadRows(rows, now()).length < Math.max(MIN_DEAD_ROWS, rows.length / 4)) return undefined;
  return compactStore(spreadsheet);
}

/** Gives the legacy version columns back once no formula refers to them (the caller has just looked at all of them). */
export function giveBackLegacyColumns(spreadsheet: Spreadsheet): number {
  if (!hasDocumentLock()) return 0;
  const sheet = storeSheet(spreadsheet, false);
  if (!sheet || sheet.getMaxColumns() <= STORE_COLUMNS) return 0;
  return compactStore(spreadsheet, true)?.columns ?? 0;
}
