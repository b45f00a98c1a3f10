// A clean way out: "Remove DAPA from this spreadsheet" takes out everything DAPA put in the spreadsheet (its hidden
// sheets, the sample sheet, its developer metadata and document properties, this user's triggers and state for it)
// and turns every =DAPA formula into the values it shows, so the user's data and results stay and nothing refers
// to DAPA any more (the 4th arguments go with the formulas). Stored values go through their owners' operations.
/// <reference types="google-apps-script" />
import { isDapaFormula, parseDapaCall } from '../checks/formula-text';
import { MENU_NAME, removeConfirmText, removedText } from '../messages';
import type { Spreadsheet } from '../platform/gas';
import { activeSpreadsheet, idOf } from '../stores/session';
import { forgetBackground } from '../stores/background-store';
import { forgetJob } from '../stores/job-store';
import { forgetSaved } from '../stores/saved-credits';
import { forgetLegacyValues } from '../stores/storage';
import { SAMPLE_SHEET } from '../stores/storage-keys';
import { isAddOnSheet } from '../stores/store-sheet';
import { removeEditTrigger } from '../triggers/handlers';
import { armDispatcher } from '../triggers/step-trigger';
import { uiAllowed } from './menu-consent';

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;

export interface Removed {
  formulas: number;
  sheets: number;
  notes: number;
}

/** The rectangle a DAPA formula's result fills: one row a source cell (a header first), as wide as its columns. */
function resultSize(
  spreadsheet: Spreadsheet,
  sheet: Sheet,
  formula: string,
): { rows: number; columns: number } {
  const call = parseDapaCall(formula);
  const source = call?.source;
  if (!call || !source) return { rows: 1, columns: call?.width ?? 1 };
  const from = source.sheetName === undefined ? sheet : spreadsheet.getSheetByName(source.sheetName);
  const lastRow = source.lastRow ?? Math.max(source.firstRow, from?.getLastRow() ?? source.firstRow);
  const cells = (lastRow - source.firstRow + 1) * (source.lastColumn - source.firstColumn + 1);
  return { rows: cells + (call.header ? 1 : 0), columns: call.width };
}

/** Every =DAPA formula of the user's sheets becomes the values it shows now (its whole result, header included). */
function formulasToValues(spreadsheet: Spreadsheet): number {
  let count = 0;
  for (const sheet of spreadsheet.getSheets()) {
    const lastRow = sheet.getLastRow();
    const lastColumn = sheet.getLastColumn();
    if (lastRow < 1 || lastColumn < 1 || isAddOnSheet(sheet.getName())) continue;
    const formulas = sheet.getRange(1, 1, lastRow, lastColumn).getFormulas();
    formulas.forEach((line, r) =>
      line.forEach((formula, c) => {
        if (!formula || !isDapaFormula(formula)) return;
        const size = resultSize(spreadsheet, sheet, formula);
        const rows = Math.max(1, Math.min(size.rows, sheet.getMaxRows() - r));
        const columns = Math.max(1, Math.min(size.columns, sheet.getMaxColumns() - c));
        const range = sheet.getRange(r + 1, c + 1, rows, columns);
        range.setValues(range.getValues());
        count += 1;
      }),
    );
  }
  return count;
}

/** The add-on's hidden sheets and the sample sheet. */
function deleteOwnSheets(spreadsheet: Spreadsheet): number {
  let count = 0;
  for (const sheet of spreadsheet.getSheets()) {
    const name = sheet.getName();
    if (!isAddOnSheet(name) && name !== SAMPLE_SHEET) continue;
    if (spreadsheet.getSheets().length <= 1) break; // a spreadsheet keeps one sheet
    spreadsheet.deleteSheet(sheet);
    count += 1;
  }
  return count;
}

/** DAPA's developer metadata (the spreadsheet's values, the output columns' marks) and earlier versions' document
 * properties (storage.ts). */
function deleteOwnNotes(spreadsheet: Spreadsheet): number {
  let count = forgetLegacyValues();
  for (const m of spreadsheet.createDeveloperMetadataFinder().find()) {
    const key = m.getKey();
    if (!key.startsWith('dapa.') && !key.startsWith('dapa-')) continue;
    m.remove();
    count += 1;
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
  const sheets = deleteOwnSheets(spreadsheet);
  const notes = deleteOwnNotes(spreadsheet);
  return { formulas, sheets, notes };
}

/** The menu item: asks first, then removes and says what it did. */
export function removeDapa(): void {
  uiAllowed();
  const ui = SpreadsheetApp.getUi();
  if (ui.alert(MENU_NAME, removeConfirmText(), ui.ButtonSet.OK_CANCEL) !== ui.Button.OK) return;
  ui.alert(MENU_NAME, removedText(removeAll()), ui.ButtonSet.OK);
}
