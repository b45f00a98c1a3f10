// A user's edit of one cell, as typed (a value or a formula): the spreadsheet's installable onEdit triggers fire
// with the edit's range, then the formulas the edit made stale recalculate.
import { formatA1 } from './a1';
import { resolveA1 } from './ranges';
import type { Recalculation } from './recalculation';
import type { Session } from './session';
import type { TriggerRunner } from './triggers-runner';
import { DEFAULT_SPREADSHEET_ID } from './world';

export class Edits {
  constructor(
    private readonly session: Session,
    private readonly triggers: TriggerRunner,
    private readonly recalculation: Recalculation,
  ) {}

  /** Writes `input` into the cell `a1` of the current spreadsheet as a user types it. */
  async edit(a1: string, input: unknown): Promise<void> {
    const model = this.session.model;
    const { sheet, rect } = resolveA1(a1, model);
    const isFormula = typeof input === 'string' && input.startsWith('=');
    model.write(sheet, rect.row, rect.column, input, isFormula);
    model.changed({ ...rect, rows: 1, columns: 1 });
    const doc = this.session.doc;
    const onEdit = this.session.world.triggers.triggers.filter(
      (t) => t.kind === 'ON_EDIT' && (t.spreadsheetId ?? DEFAULT_SPREADSHEET_ID) === doc.id,
    );
    // In Sheets the onEdit trigger and the recalculation run side by side; here one after the other, so that on a
    // virtual clock neither execution's time counts the other's network waits: the spreadsheet's recalculation waits
    // for its onEdit triggers, whoever asks for it meanwhile (another user's edit in their own spreadsheet, a trigger).
    await this.recalculation.hold(doc, async () => {
      for (const trigger of onEdit) {
        await this.triggers.fire(trigger, {
          a1: formatA1(rect.row, rect.column),
          sheetName: sheet.name,
          value: input,
        });
      }
    });
    await this.recalculation.recalculate();
  }
}
