// The issue-35 load shape and its four figures: N executions of lists of 10 domains, each list overlapping its
// neighbour by half (5N + 5 distinct), posted at once to one webhook on one entry-plan key; what the sandbox counted
// (credits, 422 "Limit Exceeded", requests whose URLs were all refused as rate_limit_reached, 429s), the pace (the
// last answer against the time the distinct domains need at the plan's 60 a minute) and the items lost.
import { checkEntry, type KeyStats } from '../../sandbox/handler';
import type { RunningSandbox } from '../../sandbox/server';
import { post, type Answer } from './cluster';
import { domainPool, keylessTag, spell } from './datasets';
import type { CredentialJson, NodeJson, WorkflowJson } from './n8n';
import { clip, type Tally } from './tally';
import {
  appendMerge,
  dapaChecker,
  itemsFromWebhookBody,
  pairingProbe,
  webhookTrigger,
  workflow,
} from './workflows';

export const SHARED_CREDENTIAL_TYPE = 'dapaSharedStateApi';
/** The entry plan's URLs a minute (the sandbox's `sandbox-basic`), which every key here copies. */
export const PER_MINUTE = 60;

export interface ListItem {
  row: number;
  url: string;
  note: string;
}

/** Execution e's list: domains 5e … 5e+9 of a pool, spelled as users paste them; `size` 10 by default. */
export function overlappingLists(executions: number, tag: string, size = 10): ListItem[][] {
  const half = size / 2;
  const pool = domainPool(half * executions + half, `${keylessTag(tag)}-`);
  return Array.from({ length: executions }, (_v, e) =>
    pool.slice(half * e, half * e + size).map((d, i) => ({
      row: i,
      url: spell(d, i + e),
      note: `execution ${e} item ${i}`,
    })),
  );
}

export function distinctOf(lists: ListItem[][]): Set<string> {
  const out = new Set<string>();
  for (const item of lists.flat()) {
    const checked = checkEntry(item.url);
    if (checked.ok) out.add(checked.domain);
  }
  return out;
}

/** The Signing Secret of every shared-store credential of the end-to-end suite. */
export const E2E_SIGNING_SECRET = 'e2e-signing-secret-0123456789';

export function sharedCredential(id: string, name: string, url: string, auth?: string): CredentialJson {
  const [user, password] = auth ? auth.split(':') : ['', ''];
  return {
    id,
    name,
    type: SHARED_CREDENTIAL_TYPE,
    data: { url, user, password, secret: E2E_SIGNING_SECRET },
  };
}

export interface DapaFlow {
  id: string;
  path: string;
  api: CredentialJson;
  /** The shared store's credential: Share Across Workers on. Absent: off (the node shares within its process). */
  shared?: CredentialJson;
  reuseResultsHours?: number;
  /** The node as on main before issue 35: no sharing parameters at all. */
  before?: boolean;
}

/** Webhook → items from the body → DAPA Checker → pairing probes → Merge, answering every item. */
export function dapaFlow(f: DapaFlow): WorkflowJson {
  const options = f.reuseResultsHours === undefined ? {} : { reuseResultsHours: f.reuseResultsHours };
  const base = dapaChecker('DAPA', f.api, { options });
  const dapa: NodeJson = f.before
    ? base
    : {
        ...base,
        parameters: { ...base.parameters, shareAcrossWorkers: f.shared !== undefined },
        credentials: {
          ...base.credentials,
          ...(f.shared ? { [SHARED_CREDENTIAL_TYPE]: { id: f.shared.id, name: f.shared.name } } : {}),
        },
      };
  return workflow(
    f.id,
    `scaling: ${f.path}`,
    [
      webhookTrigger('Webhook', f.path),
      itemsFromWebhookBody('Source'),
      dapa,
      pairingProbe('Results probe'),
      pairingProbe('Skipped probe'),
      appendMerge('All'),
    ],
    [
      ['Webhook', 'Source'],
      ['Source', 'DAPA'],
      ['DAPA', 'Results probe', 0],
      ['DAPA', 'Skipped probe', 1],
      ['Results probe', 'All', 0, 0],
      ['Skipped probe', 'All', 0, 1],
    ],
  );
}

/** The four figures of one run, and what they are measured against. */
export interface Figures {
  executions: number;
  distinct: number;
  billed: number;
  requests: number;
  limitExceeded: number;
  allRateLimited: number;
  tooMany: number;
  /** The last answer, from the first post. */
  lastMs: number;
  /** The time the distinct domains need at the plan's pace. */
  needMs: number;
  itemsIn: number;
  lost: number;
  /** Results whose metrics this execution paid for (`reused: false`). */
  fresh: number;
  /** Items that say the shared store failed (`shared_store`). */
  storeNotes: number;
  answers: Answer[];
}

function delta(after: KeyStats | undefined, before: KeyStats | undefined, pick: (s: KeyStats) => number) {
  return (after ? pick(after) : 0) - (before ? pick(before) : 0);
}

/** An item that ended with a result or a reason, paired with its own input item. */
function delivered(item: Record<string, unknown>): boolean {
  const ok = typeof item.site_da === 'number' || typeof item.reason === 'string';
  return ok && item.sourceRow === item.row;
}

/**
 * The gap between two posts of one run. 40 posts in the same instant made n8n's SQLite, shared by the main and 5
 * workers, refuse the first executions' writes (SQLITE_BUSY: "Worker errored while running execution"); a setup
 * limit of the test (n8n wants PostgreSQL for queue mode), not the node's. Pace is measured from the first post.
 */
export const POST_GAP_MS = 150;

/**
 * Posts every list, POST_GAP_MS apart, to `url` and measures the key's figures from the sandbox's own counters; the
 * pace is measured against `perMinute`, the key's plan's URLs a minute (the entry plan's unless told).
 */
export async function runLists(
  sandbox: RunningSandbox,
  key: string,
  url: string,
  lists: ListItem[][],
  perMinute = PER_MINUTE,
): Promise<Figures> {
  const before = sandbox.sandbox.stats()[key];
  const started = Date.now();
  // How long an answer is waited for: past twice what the slowest scenario took (webdis stopped mid-run: 242.6 s, 2.21 x
  // what its distinct domains need), so n8n's lost answer (queue mode sometimes never relays one) costs 8-10 min of
  // CI, not 15.
  const patienceMs = Math.max(8 * 60_000, (2.5 * distinctOf(lists).size * 60_000) / perMinute + 60_000);
  const answers = await Promise.all(
    lists.map(async (items, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * POST_GAP_MS));
      const answer = await post(url, items, patienceMs);
      return { ...answer, ms: answer.at - started };
    }),
  );
  const after = sandbox.sandbox.stats()[key];
  const distinct = distinctOf(lists).size;
  let lost = 0;
  answers.forEach((answer, e) => {
    const rows = new Map<number, number>();
    for (const item of answer.items) {
      if (delivered(item)) rows.set(item.row as number, (rows.get(item.row as number) ?? 0) + 1);
    }
    lost += lists[e].filter((item) => rows.get(item.row) !== 1).length;
  });
  const items = answers.flatMap((a) => a.items);
  return {
    executions: lists.length,
    distinct,
    billed: delta(after, before, (s) => s.billed),
    requests: delta(after, before, (s) => s.requests),
    limitExceeded: delta(after, before, (s) => s.limitExceeded),
    allRateLimited: delta(after, before, (s) => s.allRateLimited),
    tooMany: delta(after, before, (s) => s.responsesByStatus['429'] ?? 0),
    lastMs: Math.max(...answers.map((a) => a.ms)),
    needMs: (distinct / perMinute) * 60_000,
    itemsIn: lists.reduce((n, l) => n + l.length, 0),
    lost,
    fresh: items.filter((i) => typeof i.site_da === 'number' && i.reused === false).length,
    storeNotes: items.filter((i) => typeof i.shared_store === 'string').length,
    answers,
  };
}

export const pace = (f: Figures) => f.lastMs / f.needMs;

export function line(f: Figures): string {
  return (
    `${f.executions} executions, ${f.distinct} distinct: ${f.billed} billed, ${f.requests} requests, ` +
    `${f.limitExceeded} Limit Exceeded, ${f.allRateLimited} all-refused requests, ${f.tooMany} 429s, ` +
    `last ${(f.lastMs / 1000).toFixed(1)} s = ${pace(f).toFixed(2)} x the ${(f.needMs / 1000).toFixed(0)} s the ` +
    `distinct domains need, ${f.lost} of ${f.itemsIn} items lost, ${f.fresh} fresh results, ${f.storeNotes} shared_store notes`
  );
}

/** Every answer 200, nothing lost. */
export function checkDelivered(t: Tally, s: string, f: Figures): void {
  const bad = f.answers.filter((a) => a.status !== 200);
  t.check(s, `every execution answers 200`, bad.length === 0, clip(bad.map((a) => `${a.status} ${a.text}`)));
  t.check(
    s,
    `every item comes out once, paired, with a result or a reason (0 lost of ${f.itemsIn})`,
    f.lost === 0,
    `${f.lost} lost`,
  );
}

/**
 * The targets for a run that shares: billed = distinct, each paid once, at most one 422 "Limit Exceeded";
 * with `target`, at most one request spent on a minute others had used up and the last answer within `target.factor` x
 * the time the distinct domains need. The plan's URLs a minute are learned from the service's first refusal (nothing tells
 * them before: the request that finds the minute full is refused whole), so one such request is the learning one.
 */
export function checkShared(t: Tally, s: string, f: Figures, target?: { factor: number }): void {
  checkDelivered(t, s, f);
  t.equal(s, `billed = the ${f.distinct} distinct domains`, f.billed, f.distinct);
  t.equal(s, `one result per domain is fresh (reused: false), the others reused`, f.fresh, f.billed);
  t.check(s, 'at most one 422 "Limit Exceeded" in all', f.limitExceeded <= 1, `${f.limitExceeded}`);
  if (!target) return;
  // No request spent on a minute others had used up: the plan's URLs a minute are learned from the service's first
  // refusal (nothing tells them before), so one request refused whole is the learning one, and no other.
  t.check(
    s,
    'no request spent on a minute others had used up: at most one refused whole as rate_limit_reached (the one that learns the rate)',
    f.allRateLimited <= 1,
    `${f.allRateLimited} requests refused whole`,
  );
  t.check(
    s,
    `the last execution done within ${target.factor} x the ${(f.needMs / 1000).toFixed(0)} s the distinct domains need at the plan's pace`,
    f.lastMs <= target.factor * f.needMs,
    `${(f.lastMs / 1000).toFixed(1)} s = ${pace(f).toFixed(2)} x`,
  );
}
