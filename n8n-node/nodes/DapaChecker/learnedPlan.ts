// What a run learned about the plan (maximum URLs per request, requests and URLs per minute), kept in the node's
// workflow static data so that the next execution starts from it instead of learning it again. No secret is kept.
import { createHash } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';
import type { Learned } from '../../../shared/index';

/** Learned limits older than this are learned again (the user may have changed plan). */
export const LEARNED_PLAN_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** At most this many plans (key x address) are kept per node; the oldest goes first. */
const MAX_PLANS = 10;
const PREFIX = 'dapaPlan:';

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

/** The limits kept for this plan, unless none are kept, they are too old, or what is kept is not readable. */
export function readLearnedPlan(staticData: IDataObject, key: string, now: number): Learned | undefined {
  const stored = staticData[key] as Partial<StoredPlan> | undefined;
  if (typeof stored !== 'object' || stored === null || typeof stored.at !== 'number') return undefined;
  if (now - stored.at > LEARNED_PLAN_TTL_MS || stored.at > now + 60_000) return undefined;
  const learned: Learned = {
    maxUrlsPerRequest: positive(stored.maxUrlsPerRequest),
    requestsPerMinute: positive(stored.requestsPerMinute),
    urlsPerMinute: positive(stored.urlsPerMinute),
  };
  return Object.values(learned).some((v) => v !== undefined) ? learned : undefined;
}

/** Keeps what the run learned (merged over what was kept); writes only when something changed. */
export function keepLearnedPlan(staticData: IDataObject, key: string, learned: Learned, now: number): void {
  const before = readLearnedPlan(staticData, key, now) ?? {};
  const merged: Learned = {
    maxUrlsPerRequest: positive(learned.maxUrlsPerRequest) ?? before.maxUrlsPerRequest,
    requestsPerMinute: positive(learned.requestsPerMinute) ?? before.requestsPerMinute,
    urlsPerMinute: positive(learned.urlsPerMinute) ?? before.urlsPerMinute,
  };
  const names = ['maxUrlsPerRequest', 'requestsPerMinute', 'urlsPerMinute'] as const;
  if (names.every((name) => merged[name] === before[name]) && staticData[key] !== undefined) return;
  if (names.every((name) => merged[name] === undefined)) return;
  const stored: IDataObject = { at: now };
  for (const name of names) if (merged[name] !== undefined) stored[name] = merged[name];
  staticData[key] = stored;
  const kept = Object.keys(staticData).filter((name) => name.startsWith(PREFIX));
  if (kept.length > MAX_PLANS) {
    const atOf = (name: string) => ((staticData[name] as { at?: number } | undefined)?.at ?? 0) as number;
    kept.sort((a, b) => atOf(a) - atOf(b));
    for (const name of kept.slice(0, kept.length - MAX_PLANS)) delete staticData[name];
  }
}
