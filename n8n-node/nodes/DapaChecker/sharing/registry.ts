// What the executions of one n8n process share per key (a digest of the API key and the service address, never the
// key): which execution checks each domain in flight and who waits for it, the answers kept for "Reuse Results For",
// the requests in flight, and who is learning the plan's per-request maximum. n8n loads a community node's code once
// per process (n8n-core's loadClassInIsolation requires it in one shared context), so this module-level map is what
// concurrent executions of the node share. Bounded: MAX_KEYS keys, MAX_ANSWERS answers per key, oldest first out.
import type { DomainRecord } from '../../../../shared/index';

export const MAX_KEYS = 20;
export const MAX_ANSWERS = 10_000;

/** An answer of the service for one domain, and when it came. */
export interface Answer {
  record: DomainRecord;
  checkedAt: number;
}

/**
 * Told when a domain waited for is answered (its answer), or handed to this waiter to check (undefined; `inStore`:
 * whether the execution that hands it over held its claim in the shared store too, which then passes to this one).
 */
export type Wake = (key: string, answer: Answer | undefined, inStore?: boolean) => void;

interface Claim {
  owner: string;
  waiters: Array<{ owner: string; wake: Wake }>;
}

interface Learning {
  owner: string;
  done: Promise<void>;
  end: () => void;
}

export class KeyShare {
  /** Answers by domain, each with when it expires (the publishing execution's Reuse Results For). */
  readonly answers = new Map<string, Answer & { until: number }>();
  readonly claims = new Map<string, Claim>();
  /** Requests in flight, by a token: the execution that sent it and its URLs. */
  readonly inFlight = new Map<number, { owner: string; urls: number }>();
  learning?: Learning;
}

const shares = new Map<string, KeyShare>();
let nextToken = 1;

/** The share of a key, made on first use; past MAX_KEYS, the least recently used one without claims goes. */
export function shareOf(key: string): KeyShare {
  const found = shares.get(key);
  if (found) {
    shares.delete(key);
    shares.set(key, found);
    return found;
  }
  const share = new KeyShare();
  shares.set(key, share);
  for (const [name, old] of shares) {
    if (shares.size <= MAX_KEYS) break;
    if (old.claims.size === 0 && old.inFlight.size === 0 && !old.learning) shares.delete(name);
  }
  return share;
}

/** How the domains of one execution split: answered earlier, being checked by another execution, or its own. */
export interface Split {
  reused: Map<string, Answer>;
  busy: string[];
  mine: string[];
}

/**
 * Splits `keys`: an answer younger than `reuseMs` is reused; a domain another execution claimed is waited for
 * (`wake` tells when it is answered or handed over); any other is claimed by `owner`.
 */
export function claim(
  share: KeyShare,
  keys: Iterable<string>,
  owner: string,
  now: number,
  reuseMs: number,
  wake: Wake,
): Split {
  const split: Split = { reused: new Map(), busy: [], mine: [] };
  for (const key of keys) {
    const answer = share.answers.get(key);
    if (answer && answer.until <= now) share.answers.delete(key);
    else if (answer && reuseMs > 0 && answer.checkedAt > now - reuseMs) {
      split.reused.set(key, { record: answer.record, checkedAt: answer.checkedAt });
      continue;
    }
    const held = share.claims.get(key);
    if (held && held.owner !== owner) {
      held.waiters.push({ owner, wake });
      split.busy.push(key);
    } else {
      share.claims.set(key, held ?? { owner, waiters: [] });
      split.mine.push(key);
    }
  }
  return split;
}

/** An answer came: kept for `reuseMs` (within the bounds), and every execution waiting for it is told. */
export function publish(share: KeyShare, key: string, answer: Answer, owner: string, reuseMs: number): void {
  if (reuseMs > 0) {
    share.answers.delete(key);
    share.answers.set(key, { ...answer, until: answer.checkedAt + reuseMs });
    while (share.answers.size > MAX_ANSWERS)
      share.answers.delete(share.answers.keys().next().value as string);
  }
  const held = share.claims.get(key);
  if (!held || held.owner !== owner) return;
  share.claims.delete(key);
  for (const waiter of held.waiters) waiter.wake(key, answer);
}

/**
 * Hands back the domains `owner` claimed and did not answer (it failed, was stopped, or ran out of time): each goes
 * to its first waiter, who checks it; the others wait for that one. Nothing is lost, and nothing is sent twice.
 * Returns the new owner of each domain handed over.
 */
export function release(
  share: KeyShare,
  keys: Iterable<string>,
  owner: string,
  inStore: (key: string) => boolean = () => false,
): Map<string, string> {
  const handed = new Map<string, string>();
  for (const key of keys) {
    const held = share.claims.get(key);
    if (!held || held.owner !== owner) continue;
    const next = held.waiters.shift();
    if (!next) {
      share.claims.delete(key);
      continue;
    }
    held.owner = next.owner;
    handed.set(key, next.owner);
    next.wake(key, undefined, inStore(key));
  }
  return handed;
}

/** An execution that ends stops waiting: it is taken off every waiting list. */
export function stopWaiting(share: KeyShare, owner: string): void {
  for (const held of share.claims.values()) held.waiters = held.waiters.filter((w) => w.owner !== owner);
}

/** A request goes out: its URLs count as sent for the other executions until `answered(token)`. */
export function sending(share: KeyShare, owner: string, urls: number): number {
  const token = nextToken++;
  share.inFlight.set(token, { owner, urls });
  return token;
}

export function answered(share: KeyShare, token: number): void {
  share.inFlight.delete(token);
}

/** The URLs of each request the other executions have in flight. */
export function othersInFlight(share: KeyShare, owner: string): number[] {
  return [...share.inFlight.values()].filter((r) => r.owner !== owner).map((r) => r.urls);
}

/**
 * Waits until the plan's per-request maximum is known (`known()`), or becomes the execution that learns it (true):
 * one at a time, so that a process pays at most one 422 "Limit Exceeded". `stop` ends the wait (time limit, cancel).
 */
export async function learnOrWait(
  share: KeyShare,
  owner: string,
  known: () => boolean,
  stop: Promise<void>,
): Promise<boolean> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  while (!known() && !stopped) {
    if (!share.learning) {
      let end = () => {};
      const done = new Promise<void>((resolve) => (end = resolve));
      share.learning = { owner, done, end };
      return true;
    }
    await Promise.race([share.learning.done, stop]);
  }
  return false;
}

/** The learning execution had its first answer (or ended): the next waiting one goes on. */
export function learned(share: KeyShare, owner: string): void {
  if (share.learning?.owner !== owner) return;
  const { end } = share.learning;
  share.learning = undefined;
  end();
}

/** Forgets everything shared (for tests: a fresh n8n process). */
export function forgetShares(): void {
  shares.clear();
}
