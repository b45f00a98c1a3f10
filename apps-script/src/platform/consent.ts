// Google's granular consent: a user may grant only some of the add-on's scopes. What each feature needs, whether the
// user granted it (ScriptApp.getAuthorizationInfo with those scopes), and the request for what is missing
// (ScriptApp.requireScopes, from a user action only: it ends the execution and shows Google's prompt). The table of
// features × boxes users read is consent-table.ts (no runtime code imports it: it stays out of the bundle).
/// <reference types="google-apps-script" />
import { MENU_NAME, permissionNeeded } from '../messages';

const AUTH = 'https://www.googleapis.com/auth/';

export const SCOPES = {
  request: AUTH + 'script.external_request',
  sheets: AUTH + 'spreadsheets',
  triggers: AUTH + 'script.scriptapp',
  ui: AUTH + 'script.container.ui',
} as const;

export type Box = keyof typeof SCOPES;

/** Google's consent boxes: a short name, and what the screen says (Google's wording, which it may change). */
export const BOXES: Record<Box, { label: string; screen: string }> = {
  sheets: {
    label: 'Spreadsheets',
    screen: 'See, edit, create, and delete all your Google Sheets spreadsheets',
  },
  request: { label: 'External service', screen: 'Connect to an external service' },
  ui: {
    label: 'Sidebars and dialogs',
    screen: 'Display and run third-party web content in prompts and sidebars inside Google applications',
  },
  triggers: { label: 'In the background', screen: 'Allow this application to run when you are not present' },
};

/** What a user action asks Google for when a box is missing (requireFor). Formulas ask for nothing: see CONSENT. */
export type Feature = 'background' | 'sidebar' | 'key' | 'sheet' | 'ui';

const NEEDS: Record<Feature, string[]> = {
  background: [SCOPES.request, SCOPES.sheets, SCOPES.triggers],
  sidebar: [SCOPES.request, SCOPES.sheets],
  key: [SCOPES.request],
  sheet: [SCOPES.sheets],
  ui: [SCOPES.ui],
};

interface AuthorizationInfo {
  getAuthorizationStatus(): unknown;
  getAuthorizedScopes?(): string[] | null;
}

type ScopedScriptApp = {
  getAuthorizationInfo(mode: unknown, scopes?: string[]): AuthorizationInfo;
  requireScopes?(mode: unknown, scopes: string[]): void;
  AuthorizationStatus: { NOT_REQUIRED: unknown };
  AuthMode: { FULL: unknown };
};

/** The scopes `feature` needs that the user has not granted ([] when all are, or when Google cannot tell). */
export function missingFor(feature: Feature): string[] {
  const needs = NEEDS[feature];
  try {
    const app = ScriptApp as unknown as ScopedScriptApp;
    const info = app.getAuthorizationInfo(app.AuthMode.FULL, needs);
    if (info.getAuthorizationStatus() === app.AuthorizationStatus.NOT_REQUIRED) return [];
    const granted = info.getAuthorizedScopes?.() ?? [];
    return needs.filter((s) => !granted.includes(s));
  } catch {
    return [];
  }
}

/** What Google's screen says for each box `feature` needs and the user left unticked. */
export function missingBoxes(feature: Feature): string[] {
  const missing = missingFor(feature);
  return (Object.keys(SCOPES) as Box[])
    .filter((b) => missing.includes(SCOPES[b]))
    .map((b) => BOXES[b].screen);
}

/**
 * Asks Google for the scopes `feature` needs when one is missing (Google ends this execution and shows its
 * authorization prompt). From a user action only: a menu item or a sidebar button.
 */
export function requireFor(feature: Feature): void {
  const app = ScriptApp as unknown as ScopedScriptApp;
  if (missingFor(feature).length === 0 || typeof app.requireScopes !== 'function') return;
  app.requireScopes(app.AuthMode.FULL, NEEDS[feature]);
}

/**
 * Whether `feature`'s boxes are ticked; when not, says what `what` needs in DAPA's words (an alert, which needs only
 * the dialogs' box; else the error itself) and asks Google for what is missing, ending the execution. From a user
 * action only (a menu item or a sidebar button), never instead of Google's raw "You do not have permission".
 */
export function allowedFor(feature: Feature, what: string): true {
  const missing = missingBoxes(feature);
  if (missing.length === 0) return true;
  const text = permissionNeeded(what, missing);
  try {
    const ui = SpreadsheetApp.getUi();
    ui.alert(MENU_NAME, text, ui.ButtonSet.OK);
  } catch {
    // without the dialogs' box the error below carries the words
  }
  requireFor(feature);
  throw new Error(text);
}
