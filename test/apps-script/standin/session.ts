// Who acts and where: the harness's current user and spreadsheet (asUser, useSpreadsheet), read by the other
// harness modules at the moment they act, so a later change of user or spreadsheet applies to later operations.
import type { SharedClock } from '../../sandbox/virtual';
import type { SpreadsheetDocument } from './document';
import type { SpreadsheetModel } from './sheet-model';
import { DEFAULT_SPREADSHEET_ID, type World } from './world';

export class Session {
  /** The spreadsheet later harness operations happen in (useSpreadsheet). */
  docId = DEFAULT_SPREADSHEET_ID;

  constructor(
    readonly world: World,
    /** Stand-in time. */
    readonly clock: SharedClock,
    /** The spreadsheet's owner: custom functions run as this user and read their user properties. */
    readonly owner: string,
    /** Who runs run(), edit() and sidebar calls, and for whom formulas recalculate. */
    public user: string,
  ) {}

  /** The spreadsheet harness operations happen in. */
  get doc(): SpreadsheetDocument {
    return this.world.document(this.docId);
  }

  get model(): SpreadsheetModel {
    return this.doc.model;
  }
}
