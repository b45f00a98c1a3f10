// The shared store across workers: Redis through webdis, under `dapa:<digest>:` (an HMAC of the API key and the
// service address with the credential's Signing Secret, never the key). Every answer kept carries its MAC under the
// same secret; one that does not verify (written by anyone without the secret, or altered) is not reused. Per domain
// a claim (`c:<domain>`: its owner) and an answer (`r:<domain>`); per execution a heartbeat (`o:<owner>`, one SET
// renews every claim it holds); per key the plan's lessons (`plans`), who learns the per-request maximum (`learn`),
// the minute's sends (`sends`) and the requests in flight (`flight`). Claims, answers and the minute go by the short
// scripts of scripts.ts, one call for a whole batch, so a request costs a few calls whatever the list's length.
// Nothing shared is read, changed and written back. A failed operation throws the store's problem (its message says
// which); the caller then falls back to sharing within its process.
import {
  mergeWindows,
  restoreWindow,
  type DomainRecord,
  type WindowSnapshot,
} from '../../../../shared/index';
import { answerMac } from '../keyedDigest';
import type { Answer } from './registry';
import { NodeOperationError, type INode } from 'n8n-workflow';
import { CLAIM, FLUSH, PLAN, PUBLISH, RELEASE, RESERVE, WINDOW } from './scripts';
import { isStoreProblem, runCommand, type Reply, type StoreHttp } from './webdis';

/** An execution's heartbeat lasts this long unless renewed: a worker that dies frees its domains after it. */
export const LEASE_MS = 60_000;
/** A claim's own key expires after this (its owner's heartbeat decides whether it holds; this only bounds memory). */
export const CLAIM_MS = 24 * 3600 * 1000;
/** An answer kept for executions waiting on it, when Reuse Results For is 0. */
const WAITERS_MS = 60_000;
const PLAN_MS = 7 * 24 * 3600 * 1000;
export const SENDS_KEPT = 500;
/**
 * Lessons of the plan kept, the newest: a worker adds one only when it knows something the store did not, and each
 * carries all its writer knew, so the newest hold everything.
 */
export const PLANS_KEPT = 50;
/** Domains per script call (the URL stays a few kilobytes). */
export const CHUNK = 200;

/** What the store holds for a domain when it is claimed: a kept answer, another's live claim, or now this owner's. */
export type ClaimReply = Answer | 'busy' | 'mine';

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

  private async script(text: string, args: Array<string | number>): Promise<Reply> {
    return await this.run('EVAL', text, 0, this.prefix, ...args);
  }

  /**
   * Claims domains for `owner` (and renews its heartbeat), one script call per CHUNK: each is answered (a kept answer
   * that verifies and is younger than `maxAgeMs`), busy (another live execution holds it) or now owner's. A kept
   * answer too old or not verifying is passed over: the domain is then claimed like one with no answer.
   */
  async claim(
    keys: readonly string[],
    owner: string,
    now: number,
    maxAgeMs: number,
  ): Promise<Map<string, ClaimReply>> {
    const out = new Map<string, ClaimReply>();
    const passedOver: string[] = [];
    for (const [chunk, replies] of await this.claimChunks(keys, owner, false))
      chunk.forEach((key, j) => {
        const reply = replies[j];
        if (typeof reply !== 'string') return out.set(key, reply === 0 ? 'busy' : 'mine');
        const answer = this.decode(key, reply);
        if (answer && answer.checkedAt > now - maxAgeMs) out.set(key, answer);
        else passedOver.push(key);
      });
    for (const [chunk, replies] of await this.claimChunks(passedOver, owner, true))
      chunk.forEach((key, j) => out.set(key, replies[j] === 0 ? 'busy' : 'mine'));
    return out;
  }

  private async claimChunks(keys: readonly string[], owner: string, ignoreAnswers: boolean) {
    const out: Array<[string[], Reply[]]> = [];
    for (let i = 0; i < keys.length; i += CHUNK) {
      const chunk = keys.slice(i, i + CHUNK);
      const reply = await this.script(CLAIM, [owner, LEASE_MS, CLAIM_MS, ignoreAnswers ? 1 : 0, ...chunk]);
      out.push([chunk, Array.isArray(reply) ? reply : []]);
    }
    return out;
  }

  /** Renews owner's heartbeat (every claim it holds) for a lease, or `ms`: longer while a request is out. */
  async heartbeat(owner: string, ms = LEASE_MS): Promise<void> {
    await this.run('SET', `${this.prefix}:o:${owner}`, '1', 'PX', ms);
  }

  /** Keeps answers (for `reuseMs`, or a minute for those waiting), signed, and frees owner's claims of them. */
  async publish(answers: ReadonlyArray<[string, Answer]>, owner: string, reuseMs: number): Promise<void> {
    for (let i = 0; i < answers.length; i += CHUNK) {
      const pairs = answers.slice(i, i + CHUNK).flatMap(([key, answer]) => [key, this.encode(key, answer)]);
      await this.script(PUBLISH, [owner, Math.max(reuseMs, WAITERS_MS), ...pairs]);
    }
  }

  /**
   * The end of an execution: the claims it still holds are freed, or handed to the execution of its process that
   * takes the domain over (`handed`); its heartbeat ends.
   */
  async release(keys: readonly string[], owner: string, handed: ReadonlyMap<string, string>): Promise<void> {
    const pairs = [...keys.map((k) => [k, '']), ...[...handed].map(([k, to]) => [k, to])];
    for (let i = 0; i === 0 || i < pairs.length; i += CHUNK) {
      const last = i + CHUNK >= pairs.length;
      await this.script(RELEASE, [owner, last ? 1 : 0, ...pairs.slice(i, i + CHUNK).flat()]);
    }
  }

  /** The window all workers share: the minute's sends, the plan's limits and when a limit last pushed back. */
  async window(now: number): Promise<WindowSnapshot | undefined> {
    const flat = await this.script(WINDOW, []);
    const list = Array.isArray(flat) ? flat : [];
    const count = Number(list[0]) || 0;
    const sends = list.slice(1, 1 + count);
    const plans = list.slice(1 + count);
    const minute = sends
      .map((entry) => String(entry).split(':').map(Number))
      .filter((p): p is [number, number] => p.length >= 2 && p.every(Number.isFinite))
      .map((p): [number, number] => [p[0], p[1]]);
    // Every worker's lessons together, by the core's rule (exact beats inferred, the newer of two guesses, the latest
    // pushback), whatever order they were added in.
    let kept: WindowSnapshot | undefined;
    for (const entry of plans) kept = mergeWindows(kept, readPlan(entry, now));
    return restoreWindow(
      { v: 1, at: now, sends: minute, limits: kept?.limits ?? {}, pressure: kept?.pressure },
      now,
    );
  }

  /**
   * Adds answered requests' sends (answer time, URLs) to the shared minute, then frees their reservations, in one
   * call (never a moment where another worker sees a request neither in flight nor sent).
   */
  async flush(sends: ReadonlyArray<readonly [number, number]>, answered: readonly string[]): Promise<void> {
    if (sends.length === 0 && answered.length === 0) return;
    const list = sends.map((s) => `${s[0]}:${s[1]}`);
    await this.script(FLUSH, [SENDS_KEPT, 2 * 60_000, list.length, ...list, ...answered]);
  }

  /**
   * Reserves a request about to go: its entry joins the list of requests in flight on every worker, and the URLs of
   * the entries before it (reserved earlier, not answered yet) are returned: they count as sent before this one.
   */
  async reserve(entry: string, now: number): Promise<number[]> {
    return flightBefore(await this.script(RESERVE, [entry, 2 * 60_000]), entry, now);
  }

  /** The URLs of the requests reserved before `entry` and not answered yet. */
  async flightBefore(entry: string, now: number): Promise<number[]> {
    return flightBefore(await this.run('LRANGE', `${this.prefix}:flight`, 0, -1), entry, now);
  }

  /**
   * Adds this execution's limits and pushbacks to the lessons every worker reads. Appended, never read, merged and
   * written back: a worker that did so with what it had read before a learner wrote lost the learner's lesson (the
   * minute's URL limit), and the next request, alone while no limit was known, went into a full minute.
   */
  async keepPlan(window: WindowSnapshot): Promise<void> {
    const lesson = JSON.stringify({ limits: window.limits, pressure: window.pressure });
    await this.script(PLAN, [lesson, PLANS_KEPT, PLAN_MS]);
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

/** The URLs of the requests in flight reserved before `entry`. */
function flightBefore(list: Reply, entry: string, now: number): number[] {
  const entries = (Array.isArray(list) ? list : []).map(String);
  const before = entries.slice(0, Math.max(0, entries.indexOf(entry)));
  // Entries of a worker that died are ignored after the longest request (two minutes).
  return before
    .map((e) => e.split(':').map(Number))
    .filter((p) => p.length >= 4 && p[3] > now - 2 * 60_000)
    .map((p) => p[2]);
}
