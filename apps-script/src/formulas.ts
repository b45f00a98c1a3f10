// Reading =DAPA(...) formulas back from the sheet: which range a formula checks and how large its result is, so
// "Refresh DAPA formulas" can tell which ones are unfinished or older than the cache.
import { columnNumber } from './cells';

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
