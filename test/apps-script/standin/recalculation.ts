// Formulas as Sheets runs them: each `=FN(args)` cell is one custom-function execution whose result spills into the
// sheet; a change to any cell a formula reads makes it stale, and recalculate() runs the stale ones a few at a time.
import { formatA1 } from './a1';
import type { SpreadsheetDocument } from './document';
import type { Executions } from './executions';
import { type FormulaArg, parseFormula, parseWrapped, type Wrapper } from './formula';
import { AppsScriptError } from './pool';
import { gridOf, resolveA1, resolveName, resolveRef } from './ranges';
import type { Session } from './session';
import {
  type CellValue,
  cellKey,
  parseCellKey,
  type Rect,
  type SheetModel,
  type SpreadsheetModel,
} from './sheet-model';

/**
 * Names a formula may call: the script's top-level functions. Google: a custom function is any function of the script
 * used like a built-in one ("@customfunction" only puts it in the autocomplete), and a name ending in an underscore
 * is private ("cannot be called ... from a spreadsheet"). A top-level function here is one declared at the start of a
 * line (the bundle's stubs, a test script's functions), or one whose JSDoc says @customfunction.
 */
export function customFunctionNames(code: string): Set<string> {
  const names = new Set<string>();
  for (const m of code.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*function\s+([A-Za-z_$][\w$]*)\s*\(/g)) {
    if (/@customfunction\b/.test(m[1])) names.add(m[2]);
  }
  for (const m of code.matchAll(/^function\s+([A-Za-z$][\w$]*)\s*\(/gm))
    if (!m[1].endsWith('_')) names.add(m[1]);
  return names;
}

/** A custom function's return value as the grid Sheets shows (a value is a 1×1 grid; short rows are padded). */
function normalizeResult(value: unknown): CellValue[][] {
  const cell = (v: unknown): CellValue => {
    if (v === null || v === undefined) return '';
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string' || v instanceof Date)
      return v;
    return String(v);
  };
  if (!Array.isArray(value)) return [[cell(value)]];
  if (value.length === 0) return [['']];
  const rows = value.map((row) => (Array.isArray(row) ? row.map(cell) : [cell(row)]));
  const width = Math.max(1, ...rows.map((r) => r.length));
  return rows.map((r) => (r.length < width ? [...r, ...new Array<CellValue>(width - r.length).fill('')] : r));
}

/** What a built-in around the custom function makes of its result grid (README, "Built-ins around a custom function"). */
function applyWrapper(wrapper: Wrapper | undefined, grid: CellValue[][]): CellValue[][] {
  if (wrapper?.name !== 'INDEX') return grid;
  const value = grid[wrapper.row - 1]?.[wrapper.column - 1];
  return [[value === undefined ? '#REF!' : value]];
}

export interface RecalculationOptions {
  /** The script's custom functions (customFunctionNames). */
  customFunctions: Set<string>;
  /**
   * How many formula cells recalculate side by side, each its own execution ("Each time a custom function is used in
   * a spreadsheet, Sheets makes a separate call to the Apps Script server"; Google does not say how many at once).
   */
  atOnce: number;
  /** "Sheets keeps a custom function's result for identical arguments" (LoadOptions.keepsIdenticalResults). */
  keepsIdenticalResults: boolean;
}

export class Recalculation {
  /** The last result of each formula cell and what produced it (keepsIdenticalResults). */
  private readonly lastResults = new Map<string, { signature: string; grid: CellValue[][] }>();
  /** Recalculations Sheets skipped because the formula and its arguments were unchanged. */
  keptResults = 0;
  /** Each spreadsheet's recalculation under way. */
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly session: Session,
    private readonly executions: Executions,
    private readonly options: RecalculationOptions,
  ) {}

  /** Evaluates a custom-function formula; with `cellA1`, writes it there (its result spills into the sheet). */
  async runFormula(formula: string, cellA1?: string): Promise<CellValue[][]> {
    const model = this.session.model;
    if (cellA1) {
      const { sheet, rect } = resolveA1(cellA1, model);
      model.write(sheet, rect.row, rect.column, formula, true);
      await this.evaluate(cellKey(sheet.id, rect.row, rect.column), this.session.doc);
      const data = sheet.get(rect.row, rect.column);
      if (data && /^#(ERROR!|REF!|NAME\?)/.test(String(data.value)))
        throw new AppsScriptError(data.note ?? String(data.value), 'Error');
      const rows = data?.spill ? Math.max(rect.row, ...data.spill.map(([r]) => r)) - rect.row + 1 : 1;
      const columns = data?.spill
        ? Math.max(rect.column, ...data.spill.map(([, c]) => c)) - rect.column + 1
        : 1;
      return gridOf(sheet, rect.row, rect.column, rows, columns, (s, r, c) => s.value(r, c));
    }
    const sheet = model.activeSheet();
    const call = parseFormula(formula);
    if (!call || !this.options.customFunctions.has(call.name))
      throw new AppsScriptError(`Unknown function: ${formula}`, 'Error');
    const args = call.args.map((arg) => this.argumentValue(arg, sheet, model));
    const value = await this.executions.execute({
      functionName: call.name,
      args,
      kind: 'custom-function',
      authMode: 'CUSTOM_FUNCTION',
      cell: { sheetId: sheet.id, row: 1, column: 1 },
    });
    return normalizeResult(value);
  }

  /**
   * Runs every formula whose inputs changed or that was (re)written, a few side by side, as Sheets does: each in
   * its own spreadsheet (a change in one spreadsheet makes only its own formulas stale), the spreadsheets side by side.
   */
  async recalculate(): Promise<void> {
    // Each spreadsheet recalculates on its own, side by side with the others (issue 46: many users' sheets at once).
    const documents = [...this.session.world.documents.values()].filter((doc) => !doc.deleted);
    await Promise.all(documents.map((doc) => this.recalculateDocument(doc)));
  }

  /**
   * One recalculation of a spreadsheet at a time (its `atOnce` cells side by side are all Sheets runs of it): a call
   * while one runs waits for it, and the running one takes up what was made stale meanwhile in its next round.
   */
  private recalculateDocument(doc: SpreadsheetDocument): Promise<void> {
    return this.inTurn(doc, () => this.rounds(doc));
  }

  /**
   * Runs `work` (an edit's onEdit triggers) when the spreadsheet's recalculation is free, and keeps it until `work`
   * is over: the edit's formulas do not start meanwhile, whoever asks (another user's edit, a trigger).
   */
  hold(doc: SpreadsheetDocument, work: () => Promise<void>): Promise<void> {
    return this.inTurn(doc, work);
  }

  private inTurn(doc: SpreadsheetDocument, work: () => Promise<void>): Promise<void> {
    const next = (this.running.get(doc.id) ?? Promise.resolve()).then(work);
    this.running.set(doc.id, next);
    void next.finally(() => {
      if (this.running.get(doc.id) === next) this.running.delete(doc.id);
    });
    return next;
  }

  private async rounds(doc: SpreadsheetDocument): Promise<void> {
    const model = doc.model;
    for (let round = 0; round < 10 && model.dirty.size > 0; round++) {
      const keys = [...model.dirty];
      model.dirty.clear();
      const queue = keys.slice();
      const workers = Array.from({ length: Math.min(this.options.atOnce, queue.length) }, async () => {
        for (let key = queue.shift(); key !== undefined; key = queue.shift()) await this.evaluate(key, doc);
      });
      await Promise.all(workers);
    }
  }

  /** What a formula's argument reads: a literal, or the value (one cell) or grid (a range) it refers to. */
  private argumentValue(arg: FormulaArg, sheet: SheetModel, model: SpreadsheetModel): unknown {
    if (arg.kind === 'omitted') return undefined;
    if (arg.kind === 'value') return arg.value;
    const { sheet: source, rect } =
      arg.kind === 'name' ? resolveName(arg.name, model) : resolveRef(arg.ref, sheet, model);
    const grid = gridOf(source, rect.row, rect.column, rect.rows, rect.columns, (s, r, c) => s.value(r, c));
    return rect.rows === 1 && rect.columns === 1 ? grid[0][0] : grid;
  }

  /** Recalculates one formula cell as Sheets does: a custom-function execution, its result spilled. */
  private async evaluate(key: string, doc: SpreadsheetDocument): Promise<void> {
    const model = doc.model;
    const { sheetId, row, column } = parseCellKey(key);
    const sheet = model.sheetById(sheetId);
    const formula = sheet?.get(row, column)?.formula;
    if (!sheet || !formula) return;
    const wrapped = parseWrapped(formula);
    const call = parseFormula(formula) ?? wrapped?.call;
    const inputs: Rect[] = [];
    for (const arg of call?.args ?? []) {
      if (arg.kind === 'range' || arg.kind === 'name') {
        try {
          inputs.push(
            arg.kind === 'name' ? resolveName(arg.name, model).rect : resolveRef(arg.ref, sheet, model).rect,
          );
        } catch {
          // an unknown sheet or name: the execution below reports it
        }
      }
    }
    model.formulaInputs.set(key, inputs);
    const setError = (value: string, note: string) => {
      const cell = sheet.get(row, column);
      if (!cell || cell.formula !== formula) return;
      model.clearSpill(sheet, row, column);
      cell.value = value;
      cell.note = note;
    };
    if (!call || !this.options.customFunctions.has(call.name)) {
      setError(
        '#NAME?',
        `The stand-in evaluates only =CUSTOMFUNCTION(arguments) of the script's @customfunction functions: ${formula}`,
      );
      return;
    }
    let value: unknown;
    let signature: string | undefined;
    try {
      const args = call.args.map((arg) => this.argumentValue(arg, sheet, model));
      if (this.options.keepsIdenticalResults) {
        signature = JSON.stringify([formula, args]);
        const last = this.lastResults.get(`${doc.id}|${key}`);
        if (last && last.signature === signature) {
          this.keptResults += 1;
          this.spill(sheet, row, column, last.grid, model);
          return;
        }
      }
      value = await this.executions.execute({
        functionName: call.name,
        args,
        kind: 'custom-function',
        authMode: 'CUSTOM_FUNCTION',
        cell: { sheetId, row, column },
        document: doc,
      });
    } catch (error) {
      if (wrapped?.wrapper.name !== 'IFERROR') {
        setError('#ERROR!', (error as Error).message);
        return;
      }
      value = wrapped.wrapper.fallback;
    }
    const cell = sheet.get(row, column);
    if (!cell || cell.formula !== formula) return; // rewritten meanwhile: that write recalculates it
    const grid = applyWrapper(wrapped?.wrapper, normalizeResult(value));
    if (signature !== undefined) this.lastResults.set(`${doc.id}|${key}`, { signature, grid });
    this.spill(sheet, row, column, grid, model);
  }

  /** Writes a result grid from its formula cell on, or #REF! when it would leave the sheet or overwrite data. */
  private spill(
    sheet: SheetModel,
    row: number,
    column: number,
    grid: CellValue[][],
    model: SpreadsheetModel,
  ): void {
    const cell = sheet.get(row, column);
    if (!cell) return;
    model.clearSpill(sheet, row, column);
    const rows = grid.length;
    const columns = grid[0].length;
    if (row + rows - 1 > sheet.maxRows || column + columns - 1 > sheet.maxColumns) {
      cell.value = '#REF!';
      cell.note = `Result was not automatically expanded, please insert more rows (${row + rows - 1 - sheet.maxRows}).`;
      return;
    }
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < columns; c++) {
        if ((r > 0 || c > 0) && sheet.hasContent(row + r, column + c)) {
          cell.value = '#REF!';
          cell.note = `Array result was not expanded because it would overwrite data in ${formatA1(row + r, column + c)}.`;
          return;
        }
      }
    }
    const key = cellKey(sheet.id, row, column);
    const spill: Array<[number, number]> = [];
    grid.forEach((line, r) =>
      line.forEach((value, c) => {
        if (r === 0 && c === 0) return;
        sheet.put(row + r, column + c, { value, spillOf: key });
        spill.push([row + r, column + c]);
      }),
    );
    cell.value = grid[0][0];
    cell.note = undefined;
    cell.spill = spill;
    model.changed({ sheetId: sheet.id, row, column, rows, columns });
    model.dirty.delete(key);
  }
}
