// The shared store across workers: Redis through webdis, under `dapa:<digest>:` (an HMAC of the API key and the
// service address with the credential's Signing Secret, never the key). Every answer kept carries its MAC under the
// same secret; one that does not verify (written by anyone without the secret, or altered) is not reused. Per domain a claim (`SET c:<domain> <owner> NX PX`, renewed while the execution
// runs) and an answer (`SET r:<domain> <json> PX <reuse>`); per key the plan's limits and pushbacks as each worker
// learned them (`plans`, a list: RPUSH + LRANGE, merged on reading), who learns the per-request maximum (`learn`, SET NX
// PX) and the minute's sends of every worker (`sends`, a list of "<answer time>:<URLs>", RPUSH + LRANGE, trimmed and
// expiring). Nothing shared is read, changed and written back: two workers writing at once both stay. An operation that fails throws the store's problem
// (its message says which); the caller then falls back to sharing within its process.
import {
  mergeWindows,
  restoreWindow,
  type DomainRecord,
  type WindowSnapshot,
} from '../../../../shared/index';
import { answerMac } from '../keyedDigest';
import type { Answer } from './registry';
import { NodeOperationError, type INode } from 'n8n-workflow';
import { isStoreProblem, runCommand, type Reply, type StoreHttp } from './webdis';

/** A claim lasts this long unless renewed: a worker that dies frees its domains after it. */
export const LEASE_MS = 60_000;
/** An answer kept for executions waiting on it, when Reuse Results For is 0. */
const WAITERS_MS = 60_000;
const PLAN_MS = 7 * 24 * 3600 * 1000;
export const SENDS_KEPT = 500;
/**
 * Lessons of the plan kept, the newest: a worker adds one only when it knows something the store did not, and each
 * carries all its writer knew, so the newest hold everything.
 */
export const PLANS_KEPT = 50;
/** Domains per MGET (the URL stays short). */
const CHUNK = 50;

export class RedisShare {
  /** The words of the last failure (n8n's errors may reword a network cause; these say which setting to check). */
  problem?: string;

  constructor(
    private readonly node: INode,
    private readonly http: StoreHttp,
    private readonly base: string,
    /** `dapa:<digest>`: the keyed digest of the key and address. */
    private readonly prefix: string,
    /** The credential's Signing Secret: answers are signed and verified with it. */
    private readonly secret: string,
  ) {}

  /** An answer as kept: its record, when, and their MAC. */
  private encode(key: string, answer: Answer): string {
    const record = JSON.stringify(answer.record);
    const mac = answerMac(this.secret, key, answer.checkedAt, record);
    return JSON.stringify({ record: answer.record, checkedAt: answer.checkedAt, mac });
  }

  /** A kept answer, if it is one and its MAC verifies. */
  private decode(key: string, value: Reply | undefined): Answer | undefined {
    if (typeof value !== 'string') return undefined;
    try {
      const parsed = JSON.parse(value) as { record?: DomainRecord; checkedAt?: unknown; mac?: unknown };
      if (!parsed.record || typeof parsed.checkedAt !== 'number' || typeof parsed.mac !== 'string')
        return undefined;
      const mac = answerMac(this.secret, key, parsed.checkedAt, JSON.stringify(parsed.record));
      return mac === parsed.mac ? { record: parsed.record, checkedAt: parsed.checkedAt } : undefined;
    } catch {
      return undefined;
    }
  }

  private async run(...args: Array<string | number>): Promise<Reply> {
    const reply = await runCommand(this.http, this.base, args);
    if (!isStoreProblem(reply)) return reply;
    this.problem = reply.message;
    throw new NodeOperationError(this.node, reply.message);
  }

  /** Answers kept for these domains (younger than `reuseMs` when given), by domain. */
  async answers(keys: readonly string[], now: number, reuseMs?: number): Promise<Map<string, Answer>> {
    const found = new Map<string, Answer>();
    for (let i = 0; i < keys.length; i += CHUNK) {
      const chunk = keys.slice(i, i + CHUNK);
      const reply = await this.run('MGET', ...chunk.map((k) => `${this.prefix}:r:${k}`));
      const values = Array.isArray(reply) ? reply : [];
      chunk.forEach((key, j) => {
        const answer = this.decode(key, values[j]);
        if (answer && (reuseMs === undefined || answer.checkedAt > now - reuseMs)) found.set(key, answer);
      });
    }
    return found;
  }

  /**
   * Claims a domain for `owner`: true, or false when another execution holds it, or the answer when one came in
   * between (it was published after this execution looked for it: the claim is given up, nothing is sent twice).
   */
  async claim(key: string, owner: string): Promise<boolean | Answer> {
    const reply = await this.run('SET', `${this.prefix}:c:${key}`, owner, 'NX', 'PX', LEASE_MS);
    if (reply === null || reply === false) return false;
    const answer = this.decode(key, await this.run('GET', `${this.prefix}:r:${key}`));
    if (!answer) return true;
    await this.run('DEL', `${this.prefix}:c:${key}`);
    return answer;
  }

  /** Passes a claim this execution holds to another execution of its process (it hands the domain over). */
  async transfer(key: string, owner: string): Promise<void> {
    await this.run('SET', `${this.prefix}:c:${key}`, owner, 'PX', LEASE_MS);
  }

  /** Renews the claims of domains still being checked (for a lease, or `ms`: longer while a request is out). */
  async renew(keys: readonly string[], ms = LEASE_MS): Promise<void> {
    for (const key of keys) await this.run('PEXPIRE', `${this.prefix}:c:${key}`, ms);
  }

  /** Keeps an answer (for `reuseMs`, or a minute for those waiting) and frees the domain's claim. */
  async publish(key: string, answer: Answer, reuseMs: number): Promise<void> {
    const json = this.encode(key, answer);
    await this.run('SET', `${this.prefix}:r:${key}`, json, 'PX', Math.max(reuseMs, WAITERS_MS));
    await this.run('DEL', `${this.prefix}:c:${key}`);
  }

  /** Frees the claims `owner` still holds (its own only: a claim that ran out may be another's now). */
  async release(keys: readonly string[], owner: string): Promise<void> {
    for (const key of keys) {
      const name = `${this.prefix}:c:${key}`;
      if ((await this.run('GET', name)) === owner) await this.run('DEL', name);
    }
  }

  /** The window all workers share: the minute's sends, the plan's limits and when a limit last pushed back. */
  async window(now: number): Promise<WindowSnapshot | undefined> {
    const sends = await this.run('LRANGE', `${this.prefix}:sends`, 0, -1);
    const plans = await this.run('LRANGE', `${this.prefix}:plans`, 0, -1);
    const list = (Array.isArray(sends) ? sends : [])
      .map((entry) => String(entry).split(':').map(Number))
      .filter((p): p is [number, number] => p.length >= 2 && p.every(Number.isFinite))
      .map((p): [number, number] => [p[0], p[1]]);
    // Every worker's lessons together, by the core's rule (exact beats inferred, the newer of two guesses, the latest
    // pushback), whatever order they were added in.
    let kept: WindowSnapshot | undefined;
    for (const entry of Array.isArray(plans) ? plans : []) kept = mergeWindows(kept, readPlan(entry, now));
    return restoreWindow(
      { v: 1, at: now, sends: list, limits: kept?.limits ?? {}, pressure: kept?.pressure },
      now,
    );
  }

  /** Adds this execution's sends (answer time, URLs) to the shared minute. */
  async addSends(sends: ReadonlyArray<readonly [number, number]>): Promise<void> {
    if (sends.length === 0) return;
    const name = `${this.prefix}:sends`;
    await this.run('RPUSH', name, ...sends.map((s) => `${s[0]}:${s[1]}`));
    await this.run('LTRIM', name, -SENDS_KEPT, -1);
    await this.run('PEXPIRE', name, 2 * 60_000);
  }

  /**
   * Reserves a request about to go: its entry joins the list of requests in flight on every worker, and the URLs of
   * the entries before it (reserved earlier, not answered yet) are returned: they count as sent before this one.
   */
  async reserve(entry: string, now: number): Promise<number[]> {
    const name = `${this.prefix}:flight`;
    await this.run('RPUSH', name, entry);
    await this.run('PEXPIRE', name, 2 * 60_000);
    return await this.flightBefore(entry, now);
  }

  /** The URLs of the requests reserved before `entry` and not answered yet. */
  async flightBefore(entry: string, now: number): Promise<number[]> {
    const list = await this.run('LRANGE', `${this.prefix}:flight`, 0, -1);
    const entries = (Array.isArray(list) ? list : []).map(String);
    const before = entries.slice(0, Math.max(0, entries.indexOf(entry)));
    // Entries of a worker that died are ignored after the longest request (two minutes).
    return before
      .map((e) => e.split(':').map(Number))
      .filter((p) => p.length >= 4 && p[3] > now - 2 * 60_000)
      .map((p) => p[2]);
  }

  /** The request is answered: its entry leaves the list. */
  async unreserve(entry: string): Promise<void> {
    await this.run('LREM', `${this.prefix}:flight`, 1, entry);
  }

  /**
   * Adds this execution's limits and pushbacks to the lessons every worker reads. Appended, never read, merged and
   * written back: a worker that did so with what it had read before a learner wrote lost the learner's lesson (the
   * minute's URL limit), and the next request, alone while no limit was known, went into a full minute.
   */
  async keepPlan(window: WindowSnapshot): Promise<void> {
    const name = `${this.prefix}:plans`;
    await this.run('RPUSH', name, JSON.stringify({ limits: window.limits, pressure: window.pressure }));
    await this.run('LTRIM', name, -PLANS_KEPT, -1);
    await this.run('PEXPIRE', name, PLAN_MS);
  }

  /** Takes the turn to learn the per-request maximum (true), for a lease. */
  async learn(owner: string): Promise<boolean> {
    const reply = await this.run('SET', `${this.prefix}:learn`, owner, 'NX', 'PX', 30_000);
    return reply !== null && reply !== false;
  }

  async learnedBy(owner: string): Promise<void> {
    const name = `${this.prefix}:learn`;
    if ((await this.run('GET', name)) === owner) await this.run('DEL', name);
  }
}

/** One worker's lesson as a window of no sends (anything unreadable: none). */
function readPlan(entry: Reply, now: number): WindowSnapshot | undefined {
  try {
    const kept = JSON.parse(String(entry)) as Partial<Pick<WindowSnapshot, 'limits' | 'pressure'>>;
    return restoreWindow(
      { v: 1, at: now, sends: [], limits: kept.limits ?? {}, pressure: kept.pressure },
      now,
    );
  } catch {
    return undefined;
  }
}
