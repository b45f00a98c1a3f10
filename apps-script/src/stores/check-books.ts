// A check's books, for formulas, the sidebar and the background alike: the credits it holds while it runs, and what it
// settles when it ends (its credits, the plan's window it leaves, and for a formula's round the formulas' queue), each
// in one hold of the locks in their one order: the user's, then the document's (storage.ts enforces it). A =DAPA
// execution keeps its books here too: its ask (the queue and the window it starts from, read together), its turn
// given back, the credits left.
import type { WindowSnapshot } from '../../../shared';
import { creditBudget, creditView, holdCredits, settleCredits, type Spend } from './credit-ledger';
import { changeQueue, type FormulaQueue, formulasWindow } from './formula-queue';
import { loadWindow, saveWindow } from './plan-store';
import { locked } from './storage';

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
 * queue changes in the same hold (a round marks its batch in flight). Throws when the locks cannot be had.
 */
export function holdForCheck(
  { apiKey, baseUrl }: Books,
  want: number,
  until: number,
  move?: QueueMove,
): Spend {
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

/** What a formula's ask answers: whether its execution sends for every waiting cell, and then the window it starts from. */
export interface Asked {
  mine: boolean;
  window?: WindowSnapshot;
}

/**
 * A formula's ask, read and written together: `ask` changes the queue under the document lock (formula/turn.ts's
 * register), and a sender starts from the stored window merged with the queue's newer sends. A lock that cannot be
 * had in the time left answers "not mine" (the formula looks again).
 */
export function askQueue(
  baseUrl: string,
  ask: (queue: FormulaQueue) => { queue: FormulaQueue; mine: boolean },
): Asked {
  let mine = false;
  let queued: WindowSnapshot | undefined;
  try {
    changeQueue(baseUrl, (queue) => {
      queued = queue.window;
      const asked = ask(queue);
      mine = asked.mine;
      return asked.queue;
    });
  } catch {
    // the lock could not be had in the time left: look again
  }
  return { mine, window: mine ? formulasWindow(loadWindow(baseUrl), queued) : undefined };
}

/** A change of the queue outside a round (a sender's turn given back, a step's keys marked); never throws. */
export function moveQueue(baseUrl: string, move: QueueMove): void {
  try {
    changeQueue(baseUrl, move);
  } catch {
    // a turn ends by itself at its `until`; a mark lost costs a domain sent twice at most
  }
}

/** The credits the monthly budget leaves (undefined: no budget is set); the key is read only when one is. */
export function creditsLeft(apiKey: () => string): number | undefined {
  return creditBudget() === undefined ? undefined : creditView(apiKey()).left;
}
