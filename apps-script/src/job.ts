// The sidebar's bulk check as a job kept in UserProperties: startJob writes the header and stores the job, each
// continueJob call checks the next rows within ~25 seconds and writes them, so 10,000 rows finish in short steps.
/// <reference types="google-apps-script" />
import { type Outcome, toEntry } from '../../shared';
import type { JobCounts, JobSource, JobState, SelectionInfo } from '../sidebar/contract';
import { asCellText, columnLetter, columnNumber, isEmptyCell } from './cells';
import { wakeBackground } from './background-state';
import { checkValues } from './check';
import { now, sleep } from './gas';
import { NO_KEY } from './messages';
import { currentBaseUrl, requireApiKey, storedApiKey } from './settings';
import { isRecord, locked, readValue, writeValue } from './storage';
import { USER_PROPERTY } from './storage-keys';

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;
type CellValue = string | number | boolean | Date;

/** The columns written right of the URL column, in this order, with this header. */
export const OUTPUT_HEADER = ['DA', 'PA', 'MR', 'Spam Score', 'Status'];
const OUTPUT_WIDTH = OUTPUT_HEADER.length;
const BLANK_STATUS = 'empty_url: Empty cell: nothing to check.';
/** Rows read, checked and written together. */
const WINDOW_ROWS = 500;
/** A step starts no new window after this long, and its check stops by STEP_BUDGET_MS. */
const STEP_START_MS = 10_000;
const STEP_BUDGET_MS = 25_000;
/** While a step runs it holds a lease on the job, so that a second step (a reopened sidebar) does not overlap. */
const LEASE_MS = 60_000;
/** Status codes whose rows "Retry skipped" checks again. */
export const RETRYABLE_CODES = [
  'lookup_failed',
  'rate_limit_reached',
  'unfinished',
  'server_error',
  'missing',
  'cancelled',
];

/** A job as kept in UserProperties: what the sidebar sees (its A1 range is derived) plus where it stands. */
interface StoredJob extends Omit<JobState, 'a1'> {
  spreadsheetId: string;
  sheetId: number;
  column: number;
  firstRow: number;
  lastRow: number;
  /** Rows before the cursor are finished; rows after it may be finished already (written, so skipped). */
  cursor: number;
  mode: 'all' | 'retry';
  leaseUntil?: number;
  /** "Check again": the cache and the result store are not used. */
  fresh?: boolean;
  /** A scheduled refresh: only results checked since then are reused, and a "Checked at" column is written. */
  since?: number;
}

// ---- storage --------------------------------------------------------------------------------------------

function activeSpreadsheet(): Spreadsheet {
  const spreadsheet = SpreadsheetApp.getActiveSpreadsheet();
  if (!spreadsheet)
    throw new Error('Open a spreadsheet first: the DAPA sidebar works on the active spreadsheet.');
  return spreadsheet;
}

function jobProperty(spreadsheetId: string): string {
  return USER_PROPERTY.jobPrefix + spreadsheetId;
}

function parseJob(raw: unknown): StoredJob | undefined {
  return isRecord(raw) && typeof raw.id === 'string' && typeof raw.cursor === 'number'
    ? (raw as unknown as StoredJob)
    : undefined;
}

export function loadJob(spreadsheetId: string): StoredJob | undefined {
  return readValue('user', jobProperty(spreadsheetId), parseJob);
}

function storeJob(job: StoredJob): void {
  writeValue('user', jobProperty(job.spreadsheetId), job);
}

function emptyCounts(): JobCounts {
  return { records: 0, skipped: 0, errors: 0, requests: 0, billed: 0, cached: 0, retryable: 0 };
}

function a1Of(job: Pick<StoredJob, 'column' | 'firstRow' | 'lastRow'>): string {
  const letter = columnLetter(job.column);
  return `${letter}${job.firstRow}:${letter}${job.lastRow}`;
}

function stateOf(job: StoredJob, note?: string): JobState {
  const state: JobState = {
    id: job.id,
    sheetName: job.sheetName,
    a1: a1Of(job),
    total: job.total,
    done: job.done,
    status: job.status,
    counts: { ...job.counts },
    skippedByReason: { ...job.skippedByReason },
  };
  const message = note ?? job.message;
  if (message) state.message = message;
  return state;
}

function summary(job: StoredJob): string {
  const c = job.counts;
  return (
    `${c.records} with metrics, ${c.skipped} skipped, ${c.errors} not checked; ` +
    `${c.requests} requests, ${c.billed} billed queries, ${c.cached} from the cache.`
  );
}

function sheetOf(spreadsheet: Spreadsheet, job: StoredJob): Sheet {
  const sheet =
    spreadsheet.getSheets().find((s) => s.getSheetId() === job.sheetId) ??
    spreadsheet.getSheetByName(job.sheetName);
  if (!sheet) throw new Error(`The sheet "${job.sheetName}" of this job no longer exists.`);
  return sheet;
}

// ---- where a job reads and writes ----------------------------------------------------------------------

interface Target {
  sheet: Sheet;
  column: number;
  firstRow: number;
  lastRow: number;
  headerRow?: number;
  note?: string;
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

function outputRangeText(column: number, fromRow: number, toRow: number): string {
  return `${columnLetter(column + 1)}${fromRow}:${columnLetter(column + OUTPUT_WIDTH)}${toRow}`;
}

function isOurHeader(row: readonly unknown[]): boolean {
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
  let firstRow = range.getRow();
  const lastRow = lastFilledRow(sheet, column, range.getLastRow());
  if (lastRow < firstRow) throw new Error(`The selection ${a1} is empty: select the cells with the URLs.`);
  if (firstRow === 1) {
    const top = sheet.getRange(1, column).getValue();
    if (lastRow > 1 && looksLikeHeader(top)) {
      firstRow = 2;
      const note = isEmptyCell(top)
        ? 'Row 1 is empty: the header goes there.'
        : `Row 1 ("${String(top).slice(0, 40)}") is taken as the header.`;
      return { sheet, column, firstRow, lastRow, headerRow: 1, note };
    }
    return { sheet, column, firstRow, lastRow, note: 'No header row: the selection starts at row 1.' };
  }
  return { sheet, column, firstRow, lastRow, headerRow: firstRow - 1 };
}

function columnTarget(spreadsheet: Spreadsheet, source: { column: unknown; headerRow: unknown }): Target {
  const sheet = spreadsheet.getActiveSheet();
  const column = typeof source.column === 'string' ? columnNumber(source.column) : undefined;
  if (column === undefined || column > sheet.getMaxColumns()) {
    throw new Error(
      `"${String(source.column).slice(0, 20)}" is not a column of ${sheet.getName()}: give its letter, e.g. "A".`,
    );
  }
  const firstRow = source.headerRow === true ? 2 : 1;
  const lastRow = lastFilledRow(sheet, column, sheet.getMaxRows());
  const letter = columnLetter(column);
  if (lastRow < firstRow) {
    throw new Error(
      `Column ${letter} of ${sheet.getName()} has no URLs${firstRow === 2 ? ' below its header' : ''}.`,
    );
  }
  return { sheet, column, firstRow, lastRow, headerRow: firstRow === 2 ? 1 : undefined };
}

/** Refuses to overwrite cells that are not ours; returns whether the header row can be written. */
function guardOutputArea(target: Target): boolean {
  const { sheet, column, firstRow, lastRow } = target;
  const rows = sheet.getRange(firstRow, column + 1, lastRow - firstRow + 1, OUTPUT_WIDTH).getValues();
  let headerFree = false;
  let headerOurs = false;
  if (target.headerRow !== undefined) {
    const header = sheet.getRange(target.headerRow, column + 1, 1, OUTPUT_WIDTH).getValues()[0];
    headerOurs = isOurHeader(header);
    headerFree = header.every(isEmptyCell);
  }
  const taken = rows.findIndex((row) => row.some((cell) => !isEmptyCell(cell)));
  if (taken >= 0 && !headerOurs && !hasOurHeaderAbove(sheet, column, firstRow)) {
    const cellIndex = rows[taken].findIndex((cell) => !isEmptyCell(cell));
    const address = `${columnLetter(column + 1 + cellIndex)}${firstRow + taken}`;
    throw new Error(
      `The results go into ${outputRangeText(column, firstRow, lastRow)}, but ${address} already holds "${String(rows[taken][cellIndex]).slice(0, 40)}". ` +
        `Clear those cells or insert 5 empty columns after column ${columnLetter(column)}, then start again.`,
    );
  }
  return headerFree || headerOurs;
}

// ---- server functions ---------------------------------------------------------------------------------

/** What is selected, for the sidebar's "check the selection". */
export function getSelection(): SelectionInfo {
  const spreadsheet = activeSpreadsheet();
  const range = spreadsheet.getActiveRange();
  if (!range) {
    const sheet = spreadsheet.getActiveSheet();
    return { sheetName: sheet.getName(), a1: '', rows: 0, columns: 0, firstColumn: '' };
  }
  return {
    sheetName: range.getSheet().getName(),
    a1: range.getA1Notation(),
    rows: range.getNumRows(),
    columns: range.getNumColumns(),
    firstColumn: columnLetter(range.getColumn()),
  };
}

export function startJob(source: JobSource): JobState {
  requireApiKey();
  const spreadsheet = activeSpreadsheet();
  let target: Target;
  if (source && source.source === 'selection') target = selectionTarget(spreadsheet);
  else if (source && source.source === 'column') target = columnTarget(spreadsheet, source);
  else {
    throw new Error(
      'startJob needs { source: "selection" } or { source: "column", column: "B", headerRow: true }.',
    );
  }
  const { sheet, column, firstRow, lastRow } = target;
  const extra = column + OUTPUT_WIDTH - sheet.getMaxColumns();
  if (extra > 0) sheet.insertColumnsAfter(sheet.getMaxColumns(), extra);
  const writeHeader = guardOutputArea(target);
  sheet.getRange(firstRow, column + 1, lastRow - firstRow + 1, OUTPUT_WIDTH).clearContent();
  if (writeHeader && target.headerRow !== undefined) {
    sheet.getRange(target.headerRow, column + 1, 1, OUTPUT_WIDTH).setValues([OUTPUT_HEADER.slice()]);
  }
  const job: StoredJob = {
    id: Utilities.getUuid(),
    spreadsheetId: spreadsheet.getId(),
    sheetId: sheet.getSheetId(),
    sheetName: sheet.getName(),
    column,
    firstRow,
    lastRow,
    cursor: firstRow,
    mode: 'all',
    total: lastRow - firstRow + 1,
    done: 0,
    status: 'running',
    counts: emptyCounts(),
    skippedByReason: {},
    message: target.note,
  };
  if (source.fresh === true) job.fresh = true;
  locked(() => storeJob(job));
  wakeBackground(job.spreadsheetId, now());
  return stateOf(job);
}

/** Where a scheduled refresh re-checks: the range of an earlier sidebar job. */
export interface JobRange {
  sheetId: number;
  sheetName: string;
  column: number;
  firstRow: number;
  lastRow: number;
}

export function jobRange(spreadsheetId: string): JobRange | undefined {
  const job = loadJob(spreadsheetId);
  return (
    job && {
      sheetId: job.sheetId,
      sheetName: job.sheetName,
      column: job.column,
      firstRow: job.firstRow,
      lastRow: job.lastRow,
    }
  );
}

/** A scheduled refresh of a range: its results are checked again (reusing only what was checked since `since`). */
export function startRefreshJob(spreadsheet: Spreadsheet, range: JobRange, since: number): void {
  const sheet = sheetOf(spreadsheet, { ...range } as StoredJob);
  const extra = range.column + OUTPUT_WIDTH + 1 - sheet.getMaxColumns();
  if (extra > 0) sheet.insertColumnsAfter(sheet.getMaxColumns(), extra);
  sheet
    .getRange(range.firstRow, range.column + 1, range.lastRow - range.firstRow + 1, OUTPUT_WIDTH + 1)
    .clearContent();
  if (
    range.firstRow > 1 &&
    isOurHeader(sheet.getRange(range.firstRow - 1, range.column + 1, 1, OUTPUT_WIDTH).getValues()[0])
  )
    sheet.getRange(range.firstRow - 1, range.column + 1 + OUTPUT_WIDTH).setValue('Checked at');
  const job: StoredJob = {
    ...range,
    id: Utilities.getUuid(),
    spreadsheetId: spreadsheet.getId(),
    sheetName: sheet.getName(),
    cursor: range.firstRow,
    mode: 'all',
    total: range.lastRow - range.firstRow + 1,
    done: 0,
    status: 'running',
    counts: emptyCounts(),
    skippedByReason: {},
    message: 'Scheduled refresh.',
    since,
  };
  locked(() => storeJob(job));
}

function outputRow(outcome: Outcome): CellValue[] {
  if (outcome.kind === 'record') {
    const r = outcome.record;
    const metrics = [r.site_da, r.site_pa, r.site_mr, r.spam_score];
    const status = metrics.every((m) => m === null)
      ? 'no_data: the service returned this domain without metrics.'
      : '';
    return [...metrics.map((m) => (m === null ? '' : m)), status];
  }
  const code = outcome.kind === 'skip' ? outcome.reason : outcome.code;
  if (outcome.kind === 'skip' && outcome.blank) return ['', '', '', '', BLANK_STATUS];
  return ['', '', '', '', asCellText(`${code}: ${outcome.message}`)];
}

function tally(job: StoredJob, outcome: Outcome): void {
  const c = job.counts;
  if (outcome.kind === 'record') {
    c.records += 1;
    if (outcome.cached) c.cached += 1;
    return;
  }
  const code = outcome.kind === 'skip' ? outcome.reason : outcome.code;
  job.skippedByReason[code] = (job.skippedByReason[code] ?? 0) + 1;
  if (outcome.kind === 'skip') c.skipped += 1;
  else c.errors += 1;
  if (outcome.retryable) c.retryable += 1;
}

interface WindowResult {
  written: number;
  /** Rows were left for a later step (the time budget, the plan's window or Cancel came first). */
  leftRows: boolean;
  fatal?: { code: string; message: string };
}

/** Checks the unwritten rows of the window at the cursor, writes what finished, and moves the cursor. */
function checkWindow(
  sheet: Sheet,
  job: StoredJob,
  apiKey: string,
  deadline: number,
  cancelled: () => boolean,
  maxSend?: number,
): WindowResult {
  const first = job.cursor;
  const count = Math.min(job.lastRow, first + WINDOW_ROWS - 1) - first + 1;
  const inputs = sheet.getRange(first, job.column, count, 1).getValues();
  const outputs = sheet.getRange(first, job.column + 1, count, OUTPUT_WIDTH).getValues();
  const todo: number[] = [];
  outputs.forEach((row, i) => {
    if (row.every(isEmptyCell)) todo.push(i);
  });
  if (todo.length === 0) {
    job.cursor = first + count;
    return { written: 0, leftRows: false };
  }
  const report = checkValues(
    todo.map((i) => inputs[i][0]),
    {
      apiKey,
      baseUrl: currentBaseUrl(),
      deadline,
      cancelled,
      keep: true,
      fresh: job.fresh,
      since: job.since,
      maxSend,
      waitForRateLimits: maxSend === undefined,
      parallel: maxSend !== undefined,
    },
  );
  job.counts.requests += report.totals.requests;
  job.counts.billed += report.totals.billed;
  const fatal = report.fatal && report.fatal.code;
  const rows = new Map<number, CellValue[]>();
  let firstLeft: number | undefined;
  report.outcomes.forEach((outcome, j) => {
    const left =
      (outcome.kind === 'error' &&
        (outcome.code === 'unfinished' || outcome.code === 'cancelled' || outcome.code === fatal)) ||
      (maxSend !== undefined && outcome.kind === 'skip' && outcome.reason === 'rate_limit_reached');
    if (left) {
      if (firstLeft === undefined) firstLeft = todo[j];
      return;
    }
    rows.set(todo[j], outputRow(outcome));
    tally(job, outcome);
  });
  writeRows(sheet, job.column + 1, first, rows);
  if (job.since !== undefined) {
    const stamp = new Date(now());
    writeRows(
      sheet,
      job.column + 1 + OUTPUT_WIDTH,
      first,
      new Map([...rows.keys()].map((o) => [o, [stamp]])),
    );
  }
  job.done += rows.size;
  job.cursor = first + (firstLeft ?? count);
  return { written: rows.size, leftRows: firstLeft !== undefined, fatal: report.fatal };
}

/** Writes rows (by offset from `first`) in runs of consecutive rows: one setValues per run. */
function writeRows(sheet: Sheet, column: number, first: number, rows: Map<number, CellValue[]>): void {
  const offsets = [...rows.keys()].sort((a, b) => a - b);
  let start = 0;
  while (start < offsets.length) {
    let end = start;
    while (end + 1 < offsets.length && offsets[end + 1] === offsets[end] + 1) end += 1;
    const block = offsets.slice(start, end + 1).map((o) => rows.get(o) as CellValue[]);
    sheet.getRange(first + offsets[start], column, block.length, block[0].length).setValues(block);
    start = end + 1;
  }
}

export function continueJob(): JobState {
  const startedAt = now();
  const spreadsheet = activeSpreadsheet();
  const spreadsheetId = spreadsheet.getId();
  const claim = locked(() => {
    const stored = loadJob(spreadsheetId);
    if (!stored) return undefined;
    if (stored.status !== 'running' && stored.status !== 'error')
      return { job: stored, busy: false, idle: true };
    if ((stored.leaseUntil ?? 0) > startedAt) return { job: stored, busy: true, idle: false };
    stored.status = 'running';
    stored.message = undefined;
    stored.leaseUntil = startedAt + LEASE_MS;
    storeJob(stored);
    return { job: stored, busy: false, idle: false };
  });
  if (!claim) throw new Error('There is no DAPA job in this spreadsheet: start one from the sidebar.');
  if (claim.idle) return stateOf(claim.job);
  if (claim.busy) {
    // Another step holds the job (a second sidebar): wait a little instead of being called again at once.
    sleep(Math.max(0, Math.min(5_000, (claim.job.leaseUntil ?? 0) - startedAt)));
    return stateOf(claim.job, 'Another step of this job is running (is the sidebar open twice?).');
  }
  const job = claim.job;
  if (wakeBackground(spreadsheetId)) {
    // Background checks run this job (also with the sidebar closed); the sidebar only shows where it stands.
    locked(() => {
      const stored = loadJob(spreadsheetId);
      if (stored && stored.id === job.id) storeJob({ ...stored, leaseUntil: undefined });
    });
    return stateOf(job, `Checked ${job.done} of ${job.total} rows; the rest is checked in the background.`);
  }
  const cancelled = () => {
    const stored = loadJob(spreadsheetId);
    return !stored || stored.id !== job.id || stored.status === 'cancelled';
  };

  let fatal: string | undefined;
  let progressed = false;
  try {
    const apiKey = storedApiKey();
    if (!apiKey) fatal = NO_KEY;
    else {
      const sheet = sheetOf(spreadsheet, job);
      while (job.cursor <= job.lastRow && now() - startedAt < STEP_START_MS && !cancelled()) {
        const before = job.cursor;
        const result = checkWindow(sheet, job, apiKey, startedAt + STEP_BUDGET_MS, cancelled);
        if (result.written > 0 || job.cursor > before) progressed = true;
        if (result.fatal) fatal = result.fatal.message;
        if (result.fatal || result.leftRows) break;
      }
    }
  } catch (error) {
    fatal = error instanceof Error ? error.message : String(error);
  }

  if (!progressed && !fatal && job.cursor <= job.lastRow && !cancelled()) {
    // Nothing could be sent (a plan's rate limit): wait here a little rather than have the sidebar call at once.
    sleep(Math.max(0, Math.min(10_000, startedAt + 30_000 - now())));
  }

  return settleJob(spreadsheetId, job, fatal, progressed);
}

/** Stores where a step left the job (done, cancelled, stopped on an error, or still running) and returns it. */
function settleJob(
  spreadsheetId: string,
  job: StoredJob,
  fatal: string | undefined,
  progressed: boolean,
): JobState {
  return locked(() => {
    const stored = loadJob(spreadsheetId);
    if (stored && stored.id !== job.id) return stateOf(stored);
    job.leaseUntil = undefined;
    if (stored?.status === 'cancelled') {
      job.status = 'cancelled';
      job.message = `Cancelled after ${job.done} of ${job.total} rows. ${summary(job)}`;
    } else if (fatal) {
      job.status = 'error';
      job.message = fatal;
    } else if (job.cursor > job.lastRow) {
      job.status = 'done';
      job.message = `Done: ${job.total} rows. ${summary(job)}`;
    } else {
      job.status = 'running';
      job.message = progressed
        ? `Checked ${job.done} of ${job.total} rows.`
        : "Waiting for the plan's rate limit before the next rows.";
    }
    storeJob(job);
    return stateOf(job);
  });
}

/**
 * One background turn of the running job: windows of rows with at most `room()` new domains sent each (what the
 * plan's window allows now), no waiting. Says whether rows remain and why it stopped, if it did.
 */
export function continueJobInBackground(
  spreadsheet: Spreadsheet,
  apiKey: string,
  room: () => number,
  deadline: number,
): { remaining: boolean; fatal?: { code: string; message: string } } {
  const spreadsheetId = spreadsheet.getId();
  const job = loadJob(spreadsheetId);
  if (!job || job.status !== 'running') return { remaining: false };
  let fatal: { code: string; message: string } | undefined;
  let progressed = false;
  const cancelled = () => loadJob(spreadsheetId)?.status === 'cancelled';
  try {
    const sheet = sheetOf(spreadsheet, job);
    for (
      let maxSend = room();
      job.cursor <= job.lastRow && maxSend > 0 && now() < deadline;
      maxSend = room()
    ) {
      const before = job.cursor;
      const result = checkWindow(sheet, job, apiKey, deadline, cancelled, maxSend);
      if (result.written > 0 || job.cursor > before) progressed = true;
      fatal = result.fatal;
      if (fatal || cancelled() || (result.leftRows && job.cursor === before && result.written === 0)) break;
    }
  } catch (error) {
    fatal = { code: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  const state = settleJob(spreadsheetId, job, fatal?.message, progressed);
  return { remaining: state.status === 'running', fatal };
}

export function cancelJob(): JobState {
  const spreadsheetId = activeSpreadsheet().getId();
  return locked(() => {
    const job = loadJob(spreadsheetId);
    if (!job) throw new Error('There is no DAPA job in this spreadsheet to cancel.');
    if (job.status === 'running' || job.status === 'error') {
      job.status = 'cancelled';
      job.message = `Cancelled after ${job.done} of ${job.total} rows. ${summary(job)}`;
      storeJob(job);
    }
    return stateOf(job);
  });
}

export function getJob(): JobState | null {
  const job = loadJob(activeSpreadsheet().getId());
  return job ? stateOf(job) : null;
}

function statusCode(value: unknown): string {
  const text = String(value ?? '').trim();
  const colon = text.indexOf(':');
  return (colon >= 0 ? text.slice(0, colon) : text).trim();
}

/** A new job over the rows of the last job that ended for a reason that can change, and rows never checked. */
export function retrySkipped(): JobState {
  requireApiKey();
  const spreadsheet = activeSpreadsheet();
  const last = loadJob(spreadsheet.getId());
  if (!last) throw new Error('There is no earlier DAPA job in this spreadsheet to retry.');
  if (last.status === 'running' && (last.leaseUntil ?? 0) > now()) {
    throw new Error('The job is still running: let it finish or cancel it first.');
  }
  const sheet = sheetOf(spreadsheet, last);
  const count = last.lastRow - last.firstRow + 1;
  const inputs = sheet.getRange(last.firstRow, last.column, count, 1).getValues();
  const outputRange = sheet.getRange(last.firstRow, last.column + 1, count, OUTPUT_WIDTH);
  const outputs = outputRange.getValues();
  let again = 0;
  const rewritten = outputs.map((row, i) => {
    const unchecked = row.every(isEmptyCell);
    const retry = unchecked || RETRYABLE_CODES.includes(statusCode(row[OUTPUT_WIDTH - 1]));
    if (retry && isEmptyCell(inputs[i][0])) return ['', '', '', '', BLANK_STATUS];
    if (retry) {
      again += 1;
      return row.map(() => '');
    }
    return row.map((cell) => (typeof cell === 'string' ? asCellText(cell) : (cell as CellValue)));
  });
  const job: StoredJob = {
    ...last,
    id: Utilities.getUuid(),
    cursor: last.firstRow,
    mode: 'retry',
    total: again,
    done: 0,
    status: again > 0 ? 'running' : 'done',
    counts: emptyCounts(),
    skippedByReason: {},
    message:
      again > 0
        ? `Retrying ${again} rows that were skipped for a reason that can change.`
        : 'Nothing to retry: no row was skipped for a reason that can change.',
    leaseUntil: undefined,
  };
  if (again > 0) outputRange.setValues(rewritten);
  locked(() => storeJob(job));
  return stateOf(job);
}
