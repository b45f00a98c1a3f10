// Where a sidebar job reads and writes: the column of URLs it checks (a selection or a whole column, with or
// without a header row), the five result columns to its right, and the guard that never overwrites cells not ours:
// ours are those under our header, or in the rows our mark on the five columns names, and shaped like our output.
import { toEntry } from '../../../shared';
import type { JobSource } from '../../sidebar/contract';
import { columnLetter, columnNumber, isEmptyCell } from '../platform/cells';
import type { JobRange } from '../stores/job-store';
import { markColumn, readColumnMarks } from '../stores/storage';
import { sheetInView } from '../stores/store-sheet';

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

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
