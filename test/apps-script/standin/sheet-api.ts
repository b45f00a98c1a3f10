// The harness's `gas.sheet`: the current spreadsheet as a user sees and edits it (values, formulas, notes,
// selection, sheets, a printed table), without an execution. Writes mark the formulas that read them stale.
import { formatA1 } from './a1';
import { gridOf, resolveA1 } from './ranges';
import type { Session } from './session';
import { type CellValue, displayOf } from './sheet-model';

/** The `sheet` API over the session's current spreadsheet (read at each call: useSpreadsheet applies at once). */
export function sheetApi(session: Session) {
  const resolve = (a1: string) => resolveA1(a1, session.model);
  const sheetNamed = (name?: string) =>
    name ? session.model.sheetByName(name) : session.model.activeSheet();
  return {
    setValues: (a1: string, values: unknown[][]): void => {
      const model = session.model;
      const { sheet, rect } = resolve(a1);
      const width = Math.max(1, ...values.map((line) => line.length));
      if (rect.row + values.length - 1 > sheet.maxRows || rect.column + width - 1 > sheet.maxColumns) {
        throw new Error(
          `${a1}: ${values.length}×${width} values do not fit in ${sheet.name} (${sheet.maxRows} rows, ${sheet.maxColumns} columns)`,
        );
      }
      values.forEach((line, r) =>
        line.forEach((value, c) => model.write(sheet, rect.row + r, rect.column + c, value)),
      );
      model.changed({
        ...rect,
        rows: values.length,
        columns: Math.max(1, ...values.map((l) => l.length)),
      });
    },
    setFormula: (a1: string, formula: string): void => {
      const { sheet, rect } = resolve(a1);
      session.model.write(sheet, rect.row, rect.column, formula, true);
    },
    getValues: (a1: string): CellValue[][] => {
      const { sheet, rect } = resolve(a1);
      return gridOf(sheet, rect.row, rect.column, rect.rows, rect.columns, (s, r, c) => s.value(r, c));
    },
    getDisplayValues: (a1: string): string[][] => {
      const { sheet, rect } = resolve(a1);
      return gridOf(sheet, rect.row, rect.column, rect.rows, rect.columns, (s, r, c) =>
        displayOf(s.value(r, c)),
      );
    },
    getFormulas: (a1: string): string[][] => {
      const { sheet, rect } = resolve(a1);
      return gridOf(
        sheet,
        rect.row,
        rect.column,
        rect.rows,
        rect.columns,
        (s, r, c) => s.get(r, c)?.formula ?? '',
      );
    },
    getNote: (a1: string): string => {
      const { sheet, rect } = resolve(a1);
      return sheet.get(rect.row, rect.column)?.note ?? '';
    },
    select: (a1: string): void => {
      const model = session.model;
      const { sheet, rect } = resolve(a1);
      model.activeSheetId = sheet.id;
      model.selection = rect;
    },
    addSheet: (name: string, rows?: number, columns?: number): void => {
      session.model.addSheet(name, rows, columns);
    },
    activate: (name: string): void => {
      const sheet = session.model.sheetByName(name);
      if (!sheet) throw new Error(`No sheet named ${name}`);
      session.model.activeSheetId = sheet.id;
    },
    lastRow: (name?: string): number => sheetNamed(name)?.lastRow() ?? 0,
    maxColumns: (name?: string): number => sheetNamed(name)?.maxColumns ?? 0,
    maxRows: (name?: string): number => sheetNamed(name)?.maxRows ?? 0,
    /** The names of the spreadsheet's sheets, in order (hidden ones included). */
    sheetNames: (): string[] => session.model.sheets.map((s) => s.name),
    isHidden: (name: string): boolean => session.model.sheetByName(name)?.hidden ?? false,
    /** The range as a text table: column letters across, row numbers down, display values. */
    print: (a1: string, maxWidth = 28): string => {
      const { sheet, rect } = resolve(a1);
      const shown = gridOf(sheet, rect.row, rect.column, rect.rows, rect.columns, (s, r, c) => {
        const text = displayOf(s.value(r, c)).replace(/\s+/g, ' ');
        return text.length > maxWidth ? text.slice(0, maxWidth - 1) + '…' : text;
      });
      const letters = Array.from({ length: rect.columns }, (_, c) =>
        formatA1(1, rect.column + c).replace(/\d+$/, ''),
      );
      const table = [['', ...letters], ...shown.map((line, r) => [String(rect.row + r), ...line])];
      const widths = table[0].map((_, c) => Math.max(...table.map((line) => line[c].length)));
      const line = (cells: string[]) =>
        cells
          .map((text, c) =>
            typeof text === 'string' && /^-?\d+(\.\d+)?$/.test(text)
              ? text.padStart(widths[c])
              : text.padEnd(widths[c]),
          )
          .join(' | ');
      const rule = widths.map((w) => '-'.repeat(w)).join('-+-');
      return [line(table[0]), rule, ...table.slice(1).map(line)].join('\n');
    },
  };
}

export type SheetApi = ReturnType<typeof sheetApi>;
