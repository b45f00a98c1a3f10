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
