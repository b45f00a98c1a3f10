// Google's granular consent: a user may grant only some of the add-on's scopes. What each feature needs, whether the
// user granted it (ScriptApp.getAuthorizationInfo with those scopes), and the request for what is missing
// (ScriptApp.requireScopes, from a user action only: it ends the execution and shows Google's prompt).
/// <reference types="google-apps-script" />

const AUTH = 'https://www.googleapis.com/auth/';

export const SCOPES = {
  request: AUTH + 'script.external_request',
  sheets: AUTH + 'spreadsheets',
  triggers: AUTH + 'script.scriptapp',
} as const;

/** Formulas need none (a custom function runs without the user's authorization). */
export type Feature = 'background' | 'sidebar' | 'key';

const NEEDS: Record<Feature, string[]> = {
  background: [SCOPES.request, SCOPES.sheets, SCOPES.triggers],
  sidebar: [SCOPES.request, SCOPES.sheets],
  key: [SCOPES.request],
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

/**
 * Asks Google for the scopes `feature` needs when one is missing (Google ends this execution and shows its
 * authorization prompt). From a user action only: a menu item or a sidebar button.
 */
export function requireFor(feature: Feature): void {
  const app = ScriptApp as unknown as ScopedScriptApp;
  if (missingFor(feature).length === 0 || typeof app.requireScopes !== 'function') return;
  app.requireScopes(app.AuthMode.FULL, NEEDS[feature]);
}
