// The text of a =DAPA(...) formula, read and written without a service call: which range it checks, how wide its
// result is, and its 4th argument (the version cell the background adds), replaced or added with the user's own
// arguments kept exactly as written.
import { columnNumber } from '../platform/cells';

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
  /** The metrics argument is left out: the result shows DA, PA, MR and Spam Score in that order. */
  defaultMetrics: boolean;
}

const DAPA_CALL = /(^|[^A-Za-z0-9_.])DAPA\s*\(/i;

/** Where each top-level argument of a function's argument text starts and ends (commas, or semicolons in some locales). */
function argumentSpans(text: string): Array<[start: number, end: number]> {
  const spans: Array<[number, number]> = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(' || ch === '{') depth += 1;
    else if (ch === ')' || ch === '}') depth -= 1;
    else if ((ch === ',' || ch === ';') && depth === 0) {
      spans.push([start, i]);
      start = i + 1;
    }
  }
  spans.push([start, text.length]);
  return spans;
}

/** Splits a function's argument text at top-level separators, each argument trimmed. */
export function splitArguments(text: string): string[] {
  return argumentSpans(text).map(([start, end]) => text.slice(start, end).trim());
}

/** Where the argument text of the first DAPA( call starts and ends, or undefined when there is none or it is unclosed. */
function dapaSpan(formula: string): [start: number, end: number] | undefined {
  const match = DAPA_CALL.exec(formula);
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
    else if (ch === ')' && --depth === 0) return [start, i];
  }
  return undefined;
}

/** The argument text of the first DAPA( call in a formula, or undefined when there is none or it is unclosed. */
export function dapaArguments(formula: string): string | undefined {
  const span = dapaSpan(formula);
  return span && formula.slice(...span);
}

export function isDapaFormula(formula: string): boolean {
  return DAPA_CALL.test(formula);
}

/** A call of one of DAPA's own functions (DAPA, DAPA_SAMPLE, DAPA_CACHE), outside text in quotes and sheet names. */
const ANY_DAPA_CALL = /(^|[^A-Za-z0-9_.])DAPA(?:_SAMPLE|_CACHE)?\s*\(/i;

/**
 * Whether a formula calls one of DAPA's functions anywhere in it (=DAPA(A2), =INDEX(DAPA(A2),1,1),
 * =IFERROR(DAPA_SAMPLE(A2),"")), not counting "DAPA(" written inside a text in quotes or a quoted sheet name: what
 * "Remove DAPA" turns into values, as nothing else would work once DAPA is gone.
 */
export function callsDapa(formula: string): boolean {
  return ANY_DAPA_CALL.test(formula.replace(/"(?:[^"]|"")*"|'(?:[^']|'')*'/g, '""'));
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
  return {
    source,
    header: /^(TRUE|1|"true"|"yes")$/i.test(header),
    width,
    defaultMetrics: metrics.trim() === '',
  };
}

/** The 4th argument of the DAPA call (trimmed), where the background keeps its version cell; undefined if none. */
export function fourthArgument(formula: string): string | undefined {
  const inside = dapaArguments(formula);
  return inside === undefined ? undefined : splitArguments(inside)[3];
}

/**
 * The formula with `ref` as the DAPA call's 4th argument: put in place of the one it has, or added after its own
 * arguments (empty ones filled in with commas); everything else is kept exactly as written.
 */
export function withFourthArgument(formula: string, ref: string): string {
  const span = dapaSpan(formula);
  if (!span) return formula;
  const inside = formula.slice(...span);
  const spans = argumentSpans(inside);
  const at = (i: number) => span[0] + i;
  if (spans.length >= 4) {
    const [start, end] = spans[3];
    return formula.slice(0, at(start)) + ref + formula.slice(at(end));
  }
  return formula.slice(0, span[1]) + ','.repeat(4 - spans.length) + ref + formula.slice(span[1]);
}
