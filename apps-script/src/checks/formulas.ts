// Reading =DAPA(...) formulas back from the sheet: which range a formula checks, how large its result is, which
// domains it holds and whether it shows unfinished rows, so a refresh rewrites only the formulas that need it.
// Over 300 lines: parsing a formula, reading every formula of a spreadsheet and writing their version cells share
// one notion of a formula cell and its version column.
/// <reference types="google-apps-script" />
import { toEntry } from '../../../shared';
import { columnLetter, columnNumber } from '../platform/cells';
import { sha256 } from '../platform/gas';
import { readStoredRecords } from '../stores/result-store';
import { locked } from '../stores/storage';
import { STORE_SHEET } from '../stores/storage-keys';

export interface RangeRef {
  sheetName?: string;
  firstRow: number;
  firstColumn: number;
  /** undefined for an open-ended reference such as A2:A or A:A (to the sheet's last row). */
  lastRow?: number;
  lastColumn: number;
}

export interface DapaCall {
  source?: RangeRef;
  header: boolean;
  /** How many columns the result has (4 by default), when it can be told from the formula. */
  width: number;
}

/** Splits a function's argument text at top-level separators (commas, or semicolons in some locales). */
function splitArguments(text: string): string[] {
  const args: string[] = [];
  let depth = 0;
  let quote = '';
  let current = '';
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(' || ch === '{') depth += 1;
    else if (ch === ')' || ch === '}') depth -= 1;
    else if ((ch === ',' || ch === ';') && depth === 0) {
      args.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  args.push(current.trim());
  return args;
}

/** The argument text of the first DAPA( call in a formula, or undefined when there is none or it is unclosed. */
function dapaArguments(formula: string): string | undefined {
  const match = /(^|[^A-Za-z0-9_.])DAPA\s*\(/i.exec(formula);
  if (!match) return undefined;
  let depth = 1;
  let quote = '';
  const start = match.index + match[0].length;
  for (let i = start; i < formula.length; i++) {
    const ch = formula[i];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(') depth += 1;
    else if (ch === ')' && --depth === 0) return formula.slice(start, i);
  }
  return undefined;
}

export function isDapaFormula(formula: string): boolean {
  return /(^|[^A-Za-z0-9_.])DAPA\s*\(/i.test(formula);
}

/** Parses "A2:A21", "Sheet 1!B:B", "'My sheet'!A2:A" or "C5". */
export function parseRangeRef(text: string): RangeRef | undefined {
  const m =
    /^(?:(?:'((?:[^']|'')+)'|([A-Za-z0-9_.]+))!)?\$?([A-Za-z]{1,3})\$?(\d*)(?::\$?([A-Za-z]{1,3})\$?(\d*))?$/.exec(
      text.trim(),
    );
  if (!m) return undefined;
  const sheetName = m[1] !== undefined ? m[1].replace(/''/g, "'") : m[2];
  const firstColumn = columnNumber(m[3]);
  const lastColumn = columnNumber(m[5] ?? m[3]);
  if (firstColumn === undefined || lastColumn === undefined) return undefined;
  const firstRow = m[4] ? Number(m[4]) : 1;
  const lastRowText = m[5] === undefined ? m[4] : m[6];
  if (m[5] === undefined && !m[4]) return undefined; // a bare column letter is not a reference
  const lastRow = lastRowText ? Number(lastRowText) : undefined;
  return { sheetName, firstRow, firstColumn, lastRow, lastColumn };
}

/** What a DAPA formula checks, as far as the formula text tells. */
export function parseDapaCall(formula: string): DapaCall | undefined {
  const inside = dapaArguments(formula);
  if (inside === undefined) return undefined;
  const [urls = '', metrics = '', header = ''] = splitArguments(inside);
  const source = parseRangeRef(urls);
  let width = 4;
  const quoted = /^"(.*)"$/.exec(metrics);
  if (quoted) {
    const names = quoted[1].split(/[,;\s]+/).filter((n) => n !== '');
    if (names.length > 0) width = names.length;
  }
  return { source, header: /^(TRUE|1|"true"|"yes")$/i.test(header), width };
}

// ---- DAPA formulas in the spreadsheet -------------------------------------------------------------------

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/**
 * A formula is refreshed through a version cell it takes as a 4th argument (DAPA ignores it): a cell of row 1 of
 * the hidden result store, from column F on, added when the background first refreshes the formula. Changing that
 * cell changes the formula's arguments, so Sheets recalculates it whether or not it keeps the result of an
 * identical formula. The cell holds "v<signature of the domains>.<n>": a formula whose cell holds the signature of
 * its current domains is up to date.
 */
const FIRST_VERSION_COLUMN = 6;
const VERSION_REF = new RegExp(`^'?${STORE_SHEET}'?!\\$?([A-Z]{1,3})\\$?1$`, 'i');

export interface FormulaCell {
  sheet: Sheet;
  row: number;
  column: number;
  formula: string;
  /** The domain keys its source range holds; undefined when the range cannot be told from the formula. */
  keys?: string[];
  /** The cells of its source range that hold a value. */
  rows?: number;
  /** Its domains whose result row shows metrics now (a number where the row's first metric goes). */
  shown?: string[];
  /** The column of its version cell in the store's row 1, once the background added one. */
  versionColumn?: number;
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

function versionColumnOf(formula: string): number | undefined {
  const inside = dapaArguments(formula);
  const ref = inside === undefined ? undefined : splitArguments(inside)[3];
  const m = ref === undefined ? null : VERSION_REF.exec(ref);
  return m ? columnNumber(m[1]) : undefined;
}

/** Every DAPA formula of the spreadsheet (the result store's sheet aside), with its domains and version cell. */
export function dapaFormulaCells(spreadsheet: Spreadsheet): FormulaCell[] {
  const found: FormulaCell[] = [];
  const grids: Grids = new Map();
  for (const sheet of spreadsheet.getSheets()) {
    const lastRow = sheet.getLastRow();
    const lastColumn = sheet.getLastColumn();
    if (lastRow < 1 || lastColumn < 1 || sheet.getName() === STORE_SHEET) continue;
    sheet
      .getRange(1, 1, lastRow, lastColumn)
      .getFormulas()
      .forEach((line, r) =>
        line.forEach((formula, c) => {
          if (!formula || !isDapaFormula(formula)) return;
          const call = parseDapaCall(formula);
          const source = call?.source;
          const at = { grid: gridOf(sheet, grids), row: r + 1, column: c + 1, header: call?.header ?? false };
          const read = source ? sourceKeys(spreadsheet, sheet, source, grids, at) : undefined;
          const versionColumn = versionColumnOf(formula);
          found.push({ sheet, row: r + 1, column: c + 1, formula, ...read, versionColumn });
        }),
      );
  }
  return found;
}

/** "v" + a short hash of the formula's domains: what its version cell holds once it shows them all. */
function signature(cell: FormulaCell): string {
  return 'v' + sha256([...(cell.keys ?? [])].sort().join('\n')).slice(0, 12);
}

function storeSheet(spreadsheet: Spreadsheet): Sheet {
  const existing = spreadsheet.getSheetByName(STORE_SHEET);
  if (existing) return existing;
  const active = spreadsheet.getActiveSheet();
  const sheet = spreadsheet.insertSheet(STORE_SHEET);
  sheet.hideSheet();
  active.activate();
  return sheet;
}

/** The distinct domain keys of formula cells (with `unshown`, only those some formula does not show yet). */
export function formulaKeys(cells: readonly FormulaCell[], unshown = false): string[] {
  const keysOf = (c: FormulaCell) => {
    const shown = unshown && c.shown ? new Set(c.shown) : undefined;
    return shown ? (c.keys ?? []).filter((k) => !shown.has(k)) : (c.keys ?? []);
  };
  return [...new Set(cells.flatMap(keysOf))];
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
  const cells = since !== undefined ? all : all.filter((c) => !upToDate(spreadsheet, c));
  const keys = formulaKeys(cells);
  const kept = readStoredRecords(baseUrl, keys, since);
  return { cells, pending: keys.filter((k) => !kept.has(k)) };
}

/** Whether the formula has shown its current domains since they were all in (read from its version cell). */
export function upToDate(spreadsheet: Spreadsheet, cell: FormulaCell): boolean {
  if (cell.versionColumn === undefined || !cell.keys) return false;
  const store = spreadsheet.getSheetByName(STORE_SHEET);
  const value = store ? String(store.getRange(1, cell.versionColumn).getValue()) : '';
  return value.startsWith(signature(cell) + '.');
}

/** The formula with a version cell added as its 4th argument (its own arguments kept exactly as written). */
function withVersion(formula: string, column: number): string {
  const start =
    (/(^|[^A-Za-z0-9_.])DAPA\s*\(/i.exec(formula)?.[0].length ?? 0) +
    formula.search(/(^|[^A-Za-z0-9_.])DAPA\s*\(/i);
  const inside = dapaArguments(formula) as string;
  const commas = ','.repeat(Math.max(1, 4 - splitArguments(inside).length));
  const ref = `'${STORE_SHEET}'!$${columnLetter(column)}$1`;
  return formula.slice(0, start + inside.length) + commas + ref + formula.slice(start + inside.length);
}

/**
 * Makes Sheets recalculate these formulas: each one's version cell changes (added first where missing). Written
 * after their domains are kept (`complete`), so the recalculation reads them from the store and sends nothing;
 * otherwise the formulas stay not up to date and check what they can themselves. Under the shared lock: two users'
 * executions never take the same free column, and each change reads the cell it increments.
 */
export function refreshFormulas(
  spreadsheet: Spreadsheet,
  cells: readonly FormulaCell[],
  complete = true,
): void {
  if (cells.length === 0) return;
  locked('document', () => writeVersions(spreadsheet, cells, complete));
}

/**
 * The version cells' new values and the formulas that get one, written in a few calls whatever the number of
 * formulas (`=DAPA(A2)` dragged down is one formula per row): row 1 of the store read and written once, each sheet's
 * formulas read once, and new formulas written a column run at a time.
 */
function writeVersions(spreadsheet: Spreadsheet, cells: readonly FormulaCell[], complete: boolean): void {
  const store = storeSheet(spreadsheet);
  const lastColumn = store.getLastColumn();
  const row1: unknown[] = lastColumn > 0 ? store.getRange(1, 1, 1, lastColumn).getValues()[0] : [];
  let free = Math.max(FIRST_VERSION_COLUMN, lastColumn + 1);
  const formulasOf = new Map<Sheet, string[][]>();
  const written: Array<{ cell: FormulaCell; formula: string }> = [];
  for (const cell of cells) {
    // Read again under the lock: another execution may have given this formula its version cell meanwhile.
    let given = cell.versionColumn;
    if (given === undefined) {
      let grid = formulasOf.get(cell.sheet);
      if (!grid) {
        grid = cell.sheet.getRange(1, 1, cell.sheet.getLastRow(), cell.sheet.getLastColumn()).getFormulas();
        formulasOf.set(cell.sheet, grid);
      }
      given = versionColumnOf(grid[cell.row - 1]?.[cell.column - 1] ?? cell.formula);
    }
    const column = given ?? free++;
    const old = String(row1[column - 1] ?? '');
    const n = Number(old.slice(old.lastIndexOf('.') + 1)) || 0;
    row1[column - 1] = `${complete ? signature(cell) : 'p'}.${n + 1}`;
    if (given === undefined) written.push({ cell, formula: withVersion(cell.formula, column) });
    cell.versionColumn = column;
  }
  const width = row1.length;
  if (width > store.getMaxColumns())
    store.insertColumnsAfter(store.getMaxColumns(), width - store.getMaxColumns());
  for (let c = 0; c < width; c++) row1[c] ??= '';
  // Only the version cells that change, a run of neighbours at a time: an unchanged one recalculates nothing.
  const changed = cells.map((c) => c.versionColumn as number).sort((a, b) => a - b);
  for (let i = 0; i < changed.length;) {
    let j = i + 1;
    while (j < changed.length && changed[j] <= changed[j - 1] + 1) j++;
    const [from, to] = [changed[i], changed[j - 1]];
    store.getRange(1, from, 1, to - from + 1).setValues([row1.slice(from - 1, to)]);
    i = j;
  }
  writeFormulaRuns(written);
}

/** Writes formulas, one setFormulas per run of cells one below the other in a column. */
function writeFormulaRuns(written: ReadonlyArray<{ cell: FormulaCell; formula: string }>): void {
  // Sheets in the order first met (the cells of one look share their sheet objects): no service call to sort.
  const order = new Map<Sheet, number>();
  for (const { cell } of written) if (!order.has(cell.sheet)) order.set(cell.sheet, order.size);
  const sorted = [...written].sort(
    (a, b) =>
      (order.get(a.cell.sheet) as number) - (order.get(b.cell.sheet) as number) ||
      a.cell.column - b.cell.column ||
      a.cell.row - b.cell.row,
  );
  for (let i = 0; i < sorted.length;) {
    const first = sorted[i].cell;
    let j = i + 1;
    while (
      j < sorted.length &&
      sorted[j].cell.sheet === first.sheet &&
      sorted[j].cell.column === first.column &&
      sorted[j].cell.row === first.row + (j - i)
    )
      j++;
    first.sheet
      .getRange(first.row, first.column, j - i, 1)
      .setFormulas(sorted.slice(i, j).map((w) => [w.formula]));
    i = j;
  }
}
