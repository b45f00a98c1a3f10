// Writes rows into a sheet by offset, one setValues per run of consecutive rows: the sidebar's result rows and
// the result store's updated rows go through it.
type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
export type CellValue = string | number | boolean | Date;

/** Writes `rows` (offset from row `first` → its cells, all of one width) starting at `column`. */
export function writeRows(
  sheet: Sheet,
  column: number,
  first: number,
  rows: ReadonlyMap<number, readonly unknown[]>,
): void {
  const offsets = [...rows.keys()].sort((a, b) => a - b);
  for (let start = 0; start < offsets.length;) {
    let end = start;
    while (end + 1 < offsets.length && offsets[end + 1] === offsets[end] + 1) end += 1;
    const block = offsets.slice(start, end + 1).map((o) => rows.get(o) as unknown[]);
    sheet.getRange(first + offsets[start], column, block.length, block[0].length).setValues(block);
    start = end + 1;
  }
}
