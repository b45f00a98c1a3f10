// Ports over the Apps Script services the add-on uses (UrlFetchApp, Utilities, CacheService, PropertiesService,
// LockService), kept stateless: what an execution remembers of them is the store session's (stores/session.ts).
/// <reference types="google-apps-script" />
import type { HttpAnswer, HttpRequest } from '../../../shared';
import { removeKeyFromAnswer, removeKeyFromError } from '../../../shared/redact';
import { type DailyLimit, dailyLimitText } from '../messages';

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

/** HMAC-SHA-256 of a text under a key, as web-safe base64 (stores/key-digest.ts is its one caller; the store session remembers). */
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
