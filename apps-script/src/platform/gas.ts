// The platform as the add-on meets it, in one module: ports over the Apps Script services it uses (UrlFetchApp,
// Utilities, CacheService, PropertiesService, LockService, ScriptApp), Google's granular consent, and Sheets' own
// cell rules (A1 columns, writing rows in slices). Stateless: what an execution remembers is the session's.
// Over 300 lines: the ports, the consent they are asked under and the cell rules every caller of them shares.
/// <reference types="google-apps-script" />
import type { HttpAnswer, HttpRequest } from '../../../shared';
import { removeKeyFromAnswer, removeKeyFromError } from '../../../shared/redact';
import { type DailyLimit, dailyLimitText, MENU_NAME, permissionNeeded } from '../messages';

// ─── gas ───────────────────────────────────────────────────────────────────────────────────────────────────────────
// Ports over the Apps Script services the add-on uses (UrlFetchApp, Utilities, CacheService, PropertiesService,
// LockService), kept stateless: what an execution remembers of them is the store session's (stores/session.ts).
export type Properties = GoogleAppsScript.Properties.Properties;
export type Cache = GoogleAppsScript.Cache.Cache;
export type Lock = GoogleAppsScript.Lock.Lock;
export type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** Google's user property store (the store session asks once an execution). */
export function googleUserProperties(): Properties {
  return PropertiesService.getUserProperties();
}

/** Google's document property store of the execution's document, or null. */
export function googleDocumentProperties(): Properties | null {
  return PropertiesService.getDocumentProperties() ?? null;
}

/** The execution's document cache, or null (a standalone trigger has none). */
export function googleDocumentCache(): Cache | null {
  try {
    return CacheService.getDocumentCache() ?? null;
  } catch {
    return null;
  }
}

/** The user's cache (the same in each of the user's spreadsheets); a custom function may be refused it. */
export function userCache(): Cache {
  return CacheService.getUserCache();
}

/**
 * The lock of one user's state (their properties, wherever they run): excludes only this user's executions, in every
 * spreadsheet. Google: getUserLock "prevents concurrent access to a section of code by the current user".
 */
export function userLock(): Lock {
  return LockService.getUserLock();
}

/**
 * The lock of one spreadsheet's state: excludes every user's executions in this document, and nobody else's. null
 * where there is none: Google returns null "if the method is called from outside the context of a containing
 * document" (a published add-on's time-driven trigger).
 */
export function googleDocumentLock(): Lock | null {
  try {
    return LockService.getDocumentLock() ?? null;
  } catch {
    return null;
  }
}

export type InstallMode = 'bound' | 'addon';

/** How the add-on was installed: an Editor add-on (Marketplace or test deployment) or a bound script. */
export function googleInstallMode(): InstallMode {
  try {
    return ScriptApp.getInstallationSource() === ScriptApp.InstallationSource.NONE ? 'bound' : 'addon';
  } catch {
    return 'bound';
  }
}

export function now(): number {
  return Date.now();
}

export function sleep(ms: number): void {
  // Utilities.sleep takes at most 5 minutes; the runs never ask for more than a minute at once.
  Utilities.sleep(Math.max(0, Math.min(Math.ceil(ms), 300_000)));
}

/** SHA-256 of a text as web-safe base64 (44 characters); the store session remembers what it made (digestOf). */
export function sha256(text: string): string {
  const bytes = Utilities.computeDigest(Utilities.DigestAlgorithm.SHA_256, text, Utilities.Charset.UTF_8);
  return Utilities.base64EncodeWebSafe(bytes);
}

/** HMAC-SHA-256 of a text under a key, as web-safe base64 (stores/account.ts is its one caller; the store session remembers). */
export function hmacSha256(text: string, key: string): string {
  const bytes = Utilities.computeHmacSha256Signature(text, key, Utilities.Charset.UTF_8);
  return Utilities.base64EncodeWebSafe(bytes);
}

/** A random salt (two UUIDs' worth of randomness, 64 hex characters). */
export function newSalt(): string {
  return (Utilities.getUuid() + Utilities.getUuid()).replace(/-/g, '');
}

/** UrlFetchApp's options for one request of the core, with the user's key added as a Bearer header. */
function fetchOptions(request: HttpRequest, apiKey: string): GoogleAppsScript.URL_Fetch.URLFetchRequest {
  const headers: Record<string, string> = {};
  let contentType = 'application/json';
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.toLowerCase() === 'content-type') contentType = value;
    else headers[name] = value;
  }
  headers.Authorization = `Bearer ${apiKey}`;
  return {
    url: request.url,
    method: 'post',
    contentType,
    headers,
    payload: request.body,
    muteHttpExceptions: true,
  };
}

/** The answer as the core reads it, with the user's key removed from it (a server may repeat the request). */
function answerOf(response: GoogleAppsScript.URL_Fetch.HTTPResponse, apiKey: string): HttpAnswer {
  const answer = {
    status: response.getResponseCode(),
    headers: response.getAllHeaders() as Record<string, string | string[]>,
    body: response.getContentText(),
  };
  return removeKeyFromAnswer(answer, apiKey);
}

/** Runs a fetch; a transport failure is thrown again without the key in its message. */
function keyless<T>(apiKey: string, fetch: () => T): T {
  try {
    return fetch();
  } catch (error) {
    throw removeKeyFromError(error, apiKey);
  }
}

/**
 * Sends one request of the core. HTTP errors come back as answers (muteHttpExceptions); only transport failures
 * throw, and the driver turns those into network failures.
 */
export function fetchAnswer(request: HttpRequest, apiKey: string): HttpAnswer {
  return keyless(apiKey, () =>
    answerOf(UrlFetchApp.fetch(request.url, fetchOptions(request, apiKey)), apiKey),
  );
}

/** Sends several requests side by side (UrlFetchApp.fetchAll): the network time is paid once, not per request. */
export function fetchAnswers(requests: readonly HttpRequest[], apiKey: string): HttpAnswer[] {
  return keyless(apiKey, () =>
    UrlFetchApp.fetchAll(requests.map((r) => fetchOptions(r, apiKey))).map((r) => answerOf(r, apiKey)),
  );
}

// ---- Google's daily quotas ------------------------------------------------------------------------------------

export type { DailyLimit };

/** What a check (or a menu item, a sidebar call) throws after Google refused one of its calls for the day. */
export class DailyLimitError extends Error {
  constructor(readonly limit: DailyLimit) {
    super(dailyLimitText(limit));
  }
}

/** Which of Google's daily quotas an error is ("Service invoked too many times for one day: properties."), if any. */
export function dailyLimitOf(error: unknown): DailyLimit | undefined {
  if (error instanceof DailyLimitError) return error.limit;
  const message = error instanceof Error ? error.message : String(error);
  const service = /too many times for one day: *(\w+)/i.exec(message)?.[1]?.toLowerCase();
  if (service === 'properties' || service === 'urlfetch') return service;
  return /too much computer time for one day/i.test(message) ? 'runtime' : undefined;
}

/** A property store whose refusals for the day are told to `note` before they are thrown on. */
export function notingLimits(store: Properties, note: (error: unknown) => void): Properties {
  const guard =
    <A extends unknown[], R>(call: (...args: A) => R) =>
    (...args: A): R => {
      try {
        return call(...args);
      } catch (error) {
        note(error);
        throw error;
      }
    };
  const wrapped: Record<string, unknown> = {
    getProperty: guard((key: string) => store.getProperty(key)),
    getProperties: guard(() => store.getProperties()),
    getKeys: guard(() => store.getKeys()),
    setProperty: guard((key: string, value: string): unknown => (store.setProperty(key, value), wrapped)),
    setProperties: guard((values: Record<string, string>, deleteAllOthers?: boolean): unknown => {
      if (deleteAllOthers === undefined) store.setProperties(values);
      else store.setProperties(values, deleteAllOthers);
      return wrapped;
    }),
    deleteProperty: guard((key: string): unknown => (store.deleteProperty(key), wrapped)),
    deleteAllProperties: guard((): unknown => (store.deleteAllProperties(), wrapped)),
  };
  return wrapped as unknown as Properties;
}

// ─── consent ───────────────────────────────────────────────────────────────────────────────────────────────────────
// Google's granular consent: a user may grant only some of the add-on's scopes. What each feature needs, whether the
// user granted it (ScriptApp.getAuthorizationInfo with those scopes), and the request for what is missing
// (ScriptApp.requireScopes, from a user action only: it ends the execution and shows Google's prompt). The table of
// features × boxes users read is consent-table.ts (no runtime code imports it: it stays out of the bundle).
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

// ─── cells ─────────────────────────────────────────────────────────────────────────────────────────────────────────
// Cell helpers: A1 column letters, and values made safe to write with setValues (never read as a formula).
/** 1 → "A", 27 → "AA". */
export function columnLetter(column: number): string {
  let n = Math.floor(column);
  let letters = '';
  while (n > 0) {
    const rest = (n - 1) % 26;
    letters = String.fromCharCode(65 + rest) + letters;
    n = Math.floor((n - 1) / 26);
  }
  return letters;
}

/** "A" → 1, "aa" → 27; undefined for anything that is not 1 to 3 letters. */
export function columnNumber(letters: string): number | undefined {
  const text = letters.trim().toUpperCase();
  if (!/^[A-Z]{1,3}$/.test(text)) return undefined;
  let n = 0;
  for (const ch of text) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

/**
 * A text as setValues must receive it to stay text: Sheets reads a leading `=`, `+`, `-` or `@` as a formula
 * (or a mention), so such texts get the `'` prefix that Sheets consumes and that marks the cell as text.
 * Texts that look like numbers or dates are kept as text the same way.
 */
export function asCellText(text: string): string {
  const clipped = text.length > 50_000 ? text.slice(0, 49_997) + '...' : text;
  if (/^[=+\-@']/.test(clipped) || /^[\d.,:/\s]*\d[\d.,:/\s]*$/.test(clipped)) return "'" + clipped;
  return clipped;
}

/** Whether a cell value counts as empty. */
export function isEmptyCell(value: unknown): boolean {
  return value === '' || value === null || value === undefined;
}

// ─── row writer ────────────────────────────────────────────────────────────────────────────────────────────────────
// Writes rows into a sheet by offset, one setValues per run of consecutive rows: the sidebar's result rows and
// the result store's updated rows go through it.
type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
export type CellValue = string | number | boolean | Date;

/** Writes `rows` (offset from row `first` → its cells, all of one width) starting at `column`. */
export function writeRows(
  sheet: Sheet,
  column: number,
  first: number,
  rows: ReadonlyMap<number, readonly unknown[]>,
): void {
  const offsets = [...rows.keys()].sort((a, b) => a - b);
  for (let start = 0; start < offsets.length;) {
    let end = start;
    while (end + 1 < offsets.length && offsets[end + 1] === offsets[end] + 1) end += 1;
    const block = offsets.slice(start, end + 1).map((o) => rows.get(o) as unknown[]);
    sheet.getRange(first + offsets[start], column, block.length, block[0].length).setValues(block);
    start = end + 1;
  }
}
