// The domains an execution holds or waits on in the shared store, as pure transitions (no I/O, no clock), in the
// style of the core's machines: told what the store answered for a batch, a domain handed over within the process,
// an answer of its own, or the store going down, each transition changes the book and says what the run must do
// (take answers as cached, set domains aside, resolve them, or end them unfinished). session.ts drives it.
import type { Answer } from './registry';
import type { ClaimReply } from './redisShare';

/** Which domains the store says are this execution's (`mine`), and which another live execution holds (`busy`). */
export interface StoreClaims {
  mine: Set<string>;
  busy: Set<string>;
}

/** What the run is to do after a transition. */
export interface ClaimEffects {
  /** Answers found in the store: taken as cached (no credit). */
  taken: Map<string, Answer>;
  /** Domains to set aside (another execution checks them). */
  aside: string[];
  /** Domains set aside that are settled: answered (the answer), or free again (undefined: the run sends them). */
  resolved: Array<[string, Answer | undefined]>;
  /** Domains set aside whose fate this execution can no longer learn: retryable `unfinished`, never sent here. */
  abandoned: string[];
}

export function emptyClaims(): StoreClaims {
  return { mine: new Set(), busy: new Set() };
}

function effects(): ClaimEffects {
  return { taken: new Map(), aside: [], resolved: [], abandoned: [] };
}

/** The store's replies to claiming the execution's own domains at its start. */
export function claimed(book: StoreClaims, replies: ReadonlyMap<string, ClaimReply>): ClaimEffects {
  const out = effects();
  for (const [key, reply] of replies) {
    if (reply === 'mine') book.mine.add(key);
    else if (reply === 'busy') book.busy.add(key);
    else out.taken.set(key, reply);
  }
  out.aside = [...book.busy];
  return out;
}

/** The store's replies to asking again about the domains others held: answered, free (now mine), or still busy. */
export function polled(book: StoreClaims, replies: ReadonlyMap<string, ClaimReply>): ClaimEffects {
  const out = effects();
  for (const [key, reply] of replies) {
    if (reply === 'busy' || !book.busy.delete(key)) continue;
    if (reply === 'mine') book.mine.add(key);
    out.resolved.push([key, reply === 'mine' ? undefined : reply]);
  }
  return out;
}

/** How long until the next poll: back to `min` when something changed, else twice the last, up to `max`. */
export function nextPoll(every: number, changed: boolean, min: number, max: number): number {
  return changed ? min : Math.min(max, every * 2);
}

/** This execution's own answers: their claims are freed in the store with them. */
export function answered(book: StoreClaims, keys: Iterable<string>): void {
  for (const key of keys) book.mine.delete(key);
}

export interface Store {
  /** The store is in use. */
  up: boolean;
  /** It went down by a call past its budget (a call may still land), not by a refusal. */
  timedOut: boolean;
}

/**
 * Another execution of this process hands over a domain this one waited for: its answer, or the domain itself
 * (`inStore`: with its claim in the store). Handed without the claim, the store's holder is another worker's: waited
 * for there; with the store down past its budget, not sent here (that worker may be sending it).
 */
export function handedOver(
  book: StoreClaims,
  key: string,
  answer: Answer | undefined,
  inStore: boolean,
  store: Store,
): ClaimEffects {
  const out = effects();
  if (answer) out.resolved.push([key, answer]);
  else if (!store.up && store.timedOut && !inStore) out.abandoned.push(key);
  else if (store.up && !inStore) book.busy.add(key);
  else {
    if (store.up) book.mine.add(key);
    out.resolved.push([key, undefined]);
  }
  return out;
}

/** The store went down: the domains others held are abandoned (their holder may still send them). */
export function wentDown(book: StoreClaims): ClaimEffects {
  const out = effects();
  out.abandoned = [...book.busy];
  book.busy.clear();
  return out;
}

/**
 * After asking to claim `asked`: when the store went down past its budget before saying who holds them, those not
 * mine nor answered (`known`) are abandoned too (the call may still land; another worker may be sending them).
 */
export function unsettled(
  book: StoreClaims,
  store: Store,
  asked: readonly string[],
  known: (key: string) => boolean,
): ClaimEffects {
  const out = effects();
  if (!store.up && store.timedOut) out.abandoned = asked.filter((k) => !book.mine.has(k) && !known(k));
  return out;
}

/**
 * At the end: of the domains this execution did not answer, those it holds in the store go back to it, freed
 * (`free`), or passed on to the execution of this process each was handed to (`passed`: domain to its new holder).
 */
export function handBack(
  book: StoreClaims,
  unanswered: readonly string[],
  handed: ReadonlyMap<string, string>,
): { free: string[]; passed: Map<string, string> } {
  return {
    free: unanswered.filter((k) => book.mine.has(k) && !handed.has(k)),
    passed: new Map([...handed].filter(([key]) => book.mine.has(key))),
  };
}
