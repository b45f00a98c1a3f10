// Reading =DAPA(...) formulas back from the sheet: which range a formula checks, how large its result is, which
// domains it holds and whether it shows unfinished rows, so a refresh rewrites only the formulas that need it.
/// <reference types="google-apps-script" />
import { toEntry } from '../../shared';
import { columnNumber } from './cells';
import { STORE_SHEET } from './storage-keys';

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

export interface FormulaCell {
  sheet: Sheet;
  row: number;
  column: number;
  formula: string;
  /** The domain keys its source range holds; undefined when the range cannot be told from the formula. */
  keys?: string[];
  /** It shows an unfinished row or an error. */
  incomplete: boolean;
}

function sourceKeys(
  spreadsheet: Spreadsheet,
  cell: Omit<FormulaCell, 'keys' | 'incomplete'>,
): string[] | undefined {
  const call = parseDapaCall(cell.formula);
  if (!call || !call.source) return undefined;
  const source =
    call.source.sheetName === undefined ? cell.sheet : spreadsheet.getSheetByName(call.source.sheetName);
  if (!source) return undefined;
  const lastRow = call.source.lastRow ?? Math.max(call.source.firstRow, source.getLastRow());
  const rows = lastRow - call.source.firstRow + 1;
  const columns = call.source.lastColumn - call.source.firstColumn + 1;
  if (rows < 1 || columns < 1) return undefined;
  const keys = new Set<string>();
  for (const row of source.getRange(call.source.firstRow, call.source.firstColumn, rows, columns).getValues())
    for (const value of row) {
      const entry = toEntry(value);
      if (entry.kind === 'candidate') keys.add(entry.key);
    }
  return [...keys];
}

/** Every DAPA formula of the spreadsheet (the result store's sheet aside), with its domains and whether it is done. */
export function dapaFormulaCells(spreadsheet: Spreadsheet): FormulaCell[] {
  const found: FormulaCell[] = [];
  for (const sheet of spreadsheet.getSheets()) {
    const lastRow = sheet.getLastRow();
    const lastColumn = sheet.getLastColumn();
    if (lastRow < 1 || lastColumn < 1 || sheet.getName() === STORE_SHEET) continue;
    const range = sheet.getRange(1, 1, lastRow, lastColumn);
    const display = range.getDisplayValues();
    range.getFormulas().forEach((line, r) =>
      line.forEach((formula, c) => {
        if (!formula || !isDapaFormula(formula)) return;
        const base = { sheet, row: r + 1, column: c + 1, formula };
        const call = parseDapaCall(formula);
        const src = call?.source;
        const height = src
          ? ((src.lastRow ?? lastRow) - src.firstRow + 1) * (src.lastColumn - src.firstColumn + 1) +
            (call.header ? 1 : 0)
          : 1;
        let incomplete = false;
        for (let y = r; y < Math.min(display.length, r + height) && !incomplete; y++)
          for (let x = c; x < Math.min(display[y].length, c + (call?.width ?? 4)); x++)
            if (display[y][x].startsWith('unfinished') || /^#[A-Z/0!?]+/.test(display[y][x]))
              incomplete = true;
        found.push({ ...base, keys: sourceKeys(spreadsheet, base), incomplete });
      }),
    );
  }
  return found;
}

/** Makes Sheets recalculate these formulas: each is cleared, then written back. */
export function rewriteFormulas(cells: readonly FormulaCell[]): void {
  if (cells.length === 0) return;
  for (const cell of cells) cell.sheet.getRange(cell.row, cell.column).setValue('');
  SpreadsheetApp.flush();
  for (const cell of cells) cell.sheet.getRange(cell.row, cell.column).setFormula(cell.formula);
}
