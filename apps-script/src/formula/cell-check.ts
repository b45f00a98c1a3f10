// One =DAPA execution among the many Sheets runs at once (`=DAPA(A2)` dragged down is one execution per cell, up to 30
// side by side): the thin driver of formula/turn.ts. Every store it reads or writes is behind its books (one
// FormulaBooks an execution, stores/books.ts): it reads what the turn asks (the queue, the caches, the result
// store; the spreadsheet's other =DAPA cells from the grid), does what the turn answers (asks the queue under the
// document lock, sleeps, sends a round), and caches every record the moment it is in. Every wait comes out of the one
// deadline.
import { CheckRun, type Fatal, type Outcome } from '../../../shared';
import { CheckSession, distinctKeys } from '../checks/check';
import { dapaFormulaCells, formulaKeys } from '../checks/formulas';
import { now, sleep } from '../platform/gas';
import { limitMetLately } from '../stores/background-store';
import { FormulaBooks } from '../stores/books';
import { currentSpreadsheet, dailyLimitMet, noteDailyLimit } from '../stores/session';
import { type Action, applyAnswer, deadlinesOf, endTurn, FormulaTurn, startRound, type View } from './turn';

/** What a formula's cells show: one outcome per position, or an error for the whole formula. */
export interface CellAnswer {
  outcomes: Outcome[];
  fatal?: Fatal;
  /** Google refused the network call (the user did not allow "Connect to an external service"). */
  refused?: string;
}

export interface CellCheck {
  /** The key, read when a request is to be sent (a cell whose answer is cached reads no Properties). */
  apiKey: () => string;
  /** Whether the owner's settings copy says a key is set (then only a cell that sends reads it). */
  hasKey?: boolean;
  /** Whether it says a credit budget is set (else a waiting cell reads no ledger). */
  budget?: boolean;
  baseUrl: string;
  /** When the execution began (what the queue said before it belongs to earlier recalculations). */
  startedAt?: number;
  /** When the execution must have answered (its 30 seconds, less what the answer itself takes). */
  deadline: number;
}

/** A refusal by Google, not by the service: the user has not granted the scope of UrlFetchApp. */
function refusedByGoogle(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  return /permission to call UrlFetchApp|script\.external_request|Authorization is required/i.test(message)
    ? message
    : undefined;
}

/**
 * Checks a formula's values as one of many cells running at once. Never throws for the server; a lock it cannot have
 * in the time left is given up (the cell then says unfinished), never waited past the deadline.
 */
export function checkCells(values: readonly unknown[], check: CellCheck): CellAnswer {
  const startedAt = check.startedAt ?? now();
  const books = new FormulaBooks(check.baseUrl, check.apiKey);
  const turn = new FormulaTurn(
    Utilities.getUuid(),
    distinctKeys(values),
    deadlinesOf(startedAt, check.deadline),
  );
  if (turn.distinct.length > 0) {
    try {
      turn.know(books.known(turn.distinct));
    } catch {
      // no cache: everything is asked for
    }
    try {
      // Another execution met Google's refusal for the day lately: a round cannot come, so the cell answers at once
      // (it says why its rows wait) instead of spending its 30 seconds, and of the user's 30 executions at once.
      if (turn.missing().length > 0 && limitMetLately(SPENT_LATELY_MS) !== undefined)
        return answerOf(turn, values, check);
      // A cell with something to ask and no key known reads the settings first (no key: the formula says where to set
      // it); with a key known only a cell that sends reads it (a cell that waits for another's round spends no call).
      if (turn.missing().length > 0 && check.hasKey !== true) check.apiKey();
      if (turn.missing().length > 0) drive(turn, books, check.deadline);
    } catch (error) {
      // Google refused a call for the day: the turn answers with what it knows (the cells say why the rest wait; the
      // execution's first refusal is noted for the cells beside it as it is met: formula/dapa.ts).
      if (!noteDailyLimit(error)) throw error;
    }
    const waiting = turn.missing().length > 0 && !turn.fatal && !turn.refused && !dailyLimitMet();
    try {
      const left = waiting && check.budget !== false ? books.creditsLeft() : undefined;
      if (left !== undefined) turn.budgetLeft(left);
    } catch {
      // unknown: the cells say unfinished
    }
  }
  return answerOf(turn, values, check);
}

function answerOf(turn: FormulaTurn, values: readonly unknown[], check: CellCheck): CellAnswer {
  return { outcomes: turn.outcomes(values, check.baseUrl, now()), fatal: turn.fatal, refused: turn.refused };
}

/**
 * A refusal for the day met this lately makes a cell answer at once; past it a cell tries again (Google's reset may
 * have come) and, meeting the refusal, notes it anew.
 */
export const SPENT_LATELY_MS = 15 * 60_000;

/** A waiting cell looks for a refusal met by another execution this often. */
const WAIT_SLICE_MS = 500;

/** The turn's loop: read what it needs, do what it says, until it answers. */
function drive(turn: FormulaTurn, books: FormulaBooks, deadline: number): void {
  const reader = new Reader(books);
  let view: View = { queue: books.queue() };
  let sender = false;
  try {
    for (;;) {
      const action: Action = turn.next(now(), view);
      if (action.kind === 'answer') return;
      if (action.kind === 'ask') {
        const { mine, window } = books.ask((queue) => turn.register(queue, now()));
        sender ||= mine;
        turn.asked(mine, window);
      } else if (action.kind === 'wait') {
        // The round waited for met Google's refusal: checked again every half second of the wait (a cache read).
        for (let left = action.until - now(); ; left = action.until - now()) {
          if (limitMetLately(SPENT_LATELY_MS) !== undefined) return;
          if (left <= 0) break;
          sleep(Math.min(left, WAIT_SLICE_MS));
        }
      } else if (!sendRound(turn, books, deadline, action)) return;
      view = reader.view(turn);
    }
  } finally {
    if (sender) books.move((queue) => endTurn(queue, turn.id)); // else it ends at its `until`
  }
}

/** What the turn reads: the queue every time, the caches for its keys, the spreadsheet's formulas once. */
class Reader {
  private ahead?: string[];

  constructor(private readonly books: FormulaBooks) {}

  view(turn: FormulaTurn): View {
    const queue = this.books.queue();
    if (turn.needsAhead(now())) this.ahead ??= formulaDomains();
    const keys = turn.lookFor({ queue, ahead: this.ahead });
    return { queue, known: this.books.look(keys, turn.role === 'sending'), ahead: this.ahead };
  }
}

/**
 * The domains of the spreadsheet's =DAPA cells that do not show metrics yet, in sheet order (read once per turn): a
 * cell that shows its row needs nothing, whatever the caches still hold of it (the next day they hold nothing).
 */
function formulaDomains(): string[] {
  try {
    const spreadsheet = currentSpreadsheet();
    return spreadsheet ? formulaKeys(dapaFormulaCells(spreadsheet), true) : [];
  } catch {
    return [];
  }
}

/**
 * One round of the sender, as a check session: the credits held and the batch marked in flight (one hold of the locks:
 * the user's, then the document's), the requests sent with every record cached as it comes in, and the queue, the
 * credits and the window settled. Answers false when the round could not begin (the locks could not be had in the
 * time left).
 */
function sendRound(
  turn: FormulaTurn,
  books: FormulaBooks,
  deadline: number,
  send: Extract<Action, { kind: 'send' }>,
): boolean {
  let session: CheckSession;
  let budget: number | undefined;
  try {
    session = new CheckSession(books.forRound(), deadline);
    budget = session.hold(send.batch.length, (queue) => startRound(queue, send.batch, send.answerBy));
  } catch {
    // The locks could not be had, or Google refused a call for the day (noted for the other cells as it was met).
    return false; // the round ends here, the cells say unfinished (or why: no key, Google's daily limit)
  }
  if (budget === 0) {
    turn.noCredits();
    session.settle(undefined, (queue) => applyAnswer(queue, undefined, now()));
    return false;
  }
  let taught = false;
  const began = now();
  const run = new CheckRun(send.batch, {
    baseUrl: session.books.baseUrl,
    deadline,
    window: turn.plannedWindow,
    seed: now() % 2147483647,
    creditBudget: budget,
    inFlight: send.parallel ? Infinity : 1,
  });
  const report = session.run(run, {
    parallel: true,
    cancelled: () => turn.refused !== undefined || (send.learning && taught),
    received: (records) => turn.know(new Map(records.map(({ key, record }) => [key, record]))),
    // A 422 "Limit Exceeded" names the plan's maximum (a 422 with skips only is an answer like any other).
    answered: (answers) =>
      (taught ||= answers.some((a) => a.status === 422 && /limit exceeded/i.test(a.body))),
    failed: (error) => turn.refusedBy(refusedByGoogle(error)),
  });
  turn.roundTook(now() - began, report.totals.requests, send.parallel);
  const sent = turn.sent(send.batch, report);
  session.settle(report, (queue) => applyAnswer(queue, sent, now()));
  return true;
}
