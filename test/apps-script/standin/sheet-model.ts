// The fake spreadsheet's data: sheets of cells holding a value, a formula, or a value spilled from an array
// formula; how Sheets reads a typed value; display strings; and which formulas a change makes stale.
import { AppsScriptException } from './errors';
import {
  CELL_MAX_CHARS,
  DEFAULT_COLUMNS,
  DEFAULT_ROWS,
  SHEET_COLUMNS_MESSAGE,
  SHEET_MAX_COLUMNS,
  WORKBOOK_CELLS_MESSAGE,
  WORKBOOK_MAX_CELLS,
} from './limits';
import { formatA1 } from './a1';
import { DeveloperMetadataStore } from './developer-metadata';

export type CellValue = string | number | boolean | Date;

export interface CellData {
  value: CellValue;
  formula?: string;
  /** Key of the formula cell whose array result this cell shows. */
  spillOf?: string;
  /** Cells of this formula's current array result (besides itself). */
  spill?: Array<[number, number]>;
  /** An error's explanation (#ERROR!, #REF!), as Sheets shows on hover. */
  note?: string;
  /** Number format "@" keeps typed values as text. */
  textFormat?: boolean;
}

export interface Rect {
  sheetId: number;
  row: number;
  column: number;
  rows: number;
  columns: number;
}

export function cellKey(sheetId: number, row: number, column: number): string {
  return `${sheetId}:${row}:${column}`;
}

export function parseCellKey(key: string): { sheetId: number; row: number; column: number } {
  const [sheetId, row, column] = key.split(':').map(Number);
  return { sheetId, row, column };
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/** What Sheets makes of a value written with setValue(s): a formula, a number, a boolean, or text. */
export function interpretInput(input: unknown, textFormat = false): { value: CellValue; formula?: string } {
  if (input === null || input === undefined) return { value: '' };
  if (input instanceof Date || Object.prototype.toString.call(input) === '[object Date]') {
    return { value: new Date((input as Date).getTime()) };
  }
  if (typeof input === 'number' || typeof input === 'boolean') return { value: input };
  const text = String(input);
  if (text.length > CELL_MAX_CHARS) {
    throw new AppsScriptException(
      `Your input contains more than the maximum of ${CELL_MAX_CHARS} characters in a single cell.`,
    );
  }
  if (textFormat) return { value: text };
  if (text.startsWith("'")) return { value: text.slice(1) };
  if (text.startsWith('=') && text.length > 1) return { value: 'Loading...', formula: text };
  if (NUMBER.test(text.trim())) return { value: Number(text.trim()) };
  // Typed into Sheets, a leading + - or @ starts a formula (or a mention): it is not kept as the text written.
  if (/^[+\-@]/.test(text)) return { value: 'Loading...', formula: '=' + text };
  if (/^(true|false)$/i.test(text)) return { value: text.toLowerCase() === 'true' };
  return { value: text };
}

/** The text Sheets shows for a value (automatic number format). */
export function displayOf(value: CellValue): string {
  if (value === '' || value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return String(value);
    return String(Number(value.toPrecision(10)));
  }
  if (value instanceof Date)
    return `${value.getUTCMonth() + 1}/${value.getUTCDate()}/${value.getUTCFullYear()}`;
  return String(value);
}

export class SheetModel {
  private readonly rows: Array<Array<CellData | undefined> | undefined> = [];
  hidden = false;
  /** The developer metadata on the sheet's columns. */
  readonly metadata = new DeveloperMetadataStore('sheet');

  constructor(
    readonly id: number,
    public name: string,
    public maxRows = DEFAULT_ROWS,
    public maxColumns = DEFAULT_COLUMNS,
  ) {}

  get(row: number, column: number): CellData | undefined {
    return this.rows[row - 1]?.[column - 1];
  }

  put(row: number, column: number, data: CellData | undefined): void {
    const r = (this.rows[row - 1] ??= []);
    if (data === undefined || (data.value === '' && !data.formula && !data.textFormat && !data.spillOf)) {
      r[column - 1] = data?.textFormat ? { value: '', textFormat: true } : undefined;
    } else r[column - 1] = data;
  }

  value(row: number, column: number): CellValue {
    return this.get(row, column)?.value ?? '';
  }

  hasContent(row: number, column: number): boolean {
    const cell = this.get(row, column);
    return !!cell && (cell.value !== '' || !!cell.formula);
  }

  lastRow(): number {
    for (let r = this.rows.length; r >= 1; r--) {
      const row = this.rows[r - 1];
      if (row && row.some((cell) => cell && (cell.value !== '' || cell.formula))) return r;
    }
    return 0;
  }

  lastColumn(): number {
    let last = 0;
    for (const row of this.rows) {
      if (!row) continue;
      for (let c = row.length; c > last; c--) {
        const cell = row[c - 1];
        if (cell && (cell.value !== '' || cell.formula)) {
          last = c;
          break;
        }
      }
    }
    return last;
  }

  insertColumnsAfter(column: number, count: number): void {
    for (const row of this.rows) if (row && row.length > column) row.splice(column, 0, ...new Array(count));
    this.metadata.shiftColumns(column, count);
    this.maxColumns += count;
  }

  insertRowsAfter(row: number, count: number): void {
    if (this.rows.length > row) this.rows.splice(row, 0, ...new Array(count));
    this.maxRows += count;
  }

  deleteRows(row: number, count: number): void {
    this.rows.splice(row - 1, count);
    this.maxRows -= count;
  }

  deleteColumns(column: number, count: number): void {
    for (const row of this.rows) if (row && row.length >= column) row.splice(column - 1, count);
    this.metadata.removeColumns(column, count);
    this.maxColumns -= count;
  }

  /** The grid's cells (maxRows × maxColumns), filled or not: what Sheets counts against its limit. */
  get gridCells(): number {
    return this.maxRows * this.maxColumns;
  }

  /** Every formula cell of the sheet. */
  formulaCells(): Array<{ row: number; column: number; formula: string }> {
    const found: Array<{ row: number; column: number; formula: string }> = [];
    this.rows.forEach((row, r) =>
      row?.forEach((cell, c) => {
        if (cell?.formula) found.push({ row: r + 1, column: c + 1, formula: cell.formula });
      }),
    );
    return found;
  }

  a1(row: number, column: number, rows = 1, columns = 1): string {
    return formatA1(row, column, rows, columns);
  }
}

export class SpreadsheetModel {
  readonly sheets: SheetModel[] = [];
  activeSheetId = 0;
  selection?: Rect;
  /** Formula cells whose inputs changed (or that were written) and wait for recalculation. */
  readonly dirty = new Set<string>();
  /** The ranges each formula reads, to know which changes make it stale. */
  readonly formulaInputs = new Map<string, Rect[]>();
  /** Named ranges (Spreadsheet.setNamedRange): a formula may read one by name. */
  readonly namedRanges = new Map<string, Rect>();
  private nextSheetId = 1;

  constructor(
    readonly id: string,
    public name: string,
  ) {
    this.sheets.push(new SheetModel(0, 'Sheet1'));
  }

  addSheet(name: string, rows?: number, columns?: number): SheetModel {
    if (this.sheets.some((s) => s.name === name)) {
      throw new AppsScriptException(
        `A sheet with the name "${name}" already exists. Please enter another name.`,
      );
    }
    this.checkGrowth(undefined, rows ?? DEFAULT_ROWS, columns ?? DEFAULT_COLUMNS);
    const sheet = new SheetModel(this.nextSheetId++ * 1_000_003, name, rows, columns);
    this.sheets.push(sheet);
    return sheet;
  }

  /** Grid cells of every sheet, filled or not (Google: 10 million for the whole spreadsheet). */
  gridCells(): number {
    let total = 0;
    for (const sheet of this.sheets) total += sheet.gridCells;
    return total;
  }

  /**
   * Refuses, with Sheets' text, a change that would take the workbook past 10 million grid cells or a sheet past
   * 18,278 columns: `rows` more rows and `columns` more columns on `sheet`, or a new sheet of rows × columns.
   */
  checkGrowth(sheet: SheetModel | undefined, rows: number, columns: number): void {
    const width = (sheet?.maxColumns ?? 0) + columns;
    if (columns > 0 && width > SHEET_MAX_COLUMNS) throw new AppsScriptException(SHEET_COLUMNS_MESSAGE);
    const added = sheet
      ? rows * sheet.maxColumns + columns * sheet.maxRows + rows * columns
      : Math.max(0, rows) * Math.max(0, columns);
    if (added > 0 && this.gridCells() + added > WORKBOOK_MAX_CELLS)
      throw new AppsScriptException(WORKBOOK_CELLS_MESSAGE);
  }

  /** Rows inserted after `row` (0: at the top), within the limits. */
  insertRows(sheet: SheetModel, row: number, count: number): void {
    this.checkGrowth(sheet, count, 0);
    sheet.insertRowsAfter(row, count);
  }

  /** Columns inserted after `column` (0: at the left), within the limits. */
  insertColumns(sheet: SheetModel, column: number, count: number): void {
    this.checkGrowth(sheet, 0, count);
    sheet.insertColumnsAfter(column, count);
  }

  removeSheet(sheet: SheetModel): void {
    const i = this.sheets.indexOf(sheet);
    if (i < 0) return;
    this.sheets.splice(i, 1);
    const gone = (key: string) => parseCellKey(key).sheetId === sheet.id;
    for (const key of [...this.dirty]) if (gone(key)) this.dirty.delete(key);
    for (const key of [...this.formulaInputs.keys()]) if (gone(key)) this.formulaInputs.delete(key);
    for (const [name, rect] of this.namedRanges) if (rect.sheetId === sheet.id) this.namedRanges.delete(name);
    if (this.activeSheetId === sheet.id) this.activeSheetId = this.sheets[0]?.id ?? 0;
    if (this.selection?.sheetId === sheet.id) this.selection = undefined;
  }

  sheetById(id: number): SheetModel | undefined {
    return this.sheets.find((s) => s.id === id);
  }

  sheetByName(name: string): SheetModel | undefined {
    return this.sheets.find((s) => s.name === name);
  }

  activeSheet(): SheetModel {
    return this.sheetById(this.activeSheetId) ?? this.sheets[0];
  }

  /** Cells changed: every formula reading them must be recalculated. */
  changed(rect: Rect): void {
    for (const [key, inputs] of this.formulaInputs) {
      if (inputs.some((input) => intersects(input, rect))) this.dirty.add(key);
    }
  }

  /** Removes the array result of a formula cell. */
  clearSpill(sheet: SheetModel, row: number, column: number): void {
    const cell = sheet.get(row, column);
    for (const [r, c] of cell?.spill ?? []) {
      const spilled = sheet.get(r, c);
      if (spilled?.spillOf === cellKey(sheet.id, row, column)) sheet.put(r, c, undefined);
    }
    if (cell) cell.spill = undefined;
  }

  /** Writes one cell the way a script or a user does (the value is read as typed). */
  write(sheet: SheetModel, row: number, column: number, input: unknown, asFormula = false): void {
    const existing = sheet.get(row, column);
    if (existing?.spillOf) this.blockSpill(existing.spillOf, sheet.a1(row, column));
    if (existing?.formula) this.forget(sheet, row, column);
    const textFormat = existing?.textFormat ?? false;
    const interpreted = asFormula
      ? { value: 'Loading...', formula: String(input) }
      : interpretInput(input, textFormat);
    const data: CellData = { value: interpreted.value, textFormat };
    if (interpreted.formula) {
      data.formula = interpreted.formula;
      this.dirty.add(cellKey(sheet.id, row, column));
    }
    sheet.put(row, column, data);
  }

  /** Empties one cell (value and formula); a spilled value stays, as only its formula owns it. */
  clear(sheet: SheetModel, row: number, column: number): void {
    const existing = sheet.get(row, column);
    if (!existing || existing.spillOf) return;
    if (existing.formula) this.forget(sheet, row, column);
    sheet.put(row, column, existing.textFormat ? { value: '', textFormat: true } : undefined);
  }

  private forget(sheet: SheetModel, row: number, column: number): void {
    this.clearSpill(sheet, row, column);
    const key = cellKey(sheet.id, row, column);
    this.formulaInputs.delete(key);
    this.dirty.delete(key);
  }

  /** Something was written into a formula's array result: the formula shows #REF!, as in Sheets. */
  private blockSpill(ownerKey: string, where: string): void {
    const { sheetId, row, column } = parseCellKey(ownerKey);
    const sheet = this.sheetById(sheetId);
    const owner = sheet?.get(row, column);
    if (!sheet || !owner?.formula) return;
    this.clearSpill(sheet, row, column);
    owner.value = '#REF!';
    owner.note = `Array result was not expanded because it would overwrite data in ${where}.`;
  }
}

export function intersects(a: Rect, b: Rect): boolean {
  return (
    a.sheetId === b.sheetId &&
    a.row < b.row + b.rows &&
    b.row < a.row + a.rows &&
    a.column < b.column + b.columns &&
    b.column < a.column + a.columns
  );
}
