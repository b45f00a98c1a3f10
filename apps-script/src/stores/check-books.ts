// A check's books, for formulas, the sidebar and the background alike: the credits it holds while it runs, and what it
// settles when it ends (its credits, the plan's window it leaves, and for a formula's round the formulas' queue), each
// in one hold of the locks in their one order: the user's, then the document's (storage.ts enforces it). A =DAPA
// execution keeps its books here too (FormulaBooks, one per execution: every store a formula reads or writes, behind
// named operations): what is known, the queue, its ask (the queue and the window it starts from, read together), its
// turn given back, the credits left.
import type { DomainRecord, WindowSnapshot } from '../../../shared';
import { creditBudget, creditView, holdCredits, settleCredits, type Spend } from './credit-ledger';
import { changeQueue, type FormulaQueue, formulasWindow, readQueue } from './formula-queue';
import { readKnownForCells } from './known-results';
import { loadWindow, saveWindow } from './plan-store';
import { readCachedRecords } from './result-cache';
import { readStoredRecords } from './result-store';
import { noteSaved } from './saved-credits';
import { locked, withLockWaitsUpTo } from './storage';
import { readAhead } from './caches';
import { FORMULA_SETTINGS } from './settings';
import { RETENTION_COPY } from './retention';
import { CELLS_COPY, LIMIT_COPY } from './background-store';

export type { Spend } from './credit-ledger';

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
 * stored one, and its credits (what it held ends, what it was billed counts). A window an execution may not write
 * (an editor's formula, the owner's properties) is left to the queue. Throws when the locks or the ledger cannot be had.
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
 * checks go on, a refusal for the day met here), read in one call before the first of them; never throws (each is then read by itself).
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
