// Menu items that show the sidebar or a dialog need Google's box "Display and run third-party web content in prompts
// and sidebars inside Google applications". Without it Google would answer with its own raw error, so the item says
// what is missing in the project's words (a notice in the spreadsheet) and asks Google for just that box. The other
// boxes: allowedFor in platform/gas.ts.
/// <reference types="google-apps-script" />
import { MENU_NAME, UI_REFUSED } from '../messages';
import { missingFor, requireFor } from '../platform/gas';

/** Whether the sidebar and dialogs may open; when not, says so and asks Google for the box (ending the execution). */
export function uiAllowed(): boolean {
  if (missingFor('ui').length === 0) return true;
  try {
    SpreadsheetApp.getActiveSpreadsheet().toast(UI_REFUSED, MENU_NAME, 30);
  } catch {
    // no spreadsheet permission either: the error below says it instead
  }
  requireFor('ui');
  throw new Error(UI_REFUSED);
}
