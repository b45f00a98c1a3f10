// Ports over the Apps Script services the add-on uses (UrlFetchApp, Utilities, CacheService, PropertiesService,
// LockService): the only module that touches them besides the sheet and UI code, so the rest reads plainly.
/// <reference types="google-apps-script" />
import type { HttpAnswer, HttpRequest } from '../../shared';

export type Properties = GoogleAppsScript.Properties.Properties;
export type Cache = GoogleAppsScript.Cache.Cache;
export type Lock = GoogleAppsScript.Lock.Lock;

/** The user's own store: API key, base URL, learned plan limits and the sidebar's job. */
export function userProperties(): Properties {
  return PropertiesService.getUserProperties();
}

/** The spreadsheet's own store: retention, schedule, credits saved. */
export function documentProperties(): Properties {
  return PropertiesService.getDocumentProperties();
}

/** The cache of fetched records: one per document, so every formula and the sidebar in this sheet share it. */
export function documentCache(): Cache {
  return CacheService.getDocumentCache() ?? CacheService.getScriptCache();
}

/** A lock around the current user's read-modify-write of their properties (job, learned plan). */
export function userLock(): Lock {
  return LockService.getUserLock();
}

export function now(): number {
  return Date.now();
}

export function sleep(ms: number): void {
  // Utilities.sleep takes at most 5 minutes; the runs never ask for more than a minute at once.
  Utilities.sleep(Math.max(0, Math.min(Math.ceil(ms), 300_000)));
}

/** SHA-256 of a text as web-safe base64 (44 characters): the shape of every cache and property key we derive. */
export function sha256(text: string): string {
  const bytes = Utilities.computeDigest(Utilities.DigestAlgorithm.SHA_256, text, Utilities.Charset.UTF_8);
  return Utilities.base64EncodeWebSafe(bytes);
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
  return answerOf(UrlFetchApp.fetch(request.url, fetchOptions(request, apiKey)));
}

/** Sends several requests side by side (UrlFetchApp.fetchAll): the network time is paid once, not per request. */
export function fetchAnswers(requests: readonly HttpRequest[], apiKey: string): HttpAnswer[] {
  return UrlFetchApp.fetchAll(requests.map((r) => fetchOptions(r, apiKey))).map(answerOf);
}
