// Looking at a spreadsheet's =DAPA(...) formulas: every formula cell with the domains its range holds and the version
// slot it reads (formula-versions.ts), read in a few calls whatever the number of formulas (one getFormulas and one
// getValues a sheet), and which of them need a check. Parsing a formula's text: formula-text.ts.
/// <reference types="google-apps-script" />
import { toEntry } from '../../../shared';
import { readStoredRecords } from '../stores/result-store';
import { isAddOnSheet } from '../stores/store-sheet';
import { isDapaFormula, parseDapaCall, type RangeRef } from './formula-text';
import { lookAtSlots, upToDate, type VersionedCell, versionOf } from './formula-versions';

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

export interface FormulaCell extends VersionedCell {
  /** The cells of its source range that hold a value. */
  rows?: number;
  /** Its domains whose result row shows metrics now (a number where the row's first metric goes). */
  shown?: string[];
}

/**
 * Each sheet's values, read once per look at the spreadsheet (one service call a sheet, not one a formula), by the
 * sheet object (asking a sheet its name is a service call too, and 5,000 formulas would ask it 5,000 times).
 */
type Grids = Map<Sheet, unknown[][]>;

function gridOf(sheet: Sheet, grids: Grids): unknown[][] {
  let grid = grids.get(sheet);
  if (!grid) {
    grid = sheet.getLastRow() < 1 || sheet.getLastColumn() < 1 ? [] : sheet.getDataRange().getValues();
    grids.set(sheet, grid);
  }
  return grid;
}

/** Where a formula shows its result: its sheet's values and its cell, and whether a header row comes first. */
interface ResultAt {
  grid: unknown[][];
  row: number;
  column: number;
  header: boolean;
}

function sourceKeys(
  spreadsheet: Spreadsheet,
  sheet: Sheet,
  source: RangeRef,
  grids: Grids,
  at: ResultAt,
): { keys: string[]; rows: number; shown: string[] } | undefined {
  const from = source.sheetName === undefined ? sheet : spreadsheet.getSheetByName(source.sheetName);
  if (!from) return undefined;
  const grid = gridOf(from, grids);
  const lastRow = source.lastRow ?? Math.max(source.firstRow, grid.length);
  if (lastRow < source.firstRow || source.lastColumn < source.firstColumn) return undefined;
  const keys = new Set<string>();
  const shown = new Set<string>();
  let filled = 0;
  // The result has one row per source cell, row by row (DAPA's cellsOf): the i-th cell's metrics are on row i.
  let i = at.header ? 1 : 0;
  for (let r = source.firstRow; r <= Math.min(lastRow, grid.length); r++)
    for (let c = source.firstColumn; c <= source.lastColumn; c++, i++) {
      const value = grid[r - 1][c - 1] ?? '';
      const entry = toEntry(value);
      if (entry.kind === 'candidate') {
        keys.add(entry.key);
        if (typeof at.grid[at.row - 1 + i]?.[at.column - 1] === 'number') shown.add(entry.key);
      }
      if (value !== '' && value !== null) filled += 1;
    }
  return { keys: [...keys], rows: filled, shown: [...shown] };
}

/** Every DAPA formula of the spreadsheet (the add-on's hidden sheets aside), with its domains and version slot. */
export function dapaFormulaCells(spreadsheet: Spreadsheet): FormulaCell[] {
  const found: FormulaCell[] = [];
  const grids: Grids = new Map();
  for (const sheet of spreadsheet.getSheets()) {
    const lastRow = sheet.getLastRow();
    const lastColumn = sheet.getLastColumn();
    if (lastRow < 1 || lastColumn < 1 || isAddOnSheet(sheet.getName())) continue;
    let sheetId: number | undefined;
    sheet
      .getRange(1, 1, lastRow, lastColumn)
      .getFormulas()
      .forEach((line, r) =>
        line.forEach((formula, c) => {
          if (!formula || !isDapaFormula(formula)) return;
          const id = (sheetId ??= sheet.getSheetId());
          const call = parseDapaCall(formula);
          const source = call?.source;
          const at = { grid: gridOf(sheet, grids), row: r + 1, column: c + 1, header: call?.header ?? false };
          const read = source ? sourceKeys(spreadsheet, sheet, source, grids, at) : undefined;
          found.push({
            sheet,
            sheetId: id,
            row: r + 1,
            column: c + 1,
            formula,
            ...read,
            ...versionOf(formula),
          });
        }),
      );
  }
  lookAtSlots(found);
  return found;
}

/** The distinct domain keys of formula cells (with `unshown`, only those some formula does not show yet). */
export function formulaKeys(cells: readonly FormulaCell[], unshown = false): string[] {
  const keysOf = (c: FormulaCell) => {
    const shown = unshown && c.shown ? new Set(c.shown) : undefined;
    return shown ? (c.keys ?? []).filter((k) => !shown.has(k)) : (c.keys ?? []);
  };
  return [...new Set(cells.flatMap(keysOf))];
}

/** Whether the formula's result shows metrics for every domain of its range (read from the sheet). */
function showsAll(c: FormulaCell): boolean {
  if (!c.keys || c.keys.length === 0 || !c.shown) return false;
  const shown = new Set(c.shown);
  return c.keys.every((k) => shown.has(k));
}

/**
 * The formulas that need a check (those not up to date; with `since`, a refresh, all of them) and their domains that
 * are not kept (checked since then).
 */
export function formulaWork(
  spreadsheet: Spreadsheet,
  baseUrl: string,
  since?: number,
): { cells: FormulaCell[]; pending: string[] } {
  const all = dapaFormulaCells(spreadsheet);
  // A formula that shows metrics for each of its domains needs nothing, whatever its slot says (a slot shared with
  // formulas still filling stays marked partial, and refreshing its shown formulas each step would recalculate them
  // all again and again); a refresh (`since`) takes them all.
  const needed = (c: FormulaCell) => !upToDate(spreadsheet, c) && !showsAll(c);
  const cells = since !== undefined ? all : all.filter(needed);
  const keys = formulaKeys(cells);
  const kept = readStoredRecords(baseUrl, keys, since);
  return { cells, pending: keys.filter((k) => !kept.has(k)) };
}
