// The shared store across workers: Redis through webdis, under `dapa:<digest>:` (a digest of the API key and the
// service address, never the key). Per domain a claim (`SET c:<domain> <owner> NX PX`, renewed while the execution
// runs) and an answer (`SET r:<domain> <json> PX <reuse>`); per key the plan's limits (`plan`), who learns the
// per-request maximum (`learn`, SET NX PX) and the minute's sends of every worker (`sends`, a list of
// "<answer time>:<URLs>", RPUSH + LRANGE, trimmed and expiring). An operation that fails throws the store's problem
// (its message says which); the caller then falls back to sharing within its process.
import {
  mergeWindows,
  restoreWindow,
  type DomainRecord,
  type PlanLimits,
  type WindowSnapshot,
} from '../../../../shared/index';
import type { Answer } from './registry';
import { NodeOperationError, type INode } from 'n8n-workflow';
import { isStoreProblem, runCommand, type Reply, type StoreHttp } from './webdis';

/** A claim lasts this long unless renewed: a worker that dies frees its domains after it. */
export const LEASE_MS = 60_000;
/** An answer kept for executions waiting on it, when Reuse Results For is 0. */
const WAITERS_MS = 60_000;
const PLAN_MS = 7 * 24 * 3600 * 1000;
const SENDS_KEPT = 500;
/** Domains per MGET (the URL stays short). */
const CHUNK = 50;

export class RedisShare {
  constructor(
    private readonly node: INode,
    private readonly http: StoreHttp,
    private readonly base: string,
    /** `dapa:<digest>`: the digest of the key and address. */
    private readonly prefix: string,
  ) {}

  private async run(...args: Array<string | number>): Promise<Reply> {
    const reply = await runCommand(this.http, this.base, args);
    if (isStoreProblem(reply)) throw new NodeOperationError(this.node, reply.message);
    return reply;
  }

  /** Answers kept for these domains (younger than `reuseMs` when given), by domain. */
  async answers(keys: readonly string[], now: number, reuseMs?: number): Promise<Map<string, Answer>> {
    const found = new Map<string, Answer>();
    for (let i = 0; i < keys.length; i += CHUNK) {
      const chunk = keys.slice(i, i + CHUNK);
      const reply = await this.run('MGET', ...chunk.map((k) => `${this.prefix}:r:${k}`));
      const values = Array.isArray(reply) ? reply : [];
      chunk.forEach((key, j) => {
        const answer = readAnswer(values[j]);
        if (answer && (reuseMs === undefined || answer.checkedAt > now - reuseMs)) found.set(key, answer);
      });
    }
    return found;
  }

  /** Claims a domain for `owner`; false when another execution holds it. */
  async claim(key: string, owner: string): Promise<boolean> {
    const reply = await this.run('SET', `${this.prefix}:c:${key}`, owner, 'NX', 'PX', LEASE_MS);
    return reply !== null && reply !== false;
  }

  /** Renews the claims of domains still being checked. */
  async renew(keys: readonly string[]): Promise<void> {
    for (const key of keys) await this.run('PEXPIRE', `${this.prefix}:c:${key}`, LEASE_MS);
  }

  /** Keeps an answer (for `reuseMs`, or a minute for those waiting) and frees the domain's claim. */
  async publish(key: string, answer: Answer, reuseMs: number): Promise<void> {
    const json = JSON.stringify({ record: answer.record, checkedAt: answer.checkedAt });
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

  /** The window all workers share: the minute's sends and the plan's limits. */
  async window(now: number): Promise<WindowSnapshot | undefined> {
    const sends = await this.run('LRANGE', `${this.prefix}:sends`, 0, -1);
    const plan = await this.run('GET', `${this.prefix}:plan`);
    const list = (Array.isArray(sends) ? sends : [])
      .map((entry) => String(entry).split(':').map(Number))
      .filter((p): p is [number, number] => p.length >= 2 && p.every(Number.isFinite))
      .map((p): [number, number] => [p[0], p[1]]);
    let limits: PlanLimits;
    try {
      limits = typeof plan === 'string' ? (JSON.parse(plan) as PlanLimits) : {};
    } catch {
      limits = {};
    }
    return restoreWindow({ v: 1, at: now, sends: list, limits }, now);
  }

  /** Adds this execution's sends (answer time, URLs) to the shared minute. */
  async addSends(sends: ReadonlyArray<readonly [number, number]>): Promise<void> {
    if (sends.length === 0) return;
    const name = `${this.prefix}:sends`;
    await this.run('RPUSH', name, ...sends.map((s) => `${s[0]}:${s[1]}`));
    await this.run('LTRIM', name, -SENDS_KEPT, -1);
    await this.run('PEXPIRE', name, 2 * 60_000);
  }

  /** Keeps the plan's limits, merged with what is there (exact beats inferred, newer beats older). */
  async keepPlan(limits: PlanLimits, now: number): Promise<void> {
    const stored = await this.window(now);
    const merged = mergeWindows(stored, { v: 1, at: now, sends: [], limits });
    const json = JSON.stringify(merged?.limits ?? limits);
    await this.run('SET', `${this.prefix}:plan`, json, 'PX', PLAN_MS);
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

function readAnswer(value: Reply | undefined): Answer | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const parsed = JSON.parse(value) as { record?: DomainRecord; checkedAt?: unknown };
    if (!parsed.record || typeof parsed.checkedAt !== 'number') return undefined;
    return { record: parsed.record, checkedAt: parsed.checkedAt };
  } catch {
    return undefined;
  }
}
