// The key stays its owner's: in a copy bound to a spreadsheet, everyone who can edit the spreadsheet can reach the
// key saved there (its script project is theirs to edit), so saving a key there warns when others can edit it.
/// <reference types="google-apps-script" />
import type { Settings, SettingsChange } from '../../sidebar/contract';
import { keyReadableByEditors } from '../messages';
import { installMode } from '../stores/session';
import { saveSettings } from '../stores/settings';

/** The warning for a key saved here, or undefined (an add-on, no other editor, or editors Google does not list). */
export function sharedKeyWarning(): string | undefined {
  if (installMode() !== 'bound') return undefined;
  try {
    const me = Session.getEffectiveUser().getEmail();
    const others = SpreadsheetApp.getActiveSpreadsheet()
      .getEditors()
      .filter((user) => user.getEmail() !== me).length;
    return others > 0 ? keyReadableByEditors(others) : undefined;
  } catch {
    return undefined; // no spreadsheet, or the spreadsheets permission not granted: nothing to count
  }
}

/** The sidebar's save: the settings as saved, with the warning when a key was saved in a shared bound copy. */
export function saveKeySettings(change: SettingsChange | undefined | null): Settings {
  const settings = saveSettings(change);
  const warning = change?.apiKey ? sharedKeyWarning() : undefined;
  return warning ? { ...settings, sharedKeyWarning: warning } : settings;
}
