// The sidebar's job: its turns, and the sheet and columns it reads and writes. Each section below says its part.
// Over 300 lines: a turn's slices, how it settles and how the job is claimed share the stored job, its sheet and lease.
/// <reference types="google-apps-script" />
import { type Outcome, outcomeText, toEntry } from '../../../shared';
import type { JobSource, JobState } from '../../sidebar/contract';
import {
  asCellText,
  type CellValue,
  columnLetter,
  columnNumber,
  isEmptyCell,
  now,
  writeRows,
} from '../platform/gas';
import { idOf, noteDailyLimit } from '../stores/session';
import {
  changeJob,
  type JobRange,
  loadJob,
  loadRetryRows,
  newJob,
  stateOf,
  type StoredJob,
  storeNewJob,
} from '../stores/background-store';
import { currentBaseUrl } from '../stores/account';
import { jobMessage, NO_DATA_STATUS, NO_KEY, SCHEDULED_REFRESH, statusText } from '../messages';
import { type CheckMode, checkValues, type Reuse, reuseOf } from './check';
import { markColumn, readColumnMarks } from '../stores/storage';
import { sheetInView } from '../stores/store-sheet';

// ─── job run ───────────────────────────────────────────────────────────────────────────────────────────────────────
// The sidebar's bulk check as a job, run in turns: advanceJob checks the next slices of rows and writes them, for
// the sidebar's continueJob (waiting out the plan's limits within ~25 s) and for background steps (sending what the
// plan's window allows, no waiting); a turn holds the job's lease and adds its progress to the stored job. 10,000 rows
// finish in short turns. Starting a job from the sidebar is sidebar/job.ts; a scheduled refresh's job starts here.
// Over 300 lines: a turn's slices, how it settles and how the job is claimed share the stored job and its lease.
type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** Rows read, checked and written together. */
const SLICE_ROWS = 500;
/** How long a sidebar step's lease on the job lasts (a second sidebar waits instead of overlapping). */
const LEASE_MS = 60_000;

/** Why a job stopped: its code and the words the sidebar (and the background's "Stopped: ...") show. */
export interface JobStop {
  code: string;
  message: string;
}

/**
 * How a turn of the job goes, resolved once by its caller: `sidebar`, the open sidebar's turn, slices that wait out
 * the plan's limits; `background`, a background step's check, one slice that sends at most `maxSend` new domains side
 * by side and never waits (the step's run decides what the window allows next). No slice starts after `startBy`;
 * checks stop by `deadline`.
 */
export type JobPace =
  | { kind: 'sidebar'; startBy: number; deadline: number }
  | { kind: 'background'; maxSend: number; startBy: number; deadline: number };

/** What a turn did: whether rows moved, the rows (offsets in the job's range) that ended retryable, why it stopped. */
interface Turn {
  progressed: boolean;
  retry: number[];
  stop?: JobStop;
  /** The job was cancelled or replaced (polled between requests). */
  cancelled: () => boolean;
}

// ---- starting a refresh ------------------------------------------------------------------------------

/** A scheduled refresh of a range: its results are checked again (reusing only what was checked since `since`). */
export function startRefreshJob(spreadsheet: Spreadsheet, range: JobRange, since: number): void {
  const sheet = sheetOf(spreadsheet, range);
  makeRoom(sheet, range, OUTPUT_WIDTH + 1);
  clearOutput(sheet, range, OUTPUT_WIDTH + 1);
  const { firstRow, column } = range;
  if (firstRow > 1 && isOurHeader(sheet.getRange(firstRow - 1, column + 1, 1, OUTPUT_WIDTH).getValues()[0]))
    sheet.getRange(firstRow - 1, column + 1 + OUTPUT_WIDTH).setValue('Checked at');
  storeNewJob(
    newJob(
      idOf(spreadsheet),
      { ...range, sheetName: sheet.getName() },
      { message: SCHEDULED_REFRESH, since },
    ),
  );
}

// ---- checking a slice of rows ---------------------------------------------------------------------------

function outputRow(outcome: Outcome): CellValue[] {
  if (outcome.kind !== 'record') return ['', '', '', '', asCellText(statusText(outcome))];
  const r = outcome.record;
  const metrics = [r.site_da, r.site_pa, r.site_mr, r.spam_score];
  const status = metrics.every((m) => m === null) ? NO_DATA_STATUS : '';
  return [...metrics.map((m) => (m === null ? '' : m)), status];
}

/** Counts a written outcome; says whether its row can be retried. */
function tally(job: StoredJob, outcome: Outcome): boolean {
  const c = job.counts;
  if (outcome.kind === 'record') {
    c.records += 1;
    if (outcome.cached) c.cached += 1;
    return false;
  }
  const code = outcome.kind === 'skip' ? outcome.reason : outcome.code;
  job.skippedByReason[code] = (job.skippedByReason[code] ?? 0) + 1;
  if (outcome.kind === 'skip') c.skipped += 1;
  else c.errors += 1;
  if (outcome.retryable) c.retryable += 1;
  return outcome.retryable;
}

/** A row left for a later turn: not reached, cancelled, stopped by the run's fatal error, or (paced by the
 *  window) refused by the plan's rate limit. */
function isLeft(outcome: Outcome, fatal: string | undefined, windowed: boolean): boolean {
  if (outcome.kind === 'skip') return windowed && outcome.reason === 'rate_limit_reached';
  return outcome.kind === 'error' && ['unfinished', 'cancelled', fatal].includes(outcome.code);
}

/**
 * What a slice reuses: for "Check again" only what the job itself received (kept since it began), so a domain that
 * appears in two slices is billed once and nothing from before the job counts; for a refresh what was checked since
 * `since`; otherwise every cached and kept result.
 */
function reuseFor(job: StoredJob): Reuse {
  if (!job.fresh) return reuseOf(false, job.since);
  return job.freshFrom === undefined ? { kind: 'none' } : { kind: 'since', at: job.freshFrom };
}

/** A slice's check: a sidebar turn (waiting out the plan's limits), or, paced by the window, a background step's. */
function modeOf(job: StoredJob, turn: Turn, pace: JobPace): CheckMode {
  const reuse = reuseFor(job);
  const left = job.total - job.done;
  return pace.kind === 'sidebar'
    ? { kind: 'sidebar', reuse, left, cancelled: turn.cancelled }
    : { kind: 'background', reuse, left, maxSend: pace.maxSend, cancelled: turn.cancelled };
}

/** Checks the unwritten rows of the slice at the cursor, writes what finished, moves the cursor. Says whether
 *  rows were left for later. */
function checkSlice(sheet: Sheet, job: StoredJob, apiKey: string, pace: JobPace, turn: Turn) {
  const first = job.cursor;
  const count = Math.min(job.lastRow, first + SLICE_ROWS - 1) - first + 1;
  const inputs = sheet.getRange(first, job.column, count, 1).getValues();
  const outputs = sheet.getRange(first, job.column + 1, count, OUTPUT_WIDTH).getValues();
  const todo = outputs.map((row, i) => (row.every(isEmptyCell) ? i : -1)).filter((i) => i >= 0);
  const report = todo.length
    ? checkValues(
        todo.map((i) => inputs[i][0]),
        {
          mode: modeOf(job, turn, pace),
          apiKey,
          baseUrl: currentBaseUrl(),
          deadline: pace.deadline,
        },
      )
    : undefined;
  const rows = new Map<number, CellValue[]>();
  let firstLeft: number | undefined;
  report?.outcomes.forEach((outcome, j) => {
    if (isLeft(outcome, report.fatal?.code, pace.kind === 'background')) firstLeft ??= todo[j];
    else {
      rows.set(todo[j], outputRow(outcome));
      if (tally(job, outcome)) turn.retry.push(first - job.firstRow + todo[j]);
    }
  });
  writeRows(sheet, job.column + 1, first, rows);
  if (job.since !== undefined) {
    const stamp = [new Date(now())];
    writeRows(sheet, job.column + 1 + OUTPUT_WIDTH, first, new Map([...rows.keys()].map((o) => [o, stamp])));
  }
  job.counts.requests += report?.totals.requests ?? 0;
  job.counts.billed += report?.totals.billed ?? 0;
  job.done += rows.size;
  job.cursor = first + (firstLeft ?? count);
  if (report?.fatal) turn.stop = { code: report.fatal.code, message: outcomeText(report.fatal) };
  // The new domains the slice sent (what it spent of a background check's allowance).
  const sent = new Set(
    (report?.outcomes ?? []).flatMap((o) =>
      // A blank or locally rejected row has no key and was never sent.
      !o.key || (o.kind === 'record' && o.cached) || (o.kind === 'error' && o.code === 'unfinished')
        ? []
        : [o.key],
    ),
  ).size;
  return { left: firstLeft !== undefined, moved: rows.size > 0 || job.cursor > first, sent };
}

/** Slices until the job is done, the pace says stop, a fatal error comes, or rows must wait for later. */
function runTurn(sheet: Sheet, job: StoredJob, apiKey: string, pace: JobPace, turn: Turn): void {
  let allowance = pace.kind === 'background' ? pace.maxSend : Infinity;
  while (job.cursor <= job.lastRow && now() < pace.startBy && !turn.cancelled()) {
    const slicePace = pace.kind === 'background' ? { ...pace, maxSend: allowance } : pace;
    const { left, moved, sent } = checkSlice(sheet, job, apiKey, slicePace, turn);
    turn.progressed ||= moved;
    allowance -= sent;
    // A background check spends its allowance across slices (a slice that ends mid-window hands the rest of the
    // window to the next one), then its run decides what the window allows next.
    if (turn.stop || left || allowance <= 0) return;
  }
}

/** What a turn adds to the job: its rows done and counts since `base`, and its cursor if further on. */
function addProgress(stored: StoredJob, job: StoredJob, base: StoredJob): void {
  stored.done = Math.min(stored.total, stored.done + job.done - base.done);
  stored.cursor = Math.max(stored.cursor, job.cursor);
  for (const key of Object.keys(job.counts) as (keyof StoredJob['counts'])[])
    stored.counts[key] += job.counts[key] - base.counts[key];
  for (const [code, n] of Object.entries(job.skippedByReason))
    stored.skippedByReason[code] =
      (stored.skippedByReason[code] ?? 0) + n - (base.skippedByReason[code] ?? 0);
}

/**
 * Stores where a turn left the job (done, cancelled, stopped, or still running) and returns it. The turn's own
 * progress is added to the stored job, not written over it, so a turn that outlived its lease (another turn took
 * the job meanwhile) loses nothing of either.
 */
function settleJob(job: StoredJob, base: StoredJob, lease: string, turn: Turn): JobState {
  return changeJob(job.spreadsheetId, (stored, writes) => {
    if (!stored || stored.id !== job.id) return stateOf(stored ?? job);
    if (turn.retry.length > 0) {
      const rows = loadRetryRows(job.spreadsheetId);
      for (const row of turn.retry) rows.add(row);
      writes.retryRows(rows);
    }
    addProgress(stored, job, base);
    const ours = stored.lease === lease;
    if (ours) stored.leaseUntil = stored.lease = undefined;
    if (stored.status === 'cancelled') {
      stored.message = jobMessage(stored);
    } else if (turn.stop) {
      stored.status = 'error';
      stored.message = turn.stop.message;
    } else if (stored.cursor > stored.lastRow) {
      stored.status = 'done';
      stored.message = jobMessage(stored);
    } else if (ours) {
      stored.message = jobMessage(stored, turn.progressed);
    }
    writes.store(stored);
    return stateOf(stored);
  });
}

/** One turn of the job: the key, its pace, and the claim its caller already holds (else the turn claims the job). */
export interface JobTurn {
  apiKey: string | undefined;
  pace: JobPace;
  claim?: Claim;
}

/**
 * One turn of the running job, for the sidebar and the background alike, at the pace its caller resolved. Says whether
 * rows remain and why it stopped, if it did.
 */
export function advanceJob(
  spreadsheet: Spreadsheet,
  { apiKey, pace, claim }: JobTurn,
): { remaining: boolean; progressed: boolean; fatal?: JobStop; state?: JobState } {
  const spreadsheetId = idOf(spreadsheet);
  const { job, lease } = claim ?? claimJob(spreadsheetId, now(), false);
  if (!job || job.status !== 'running') return { remaining: false, progressed: false };
  // Another turn holds the job (its lease): this one waits rather than overlap it.
  if (!lease) return { remaining: true, progressed: false };
  const base: StoredJob = JSON.parse(JSON.stringify(job));
  const turn: Turn = {
    progressed: false,
    retry: [],
    cancelled: () => {
      const stored = loadJob(spreadsheetId);
      return !stored || stored.id !== job.id || stored.status === 'cancelled' || stored.lease !== lease;
    },
  };
  try {
    if (!apiKey) turn.stop = { code: 'no_key', message: NO_KEY };
    else runTurn(sheetOf(spreadsheet, job), job, apiKey, pace, turn);
  } catch (error) {
    // Google's daily quota: not the job's error; it goes on after Google's reset (the caller says so).
    if (noteDailyLimit(error)) throw error;
    turn.stop = { code: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  const state = settleJob(job, base, lease, turn);
  return { remaining: state.status === 'running', progressed: turn.progressed, fatal: turn.stop, state };
}

// ---- claiming a job -----------------------------------------------------------------------------------

/** A job and, when this turn got it, the lease it holds on it. */
export interface Claim {
  job?: StoredJob;
  lease?: string;
}

/**
 * The job for background checks to run, a stopped one (an error) running again as the sidebar's Resume asks; no
 * lease is taken (the background's step claims it).
 */
export function reopenJob(spreadsheetId: string): StoredJob | undefined {
  return changeJob(spreadsheetId, (job, writes) => {
    if (job?.status !== 'error') return job;
    job.status = 'running';
    job.message = undefined;
    writes.store(job);
    return job;
  });
}

/** Takes the lease of a running job (for the sidebar, also of a stopped one) unless another turn holds it. */
export function claimJob(spreadsheetId: string, at: number, reopen: boolean): Claim {
  return changeJob(spreadsheetId, (job, writes) => {
    const runnable = job?.status === 'running' || (reopen && job?.status === 'error');
    if (!job || !runnable || (job.leaseUntil ?? 0) > at) return { job };
    if (reopen) job.message = undefined;
    job.status = 'running';
    job.leaseUntil = at + LEASE_MS;
    job.lease = Utilities.getUuid();
    writes.store(job);
    return { job, lease: job.lease };
  });
}

// ─── job target ────────────────────────────────────────────────────────────────────────────────────────────────────
// Where a sidebar job reads and writes: the column of URLs it checks (a selection or a whole column, with or
// without a header row), the five result columns to its right, and the guard that never overwrites cells not ours:
// ours are those under our header, or in the rows our mark on the five columns names, and shaped like our output.

/** The columns written right of the URL column, in this order, with this header. */
export const OUTPUT_HEADER = ['DA', 'PA', 'MR', 'Spam Score', 'Status'];
export const OUTPUT_WIDTH = OUTPUT_HEADER.length;

export interface Target extends JobRange {
  sheet: Sheet;
  headerRow?: number;
  note?: string;
}

/** The job's sheet, by id (it may have been renamed) or else by name. */
export function sheetOf(spreadsheet: Spreadsheet, range: JobRange): Sheet {
  const sheet =
    spreadsheet.getSheets().find((s) => s.getSheetId() === range.sheetId) ??
    spreadsheet.getSheetByName(range.sheetName);
  if (!sheet) throw new Error(`The sheet "${range.sheetName}" of this job no longer exists.`);
  return sheet;
}

/** The input values of a job's range (its column, first to last row), one per row. */
export function inputValues(
  sheet: Sheet,
  range: Pick<JobRange, 'column' | 'firstRow' | 'lastRow'>,
): unknown[] {
  return sheet
    .getRange(range.firstRow, range.column, range.lastRow - range.firstRow + 1, 1)
    .getValues()
    .map((row) => row[0]);
}

function targetOf(sheet: Sheet, column: number, firstRow: number, lastRow: number): Target {
  return { sheet, sheetId: sheet.getSheetId(), sheetName: sheet.getName(), column, firstRow, lastRow };
}

/** The last row of a column that holds something (0 when the column is empty). */
function lastFilledRow(sheet: Sheet, column: number, upTo: number): number {
  const last = Math.min(upTo, sheet.getLastRow());
  if (last < 1) return 0;
  const values = sheet.getRange(1, column, last, 1).getValues();
  for (let i = values.length - 1; i >= 0; i--) {
    if (!isEmptyCell(values[i][0])) return i + 1;
  }
  return 0;
}

export function isOurHeader(row: readonly unknown[]): boolean {
  return OUTPUT_HEADER.every((name, i) => String(row[i] ?? '').trim() === name);
}

/** Whether a header row of ours stands above these rows in the output columns. */
function hasOurHeaderAbove(sheet: Sheet, column: number, firstRow: number): boolean {
  if (firstRow <= 1 || column + OUTPUT_WIDTH > sheet.getMaxColumns()) return false;
  const rows = sheet.getRange(1, column + 1, firstRow - 1, OUTPUT_WIDTH).getValues();
  return rows.some(isOurHeader);
}

/** A cell that does not look like a URL at the top of a selection is its header, not a row to check. */
function looksLikeHeader(value: unknown): boolean {
  if (isEmptyCell(value)) return true;
  return typeof value === 'string' && toEntry(value).kind !== 'candidate' && !value.includes('.');
}

function selectionTarget(spreadsheet: Spreadsheet): Target {
  const range = spreadsheet.getActiveRange();
  if (!range) throw new Error('Select the cells with the URLs first (one column).');
  const sheet = range.getSheet();
  const a1 = range.getA1Notation();
  if (range.getNumColumns() !== 1) {
    throw new Error(
      `Select one column of URLs: ${a1} has ${range.getNumColumns()} columns. The results go into the 5 columns to its right.`,
    );
  }
  const column = range.getColumn();
  const firstRow = range.getRow();
  const lastRow = lastFilledRow(sheet, column, range.getLastRow());
  if (lastRow < firstRow) throw new Error(`The selection ${a1} is empty: select the cells with the URLs.`);
  if (firstRow > 1) return { ...targetOf(sheet, column, firstRow, lastRow), headerRow: firstRow - 1 };
  const top = sheet.getRange(1, column).getValue();
  if (lastRow > 1 && looksLikeHeader(top)) {
    const note = isEmptyCell(top)
      ? 'Row 1 is empty: the header goes there.'
      : `Row 1 ("${String(top).slice(0, 40)}") is taken as the header.`;
    return { ...targetOf(sheet, column, 2, lastRow), headerRow: 1, note };
  }
  return { ...targetOf(sheet, column, 1, lastRow), note: 'No header row: the selection starts at row 1.' };
}

function columnTarget(spreadsheet: Spreadsheet, source: { column: unknown; headerRow: unknown }): Target {
  const sheet = sheetInView(spreadsheet);
  const column = typeof source.column === 'string' ? columnNumber(source.column) : undefined;
  if (column === undefined || column > sheet.getMaxColumns()) {
    throw new Error(
      `"${String(source.column).slice(0, 20)}" is not a column of ${sheet.getName()}: give its letter, e.g. "A".`,
    );
  }
  const firstRow = source.headerRow === true ? 2 : 1;
  const lastRow = lastFilledRow(sheet, column, sheet.getMaxRows());
  if (lastRow < firstRow) {
    throw new Error(
      `Column ${columnLetter(column)} of ${sheet.getName()} has no URLs${firstRow === 2 ? ' below its header' : ''}.`,
    );
  }
  return { ...targetOf(sheet, column, firstRow, lastRow), headerRow: firstRow === 2 ? 1 : undefined };
}

/** The rows a new job checks, from what the sidebar (or the menu) asked for. */
export function chooseTarget(spreadsheet: Spreadsheet, source: JobSource): Target {
  if (source && source.source === 'selection') return selectionTarget(spreadsheet);
  if (source && source.source === 'column') return columnTarget(spreadsheet, source);
  throw new Error(
    'startJob needs { source: "selection" } or { source: "column", column: "B", headerRow: true }.',
  );
}

// ---- our mark on the output columns (kept by storage.ts: OUTPUT_MARK) ----------------------------------

/**
 * The rows of our earlier output right of the URL column: those each of the five columns is marked with, at its own
 * place among them (a column inserted inside the output, or an output moved, is not ours). None: not marked.
 */
function markedRows(sheet: Sheet, column: number): number[] | undefined {
  let rows = [1, Infinity];
  for (let part = 0; part < OUTPUT_WIDTH; part++) {
    const mark = readColumnMarks(sheet, column + 1 + part)
      .map((value) => value.split(' ').map(Number))
      .find((m) => m[0] === part && m.length === 3);
    if (!mark) return undefined;
    rows = [Math.max(rows[0], mark[1]), Math.min(rows[1], mark[2])];
  }
  return rows[0] <= rows[1] ? rows : undefined;
}

/**
 * Marks the five output columns as ours for the target's rows (joined with the rows of our earlier output there when
 * they meet: those still hold it), each with its place among them and the rows: "0 1 600". Best effort: unmarked, a
 * later check without a header row is refused, as it is for a user's cells.
 */
export function markOutput({ sheet, column, firstRow, lastRow }: Target): void {
  try {
    const earlier = markedRows(sheet, column);
    const meets = earlier && earlier[0] <= lastRow + 1 && firstRow <= earlier[1] + 1;
    const rows = meets
      ? [Math.min(earlier[0], firstRow), Math.max(earlier[1], lastRow)]
      : [firstRow, lastRow];
    for (let part = 0; part < OUTPUT_WIDTH; part++)
      markColumn(sheet, column + 1 + part, `${part} ${rows.join(' ')}`);
  } catch (error) {
    console.warn(`DAPA: results not marked (${String(error)})`);
  }
}

/** Where a cell of an output row is not what we write (DA, PA, MR, Spam Score: a number or empty; Status: text or
 *  empty): its index, or -1. */
function unlikeOurs(row: readonly unknown[]): number {
  return row.findIndex((cell, i) => !isEmptyCell(cell) && typeof cell !== (i < 4 ? 'number' : 'string'));
}

/**
 * Refuses to overwrite cells that are not ours; returns whether the header row can be written. Ours: under our header,
 * or in the rows our mark names (a second check without a header row), and shaped like our output.
 */
export function guardOutputArea(target: Target): boolean {
  const { sheet, column, firstRow, lastRow } = target;
  const rows = sheet.getRange(firstRow, column + 1, lastRow - firstRow + 1, OUTPUT_WIDTH).getValues();
  let headerFree = false;
  let headerOurs = false;
  if (target.headerRow !== undefined) {
    const header = sheet.getRange(target.headerRow, column + 1, 1, OUTPUT_WIDTH).getValues()[0];
    headerOurs = isOurHeader(header);
    headerFree = header.every(isEmptyCell);
  }
  let ours: (row: number) => boolean = () => true;
  if (!rows.flat().every(isEmptyCell) && !headerOurs && !hasOurHeaderAbove(sheet, column, firstRow)) {
    const marked = markedRows(sheet, column);
    ours = (row) => marked !== undefined && row >= marked[0] && row <= marked[1];
  }
  const cellOf = (row: unknown[], i: number) =>
    ours(firstRow + i) ? unlikeOurs(row) : row.findIndex((cell) => !isEmptyCell(cell));
  const taken = rows.findIndex((row, i) => cellOf(row, i) >= 0);
  if (taken >= 0) {
    const cellIndex = cellOf(rows[taken], taken);
    const address = `${columnLetter(column + 1 + cellIndex)}${firstRow + taken}`;
    const area = `${columnLetter(column + 1)}${firstRow}:${columnLetter(column + OUTPUT_WIDTH)}${lastRow}`;
    throw new Error(
      `The results go into ${area}, but ${address} already holds "${String(rows[taken][cellIndex]).slice(0, 40)}". ` +
        `Clear those cells or insert 5 empty columns after column ${columnLetter(column)}, then start again.`,
    );
  }
  return headerFree || headerOurs;
}

/** Adds columns at the sheet's edge so that `width` result columns fit right of the URLs. */
export function makeRoom(sheet: Sheet, range: JobRange, width: number): void {
  const extra = range.column + width - sheet.getMaxColumns();
  if (extra > 0) sheet.insertColumnsAfter(sheet.getMaxColumns(), extra);
}

/** Clears the `width` result columns of the range's rows. */
export function clearOutput(sheet: Sheet, range: JobRange, width: number): void {
  sheet.getRange(range.firstRow, range.column + 1, range.lastRow - range.firstRow + 1, width).clearContent();
}
