// The key stays its owner's: in a copy bound to a spreadsheet, everyone who can edit the spreadsheet can reach the
// key saved there (its script project is theirs to edit) and every =DAPA formula they recalculate spends it, so the
// owner is told whenever that is so: when a key is saved, when the sidebar opens, and at each menu item (one
// getEditors call). With the Spreadsheets box unticked DAPA cannot look, and says that instead.
/// <reference types="google-apps-script" />
import type { Settings, SettingsChange } from '../../sidebar/contract';
import { KEY_SPENT_BY_EDITORS, keyReadableByEditors, SHARING_UNCHECKED } from '../messages';
import { missingFor } from '../platform/gas';
import { activeSpreadsheet, installMode } from '../stores/session';
import { readSettings, saveSettings, storedApiKey } from '../stores/account';

/**
 * How many other people can edit the active spreadsheet (Spreadsheet.getEditors, which lists the owner and the
 * editors; people the link lets edit are not listed), or undefined when Google does not let DAPA look.
 */
function otherEditors(): number | undefined {
  if (missingFor('sheet').length > 0) return undefined;
  try {
    const editors = activeSpreadsheet()
      .getEditors()
      .map((user) => user.getEmail());
    let me = '';
    try {
      me = Session.getEffectiveUser().getEmail();
    } catch {
      // no e-mail for this execution: the owner is one of the editors listed
    }
    return me ? editors.filter((email) => email !== me).length : Math.max(0, editors.length - 1);
  } catch {
    return undefined;
  }
}

/** The warning for a key saved here, or undefined (an add-on, or no other editor Google lists). */
export function sharedKeyWarning(): string | undefined {
  if (installMode() !== 'bound') return undefined;
  const others = otherEditors();
  if (others === undefined) return SHARING_UNCHECKED;
  return others > 0 ? `${keyReadableByEditors(others)} ${KEY_SPENT_BY_EDITORS}` : undefined;
}

/** The warning when a key is saved in this copy (the owner's or the user's own), else undefined. */
function warningForStoredKey(): string | undefined {
  return installMode() === 'bound' && storedApiKey() ? sharedKeyWarning() : undefined;
}

/** The sidebar's settings as it opens: with the warning whenever others can reach the key saved in this copy. */
export function readKeySettings(): Settings {
  const settings = readSettings();
  const warning = warningForStoredKey();
  return warning ? { ...settings, sharedKeyWarning: warning } : settings;
}

/** The sidebar's save: the settings as saved, with the warning when a key was saved in a shared bound copy. */
export function saveKeySettings(change: SettingsChange | undefined | null): Settings {
  const settings = saveSettings(change);
  const warning = change?.apiKey ? sharedKeyWarning() : undefined;
  return warning ? { ...settings, sharedKeyWarning: warning } : settings;
}

/** A menu item's notice (its toast), with the warning after it while others can reach the key saved in this copy. */
export function withSharing(notice: string): string {
  const warning = warningForStoredKey();
  return warning ? `${notice} ${warning}` : notice;
}
