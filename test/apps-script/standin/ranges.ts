// A1 references and named ranges resolved to a sheet and a rectangle of a spreadsheet model, and the grid of what a
// rectangle holds: shared by the formulas' arguments (recalculation.ts) and the harness's `sheet` API.
import { type A1, extentOf, parseA1 } from './a1';
import type { Rect, SheetModel, SpreadsheetModel } from './sheet-model';

export interface Located {
  sheet: SheetModel;
  rect: Rect;
}

/** `ref` in `model`; a reference without a sheet name is on `fallback`, a whole column or row runs to the edge. */
export function resolveRef(ref: A1, fallback: SheetModel, model: SpreadsheetModel): Located {
  const sheet = ref.sheetName === undefined ? fallback : model.sheetByName(ref.sheetName);
  if (!sheet) throw new Error(`No sheet named ${ref.sheetName}`);
  return { sheet, rect: { sheetId: sheet.id, ...extentOf(ref, sheet) } };
}

/** A named range of `model` (Spreadsheet.setNamedRange). */
export function resolveName(name: string, model: SpreadsheetModel): Located {
  const rect = model.namedRanges.get(name);
  const sheet = rect && model.sheetById(rect.sheetId);
  if (!rect || !sheet) throw new Error(`Unknown range name: ${name}`);
  return { sheet, rect };
}

/** An A1 text as the harness's caller writes it (`'Sheet1!A1:B2'`, `B2`: on the active sheet). */
export function resolveA1(a1: string, model: SpreadsheetModel): Located {
  const ref = parseA1(a1);
  if (!ref) throw new Error(`Not an A1 reference: ${a1}`);
  return resolveRef(ref, model.activeSheet(), model);
}

/** What `read` says of each cell of the rectangle, row by row. */
export function gridOf<T>(
  sheet: SheetModel,
  row: number,
  column: number,
  rows: number,
  columns: number,
  read: (sheet: SheetModel, row: number, column: number) => T,
): T[][] {
  const grid: T[][] = [];
  for (let r = 0; r < rows; r++) {
    const line: T[] = [];
    for (let c = 0; c < columns; c++) line.push(read(sheet, row + r, column + c));
    grid.push(line);
  }
  return grid;
}
