// Evaluating a cell formula in the stand-in: only a call of one of the script's own functions with literal, range
// (any sheet: '_dapa_results'!A1) or named-range arguments (=DAPA(A2:A21, "da,pa", TRUE, DAPA_VERSION)), bare or
// inside one of three built-ins (ARRAYFORMULA, IFERROR, INDEX with literal arguments); anything else shows #NAME?,
// as the stand-in is not a spreadsheet.
import { type A1, parseA1 } from './a1';

export type FormulaArg =
  | { kind: 'range'; ref: A1; text: string }
  | { kind: 'value'; value: string | number | boolean }
  | { kind: 'name'; name: string }
  | { kind: 'omitted' };

export interface FormulaCall {
  name: string;
  args: FormulaArg[];
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = '';
  let current = '';
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(' || ch === '{') depth++;
    else if (ch === ')' || ch === '}') depth--;
    else if ((ch === ',' || ch === ';') && depth === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  parts.push(current);
  return parts;
}

function parseArg(raw: string): FormulaArg | undefined {
  const text = raw.trim();
  if (text === '') return { kind: 'omitted' };
  const string = /^"((?:[^"]|"")*)"$/.exec(text);
  if (string) return { kind: 'value', value: string[1].replace(/""/g, '"') };
  if (/^(TRUE|FALSE)$/i.test(text)) return { kind: 'value', value: text.toUpperCase() === 'TRUE' };
  if (/^[+-]?\d+(\.\d+)?$/.test(text)) return { kind: 'value', value: Number(text) };
  const ref = parseA1(text);
  if (ref) return { kind: 'range', ref, text };
  // A named range (Spreadsheet.setNamedRange): resolved when the formula is evaluated.
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(text) ? { kind: 'name', name: text } : undefined;
}

/** Parses "=NAME(args)"; undefined for anything else (nested calls, operators, unknown syntax). */
export function parseFormula(formula: string): FormulaCall | undefined {
  const m = /^=\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(([\s\S]*)\)\s*$/.exec(formula);
  if (!m) return undefined;
  const inner = m[2];
  if (inner.trim() === '') return { name: m[1], args: [] };
  const args: FormulaArg[] = [];
  for (const part of splitTopLevel(inner)) {
    const arg = parseArg(part);
    if (!arg) return undefined;
    args.push(arg);
  }
  while (args.length > 0 && args[args.length - 1].kind === 'omitted') args.pop();
  return { name: m[1], args };
}

/** A built-in the stand-in applies around one custom-function call (README, "Built-ins around a custom function"). */
export type Wrapper =
  | { name: 'ARRAYFORMULA' }
  | { name: 'IFERROR'; fallback: string | number | boolean }
  | { name: 'INDEX'; row: number; column: number };

/** Parses "=ARRAYFORMULA(FN(args))", "=IFERROR(FN(args), value)" or "=INDEX(FN(args), row, column)". */
export function parseWrapped(formula: string): { wrapper: Wrapper; call: FormulaCall } | undefined {
  const m = /^=\s*(ARRAYFORMULA|IFERROR|INDEX)\s*\(([\s\S]*)\)\s*$/i.exec(formula);
  if (!m) return undefined;
  const [inner, ...rest] = splitTopLevel(m[2]);
  const call = parseFormula('=' + inner.trim());
  if (!call) return undefined;
  const literals = rest.map(parseArg);
  if (literals.some((a) => !a || a.kind === 'range' || a.kind === 'name')) return undefined;
  const value = (i: number) => {
    const a = literals[i];
    return a?.kind === 'value' ? a.value : undefined;
  };
  const name = m[1].toUpperCase();
  if (name === 'ARRAYFORMULA') return rest.length === 0 ? { wrapper: { name }, call } : undefined;
  if (name === 'IFERROR') return { wrapper: { name, fallback: value(0) ?? '' }, call };
  const row = Number(value(0) ?? 1);
  const column = Number(value(1) ?? 1);
  if (!(row >= 1 && column >= 1)) return undefined; // INDEX's 0 (a whole row or column) is not modelled
  return { wrapper: { name: 'INDEX', row, column }, call };
}
