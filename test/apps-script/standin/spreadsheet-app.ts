// SpreadsheetApp as a script sees it: the active spreadsheet, its sheets and ranges over the SpreadsheetModel.
// Custom functions get a read-only view (every write throws "You do not have permission to call ...") and no UI.
import { extentOf, formatA1, parseA1 } from './a1';
import {
  addDeveloperMetadata,
  DeveloperMetadata,
  DeveloperMetadataFinder,
  METADATA_RANGE_MESSAGE,
} from './developer-metadata';
import type { SpreadsheetDocument } from './document';
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { documentMissingMessage } from './limits';
import { SCOPES, type ScopeTable } from './scopes';
import { type CellValue, displayOf, type Rect, type SheetModel, type SpreadsheetModel } from './sheet-model';
import { Ui, type UiRecorder } from './ui';

export interface SheetsContext {
  model: SpreadsheetModel;
  ui: UiRecorder;
  doc: SpreadsheetDocument;
}

/** What SpreadsheetApp reaches beyond the current document: other spreadsheets by id, the scopes, the UI. */
export interface SheetsAccess {
  ui: UiRecorder;
  scopes: ScopeTable;
  /** Every spreadsheet of the world by id (deleted ones included, marked). */
  documents: Map<string, SpreadsheetDocument>;
}

export function contextOf(doc: SpreadsheetDocument, ui: UiRecorder): SheetsContext {
  return { model: doc.model, ui, doc };
}

function sameDims(values: unknown, rows: number, columns: number): unknown[][] {
  if (!Array.isArray(values))
    throw new AppsScriptException(
      "The parameters (String) don't match the method signature for SpreadsheetApp.Range.setValues.",
    );
  if (values.length !== rows) {
    throw new AppsScriptException(
      `The number of rows in the data does not match the number of rows in the range. The data has ${values.length} but the range has ${rows}.`,
    );
  }
  for (const row of values) {
    if (!Array.isArray(row) || row.length !== columns) {
      throw new AppsScriptException(
        `The number of columns in the data does not match the number of columns in the range. The data has ${Array.isArray(row) ? row.length : 0} but the range has ${columns}.`,
      );
    }
  }
  return values as unknown[][];
}

export class Range extends AppsScriptObject {
  readonly kind = 'Range';

  constructor(
    private readonly context: SheetsContext,
    private readonly execution: Execution,
    private readonly sheet: SheetModel,
    private readonly row: number,
    private readonly column: number,
    private readonly rows: number,
    private readonly columns: number,
  ) {
    super();
    if (rows < 1) throw new AppsScriptException('The number of rows in the range must be at least 1.');
    if (columns < 1) throw new AppsScriptException('The number of columns in the range must be at least 1.');
    if (row < 1 || column < 1 || row + rows - 1 > sheet.maxRows || column + columns - 1 > sheet.maxColumns) {
      throw new AppsScriptException('The coordinates of the range are outside the dimensions of the sheet.');
    }
  }

  private _write(method: string): void {
    if (this.execution.isCustomFunction) throw noPermission(method);
  }

  private _grid<T>(cell: (row: number, column: number) => T): T[][] {
    const grid: T[][] = [];
    for (let r = 0; r < this.rows; r++) {
      const line: T[] = [];
      for (let c = 0; c < this.columns; c++) line.push(cell(this.row + r, this.column + c));
      grid.push(line);
    }
    return grid;
  }

  private _changed(): void {
    this.context.model.changed({
      sheetId: this.sheet.id,
      row: this.row,
      column: this.column,
      rows: this.rows,
      columns: this.columns,
    });
  }

  getValues(): CellValue[][] {
    return this._grid((r, c) => this.sheet.value(r, c));
  }
  getValue(): CellValue {
    return this.sheet.value(this.row, this.column);
  }
  getDisplayValues(): string[][] {
    return this._grid((r, c) => displayOf(this.sheet.value(r, c)));
  }
  getDisplayValue(): string {
    return displayOf(this.sheet.value(this.row, this.column));
  }
  getFormulas(): string[][] {
    return this._grid((r, c) => this.sheet.get(r, c)?.formula ?? '');
  }
  getFormula(): string {
    return this.sheet.get(this.row, this.column)?.formula ?? '';
  }
  getNote(): string {
    return this.sheet.get(this.row, this.column)?.note ?? '';
  }
  /** Whether the range is whole columns (every row of the sheet). */
  private _wholeColumns(): boolean {
    return this.row === 1 && this.rows === this.sheet.maxRows;
  }
  /** Developer metadata of an entire column (the stand-in models column metadata, not rows). */
  addDeveloperMetadata(...args: unknown[]): this {
    if (!this._wholeColumns() || this.columns !== 1) throw new AppsScriptException(METADATA_RANGE_MESSAGE);
    addDeveloperMetadata(this.sheet.metadata, this.execution, args, this.column);
    return this;
  }
  /** The developer metadata on the range's columns when it is whole columns (none for other ranges). */
  getDeveloperMetadata(): DeveloperMetadata[] {
    if (!this._wholeColumns()) return [];
    const last = this.column + this.columns - 1;
    return this.sheet.metadata.entries
      .filter((e) => e.column !== undefined && e.column >= this.column && e.column <= last)
      .map((e) => new DeveloperMetadata(this.sheet.metadata, e, this.execution));
  }
  isBlank(): boolean {
    return this._grid((r, c) => this.sheet.hasContent(r, c)).every((line) => line.every((has) => !has));
  }

  setValues(values: unknown): this {
    this._write('setValues');
    const grid = sameDims(values, this.rows, this.columns);
    grid.forEach((line, r) =>
      line.forEach((v, c) => this.context.model.write(this.sheet, this.row + r, this.column + c, v)),
    );
    this._changed();
    return this;
  }
  setValue(value: unknown): this {
    this._write('setValue');
    this._grid((r, c) => this.context.model.write(this.sheet, r, c, value));
    this._changed();
    return this;
  }
  setFormula(formula: unknown): this {
    this._write('setFormula');
    this._grid((r, c) => this.context.model.write(this.sheet, r, c, String(formula), String(formula) !== ''));
    this._changed();
    return this;
  }
  setFormulas(formulas: unknown): this {
    this._write('setFormulas');
    const grid = sameDims(formulas, this.rows, this.columns);
    grid.forEach((line, r) =>
      line.forEach((f, c) =>
        this.context.model.write(this.sheet, this.row + r, this.column + c, String(f), String(f) !== ''),
      ),
    );
    this._changed();
    return this;
  }
  setNumberFormat(format: unknown): this {
    this._write('setNumberFormat');
    this._grid((r, c) => {
      const cell = this.sheet.get(r, c) ?? { value: '' };
      this.sheet.put(r, c, { ...cell, textFormat: String(format) === '@' });
    });
    return this;
  }
  clearContent(): this {
    this._write('clearContent');
    this._grid((r, c) => this.context.model.clear(this.sheet, r, c));
    this._changed();
    return this;
  }
  clear(): this {
    this._write('clear');
    return this.clearContent();
  }

  getA1Notation(): string {
    return formatA1(this.row, this.column, this.rows, this.columns);
  }
  /** The range's place (not callable from the script). */
  _rect(): Rect {
    return {
      sheetId: this.sheet.id,
      row: this.row,
      column: this.column,
      rows: this.rows,
      columns: this.columns,
    };
  }
  getRow(): number {
    return this.row;
  }
  getColumn(): number {
    return this.column;
  }
  getLastRow(): number {
    return this.row + this.rows - 1;
  }
  getLastColumn(): number {
    return this.column + this.columns - 1;
  }
  getNumRows(): number {
    return this.rows;
  }
  getNumColumns(): number {
    return this.columns;
  }
  getSheet(): Sheet {
    return new Sheet(this.context, this.execution, this.sheet);
  }
  getCell(row: unknown, column: unknown): Range {
    return new Range(
      this.context,
      this.execution,
      this.sheet,
      this.row + Number(row) - 1,
      this.column + Number(column) - 1,
      1,
      1,
    );
  }
  offset(rowOffset: unknown, columnOffset: unknown, numRows?: unknown, numColumns?: unknown): Range {
    return new Range(
      this.context,
      this.execution,
      this.sheet,
      this.row + Number(rowOffset),
      this.column + Number(columnOffset),
      numRows === undefined ? this.rows : Number(numRows),
      numColumns === undefined ? this.columns : Number(numColumns),
    );
  }
  activate(): this {
    this._write('activate');
    this.context.model.activeSheetId = this.sheet.id;
    this.context.model.selection = {
      sheetId: this.sheet.id,
      row: this.row,
      column: this.column,
      rows: this.rows,
      columns: this.columns,
    };
    return this;
  }
}

export class Sheet extends AppsScriptObject {
  readonly kind = 'Sheet';

  constructor(
    private readonly context: SheetsContext,
    private readonly execution: Execution,
    private readonly sheet: SheetModel,
  ) {
    super();
  }

  getName(): string {
    return this.sheet.name;
  }
  getSheetName(): string {
    return this.sheet.name;
  }
  getSheetId(): number {
    return this.sheet.id;
  }
  getIndex(): number {
    return this.context.model.sheets.indexOf(this.sheet) + 1;
  }
  getLastRow(): number {
    return this.sheet.lastRow();
  }
  getLastColumn(): number {
    return this.sheet.lastColumn();
  }
  getMaxRows(): number {
    return this.sheet.maxRows;
  }
  getMaxColumns(): number {
    return this.sheet.maxColumns;
  }
  getRange(a: unknown, column?: unknown, numRows?: unknown, numColumns?: unknown): Range {
    if (typeof a === 'string') {
      const ref = parseA1(a);
      if (!ref || (ref.sheetName !== undefined && ref.sheetName !== this.sheet.name)) {
        throw new AppsScriptException('Range not found');
      }
      return rangeOf(this.context, this.execution, this.sheet, ref);
    }
    const row = Number(a);
    const col = Number(column);
    if (!Number.isInteger(row) || !Number.isInteger(col)) throw new AppsScriptException('Range not found');
    return new Range(
      this.context,
      this.execution,
      this.sheet,
      row,
      col,
      numRows === undefined ? 1 : Number(numRows),
      numColumns === undefined ? 1 : Number(numColumns),
    );
  }
  getDataRange(): Range {
    return new Range(
      this.context,
      this.execution,
      this.sheet,
      1,
      1,
      Math.max(1, this.sheet.lastRow()),
      Math.max(1, this.sheet.lastColumn()),
    );
  }
  getActiveRange(): Range | null {
    const selection = this.context.model.selection;
    if (!selection || selection.sheetId !== this.sheet.id) return null;
    return new Range(
      this.context,
      this.execution,
      this.sheet,
      selection.row,
      selection.column,
      selection.rows,
      selection.columns,
    );
  }
  setActiveRange(range: unknown): Range {
    if (!(range instanceof Range)) throw new AppsScriptException('Invalid argument: range');
    return range.activate();
  }
  activate(): this {
    if (this.execution.isCustomFunction) throw noPermission('activate');
    this.context.model.activeSheetId = this.sheet.id;
    return this;
  }
  /** Growth is refused past 10 million cells in the workbook or 18,278 columns, with Sheets' text (sheet-model.ts). */
  insertColumnsAfter(afterPosition: unknown, howMany: unknown): this {
    if (this.execution.isCustomFunction) throw noPermission('insertColumnsAfter');
    const after = position(afterPosition, 1, this.sheet.maxColumns, 'columnPosition');
    this.context.model.insertColumns(this.sheet, after, count(howMany));
    return this;
  }
  insertColumnsBefore(beforePosition: unknown, howMany: unknown): this {
    if (this.execution.isCustomFunction) throw noPermission('insertColumnsBefore');
    const before = position(beforePosition, 1, this.sheet.maxColumns, 'columnIndex');
    this.context.model.insertColumns(this.sheet, before - 1, count(howMany));
    return this;
  }
  insertRowsAfter(afterPosition: unknown, howMany: unknown): this {
    if (this.execution.isCustomFunction) throw noPermission('insertRowsAfter');
    const after = position(afterPosition, 1, this.sheet.maxRows, 'rowPosition');
    this.context.model.insertRows(this.sheet, after, count(howMany));
    return this;
  }
  insertRowsBefore(beforePosition: unknown, howMany: unknown): this {
    if (this.execution.isCustomFunction) throw noPermission('insertRowsBefore');
    const before = position(beforePosition, 1, this.sheet.maxRows, 'rowIndex');
    this.context.model.insertRows(this.sheet, before - 1, count(howMany));
    return this;
  }
  /**
   * Google: "Appends a row to the spreadsheet. This operation is atomic; it prevents issues where a user asks for the
   * last row, and then writes to that row, and an intervening mutation occurs between getting the last row and
   * writing to it." One service call: the row after the last one with content, the grid grown by a row when the
   * sheet is full (and by the columns the row needs), within the workbook's limits.
   */
  appendRow(rowContents: unknown): this {
    if (this.execution.isCustomFunction) throw noPermission('appendRow');
    if (!Array.isArray(rowContents) || rowContents.length === 0)
      throw new AppsScriptException(
        "The parameters (String) don't match the method signature for SpreadsheetApp.Sheet.appendRow.",
      );
    const model = this.context.model;
    const row = this.sheet.lastRow() + 1;
    const addRows = Math.max(0, row - this.sheet.maxRows);
    const addColumns = Math.max(0, rowContents.length - this.sheet.maxColumns);
    model.checkGrowth(this.sheet, addRows, addColumns);
    if (addColumns > 0) this.sheet.insertColumnsAfter(this.sheet.maxColumns, addColumns);
    if (addRows > 0) this.sheet.insertRowsAfter(this.sheet.maxRows, addRows);
    rowContents.forEach((value, c) => model.write(this.sheet, row, c + 1, value));
    model.changed({ sheetId: this.sheet.id, row, column: 1, rows: 1, columns: rowContents.length });
    return this;
  }
  deleteRows(rowPosition: unknown, howMany: unknown): void {
    if (this.execution.isCustomFunction) throw noPermission('deleteRows');
    const from = Number(rowPosition);
    const n = count(howMany);
    if (!Number.isInteger(from) || from < 1 || from + n - 1 > this.sheet.maxRows)
      throw new AppsScriptException('Those rows are out of bounds.');
    if (n >= this.sheet.maxRows)
      throw new AppsScriptException('Sorry, it is not possible to delete all non-frozen rows.');
    this._forgetFormulas(from, 1, n, this.sheet.maxColumns);
    this.sheet.deleteRows(from, n);
  }
  deleteRow(rowPosition: unknown): Sheet {
    this.deleteRows(rowPosition, 1);
    return this;
  }
  deleteColumns(columnPosition: unknown, howMany: unknown): void {
    if (this.execution.isCustomFunction) throw noPermission('deleteColumns');
    const from = Number(columnPosition);
    const n = count(howMany);
    if (!Number.isInteger(from) || from < 1 || from + n - 1 > this.sheet.maxColumns)
      throw new AppsScriptException('Those columns are out of bounds.');
    if (n >= this.sheet.maxColumns)
      throw new AppsScriptException('Sorry, it is not possible to delete all non-frozen columns.');
    this._forgetFormulas(1, from, this.sheet.maxRows, n);
    this.sheet.deleteColumns(from, n);
  }
  deleteColumn(columnPosition: unknown): Sheet {
    this.deleteColumns(columnPosition, 1);
    return this;
  }
  /** Formula cells about to be deleted stop being formulas (their recalculation and spill go with them). */
  private _forgetFormulas(row: number, column: number, rows: number, columns: number): void {
    for (const cell of this.sheet.formulaCells())
      if (cell.row >= row && cell.row < row + rows && cell.column >= column && cell.column < column + columns)
        this.context.model.clear(this.sheet, cell.row, cell.column);
  }
  /** Renames the sheet; a name another sheet has is refused with Google's words. */
  setName(name: unknown): this {
    if (this.execution.isCustomFunction) throw noPermission('setName');
    const text = String(name);
    if (text !== this.sheet.name && this.context.model.sheetByName(text))
      throw new AppsScriptException(
        `A sheet with the name "${text}" already exists. Please enter another name.`,
      );
    this.sheet.name = text;
    return this;
  }
  /** The sheet's model (not callable from the script). */
  _model(): SheetModel {
    return this.sheet;
  }
  getParent(): Spreadsheet {
    return new Spreadsheet(this.context, this.execution);
  }
  hideSheet(): this {
    if (this.execution.isCustomFunction) throw noPermission('hideSheet');
    if (this.context.model.sheets.filter((s) => !s.hidden && s !== this.sheet).length === 0)
      throw new AppsScriptException("You can't hide all the sheets in a document.");
    this.sheet.hidden = true;
    return this;
  }
  showSheet(): this {
    if (this.execution.isCustomFunction) throw noPermission('showSheet');
    this.sheet.hidden = false;
    return this;
  }
  isSheetHidden(): boolean {
    return this.sheet.hidden;
  }
}

/** A position argument (after/before which to insert): an integer within the sheet. */
function position(value: unknown, min: number, max: number, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new AppsScriptException(`Invalid argument: ${name}`);
  return n;
}

/** How many rows or columns: a positive integer. */
function count(value: unknown): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new AppsScriptException('Invalid argument: howMany');
  return n;
}

function rangeOf(
  context: SheetsContext,
  execution: Execution,
  sheet: SheetModel,
  ref: ReturnType<typeof parseA1> & object,
): Range {
  const { row, column, rows, columns } = extentOf(ref, sheet);
  return new Range(context, execution, sheet, row, column, rows, columns);
}

/** A user as Spreadsheet.getEditors returns one. */
class Editor extends AppsScriptObject {
  readonly kind = 'User';
  constructor(private readonly email: string) {
    super();
  }
  getEmail(): string {
    return this.email;
  }
}

export class Spreadsheet extends AppsScriptObject {
  readonly kind = 'Spreadsheet';

  constructor(
    private readonly context: SheetsContext,
    private readonly execution: Execution,
  ) {
    super();
  }

  getId(): string {
    return this.context.model.id;
  }
  /** The spreadsheet's id (not callable from the script). */
  _id(): string {
    return this.context.model.id;
  }
  getName(): string {
    return this.context.model.name;
  }
  getUrl(): string {
    return this.context.doc.url;
  }
  /** The spreadsheet's editors: whoever runs the script and everyone it is shared with for editing. */
  getEditors(): Editor[] {
    const emails = new Set([this.execution.user, ...this.context.doc.editors]);
    return [...emails].filter((e) => e !== '').map((email) => new Editor(email));
  }
  addDeveloperMetadata(...args: unknown[]): this {
    addDeveloperMetadata(this.context.doc.metadata, this.execution, args);
    return this;
  }
  getDeveloperMetadata(): DeveloperMetadata[] {
    return new DeveloperMetadataFinder(this.context.doc.metadata, this.execution).find();
  }
  /** Google: "By default this considers all metadata associated with the spreadsheet, sheets, rows, and columns." */
  createDeveloperMetadataFinder(): DeveloperMetadataFinder {
    const sheets = this.context.model.sheets.map((s) => s.metadata);
    return new DeveloperMetadataFinder([this.context.doc.metadata, ...sheets], this.execution);
  }
  getSheets(): Sheet[] {
    return this.context.model.sheets.map((s) => new Sheet(this.context, this.execution, s));
  }
  getSheetByName(name: unknown): Sheet | null {
    const sheet = this.context.model.sheetByName(String(name));
    return sheet ? new Sheet(this.context, this.execution, sheet) : null;
  }
  getActiveSheet(): Sheet {
    const cell = this.execution.cell;
    const sheet = cell ? this.context.model.sheetById(cell.sheetId) : undefined;
    return new Sheet(this.context, this.execution, sheet ?? this.context.model.activeSheet());
  }
  getActiveRange(): Range | null {
    const cell = this.execution.cell;
    if (cell) {
      const sheet = this.context.model.sheetById(cell.sheetId);
      if (sheet) return new Range(this.context, this.execution, sheet, cell.row, cell.column, 1, 1);
    }
    const selection = this.context.model.selection;
    const sheet = selection && this.context.model.sheetById(selection.sheetId);
    if (!selection || !sheet) return null;
    return new Range(
      this.context,
      this.execution,
      sheet,
      selection.row,
      selection.column,
      selection.rows,
      selection.columns,
    );
  }
  getRange(a1: unknown): Range {
    const ref = parseA1(String(a1));
    if (!ref) throw new AppsScriptException('Range not found');
    const sheet =
      ref.sheetName === undefined
        ? this.context.model.activeSheet()
        : this.context.model.sheetByName(ref.sheetName);
    if (!sheet) throw new AppsScriptException('Range not found');
    return rangeOf(this.context, this.execution, sheet, ref);
  }
  /** Names a range (names: letters, digits, underscores, not starting with a digit, not like A1). */
  setNamedRange(name: unknown, range: unknown): void {
    if (this.execution.isCustomFunction) throw noPermission('setNamedRange');
    const text = String(name);
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,249}$/.test(text) || parseA1(text) || /^(true|false)$/i.test(text))
      throw new AppsScriptException(`Invalid argument: name`);
    if (!(range instanceof Range)) throw new AppsScriptException('Invalid argument: range');
    this.context.model.namedRanges.set(text, range._rect());
  }
  getRangeByName(name: unknown): Range | null {
    const rect = this.context.model.namedRanges.get(String(name));
    const sheet = rect && this.context.model.sheetById(rect.sheetId);
    if (!rect || !sheet) return null;
    return new Range(this.context, this.execution, sheet, rect.row, rect.column, rect.rows, rect.columns);
  }
  removeNamedRange(name: unknown): void {
    if (this.execution.isCustomFunction) throw noPermission('removeNamedRange');
    this.context.model.namedRanges.delete(String(name));
  }
  insertSheet(name?: unknown): Sheet {
    if (this.execution.isCustomFunction) throw noPermission('insertSheet');
    const sheet = this.context.model.addSheet(
      name === undefined ? `Sheet${this.context.model.sheets.length + 1}` : String(name),
    );
    this.context.model.activeSheetId = sheet.id;
    return new Sheet(this.context, this.execution, sheet);
  }
  deleteSheet(sheet: unknown): void {
    if (this.execution.isCustomFunction) throw noPermission('deleteSheet');
    if (!(sheet instanceof Sheet)) throw new AppsScriptException('Invalid argument: sheet');
    const model = sheet._model();
    if (!this.context.model.sheets.includes(model)) throw new AppsScriptException('Invalid argument: sheet');
    if (this.context.model.sheets.filter((s) => !s.hidden && s !== model).length === 0)
      throw new AppsScriptException("You can't remove all the visible sheets in a document.");
    this.context.model.removeSheet(model);
  }
  toast(message: unknown, title?: unknown): void {
    if (this.execution.isCustomFunction) throw noPermission('toast');
    this.context.ui.events.push({
      type: 'toast',
      title: title === undefined ? '' : String(title),
      message: String(message),
    });
  }
}

export class SpreadsheetApp extends AppsScriptObject {
  readonly kind = 'SpreadsheetApp';

  constructor(
    private readonly access: SheetsAccess,
    private readonly execution: Execution,
  ) {
    super();
  }

  private _readable(what: string): void {
    if (this.execution.authMode === 'NONE') throw noPermission(`SpreadsheetApp.${what}`);
  }

  /** The current document (null without one), after the scope check: currentonly or the full scope. */
  private _current(what: string): Spreadsheet | null {
    this._readable(what);
    const doc = this.execution.document;
    if (!doc) return null;
    this.access.scopes.require(this.execution, `SpreadsheetApp.${what}`, [
      SCOPES.spreadsheetsCurrentOnly,
      SCOPES.spreadsheets,
    ]);
    return new Spreadsheet(contextOf(doc, this.access.ui), this.execution);
  }

  /** Null when the execution has no current document (an add-on's time-driven trigger). */
  getActive(): Spreadsheet | null {
    return this._current('getActive');
  }
  getActiveSpreadsheet(): Spreadsheet | null {
    return this._current('getActiveSpreadsheet');
  }
  getActiveSheet(): Sheet | null {
    return this._current('getActiveSheet')?.getActiveSheet() ?? null;
  }
  getActiveRange(): Range | null {
    return this._current('getActiveRange')?.getActiveRange() ?? null;
  }
  getCurrentCell(): Range | null {
    const range = this._current('getCurrentCell')?.getActiveRange() ?? null;
    return range ? range.getCell(1, 1) : null;
  }

  /**
   * Another spreadsheet (or this one) by id: needs the full spreadsheets scope declared and granted; custom
   * functions may not open other spreadsheets. It does not become the current document.
   */
  private _open(what: string, id: string): Spreadsheet {
    this._readable(what);
    if (this.execution.isCustomFunction) throw noPermission(`SpreadsheetApp.${what}`);
    this.access.scopes.require(this.execution, `SpreadsheetApp.${what}`, [SCOPES.spreadsheets]);
    const doc = this.access.documents.get(id);
    if (!doc || !doc.canOpen(this.execution.user)) throw new AppsScriptException(documentMissingMessage(id));
    return new Spreadsheet(contextOf(doc, this.access.ui), this.execution);
  }

  openById(id: unknown): Spreadsheet {
    if (typeof id !== 'string' || id === '') throw new AppsScriptException('Invalid argument: id');
    return this._open('openById', id);
  }
  openByUrl(url: unknown): Spreadsheet {
    const m = /^https:\/\/docs\.google\.com\/spreadsheets\/d\/([A-Za-z0-9_-]+)/.exec(String(url));
    if (!m) throw new AppsScriptException('Invalid argument: url');
    return this._open('openByUrl', m[1]);
  }
  flush(): void {
    // The stand-in applies every change at once; nothing is pending.
  }
  /**
   * The UI of the current document: not from a custom function, nor from a time-driven trigger or an execution
   * without a document ("Cannot call SpreadsheetApp.getUi() from this context."); needs script.container.ui.
   */
  getUi(): Ui {
    if (
      this.execution.isCustomFunction ||
      this.execution.document === null ||
      this.execution.triggerKind === 'CLOCK'
    )
      throw new AppsScriptException('Cannot call SpreadsheetApp.getUi() from this context.');
    this.access.scopes.require(this.execution, 'SpreadsheetApp.getUi', [SCOPES.containerUi]);
    return new Ui(this.access.ui);
  }
}
