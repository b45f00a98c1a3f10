// The plan limits learned by earlier runs (maximum URLs per request, requests and URLs per minute), kept in the
// user's properties per base URL, so a later run sends the fewest requests from its first one.
import type { Learned } from '../../shared';
import { now, sha256, userLock, userProperties } from './gas';
import { USER_PROPERTY } from './storage-keys';

/** Learned limits older than this are dropped: a plan may have been upgraded since. */
const PLAN_MEMORY_MS = 7 * 24 * 3600 * 1000;

interface StoredPlan extends Learned {
  savedAt: number;
}

function propertyName(baseUrl: string): string {
  return USER_PROPERTY.planPrefix + sha256(baseUrl);
}

function positive(n: unknown): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n >= 1 ? Math.floor(n) : undefined;
}

export function loadLearnedPlan(baseUrl: string): Learned {
  const text = userProperties().getProperty(propertyName(baseUrl));
  if (!text) return {};
  try {
    const stored = JSON.parse(text) as Partial<StoredPlan>;
    if (typeof stored.savedAt !== 'number' || now() - stored.savedAt > PLAN_MEMORY_MS) return {};
    const plan: Learned = {};
    const max = positive(stored.maxUrlsPerRequest);
    const rpm = positive(stored.requestsPerMinute);
    const upm = positive(stored.urlsPerMinute);
    if (max) plan.maxUrlsPerRequest = max;
    if (rpm) plan.requestsPerMinute = rpm;
    if (upm) plan.urlsPerMinute = upm;
    return plan;
  } catch {
    return {};
  }
}

function same(a: Learned, b: Learned): boolean {
  return (
    a.maxUrlsPerRequest === b.maxUrlsPerRequest &&
    a.requestsPerMinute === b.requestsPerMinute &&
    a.urlsPerMinute === b.urlsPerMinute
  );
}

/** Keeps what a run learned, merged over what is stored (under the user lock: formulas run side by side). */
export function saveLearnedPlan(baseUrl: string, learned: Learned): void {
  const update: Learned = {};
  if (positive(learned.maxUrlsPerRequest)) update.maxUrlsPerRequest = learned.maxUrlsPerRequest;
  if (positive(learned.requestsPerMinute)) update.requestsPerMinute = learned.requestsPerMinute;
  if (positive(learned.urlsPerMinute)) update.urlsPerMinute = learned.urlsPerMinute;
  if (Object.keys(update).length === 0) return;
  const lock = userLock();
  if (!lock.tryLock(2000)) return; // another execution is saving the same facts; losing this copy is harmless
  try {
    const stored = loadLearnedPlan(baseUrl);
    const merged = { ...stored, ...update };
    if (same(stored, merged) && Object.keys(stored).length > 0) return;
    const value: StoredPlan = { ...merged, savedAt: now() };
    userProperties().setProperty(propertyName(baseUrl), JSON.stringify(value));
  } finally {
    lock.releaseLock();
  }
}

export function forgetLearnedPlans(): void {
  const props = userProperties();
  for (const key of props.getKeys()) {
    if (key.startsWith(USER_PROPERTY.planPrefix)) props.deleteProperty(key);
  }
}

// ---- the plan's window: what the last minute's requests used, shared by every execution of this user ---------

/** One accepted request: when its answer came (ms) and how many URLs it processed. */
export type Send = [at: number, urls: number];

const WINDOW_MS = 60_000;

function windowProperty(baseUrl: string): string {
  return USER_PROPERTY.windowPrefix + sha256(baseUrl);
}

export function loadRecentSends(baseUrl: string, at = now()): Send[] {
  try {
    const sends = JSON.parse(userProperties().getProperty(windowProperty(baseUrl)) ?? '[]') as Send[];
    return Array.isArray(sends) ? sends.filter((s) => Array.isArray(s) && s[0] > at - WINDOW_MS) : [];
  } catch {
    return [];
  }
}

/** Adds this execution's sends to the stored ones (under the user lock), keeping the last minute. */
export function saveRecentSends(baseUrl: string, sends: readonly Send[]): void {
  if (sends.length === 0) return;
  const lock = userLock();
  if (!lock.tryLock(2000)) return;
  try {
    const at = now();
    const merged = loadRecentSends(baseUrl, at);
    const seen = new Set(merged.map((s) => s.join()));
    for (const s of sends) if (s[0] > at - WINDOW_MS && !seen.has(s.join())) merged.push(s);
    merged.sort((a, b) => a[0] - b[0]);
    userProperties().setProperty(windowProperty(baseUrl), JSON.stringify(merged.slice(-200)));
  } finally {
    lock.releaseLock();
  }
}

/**
 * What the plan's window leaves now (URLs and requests; Infinity when that limit is unknown), what it holds when
 * empty, and when the last send in it leaves the window (the server counts a URL for 60 s from the answer).
 */
export function windowRoom(
  plan: Learned,
  sends: readonly Send[],
  at: number,
): { urls: number; requests: number; capacity: number; emptyAt: number } {
  const recent = sends.filter((s) => s[0] > at - WINDOW_MS);
  const used = recent.reduce((sum, s) => sum + s[1], 0);
  const urls = plan.urlsPerMinute ? plan.urlsPerMinute - used : Infinity;
  const requests = plan.requestsPerMinute ? plan.requestsPerMinute - recent.length : Infinity;
  const perRequest = plan.maxUrlsPerRequest ?? Infinity;
  const capacity = Math.min(
    plan.urlsPerMinute ?? Infinity,
    (plan.requestsPerMinute ?? Infinity) * perRequest,
  );
  const last = recent.length > 0 ? recent[recent.length - 1][0] : -Infinity;
  return { urls, requests, capacity, emptyAt: Math.max(at, last + WINDOW_MS + 1) };
}
