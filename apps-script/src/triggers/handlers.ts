// The user's triggers of this project, by handler: the one time-driven step trigger (the dispatcher), the edit trigger
// of each spreadsheet with background checks (Google: one per user per document) and the bound script's hourly watch;
// installing them for a spreadsheet, and removing them, with nothing half-installed left behind on a refusal.
/// <reference types="google-apps-script" />
import { idOf, installMode } from '../stores/session';
import { listGoingOn, loadDispatcher } from '../stores/background-store';
import { TRIGGER_REFUSED } from '../messages';

/** The trigger handlers (top-level functions, see main.ts and build.mjs). */
export const STEP_HANDLER = 'dapaBackgroundStep';
export const EDIT_HANDLER = 'dapaOnEdit';
export const WATCH_HANDLER = 'dapaBackgroundWatch';

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** This user's triggers of this project (every document's: the dispatcher serves them all). */
export function ownTriggers(): GoogleAppsScript.Script.Trigger[] {
  return ScriptApp.getProjectTriggers();
}

/** Deletes this user's triggers of these handlers (the pending step, fired one-off triggers that stay listed). */
export function deleteTriggers(...handlers: string[]): void {
  for (const trigger of ownTriggers()) {
    if (handlers.includes(trigger.getHandlerFunction())) ScriptApp.deleteTrigger(trigger);
  }
}

/** This user's edit trigger in this spreadsheet (Google: one per user per document), if any. */
function editTriggers(spreadsheet: Spreadsheet): GoogleAppsScript.Script.Trigger[] {
  const script = ScriptApp as unknown as {
    getUserTriggers?: (s: Spreadsheet) => GoogleAppsScript.Script.Trigger[];
  };
  const all =
    typeof script.getUserTriggers === 'function' ? script.getUserTriggers(spreadsheet) : ownTriggers();
  return all.filter((t) => t.getHandlerFunction() === EDIT_HANDLER);
}

/** Removes this user's edit trigger of the spreadsheet. */
export function removeEditTrigger(spreadsheet: Spreadsheet): void {
  for (const t of editTriggers(spreadsheet)) ScriptApp.deleteTrigger(t);
}

/**
 * Google allows 20 triggers per user per script, an add-on's too; this user's edit triggers are held to
 * MAX_EDIT_TRIGGERS, beside the one time-driven trigger (a bound script: its watch and up to three one-off steps).
 */
export const MAX_EDIT_TRIGGERS = 15;

/**
 * Before an edit trigger is made, keeps this user's edit triggers under MAX_EDIT_TRIGGERS: those of spreadsheets whose
 * background checks no longer go on go first, then the one of the spreadsheet whose last step is oldest. A spreadsheet
 * without its edit trigger still has its background checks: its steps come with the user's time-driven trigger (an
 * add-on: hourly at most) rather than 31 seconds after an edit.
 */
function makeRoomForEditTrigger(spreadsheetId: string): void {
  const edits = ownTriggers().filter((t) => t.getHandlerFunction() === EDIT_HANDLER);
  if (edits.length < MAX_EDIT_TRIGGERS) return;
  const goingOn = listGoingOn(loadDispatcher()).filter(({ id }) => id !== spreadsheetId);
  const lastStep = new Map(goingOn.map(({ id, state }) => [id, state.lastStepAt ?? 0]));
  const byNeed = [...edits].sort(
    (a, b) =>
      (lastStep.get(a.getTriggerSourceId() ?? '') ?? -1) - (lastStep.get(b.getTriggerSourceId() ?? '') ?? -1),
  );
  for (const trigger of byNeed.slice(0, edits.length - MAX_EDIT_TRIGGERS + 1))
    ScriptApp.deleteTrigger(trigger);
}

/**
 * Creates what background checks in this spreadsheet need: its edit trigger (one per user per document), the
 * bound script's hourly watch, and (`armStep`) the user's one step trigger. On any refusal removes what it created
 * and says what to do.
 */
export function installTriggers(spreadsheet: Spreadsheet, armStep: () => void): void {
  const madeEdit = editTriggers(spreadsheet).length === 0;
  if (madeEdit) makeRoomForEditTrigger(idOf(spreadsheet));
  try {
    if (madeEdit) ScriptApp.newTrigger(EDIT_HANDLER).forSpreadsheet(spreadsheet).onEdit().create();
    const watched = ownTriggers().some((t) => t.getHandlerFunction() === WATCH_HANDLER);
    if (installMode() === 'bound' && !watched)
      ScriptApp.newTrigger(WATCH_HANDLER).timeBased().everyHours(1).create();
    armStep();
  } catch {
    if (madeEdit) removeEditTrigger(spreadsheet);
    const others = listGoingOn(loadDispatcher()).some(({ id }) => id !== idOf(spreadsheet));
    if (!others) deleteTriggers(STEP_HANDLER, WATCH_HANDLER);
    throw new Error(TRIGGER_REFUSED);
  }
}
