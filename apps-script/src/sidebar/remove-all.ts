// A clean way out: "Remove DAPA from this spreadsheet" takes out everything DAPA put in the spreadsheet (its hidden
// sheets, the sample sheet, its developer metadata and document properties, this user's triggers and state for it)
// and turns every formula with a DAPA call into the values it shows, so the user's data and results stay and nothing
// refers to DAPA any more (the 4th arguments go with the formulas); no other formula or value of the user's is
// written. Stored values go through their owners' operations (the hidden sheets: store-sheet.ts; the developer metadata
// and document properties: storage.ts).
/// <reference types="google-apps-script" />
import { callsDapa } from '../checks/formulas';
import { MENU_NAME, removeConfirmText, removedText } from '../messages';
import { allowedFor, type Spreadsheet } from '../platform/gas';
import { activeSpreadsheet, idOf } from '../stores/session';
import { forgetBackground, forgetJob } from '../stores/background-store';
import { forgetSaved } from '../stores/results';
import { forgetAllMetadata } from '../stores/storage';
import { SAMPLE_SHEET } from '../stores/storage-keys';
import { deleteHiddenSheets, isAddOnSheet } from '../stores/store-sheet';
import { armDispatcher, removeEditTrigger } from '../background/dispatcher';
import { uiAllowed } from './menu-consent';

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;

export interface Removed {
  formulas: number;
  sheets: number;
  notes: number;
}

type Cell = [row: number, column: number];

/**
 * Writes `values` back into the given cells (0-based in the grid read from A1), as few rectangles as it takes: each
 * column's runs of rows, side by side where neighbouring columns have the same run.
 */
function writeCells(sheet: Sheet, cells: Cell[], values: unknown[][]): void {
  const runs = new Map<string, number[]>(); // "firstRow:lastRow" → columns
  const byColumn = new Map<number, number[]>();
  for (const [r, c] of cells) byColumn.set(c, [...(byColumn.get(c) ?? []), r]);
  for (const [c, rows] of byColumn) {
    rows.sort((a, b) => a - b);
    let first = rows[0];
    rows.forEach((r, i) => {
      if (i + 1 < rows.length && rows[i + 1] === r + 1) return;
      const key = `${first}:${r}`;
      runs.set(key, [...(runs.get(key) ?? []), c]);
      first = rows[i + 1];
    });
  }
  for (const [key, columns] of runs) {
    const [firstRow, lastRow] = key.split(':').map(Number);
    columns.sort((a, b) => a - b);
    let from = 0;
    columns.forEach((c, i) => {
      if (i + 1 < columns.length && columns[i + 1] === c + 1) return;
      const firstColumn = columns[from];
      const block = values.slice(firstRow, lastRow + 1).map((line) => line.slice(firstColumn, c + 1));
      sheet.getRange(firstRow + 1, firstColumn + 1, block.length, block[0].length).setValues(block);
      from = i + 1;
    });
  }
}

/**
 * Every formula with a call of DAPA's in it (=DAPA(...), =INDEX(DAPA(...),1,1), =IFERROR(DAPA(...),""),
 * =ARRAYFORMULA(DAPA(...)), =DAPA_SAMPLE(...), ...; "DAPA(" inside a quoted text does not count) becomes the value it
 * shows now, and so does the array result it spilled into cells without a formula of their own; no other cell is
 * written. Sheets does not say which cells a formula's array fills, so the spill is what the formulas' own cells, once
 * values, take away: the cells below or right of one that showed a value before and are empty after (two reads, no
 * guess from the formula text).
 */
function formulasToValues(spreadsheet: Spreadsheet): number {
  let count = 0;
  for (const sheet of spreadsheet.getSheets()) {
    const lastRow = sheet.getLastRow();
    const lastColumn = sheet.getLastColumn();
    const name = sheet.getName();
    if (lastRow < 1 || lastColumn < 1 || isAddOnSheet(name) || name === SAMPLE_SHEET) continue; // deleted below
    const range = sheet.getRange(1, 1, lastRow, lastColumn);
    const formulas = range.getFormulas();
    const anchors: Cell[] = [];
    formulas.forEach((line, r) =>
      line.forEach((formula, c) => {
        if (formula && callsDapa(formula)) anchors.push([r, c]);
      }),
    );
    if (anchors.length === 0) continue;
    const shown = range.getValues();
    writeCells(sheet, anchors, shown);
    SpreadsheetApp.flush();
    const after = range.getValues();
    // The first row a DAPA formula sits on at or left of each column: a spilled cell lies below-right of one.
    const top: number[] = new Array<number>(lastColumn).fill(Infinity);
    for (const [r, c] of anchors) top[c] = Math.min(top[c], r);
    for (let c = 1; c < lastColumn; c++) top[c] = Math.min(top[c], top[c - 1]);
    const spilled: Cell[] = [];
    shown.forEach((line, r) =>
      line.forEach((value, c) => {
        if (r >= top[c] && !formulas[r][c] && value !== '' && after[r][c] === '') spilled.push([r, c]);
      }),
    );
    if (spilled.length > 0) writeCells(sheet, spilled, shown);
    count += anchors.length;
  }
  return count;
}

/**
 * This user's triggers and state for the spreadsheet: background checks, the sidebar's job, its retry rows, the
 * credits kept results saved there.
 */
function forgetThisSpreadsheet(spreadsheet: Spreadsheet): void {
  const id = idOf(spreadsheet);
  forgetBackground(id);
  forgetJob(id);
  forgetSaved(id);
  try {
    removeEditTrigger(spreadsheet);
    armDispatcher(true); // the user's step trigger stays only for other spreadsheets with work
  } catch {
    // without the triggers permission there is no trigger of ours to list
  }
}

/** Removes everything DAPA put in the active spreadsheet; the user's data and results stay, as values. */
export function removeAll(): Removed {
  const spreadsheet = activeSpreadsheet();
  forgetThisSpreadsheet(spreadsheet);
  const formulas = formulasToValues(spreadsheet);
  let sheets = deleteHiddenSheets(spreadsheet);
  // The sample sheet is the user's to look at, not a store: it goes here, unless it is the last sheet.
  const sample = spreadsheet.getSheetByName(SAMPLE_SHEET);
  if (sample && spreadsheet.getSheets().length > 1) {
    spreadsheet.deleteSheet(sample);
    sheets++;
  }
  return { formulas, sheets, notes: forgetAllMetadata(spreadsheet) };
}

/** The menu item: asks first, then removes and says what it did. */
export function removeDapa(): void {
  uiAllowed();
  allowedFor('sheet', 'Remove DAPA from this spreadsheet');
  const ui = SpreadsheetApp.getUi();
  if (ui.alert(MENU_NAME, removeConfirmText(), ui.ButtonSet.OK_CANCEL) !== ui.Button.OK) return;
  ui.alert(MENU_NAME, removedText(removeAll()), ui.ButtonSet.OK);
}
