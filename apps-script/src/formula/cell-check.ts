// One =DAPA execution among the many Sheets runs at once (`=DAPA(A2)` dragged down is one execution per cell, up to 30
// side by side): the cell asks the formulas' queue for its domains, and one execution at a time sends for every
// waiting cell, filling each request with the domains of =DAPA cells not yet running (read from the sheet), as many as
// the plan's window allows now (roomIn). Every record is cached the moment it is in; the other cells take theirs from
// the cache. Every wait (a lock, the window, a poll) comes out of the one deadline.
// Over 300 lines: the waiting cell and the sender are two halves of one protocol over the queue, read together.
import {
  CheckRun,
  DEFAULT_BATCH_SIZE,
  type DomainRecord,
  type Fatal,
  type Outcome,
  roomIn,
  runSync,
  runSyncAll,
  type WindowSnapshot,
} from '../../../shared';
import { distinctKeys, readKnown } from '../checks/check';
import { dapaFormulaCells, formulaKeys } from '../checks/formulas';
import { currentSpreadsheet, fetchAnswers, now, sleep } from '../platform/gas';
import { creditBudget, creditView, holdCredits, settleCredits } from '../stores/credit-ledger';
import { changeQueue, type FormulaQueue, formulasWindow, readQueue } from '../stores/formula-queue';
import { loadWindow, saveWindow } from '../stores/plan-store';
import { cacheRecords, readCachedRecords } from '../stores/result-cache';
import { addSavedCredits } from '../stores/result-store';

/** How often a waiting cell looks for its records in the cache. */
const POLL_MS = 1_000;
/** A request is not begun with less time than this left (the service answers in well under it). */
const REQUEST_MS = 3_000;
/** A sender's turn outlives its deadline by this much before another cell may take it over. */
const TURN_MARGIN_MS = 3_000;
/** Requests one round sends one after another while the minute's request limit is unknown. */
const SEQUENTIAL_REQUESTS = 12;
/** Domains of other cells looked up in the cache per round (one getAll). */
const LOOK_AHEAD = 500;

/** What a formula's cells show: one outcome per position, or an error for the whole formula. */
export interface CellAnswer {
  outcomes: Outcome[];
  fatal?: Fatal;
  /** Google refused the network call (the user did not allow "Connect to an external service"). */
  refused?: string;
}

export interface CellCheck {
  apiKey: string;
  baseUrl: string;
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

/** What one execution knows of its own domains while it waits or sends. */
class Cells {
  readonly found = new Map<string, DomainRecord>();
  readonly ended = new Map<string, Outcome>();
  fatal?: Fatal;
  refused?: string;
  budgetSpent = false;
  /** What the queue said before this cell began belongs to earlier recalculations: it is asked again. */
  readonly since = now();
  /** The cell's own domains, to tell them from other cells' in the sender's rounds. */
  readonly own: ReadonlySet<string>;

  constructor(readonly distinct: readonly string[]) {
    this.own = new Set(distinct);
  }

  missing(): string[] {
    return this.distinct.filter((k) => !this.found.has(k) && !this.ended.has(k));
  }

  /** What the queue says of this cell's domains: ended sends, an error for every cell. */
  absorb(queue: FormulaQueue): void {
    for (const key of this.missing()) {
      const e = queue.ended[key];
      if (e && e.at >= this.since) this.ended.set(key, e.outcome);
    }
    if (queue.fatal && queue.fatal.at >= this.since) this.fatal ??= queue.fatal.fatal;
  }

  /** The records the cache holds now. */
  look(baseUrl: string): void {
    const missing = this.missing();
    if (missing.length === 0) return;
    try {
      for (const [key, record] of readCachedRecords(baseUrl, missing)) this.found.set(key, record);
    } catch {
      // an unreachable cache only costs this look
    }
  }

  get over(): boolean {
    return this.missing().length === 0 || this.fatal !== undefined || this.refused !== undefined;
  }
}

/**
 * Checks a formula's values as one of many cells running at once. Never throws for the server; a lock it cannot have
 * in the time left is given up (the cell then says unfinished), never waited past the deadline.
 */
export function checkCells(values: readonly unknown[], check: CellCheck): CellAnswer {
  const cells = new Cells(distinctKeys(values));
  if (cells.distinct.length > 0) {
    try {
      const known = readKnown(check.baseUrl, cells.distinct, { kind: 'all' });
      for (const [key, record] of known.known) cells.found.set(key, record);
      if (known.saved > 0) addSavedCredits(known.saved);
    } catch {
      // no cache: everything is asked for
    }
    if (!cells.over) waitOrSend(cells, check);
    if (!cells.over && creditBudget() !== undefined) {
      try {
        const left = creditView(check.apiKey).left;
        if (left !== undefined && left <= 0) cells.budgetSpent = true;
      } catch {
        // unknown: the cells say unfinished
      }
    }
  }
  return { outcomes: outcomesOf(values, cells, check), fatal: cells.fatal, refused: cells.refused };
}

/** Registers the cell's domains and either sends for every waiting cell, or waits for its records. */
function waitOrSend(cells: Cells, check: CellCheck): void {
  const me = Utilities.getUuid();
  const ask = (): boolean => {
    try {
      return changeQueue(check.baseUrl, (queue) => {
        const t = now();
        for (const key of cells.missing()) queue.wanted[key] ??= t;
        cells.absorb(queue);
        if (queue.sender && queue.sender.until > t && queue.sender.id !== me) return false;
        queue.sender = { id: me, until: check.deadline + TURN_MARGIN_MS };
        return true;
      });
    } catch {
      return false; // the lock could not be had in the time left: look again
    }
  };
  let mine = ask();
  while (!cells.over && now() < check.deadline - REQUEST_MS) {
    if (mine) {
      try {
        sendForAll(cells, check);
      } finally {
        endTurn(check.baseUrl, me);
      }
      return;
    }
    sleep(Math.max(0, Math.min(POLL_MS, check.deadline - REQUEST_MS - now())));
    cells.look(check.baseUrl);
    if (cells.over) return;
    const queue = readQueue(check.baseUrl);
    cells.absorb(queue);
    if (!queue.sender || queue.sender.until <= now()) mine = ask();
    else if (cannotComeInTime(cells, queue, check.deadline)) return;
  }
}

/** Nothing of this cell is being sent, and the window has no room before its deadline: waiting is in vain. */
function cannotComeInTime(cells: Cells, queue: FormulaQueue, deadline: number): boolean {
  const sending = new Set(queue.sending ?? []);
  if (cells.missing().some((k) => sending.has(k))) return false;
  return roomIn(queue.window, now()).freeAt > deadline - REQUEST_MS;
}

function endTurn(baseUrl: string, me: string): void {
  try {
    changeQueue(baseUrl, (queue) => {
      if (queue.sender?.id === me) delete queue.sender;
      queue.sending = [];
    });
  } catch {
    // the turn ends by itself at its `until`
  }
}

/** The domains of every =DAPA formula in the spreadsheet, in sheet order (read once per turn). */
function formulaDomains(): string[] {
  try {
    const spreadsheet = currentSpreadsheet();
    return spreadsheet ? formulaKeys(dapaFormulaCells(spreadsheet)) : [];
  } catch {
    return [];
  }
}

/**
 * The sender's turn: round after round, the domains to send now (this cell's, then those other running cells wait
 * for, oldest first, then those of cells not yet running), as many as the window's room holds, until nothing is
 * wanted, the window has no room before the deadline, or the deadline.
 */
function sendForAll(cells: Cells, check: CellCheck): void {
  const { baseUrl, apiKey, deadline } = check;
  let queue = readQueue(baseUrl);
  let window: WindowSnapshot | undefined = formulasWindow(loadWindow(baseUrl), queue);
  let ahead: string[] | undefined;
  const tried = new Set<string>();
  for (; !cells.fatal && !cells.refused && now() < deadline - REQUEST_MS; queue = readQueue(baseUrl)) {
    cells.absorb(queue);
    const wanted = Object.entries(queue.wanted)
      .sort((a, b) => a[1] - b[1])
      .map(([key]) => key);
    ahead ??= formulaDomains();
    // A domain whose send ended after its cell asked is done; one asked for again since is sent again.
    const endedFor = (k: string) => {
      const e = queue.ended[k];
      return e !== undefined && e.at >= (queue.wanted[k] ?? -Infinity);
    };
    const own = cells.missing();
    // A range that needs several requests anyway (the plan's maximum known) lets the cells waiting beside it go
    // first (they may be one domain each); a cell of one request goes first itself.
    const others = wanted.filter((k) => !cells.own.has(k));
    const first = own.length > (window?.limits.maxUrlsPerRequest?.value ?? Infinity) ? others : own;
    const order = [...new Set([...first, ...own, ...wanted, ...ahead])].filter(
      (k) => !tried.has(k) && !cells.found.has(k) && (cells.own.has(k) || !endedFor(k)),
    );
    const look = order.slice(0, LOOK_AHEAD);
    const cached = readCachedRecords(baseUrl, look);
    for (const [key, record] of cached) if (cells.own.has(key)) cells.found.set(key, record);
    const candidates = look.filter((k) => !cached.has(k));
    if (candidates.length === 0) return;
    const t = now();
    const room = roomIn(window, t, candidates.length);
    if (room.urls <= 0) {
      if (room.freeAt > deadline - REQUEST_MS) return;
      sleep(room.freeAt - t);
      continue;
    }
    const perRequest = Number.isFinite(room.perRequest) ? room.perRequest : DEFAULT_BATCH_SIZE;
    // A turn's first round is one request: a blocked network or a wrong key costs one, not a window of them.
    // Requests go side by side only while the window knows what the minute allows (its requests and its URLs);
    // else one after another, so that the first refusal teaches the limit before a window of requests is spent.
    const knowsMinute = window?.limits.urlsPerMinute !== undefined && Number.isFinite(room.requests);
    const parallel = tried.size > 0 && knowsMinute;
    const requests = tried.size === 0 ? 1 : parallel ? Math.max(1, room.requests) : SEQUENTIAL_REQUESTS;
    const batch = candidates.slice(0, Math.min(room.urls, perRequest * requests));
    let spend: ReturnType<typeof holdCredits>;
    try {
      spend = changeQueue(baseUrl, (q) => {
        q.sending = batch;
        return holdCredits(apiKey, batch.length, deadline + 60_000);
      });
    } catch {
      return; // the lock could not be had in the time left: the turn ends, the cells say unfinished
    }
    if (spend.budget === 0) {
      cells.budgetSpent = true;
      settle(baseUrl, apiKey, spend, 0, [], []);
      return;
    }
    for (const key of batch) tried.add(key);
    // Not knowing the plan's maximum, the round ends once a 422 taught it, and is planned anew with it.
    const learning = !Number.isFinite(room.perRequest);
    const report = sendRound(cells, check, batch, window, spend.budget, learning, parallel);
    for (const o of report.outcomes)
      if (o.kind === 'error' && o.code === 'cancelled' && o.key) tried.delete(o.key);
    window = report.window;
    const ended: Array<[string, Outcome]> = [];
    for (const outcome of report.outcomes) {
      if (outcome.kind === 'record' || !outcome.key || stillWanted(outcome)) continue;
      ended.push([outcome.key, outcome]);
      if (cells.own.has(outcome.key)) cells.ended.set(outcome.key, outcome);
    }
    if (report.fatal) cells.fatal = report.fatal;
    const done = [...report.fresh.map((f) => f.key), ...ended.map(([key]) => key)];
    settle(baseUrl, apiKey, spend, report.totals.billed, done, ended, window, report.fatal);
  }
}

/** An outcome that says only that the domain was not reached (time, budget): it stays wanted. */
function stillWanted(outcome: Outcome): boolean {
  return (
    (outcome.kind === 'error' && (outcome.code === 'unfinished' || outcome.code === 'cancelled')) ||
    (outcome.kind === 'skip' && outcome.reason === 'credit_budget')
  );
}

/** One round's requests, every record cached as soon as it is in. */
function sendRound(
  cells: Cells,
  check: CellCheck,
  batch: string[],
  window: WindowSnapshot | undefined,
  creditBudget: number | undefined,
  oneTurn: boolean,
  parallel: boolean,
) {
  let taught = false;
  const run = new CheckRun(batch, {
    baseUrl: check.baseUrl,
    deadline: check.deadline,
    window,
    seed: now() % 2147483647,
    creditBudget,
    inFlight: parallel ? Infinity : 1,
  });
  return runSyncAll(run, {
    now,
    sleep,
    cancelled: () => cells.refused !== undefined || (oneTurn && taught),
    received: (records) => {
      cacheRecords(check.baseUrl, records);
      for (const { key, record } of records) if (cells.own.has(key)) cells.found.set(key, record);
    },
    sendAll: (requests) => {
      try {
        const answers = fetchAnswers(requests, check.apiKey);
        // A 422 "Limit Exceeded" names the plan's maximum (a 422 with skips only is an answer like any other).
        taught ||= answers.some((a) => a.status === 422 && /limit exceeded/i.test(a.body));
        return answers;
      } catch (error) {
        cells.refused ??= refusedByGoogle(error);
        throw error;
      }
    },
  });
}

/** After a round, in one hold of the lock: the queue, the credits, the window everyone starts from. */
function settle(
  baseUrl: string,
  apiKey: string,
  spend: ReturnType<typeof holdCredits>,
  billed: number,
  done: readonly string[],
  ended: ReadonlyArray<[string, Outcome]>,
  window?: WindowSnapshot,
  fatal?: Fatal,
): void {
  try {
    changeQueue(baseUrl, (queue) => {
      const at = now();
      for (const [key, outcome] of ended) queue.ended[key] = { outcome, at };
      for (const key of done) delete queue.wanted[key];
      queue.sending = [];
      if (window) queue.window = window;
      if (fatal) queue.fatal = { fatal, at };
      settleCredits(apiKey, spend, billed);
      try {
        if (window) saveWindow(baseUrl, window);
      } catch {
        // an editor's formula may not write the owner's properties: the queue keeps the window
      }
    });
  } catch (error) {
    console.warn(
      `DAPA: a formula's round was not settled (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

/** One outcome per position: records found, what sends ended in, the budget, else unfinished. */
function outcomesOf(values: readonly unknown[], cells: Cells, check: CellCheck): Outcome[] {
  const run = new CheckRun(values, { baseUrl: check.baseUrl, deadline: now(), maxSend: 0 });
  run.addCached(cells.found);
  const report = runSync(run, {
    now,
    sleep: () => undefined,
    send: () => {
      throw new Error('nothing is sent here');
    },
  });
  return report.outcomes.map((outcome) => {
    if (outcome.kind === 'record' || !outcome.key) return outcome;
    const ended = cells.ended.get(outcome.key);
    if (ended) return ended;
    if (cells.budgetSpent && outcome.kind === 'error' && outcome.code === 'unfinished')
      return { kind: 'skip', reason: 'credit_budget', retryable: true, key: outcome.key };
    return outcome;
  });
}
