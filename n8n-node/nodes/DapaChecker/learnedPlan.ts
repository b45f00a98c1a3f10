// What a run learned about the plan that is exact (the maximum URLs per request, read from a 422 Limit Exceeded),
// kept in the node's workflow static data and in this process's memory, so that the next execution starts from it
// instead of learning it again. Per-minute rates are not kept: a rate is inferred from what one execution saw in the
// last minute, which is too low whenever other executions shared the key's window (queue mode: 4 executions at
// once left a worker pacing a later lone execution at 5 URLs a minute), and a kept rate is never raised again. Each
// execution reads the rates afresh: from the server's X-RateLimit headers at once, or from the first answer that
// hits the limit (which bills nothing). Memory covers queue mode, where n8n saves a worker's static data but does not load it into the next
// new execution (it reloads static data only for resumed ones). No secret is kept in either.
import { createHash } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';
import type { Learned } from '../../../shared/index';

/** Learned limits older than this are learned again (the user may have changed plan). */
export const LEARNED_PLAN_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** At most this many plans (key x address) are kept per node; the oldest goes first. */
const MAX_PLANS = 10;
const PREFIX = 'dapaPlan:';
/** At most this many plans are kept in this process's memory; the oldest goes first. */
const MAX_REMEMBERED = 100;

/** Plans learned by executions in this n8n process (a main instance or a worker), by storage key. */
const remembered = new Map<string, StoredPlan>();

interface StoredPlan extends Learned {
  /** When it was learned (ms since the epoch). */
  at: number;
}

/**
 * The storage key of a plan: a SHA-256 digest of the address and the API key, so that another key or another
 * address starts afresh; neither the key nor anything from which it could be read is stored.
 */
export function planKey(baseUrl: string, apiKey: string): string {
  const digest = createHash('sha256').update(`${baseUrl}\n${apiKey}`).digest('hex');
  return `${PREFIX}${digest.slice(0, 24)}`;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 1 ? Math.floor(value) : undefined;
}

/** The stored plan, from static data or this process's memory (the newer of both). */
function storedPlan(staticData: IDataObject, key: string): Partial<StoredPlan> | undefined {
  const saved = staticData[key] as Partial<StoredPlan> | undefined;
  const inMemory = remembered.get(key);
  const savedAt = typeof saved === 'object' && saved !== null && typeof saved.at === 'number' ? saved.at : -1;
  if (inMemory && inMemory.at > savedAt) return inMemory;
  return savedAt >= 0 ? saved : undefined;
}

/** The limits kept for this plan, unless none are kept, they are too old, or what is kept is not readable. */
export function readLearnedPlan(staticData: IDataObject, key: string, now: number): Learned | undefined {
  const stored = storedPlan(staticData, key);
  if (typeof stored !== 'object' || stored === null || typeof stored.at !== 'number') return undefined;
  if (now - stored.at > LEARNED_PLAN_TTL_MS || stored.at > now + 60_000) return undefined;
  const maxUrlsPerRequest = positive(stored.maxUrlsPerRequest);
  return maxUrlsPerRequest === undefined ? undefined : { maxUrlsPerRequest };
}

/** Keeps the exact part of what the run learned (merged over what was kept) in static data and this process's memory. */
export function keepLearnedPlan(staticData: IDataObject, key: string, learned: Learned, now: number): void {
  const before = readLearnedPlan(staticData, key, now) ?? {};
  const merged: Learned = {
    maxUrlsPerRequest: positive(learned.maxUrlsPerRequest) ?? before.maxUrlsPerRequest,
  };
  const names = ['maxUrlsPerRequest'] as const;
  if (names.every((name) => merged[name] === undefined)) return;
  const unchanged = names.every((name) => merged[name] === before[name]);
  const stored: StoredPlan = { at: now };
  for (const name of names) if (merged[name] !== undefined) stored[name] = merged[name];
  if (!unchanged || !remembered.has(key)) {
    remembered.delete(key);
    remembered.set(key, stored);
    if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
  }
  // Static data is written only when something changed, so that n8n does not save the workflow every execution.
  if (unchanged && staticData[key] !== undefined) return;
  staticData[key] = { ...stored };
  const kept = Object.keys(staticData).filter((name) => name.startsWith(PREFIX));
  if (kept.length > MAX_PLANS) {
    const atOf = (name: string) => ((staticData[name] as { at?: number } | undefined)?.at ?? 0) as number;
    kept.sort((a, b) => atOf(a) - atOf(b));
    for (const name of kept.slice(0, kept.length - MAX_PLANS)) delete staticData[name];
  }
}

/** Forgets what this process remembers (for tests: a fresh n8n process). */
export function forgetRememberedPlans(): void {
  remembered.clear();
}
