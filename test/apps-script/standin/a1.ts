// A1 notation for the fake spreadsheet: "B2", "A2:C9", "A:A", "A2:A", "3:3", with an optional sheet name
// ("Sheet1!A1", "'My sheet'!A:A").

export interface A1 {
  sheetName?: string;
  row?: number;
  column?: number;
  lastRow?: number;
  lastColumn?: number;
}

/** 1 → "A", 28 → "AB". */
export function columnName(column: number): string {
  let n = column;
  let name = '';
  while (n > 0) {
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
    n = Math.floor((n - 1) / 26);
  }
  return name;
}

function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

const PART = /^\$?([A-Za-z]{0,3})\$?(\d*)$/;

/** Parses A1 notation; undefined when it is not a reference. */
export function parseA1(text: string): A1 | undefined {
  let rest = text.trim();
  let sheetName: string | undefined;
  const bang = rest.lastIndexOf('!');
  if (bang >= 0) {
    const name = rest.slice(0, bang);
    sheetName = /^'.*'$/.test(name) ? name.slice(1, -1).replace(/''/g, "'") : name;
    rest = rest.slice(bang + 1);
  }
  const [from, to, extra] = rest.split(':');
  if (extra !== undefined || !from) return undefined;
  const a = PART.exec(from);
  const b = to === undefined ? a : PART.exec(to);
  if (!a || !b || (!a[1] && !a[2]) || (!b[1] && !b[2])) return undefined;
  const ref: A1 = { sheetName };
  if (a[1]) ref.column = columnIndex(a[1]);
  if (a[2]) ref.row = Number(a[2]);
  if (b[1]) ref.lastColumn = columnIndex(b[1]);
  if (b[2]) ref.lastRow = Number(b[2]);
  if (ref.row === 0 || ref.lastRow === 0) return undefined;
  return ref;
}

/** "A1" for one cell, "A1:C3" otherwise. */
export function formatA1(row: number, column: number, rows = 1, columns = 1): string {
  const start = `${columnName(column)}${row}`;
  return rows === 1 && columns === 1
    ? start
    : `${start}:${columnName(column + columns - 1)}${row + rows - 1}`;
}

/** The cells an A1 reference covers on a sheet of this size: a whole column or row runs to the sheet's edge. */
export function extentOf(
  ref: A1,
  size: { maxRows: number; maxColumns: number },
): { row: number; column: number; rows: number; columns: number } {
  const row = ref.row ?? 1;
  const column = ref.column ?? 1;
  const lastRow =
    ref.lastRow ?? (ref.row !== undefined && ref.lastColumn === undefined ? ref.row : size.maxRows);
  const lastColumn =
    ref.lastColumn ?? (ref.column !== undefined && ref.lastRow === undefined ? ref.column : size.maxColumns);
  return { row, column, rows: lastRow - row + 1, columns: lastColumn - column + 1 };
}
