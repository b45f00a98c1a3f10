// Ports over the Apps Script services the add-on uses (UrlFetchApp, Utilities, CacheService, PropertiesService,
// LockService): the only module that touches them besides the sheet and UI code, so the rest reads plainly.
/// <reference types="google-apps-script" />
import type { HttpAnswer, HttpRequest } from '../../../shared';
import { type DailyLimit, dailyLimitText, NO_SPREADSHEET } from '../messages';

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

export type { DailyLimit };

/**
 * The daily limit Google refused this execution with, if any (the cells and panels say so in the project's words);
 * tied to the execution's own services object, as a realm may serve several executions.
 */
let limited: { of: object; limit: DailyLimit } | undefined;

/** What a check throws after Google refused one of its calls for the day (what came in is kept). */
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

/** Notes a refusal of Google's daily quotas met in this execution (other errors are ignored); answers which. */
export function noteDailyLimit(error: unknown): DailyLimit | undefined {
  const limit = dailyLimitOf(error);
  if (limit) limited = { of: PropertiesService, limit };
  return limit;
}

/** The daily quota Google refused this execution with (undefined: none so far). */
export function dailyLimitMet(): DailyLimit | undefined {
  return limited?.of === PropertiesService ? limited.limit : undefined;
}

/**
 * A menu item or sidebar call whose refusal by one of Google's daily quotas reaches the user in the project's words
 * (what is used up, and that DAPA goes on by itself after Google's reset), never in Google's; other errors pass as
 * they are.
 */
export function inOurWords<A extends unknown[], R>(call: (...args: A) => R): (...args: A) => R {
  return (...args: A): R => {
    let limit: DailyLimit | undefined;
    try {
      return call(...args);
    } catch (error) {
      limit = noteDailyLimit(error);
      if (!limit) throw error;
    }
    throw new DailyLimitError(limit);
  };
}

/** A property store whose refusals for the day are noted (dailyLimitMet) before they are thrown on. */
function noted(store: Properties): Properties {
  const guard =
    <A extends unknown[], R>(call: (...args: A) => R) =>
    (...args: A): R => {
      try {
        return call(...args);
      } catch (error) {
        noteDailyLimit(error);
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

/** The user's own store (API key, base URL, learned plan limits, the job, the credits), asked for once an execution. */
let userStore: { of: object; store: Properties } | undefined;

export function userProperties(): Properties {
  if (userStore?.of !== PropertiesService)
    userStore = { of: PropertiesService, store: noted(PropertiesService.getUserProperties()) };
  return userStore.store;
}

/** The execution's document's store (DocumentProperties), when the current spreadsheet is that document. */
export function documentProperties(): Properties | null {
  if (!isOwnDocument()) return null;
  const store = PropertiesService.getDocumentProperties();
  return store ? noted(store) : null;
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

function answerOf(response: GoogleAppsScript.URL_Fetch.HTTPResponse): HttpAnswer {
  return {
    status: response.getResponseCode(),
    headers: response.getAllHeaders() as Record<string, string | string[]>,
    body: response.getContentText(),
  };
}

/**
 * Sends one request of the core. HTTP errors come back as answers (muteHttpExceptions); only transport failures
 * throw, and the driver turns those into network failures.
 */
export function fetchAnswer(request: HttpRequest, apiKey: string): HttpAnswer {
  try {
    return answerOf(UrlFetchApp.fetch(request.url, fetchOptions(request, apiKey)));
  } catch (error) {
    noteDailyLimit(error);
    throw error;
  }
}

/** Sends several requests side by side (UrlFetchApp.fetchAll): the network time is paid once, not per request. */
export function fetchAnswers(requests: readonly HttpRequest[], apiKey: string): HttpAnswer[] {
  try {
    return UrlFetchApp.fetchAll(requests.map((r) => fetchOptions(r, apiKey))).map(answerOf);
  } catch (error) {
    noteDailyLimit(error);
    throw error;
  }
}
