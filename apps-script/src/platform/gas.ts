// Ports over the Apps Script services the add-on uses (UrlFetchApp, Utilities, CacheService, PropertiesService,
// LockService): the only module that touches them besides the sheet and UI code, so the rest reads plainly.
/// <reference types="google-apps-script" />
import type { HttpAnswer, HttpRequest } from '../../../shared';
import { removeKeyFromAnswer, removeKeyFromError } from '../../../shared/redact';
import { NO_SPREADSHEET } from '../messages';

export type Properties = GoogleAppsScript.Properties.Properties;
export type Cache = GoogleAppsScript.Cache.Cache;
export type Lock = GoogleAppsScript.Lock.Lock;
export type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/**
 * The spreadsheet this execution works on: the one the background dispatcher opened by id (a published add-on's
 * time-driven trigger has no active spreadsheet), else the active one; null when there is none.
 */
let opened: Spreadsheet | undefined;

export function currentSpreadsheet(): Spreadsheet | null {
  return opened ?? SpreadsheetApp.getActiveSpreadsheet() ?? null;
}

/** The spreadsheet the user works in (menu, sidebar, edit trigger), or a clear error where there is none. */
export function activeSpreadsheet(): Spreadsheet {
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) throw new Error(NO_SPREADSHEET);
  return spreadsheet;
}

/** Runs `action` with `spreadsheet` as the current one (the dispatcher's turn in a spreadsheet it opened by id). */
export function inSpreadsheet<T>(spreadsheet: Spreadsheet, action: () => T): T {
  const before = opened;
  opened = spreadsheet;
  try {
    return action();
  } finally {
    opened = before;
  }
}

/** The user's own store (API key, base URL, learned plan limits, the job, the credits), asked for once an execution. */
let userStore: { of: object; store: Properties } | undefined;

export function userProperties(): Properties {
  if (userStore?.of !== PropertiesService)
    userStore = { of: PropertiesService, store: PropertiesService.getUserProperties() };
  return userStore.store;
}

/** The execution's document's store (DocumentProperties), when the current spreadsheet is that document. */
export function documentProperties(): Properties | null {
  if (!isOwnDocument()) return null;
  return PropertiesService.getDocumentProperties() ?? null;
}

/** Whether the current spreadsheet is this execution's own document (not one the dispatcher opened by id). */
function isOwnDocument(): boolean {
  if (!opened) return true;
  if (own?.sheet === opened) return own.is;
  let is = false;
  try {
    is = SpreadsheetApp.getActiveSpreadsheet()?.getId() === opened.getId();
  } catch {
    // no document of its own
  }
  own = { sheet: opened, is };
  return is;
}

/** isOwnDocument's answer for the spreadsheet opened last (asked on every store and cache access). */
let own: { sheet: Spreadsheet; is: boolean } | undefined;

/**
 * The document's own cache, when this execution runs in the document (null in a standalone trigger, and when the
 * dispatcher works in a spreadsheet it opened by id: that one is not the execution's document).
 */
export function documentCache(): Cache | null {
  if (!isOwnDocument()) return null;
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
 * document" (a published add-on's time-driven trigger), and a spreadsheet the dispatcher opened by id is not the
 * execution's document either.
 */
export function documentLock(): Lock | null {
  if (!isOwnDocument()) return null;
  try {
    return LockService.getDocumentLock() ?? null;
  } catch {
    return null;
  }
}

export type InstallMode = 'bound' | 'addon';

let mode: InstallMode | undefined;

/** How the add-on was installed: an Editor add-on (Marketplace or test deployment) or a bound script. */
export function installMode(): InstallMode {
  if (mode) return mode;
  try {
    mode = ScriptApp.getInstallationSource() === ScriptApp.InstallationSource.NONE ? 'bound' : 'addon';
  } catch {
    mode = 'bound';
  }
  return mode;
}

export function now(): number {
  return Date.now();
}

export function sleep(ms: number): void {
  // Utilities.sleep takes at most 5 minutes; the runs never ask for more than a minute at once.
  Utilities.sleep(Math.max(0, Math.min(Math.ceil(ms), 300_000)));
}

/** Digests made in this execution: each costs two service calls, and the same texts come back (a base URL). */
const digests = new Map<string, string>();

/** SHA-256 of a text as web-safe base64 (44 characters): the shape of the cache and property keys we derive. */
export function sha256(text: string): string {
  let digest = digests.get(text);
  if (digest === undefined) {
    const bytes = Utilities.computeDigest(Utilities.DigestAlgorithm.SHA_256, text, Utilities.Charset.UTF_8);
    digests.set(text, (digest = Utilities.base64EncodeWebSafe(bytes)));
  }
  return digest;
}

/** HMAC-SHA-256 of a text under a key, as web-safe base64 (stores/key-digest.ts is its one caller). */
export function hmacSha256(text: string, key: string): string {
  const memo = `${key}\u0000${text}`;
  let digest = digests.get(memo);
  if (digest === undefined) {
    const bytes = Utilities.computeHmacSha256Signature(text, key, Utilities.Charset.UTF_8);
    digests.set(memo, (digest = Utilities.base64EncodeWebSafe(bytes)));
  }
  return digest;
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
