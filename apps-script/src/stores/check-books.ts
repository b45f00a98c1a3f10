// A check's books, for formulas, the sidebar and the background alike: the credits it holds while it runs, and what it
// settles when it ends (its credits, the plan's window it leaves, and for a formula's round the formulas' queue), each
// in one hold of the locks in their one order: the user's, then the document's (storage.ts enforces it).
import type { WindowSnapshot } from '../../../shared';
import { creditBudget, holdCredits, settleCredits, type Spend } from './credit-ledger';
import { changeQueue, type FormulaQueue } from './formula-queue';
import { saveWindow } from './plan-store';
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
