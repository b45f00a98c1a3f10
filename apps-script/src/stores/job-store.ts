// The sidebar's job as kept in the user's properties: its range, where it stands, its counts, and (beside it) which
// rows ended for a reason that can change, so "Retry skipped rows" knows them from stored state, not from cell text.
/// <reference types="google-apps-script" />
import type { JobState } from '../../sidebar/contract';
import { columnLetter } from '../platform/cells';
import { digitsOf, placesIn } from './place-digits';
import { isRecord, locked, readValue, writeValue } from './storage';
import { USER_PROPERTY } from './storage-keys';

/** Where a job reads its URLs (one column, these rows); a scheduled refresh re-checks such a range. */
export interface JobRange {
  sheetId: number;
  sheetName: string;
  column: number;
  firstRow: number;
  lastRow: number;
}

/** A job as kept: what the sidebar sees (its A1 range is derived) plus where it stands. */
export interface StoredJob extends Omit<JobState, 'a1'>, JobRange {
  spreadsheetId: string;
  /** Rows before the cursor are finished; rows after it may be finished already (written, so skipped). */
  cursor: number;
  mode: 'all' | 'retry';
  /** While a turn (a sidebar step or a background step) runs it holds a lease on the job, so that a second one
   *  does not overlap; `lease` names the holder, so a turn that outlived its lease knows it was overtaken. */
  leaseUntil?: number;
  lease?: string;
  /** "Check again": the cache and the results kept before `freshFrom` are not used. */
  fresh?: boolean;
  /** When a "Check again" began: what the job itself receives from then on is reused by its later slices (and by
   *  "Retry skipped rows"), so a domain in two slices is billed once. Absent (a job stored before): nothing is. */
  freshFrom?: number;
  /** A scheduled refresh: only results checked since then are reused, and a "Checked at" column is written. */
  since?: number;
}

function parseJob(raw: unknown): StoredJob | undefined {
  return isRecord(raw) && typeof raw.id === 'string' && typeof raw.cursor === 'number'
    ? (raw as unknown as StoredJob)
    : undefined;
}

export function loadJob(spreadsheetId: string): StoredJob | undefined {
  return readValue('user', USER_PROPERTY.jobPrefix + spreadsheetId, parseJob);
}

/** Stores the job (under the user lock: changeJob). */
function storeJob(job: StoredJob): void {
  writeValue('user', USER_PROPERTY.jobPrefix + job.spreadsheetId, job);
}

/** What a change of the job may write, inside its hold of the lock. */
export interface JobWrites {
  /** Stores the job whole. */
  store(job: StoredJob): void;
  /** Stores the rows marked retryable (none: the key is removed). */
  retryRows(rows: ReadonlySet<number>): void;
}

/**
 * Changes a spreadsheet's job under the user lock (a sidebar turn and a background step may meet): `change` gets the
 * job read again there and writes what it changed. Answers what `change` answered.
 */
export function changeJob<T>(
  spreadsheetId: string,
  change: (job: StoredJob | undefined, writes: JobWrites) => T,
): T {
  return locked('user', () =>
    change(loadJob(spreadsheetId), {
      store: storeJob,
      retryRows: (rows) => storeRetryRows(spreadsheetId, rows),
    }),
  );
}

/** Stores a new job and forgets the retryable rows of the one before. */
export function storeNewJob(job: StoredJob): void {
  changeJob(job.spreadsheetId, (_, writes) => {
    writes.store(job);
    writes.retryRows(new Set());
  });
}

/** Forgets a spreadsheet's job and its retryable rows ("Remove DAPA from this spreadsheet"), under the user lock. */
export function forgetJob(spreadsheetId: string): void {
  changeJob(spreadsheetId, (_, writes) => {
    writeValue('user', USER_PROPERTY.jobPrefix + spreadsheetId, undefined);
    writes.retryRows(new Set());
  });
}

/** Just the range of a job (or a target). */
export function rangeOf({ sheetId, sheetName, column, firstRow, lastRow }: JobRange): JobRange {
  return { sheetId, sheetName, column, firstRow, lastRow };
}

/** Where a scheduled refresh re-checks: the range of the last sidebar job. */
export function jobRange(spreadsheetId: string): JobRange | undefined {
  const job = loadJob(spreadsheetId);
  return job && rangeOf(job);
}

/** A new job over a range, running from its first row; `fields` set the rest (mode, total, message, ...). */
export function newJob(spreadsheetId: string, range: JobRange, fields: Partial<StoredJob> = {}): StoredJob {
  return {
    id: Utilities.getUuid(),
    spreadsheetId,
    ...rangeOf(range),
    cursor: range.firstRow,
    mode: 'all',
    total: range.lastRow - range.firstRow + 1,
    done: 0,
    status: 'running',
    counts: { records: 0, skipped: 0, errors: 0, requests: 0, billed: 0, cached: 0, retryable: 0 },
    skippedByReason: {},
    ...fields,
  };
}

/** What the sidebar sees. `retryable` counts the rows "Retry skipped rows" would check: retryable ones, plus
 *  rows a cancel or an error left unchecked. */
export function stateOf(job: StoredJob, note?: string): JobState {
  const letter = columnLetter(job.column);
  const unchecked = job.status === 'cancelled' || job.status === 'error' ? job.total - job.done : 0;
  const state: JobState = {
    id: job.id,
    sheetName: job.sheetName,
    a1: `${letter}${job.firstRow}:${letter}${job.lastRow}`,
    total: job.total,
    done: job.done,
    status: job.status,
    counts: { ...job.counts, retryable: job.counts.retryable + Math.max(0, unchecked) },
    skippedByReason: { ...job.skippedByReason },
  };
  const message = note ?? job.message;
  if (message) state.message = message;
  return state;
}

// ---- the rows that ended for a reason that can change: one bit per row of the job's range ------------------

function retryKey(spreadsheetId: string): string {
  return USER_PROPERTY.retryRowsPrefix + spreadsheetId;
}

function parseRows(raw: unknown): string | undefined {
  return typeof raw === 'string' && /^[0-9a-v]*$/.test(raw) ? raw : undefined;
}

/** Offsets (from the job's first row) of the rows marked retryable (place-digits.ts: five rows a digit, so 10,000
 *  rows take 2,000 characters; longer values are kept in parts). */
export function loadRetryRows(spreadsheetId: string): Set<number> {
  return placesIn(readValue('user', retryKey(spreadsheetId), parseRows) ?? '');
}

/** Stores the rows marked retryable (none: the key is removed), under the user lock (changeJob). */
function storeRetryRows(spreadsheetId: string, rows: ReadonlySet<number>): void {
  writeValue('user', retryKey(spreadsheetId), digitsOf(rows) || undefined);
}
