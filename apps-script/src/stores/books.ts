// A check's books and the formulas' queue, for formulas, the sidebar and the background alike: the credits a check
// holds and settles, the window it leaves, and the queue =DAPA executions share, each changed in one hold of the locks
// in their one order (storage.ts enforces it). Each section below says its part.
// Over 300 lines: the books settle the queue in the same hold of the locks, so the two are one transaction.
import {
  type DomainRecord,
  type Fatal,
  mergeWindows,
  type Outcome,
  restoreWindow,
  type WindowSnapshot,
} from '../../../shared';
import {
  creditBudget,
  creditView,
  FORMULA_SETTINGS,
  holdCredits,
  loadWindow,
  RETENTION_COPY,
  saveWindow,
  settleCredits,
  type Spend,
} from './account';
import { noteSaved, readCachedRecords, readKnownForCells, readStoredRecords } from './results';
import {
  documentCacheHere,
  isRecord,
  keepEntry,
  locked,
  readAhead,
  readEntry,
  utf8Bytes,
  withLockWaitsUpTo,
} from './storage';
import { CELLS_COPY, LIMIT_COPY } from './background-store';
export type { Spend } from './account';
import { now } from '../platform/gas';
import { cacheKeyDigest, currentSpreadsheet, idOrUndefined } from './session';
import { CACHE_PREFIX } from './storage-keys';

// ─── check books ───────────────────────────────────────────────────────────────────────────────────────────────────
// A check's books, for formulas, the sidebar and the background alike: the credits it holds while it runs, and what it
// settles when it ends (its credits, the plan's window it leaves, and for a formula's round the formulas' queue), each
// in one hold of the locks in their one order: the user's, then the document's (storage.ts enforces it). A =DAPA
// execution keeps its books here too (FormulaBooks, one per execution: every store a formula reads or writes, behind
// named operations): what is known, the queue, its ask (the queue and the window it starts from, read together), its
// turn given back, the credits left.
/** Whose books: the user's key and the service. */
export interface Books {
  apiKey: string;
  baseUrl: string;
}

/** A formula round's change of the formulas' queue, made in the same hold of the locks (formula/turn.ts). */
export type QueueMove = (queue: FormulaQueue) => FormulaQueue;

/**
 * Holds the credits a check may spend (`want` at most, capped by the budget) until `until`; with `move`, the formulas'
 * queue changes in the same hold (a round marks its batch in flight). Throws when the locks cannot be had. With no
 * budget set nothing is held and the user's state is not changed: the user lock is not taken (taking it reads the
 * user's properties again, a Properties call a round), only the document's for `move`.
 */
export function holdForCheck(
  { apiKey, baseUrl }: Books,
  want: number,
  until: number,
  move?: QueueMove,
): Spend {
  if (creditBudget() === undefined) {
    if (move) changeQueue(baseUrl, move);
    return {};
  }
  return locked('user', () => {
    if (!move) return holdCredits(apiKey, want, until);
    let spend: Spend = {};
    changeQueue(baseUrl, (queue) => {
      spend = holdCredits(apiKey, want, until);
      return move(queue);
    });
    return spend;
  });
}

/**
 * Settles a check in one hold of the locks: the formulas' queue (with `move`), the window it left merged into the
 * stored one, and its credits (what it held ends, what it was billed counts). A window an execution may not write (an
 * editor's formula, the owner's properties) is left to the queue. Throws when the locks or the ledger cannot be had.
 */
export function settleCheck(
  { apiKey, baseUrl }: Books,
  spend: Spend | undefined,
  billed: number,
  window: WindowSnapshot | undefined,
  move?: QueueMove,
): void {
  const settle = () => {
    try {
      saveWindow(baseUrl, window);
    } catch {
      // an editor's formula may not write the owner's properties: the queue keeps the window
    }
    if (spend) settleCredits(apiKey, spend, billed);
  };
  locked('user', () => {
    if (!move) return settle();
    changeQueue(baseUrl, (queue) => {
      settle();
      return move(queue);
    });
  });
}

/** The longest a formula's ask waits for the document lock (a few of the other asks' sections). */
const ASK_WAIT_MS = 300;

/** What a formula's ask answers: whether its execution sends for every waiting cell, and then the window it starts from. */
export interface Asked {
  mine: boolean;
  window?: WindowSnapshot;
}

/** A change of the queue outside a round (a sender's turn given back, a step's keys marked); never throws. */
export function moveQueue(baseUrl: string, move: QueueMove): void {
  try {
    changeQueue(baseUrl, move);
  } catch {
    // a turn ends by itself at its `until`; a mark lost costs a domain sent twice at most
  }
}

/**
 * The copies a =DAPA execution reads of the document's cache (the owner's settings, the retention, whether background
 * checks go on, a refusal for the day met here), read in one call before the first of them; never throws (each is then
 * read by itself).
 */
export function readFormulaCopies(): void {
  try {
    readAhead([FORMULA_SETTINGS, RETENTION_COPY, CELLS_COPY, LIMIT_COPY]);
  } catch {
    // read one by one
  }
}

/**
 * The books of one =DAPA execution: every store it reads and writes, behind the operations formula/cell-check.ts
 * drives (the key is read only when a round needs it, or a budget is set). Never throws but where it says so.
 */
export class FormulaBooks {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: () => string,
  ) {}

  /** The check's books for a round: the key read now. Throws as reading the key does (none set, a daily limit). */
  forRound(): Books {
    return { apiKey: this.apiKey(), baseUrl: this.baseUrl };
  }

  /**
   * What the store and the caches hold of these keys; the kept ones the cache had let go count as saved, once for
   * the user (a count that cannot be written is left).
   */
  known(keys: readonly string[]): Map<string, DomainRecord> {
    const known = readKnownForCells(this.baseUrl, keys);
    try {
      if (known.saved.length > 0) noteSaved(known.saved);
    } catch {
      // the count only
    }
    return known.known;
  }

  /** The formulas' queue as it is now. */
  queue(): FormulaQueue {
    return readQueue(this.baseUrl);
  }

  /** What the caches hold of these keys, and for a sender what the store keeps too (a sender never pays for them). */
  look(keys: readonly string[], sender: boolean): Map<string, DomainRecord> {
    let known: Map<string, DomainRecord> = new Map();
    try {
      known = readCachedRecords(this.baseUrl, keys);
      if (sender) {
        const rest = keys.filter((k) => !known.has(k));
        for (const [key, record] of readStoredRecords(this.baseUrl, rest)) known.set(key, record);
      }
    } catch {
      // an unreachable cache only costs this look
    }
    return known;
  }

  /**
   * A formula's ask, read and written together: `ask` changes the queue under the document lock (formula/turn.ts's
   * register), and a sender starts from the stored window merged with the queue's newer sends. A lock that cannot be
   * busy past ASK_WAIT_MS answers "not mine" (the formula answers).
   */
  ask(ask: (queue: FormulaQueue) => { queue: FormulaQueue; mine: boolean }): Asked {
    let mine = false;
    let queued: WindowSnapshot | undefined;
    try {
      withLockWaitsUpTo(ASK_WAIT_MS, () =>
        changeQueue(this.baseUrl, (queue) => {
          queued = queue.window;
          const asked = ask(queue);
          mine = asked.mine;
          return asked.queue;
        }),
      );
    } catch {
      // the lock is busy with the cells asking beside it: one of them sends (for this cell's domains too)
    }
    return { mine, window: mine ? formulasWindow(loadWindow(this.baseUrl), queued) : undefined };
  }

  /** The queue changed outside a round (the sender's turn given back); never throws. */
  move(move: QueueMove): void {
    moveQueue(this.baseUrl, move);
  }

  /** The credits the monthly budget leaves (undefined: no budget is set); the key is read only when one is. */
  creditsLeft(): number | undefined {
    return creditBudget() === undefined ? undefined : creditView(this.apiKey()).left;
  }
}

// ─── formula queue ─────────────────────────────────────────────────────────────────────────────────────────────────
// The formulas' queue of one spreadsheet and service: the domains that =DAPA cells running now are waiting for, which
// execution sends for all of them (one at a time, so that cells running at once never overshoot the plan's minute
// together), what the sends ended in besides records, and the window the sends left. It is the spreadsheet's state, so
// it lives in the document cache (a custom function may use CacheService; user properties are read-only to an
// editor's formula), under the document lock for every change: never the script's cache or lock, which every user of
// a published add-on shares. Records themselves go to the result cache (results.ts), never here.
/** A queue unused this long is gone (a minute's window and a sender's turn are long over by then). */
const QUEUE_SECONDS = 600;
/** What a send ended in besides a record is shown to waiting cells this long. */
const ENDED_MS = 5 * 60_000;
/**
 * The queue's stored text stays under this many UTF-8 bytes (a cache value holds 100 KB; what is past it would be
 * refused whole): the longest-waiting domains are kept, then the newest outcomes.
 */
export const MAX_QUEUE_BYTES = 96 * 1024;

export interface FormulaQueue {
  /** Domain key → when a running formula first asked for it. */
  wanted: Record<string, number>;
  /** The execution that sends for every waiting cell, until when its turn lasts (and since when: `since`). */
  sender?: { id: string; until: number; since?: number };
  /** The domains of the sender's round in flight now (no other execution sends them meanwhile). */
  sending?: string[];
  /** When the sender expects the round in flight answered (a cell whose domains ride in it may wait that long). */
  answerBy?: number;
  /** What sends ended in besides a record (a skip, an error), by domain key, with when. */
  ended: Record<string, { outcome: Outcome; at: number }>;
  /** An error that ends every check with this key (wrong key, expired plan), with when. */
  fatal?: { fatal: Fatal; at: number };
  /** The plan's window as the last send left it. */
  window?: WindowSnapshot;
  /** What a background step of this spreadsheet has in flight, until when (no cell sends it beside the step). */
  step?: { keys: string[]; until: number };
}

/** The queue's key in the document's cache (storage.ts); undefined outside a document (no formula runs there). */
function place(baseUrl: string): string | undefined {
  const here = documentCacheHere();
  const id = idOrUndefined(currentSpreadsheet());
  return here && id ? `${CACHE_PREFIX}q:${cacheKeyDigest(id + '\n' + baseUrl)}` : undefined;
}

function parseQueue(text: string | null, at: number): FormulaQueue {
  const queue: FormulaQueue = { wanted: {}, ended: {} };
  if (!text) return queue;
  try {
    const raw = JSON.parse(text) as unknown;
    if (!isRecord(raw)) return queue;
    if (isRecord(raw.wanted))
      for (const [key, t] of Object.entries(raw.wanted)) if (typeof t === 'number') queue.wanted[key] = t;
    if (isRecord(raw.sender) && typeof raw.sender.id === 'string' && typeof raw.sender.until === 'number')
      queue.sender = {
        id: raw.sender.id,
        until: raw.sender.until,
        ...(typeof raw.sender.since === 'number' ? { since: raw.sender.since } : {}),
      };
    if (Array.isArray(raw.sending))
      queue.sending = raw.sending.filter((k): k is string => typeof k === 'string');
    if (typeof raw.answerBy === 'number') queue.answerBy = raw.answerBy;
    if (isRecord(raw.ended))
      for (const [key, e] of Object.entries(raw.ended))
        if (isRecord(e) && typeof e.at === 'number' && e.at > at - ENDED_MS && isRecord(e.outcome))
          queue.ended[key] = { outcome: e.outcome as unknown as Outcome, at: e.at };
    if (isRecord(raw.fatal) && typeof raw.fatal.at === 'number' && raw.fatal.at > at - ENDED_MS)
      queue.fatal = { fatal: raw.fatal.fatal as Fatal, at: raw.fatal.at };
    queue.window = restoreWindow(raw.window, at);
    if (
      isRecord(raw.step) &&
      Array.isArray(raw.step.keys) &&
      typeof raw.step.until === 'number' &&
      raw.step.until > at
    )
      queue.step = {
        keys: raw.step.keys.filter((k): k is string => typeof k === 'string'),
        until: raw.step.until,
      };
  } catch {
    // A damaged queue costs a wait at most: it starts afresh.
  }
  return queue;
}

/** The queue as it stands (no lock: a look, not a change). */
export function readQueue(baseUrl: string): FormulaQueue {
  const at = place(baseUrl);
  return parseQueue(at ? readEntry(at) : null, now());
}

/**
 * Loads the queue under the document lock, stores the next one `transition` answers (the transitions are pure:
 * formula/turn.ts) and answers it. Outside a document (no formula runs there) nothing is stored.
 */
export function changeQueue(
  baseUrl: string,
  transition: (queue: FormulaQueue) => FormulaQueue,
): FormulaQueue {
  const key = place(baseUrl);
  if (!key) return transition({ wanted: {}, ended: {} });
  return locked('document', () => {
    const kept = fitQueue(transition(parseQueue(readEntry(key), now())));
    keepEntry(key, JSON.stringify(kept), QUEUE_SECONDS);
    return kept;
  });
}

/**
 * The queue cut to MAX_QUEUE_BYTES as stored (pure): its longest-waiting domains and newest outcomes, as many as fit
 * beside the rest (sender, window, step, each small); a cell whose domain was cut asks again at its next look.
 */
export function fitQueue(queue: FormulaQueue, maxBytes = MAX_QUEUE_BYTES): FormulaQueue {
  if (utf8Bytes(JSON.stringify(queue)) <= maxBytes) return queue;
  let room = maxBytes - utf8Bytes(JSON.stringify({ ...queue, wanted: {}, ended: {} }));
  const take = <T>(entries: Array<[string, T]>): Array<[string, T]> => {
    const kept: Array<[string, T]> = [];
    for (const entry of entries) {
      const size = utf8Bytes(JSON.stringify(entry[0]) + JSON.stringify(entry[1])) + 2; // ':' and ','
      if (size > room) break;
      room -= size;
      kept.push(entry);
    }
    return kept;
  };
  const wanted = take(Object.entries(queue.wanted).sort((a, b) => a[1] - b[1]));
  const ended = take(Object.entries(queue.ended).sort((a, b) => b[1].at - a[1].at));
  return { ...queue, wanted: Object.fromEntries(wanted), ended: Object.fromEntries(ended) };
}

/** The window every formula starts from: the stored one merged with the queue's newer sends. */
export function formulasWindow(
  stored: WindowSnapshot | undefined,
  queued: WindowSnapshot | undefined,
): WindowSnapshot | undefined {
  return queued ? mergeWindows(stored, queued) : stored;
}
