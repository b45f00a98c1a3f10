// One =DAPA execution's part in sharing requests with the formula cells that run beside it, as a pure turn (after
// h11 and quinn-proto): it holds its role (asking, waiting, sending, answered) and one table of deadlines, is told what
// the queue, the caches and the window say and what time it is, and answers what the execution does next. No I/O and
// no clock here: formula/cell-check.ts drives it.
// Over 300 lines: the four roles, their transitions and the sender's planning read together, as one machine.
import {
  CheckRun,
  DEFAULT_BATCH_SIZE,
  type DomainRecord,
  type Fatal,
  type Outcome,
  type Report,
  roomIn,
  runSync,
  type WindowSnapshot,
} from '../../../shared';
import type { FormulaQueue } from '../stores/books';

/**
 * What an execution does with its formula: asks the queue, sends for all, or answers ('waiting': it asked and another
 * execution has the turn to send, so it answers next).
 */
export type Role = 'asking' | 'waiting' | 'sending' | 'answered';

/** The longest wait for the window a sender sleeps (about what a round then works: a request and its writes). */
export const ROUND_WAIT_MS = 1_000;
/**
 * A cell whose domains ride in another execution's round waits for its answer only when the sender expects it within
 * this long (a request's time, sent side by side): that request is the cell's work, done by the sender. A round of
 * requests one after another is not waited for; its cells answer and the background, or a refresh, fills them.
 */
export const IN_FLIGHT_MS = 3_000;
/** A sender begins its first round within this of taking the turn (its ask, a look, the credits held). */
export const ROUND_START_MS = 1_000;
/** How often a cell waiting for a request in flight looks for its records. */
export const POLL_MS = 250;
/** A request is not begun with less time than this left (the service answers in well under it). */
export const REQUEST_MS = 3_000;
/** A sender's turn outlives its run by this much before another cell may take it over. */
export const TURN_MARGIN_MS = 3_000;
/** Requests one round sends one after another while the minute's limits are unknown. */
export const SEQUENTIAL_REQUESTS = 12;
/** Domains looked up (caches and store) per sender round: the candidates of one round. */
export const LOOK_AHEAD = 500;

/** The one table of an execution's times. */
export interface Deadlines {
  /** The run has answered by this (the custom function's 30 seconds, less loading and wording). */
  answerBy: number;
  /** No request begins after this: it would not be answered by answerBy. */
  lastRequest: number;
  /** When another cell may take over this execution's turn to send (it has answered long before). */
  turnEnds: number;
  /** What the queue said before this execution began belongs to earlier recalculations. */
  since: number;
}

export function deadlinesOf(startedAt: number, answerBy: number): Deadlines {
  return {
    answerBy,
    lastRequest: answerBy - REQUEST_MS,
    turnEnds: answerBy + TURN_MARGIN_MS,
    since: startedAt,
  };
}

/** What the execution does next. */
export type Action =
  /** Register the missing domains in the queue (under its lock) and take the turn to send if nobody has it. */
  | { kind: 'ask' }
  /** Sleep until `until`, then tell the turn what the queue and the caches say. */
  | { kind: 'wait'; until: number }
  /** Hold the credits of `batch`, mark it in flight and send it: `requests` at once, side by side or not. */
  | {
      kind: 'send';
      batch: string[];
      requests: number;
      parallel: boolean;
      learning: boolean;
      answerBy: number;
    }
  /** Stop and word the cells. */
  | { kind: 'answer'; why: Why };

/**
 * Why the turn answered: every domain in, an error for all, out of time, no room in the window now, another execution
 * sends, the budget, or nothing left to send.
 */
export type Why =
  'all in' | 'fatal' | 'refused' | 'time' | 'no room now' | 'another sends' | 'budget' | 'nothing to send';

/** What the execution read for the turn: the queue as it stands, and the records known among the keys it asked. */
export interface View {
  queue: FormulaQueue;
  /** Records the caches (and, for a sender's candidates, the result store) hold among `lookFor`'s keys. */
  known?: ReadonlyMap<string, DomainRecord>;
  /** The domains of the spreadsheet's =DAPA cells, in sheet order (a sender reads them once). */
  ahead?: readonly string[];
}

/** What a sent round left: the domains it is done with, what ended without a record, the window, an error for all. */
export interface Sent {
  done: string[];
  ended: Array<[string, Outcome]>;
  window: WindowSnapshot;
  fatal?: Fatal;
}

/** An outcome that says only that the domain was not reached (time, budget): it stays wanted. */
export function stillWanted(outcome: Outcome): boolean {
  return (
    (outcome.kind === 'error' && (outcome.code === 'unfinished' || outcome.code === 'cancelled')) ||
    (outcome.kind === 'skip' && outcome.reason === 'credit_budget')
  );
}

// ---- the queue's transitions: each takes the queue as read (under its lock) and answers the next one, no I/O ----

/**
 * A cell asks: its missing domains are wanted from `now` (unless already), and the turn to send is taken for `id`
 * until `until` when nobody else has it. `mine`: whether `id` has the turn now.
 */
export function registerAsk(
  queue: FormulaQueue,
  ask: { id: string; missing: readonly string[]; until: number },
  now: number,
): { queue: FormulaQueue; mine: boolean } {
  const wanted = { ...queue.wanted };
  for (const key of ask.missing) wanted[key] ??= now;
  if (othersTurnIn(queue, ask.id, now)) return { queue: { ...queue, wanted }, mine: false };
  return { queue: { ...queue, wanted, sender: { id: ask.id, until: ask.until, since: now } }, mine: true };
}

/** A sender's round begins: its batch is in flight, expected answered by `answerBy`. */
export function startRound(queue: FormulaQueue, batch: readonly string[], answerBy: number): FormulaQueue {
  return { ...queue, sending: [...batch], answerBy };
}

/**
 * A round's answer (undefined: it sent nothing): nothing is in flight any more, what ended is shown to the cells that
 * wait for it, what is done is no longer wanted, the window is the round's, an error for all is noted.
 */
export function applyAnswer(queue: FormulaQueue, sent: Sent | undefined, now: number): FormulaQueue {
  const next: FormulaQueue = { ...queue, sending: [] };
  delete next.answerBy;
  if (!sent) return next;
  next.ended = { ...queue.ended };
  for (const [key, outcome] of sent.ended) next.ended[key] = { outcome, at: now };
  next.wanted = { ...queue.wanted };
  for (const key of sent.done) delete next.wanted[key];
  next.window = sent.window;
  if (sent.fatal) next.fatal = { fatal: sent.fatal, at: now };
  return next;
}

/** A sender's turn ends: the turn is free (if it was still `id`'s) and nothing is in flight. */
export function endTurn(queue: FormulaQueue, id: string): FormulaQueue {
  const next: FormulaQueue = { ...queue, sending: [] };
  delete next.answerBy;
  if (queue.sender?.id === id) delete next.sender;
  return next;
}

/** A background step marks what it may send until `until` (none: the mark goes); cells leave it out of their rounds. */
export function markStep(queue: FormulaQueue, keys: readonly string[], until: number): FormulaQueue {
  const next: FormulaQueue = { ...queue };
  if (keys.length > 0) next.step = { keys: [...keys], until };
  else delete next.step;
  return next;
}

/** Whether someone other than `id` has the turn to send at `now`. */
function othersTurnIn(queue: FormulaQueue, id: string, now: number): boolean {
  return queue.sender !== undefined && queue.sender.until > now && queue.sender.id !== id;
}

export class FormulaTurn {
  // The turn's fields change only through its own transitions (next, asked, sent, noCredits, refusedBy, budgetLeft):
  // the driver reads them through the getters below.
  private state: {
    role: Role;
    why?: Why;
    fatal?: Fatal;
    refused?: string;
    budgetSpent: boolean;
    window?: WindowSnapshot;
    /** When the cell first looked for its records in another execution's round. */
    lookedSince?: number;
    /** How long one of the sender's requests took lately (ms; undefined: none sent yet). */
    requestMs?: number;
  } = { role: 'asking', budgetSpent: false };
  private readonly foundMap = new Map<string, DomainRecord>();
  private readonly endedMap = new Map<string, Outcome>();
  /** Records found for the cell's own domains. */
  readonly found: ReadonlyMap<string, DomainRecord> = this.foundMap;
  /** What the cell's own domains ended in besides a record. */
  readonly ended: ReadonlyMap<string, Outcome> = this.endedMap;

  get role(): Role {
    return this.state.role;
  }
  get fatal(): Fatal | undefined {
    return this.state.fatal;
  }
  /** Google refused the network call (the user did not allow "Connect to an external service"). */
  get refused(): string | undefined {
    return this.state.refused;
  }
  /** The window the sender plans with (the stored one merged with the queue's, then what its rounds left). */
  get plannedWindow(): WindowSnapshot | undefined {
    return this.state.window;
  }

  /** The cell's own domains, to tell them from other cells' in the sender's rounds. */
  private readonly own: ReadonlySet<string>;
  /** Domains this execution sent (or gave up on) in its rounds: never planned twice in one turn. */
  private readonly tried = new Set<string>();

  constructor(
    /** This execution's id in the queue (the sender's). */
    readonly id: string,
    readonly distinct: readonly string[],
    readonly deadlines: Deadlines,
  ) {
    this.own = new Set(distinct);
  }

  missing(): string[] {
    return this.distinct.filter((k) => !this.found.has(k) && !this.ended.has(k));
  }

  /** Records known before anything is asked (the result store, the caches). */
  know(records: ReadonlyMap<string, DomainRecord>): void {
    for (const [key, record] of records) if (this.own.has(key)) this.foundMap.set(key, record);
  }

  /** The keys whose records the next view should hold: a sender's candidates, else the cell's missing domains. */
  lookFor(view: Pick<View, 'queue' | 'ahead'>): string[] {
    return this.role === 'sending' ? this.candidates(view.queue, view.ahead ?? []) : this.missing();
  }

  /**
   * Whether the next view needs the spreadsheet's formula domains (a sender's read-ahead): not when the window has
   * no room before the last request (the sender answers then, and reading every formula would be in vain).
   */
  needsAhead(now: number): boolean {
    return this.role === 'sending' && roomIn(this.plannedWindow, now).freeAt <= this.deadlines.lastRequest;
  }

  private over(): Why | undefined {
    if (this.refused !== undefined) return 'refused';
    if (this.fatal !== undefined) return 'fatal';
    if (this.missing().length === 0) return 'all in';
    return undefined;
  }

  private answer(why: Why): Action {
    this.state.role = 'answered';
    this.state.why ??= why;
    return { kind: 'answer', why: this.state.why ?? why };
  }

  /** What the queue says of this cell's domains since it began: ended sends, an error for every cell. */
  private absorb(view: View): void {
    const { queue } = view;
    for (const key of this.missing()) {
      const e = queue.ended[key];
      if (e && e.at >= this.deadlines.since) this.endedMap.set(key, e.outcome);
    }
    if (queue.fatal && queue.fatal.at >= this.deadlines.since) this.state.fatal ??= queue.fatal.fatal;
    if (view.known) this.know(view.known);
  }

  /** Whether someone other than this execution has the turn to send now. */
  private othersTurn(queue: FormulaQueue, now: number): boolean {
    return othersTurnIn(queue, this.id, now);
  }

  /**
   * The next thing to do, given what was just read and the time. While another cell has the turn to send, a cell waits
   * only for a request that carries its own domains (inFlightUntil) and otherwise answers at once: the background, or
   * the next recalculation, fills it from the caches; a longer wait would hold one of Sheets' 30 executions for
   * nothing.
   */
  next(now: number, view: View): Action {
    if (this.role === 'answered') return this.answer(this.state.why ?? 'all in');
    this.absorb(view);
    const over = this.over();
    // A sender goes on for the cells waiting beside it once its own domains are in.
    if (over && !(over === 'all in' && this.role === 'sending')) return this.answer(over);
    if (now >= this.deadlines.lastRequest) return this.answer(over ?? 'time');
    if (this.role === 'sending') return this.plan(now, view);
    if (this.role === 'waiting' || this.othersTurn(view.queue, now)) {
      const until = this.inFlightUntil(view.queue, now);
      return until > now ? { kind: 'wait', until } : this.answer('another sends');
    }
    // The window the formulas' last send left has no room before a round could use it: nothing to ask for (the
    // stored window, which the background's sends fill too, has no more room than this one).
    if (roomIn(view.queue.window, now).freeAt > now + ROUND_WAIT_MS) return this.answer('no room now');
    return { kind: 'ask' };
  }

  /**
   * Whether this cell's domains would ride in the first request of a turn just taken: the window has room and knows
   * the plan's maximum, and the domains asked for before them fit in one request with them (the sender sends its own
   * and the oldest asked first).
   */
  private inFirstRequest(queue: FormulaQueue, now: number): boolean {
    const room = roomIn(queue.window, now);
    // Not knowing the plan's maximum, the first request may be refused whole (422): nothing to wait for.
    const perRequest = queue.window?.limits.maxUrlsPerRequest?.value;
    if (room.urls <= 0 || perRequest === undefined) return false;
    const missing = this.missing();
    const mine = Math.min(...missing.map((k) => queue.wanted[k] ?? Infinity));
    const before = Object.entries(queue.wanted).filter(([k, at]) => at < mine && !this.own.has(k)).length;
    return before + missing.length <= Math.min(perRequest, room.urls);
  }

  /**
   * Until when this cell looks for its records in another execution's round: while a turn just taken has not begun
   * its first round (ROUND_START_MS), or while the round in flight carries one of
   * its domains and the sender expects it answered within IN_FLIGHT_MS (and never past twice that from the cell's first
   * look); else now (it answers, and the background or the next recalculation fills it).
   */
  private inFlightUntil(queue: FormulaQueue, now: number): number {
    const since = (this.state.lookedSince ??= now);
    const { sender, answerBy } = queue;
    if (sender === undefined || sender.until <= now) return now;
    const sending = new Set(queue.sending ?? []);
    // A turn just taken whose first round has not begun (it sends the cells asking beside it first), when the window
    // has room: looked at again until it begins.
    const starting = sender.since !== undefined ? sender.since + ROUND_START_MS : now;
    if (sending.size === 0 && starting > now && this.inFirstRequest(queue, now))
      return Math.min(now + POLL_MS, starting);
    if (answerBy === undefined) return now;
    if (!this.missing().some((k) => sending.has(k)) || answerBy > now + IN_FLIGHT_MS) return now;
    return Math.min(now + POLL_MS, answerBy + POLL_MS, since + 2 * IN_FLIGHT_MS, this.deadlines.lastRequest);
  }

  /**
   * The change the ask makes to the queue (registerAsk with this turn's missing domains and turn's end): answers the
   * next queue and whether this execution sends.
   */
  register(queue: FormulaQueue, now: number): { queue: FormulaQueue; mine: boolean } {
    return registerAsk(queue, { id: this.id, missing: this.missing(), until: this.deadlines.turnEnds }, now);
  }

  /** The ask's answer (false too when the lock could not be had in the time left: the cell waits and looks). */
  asked(mine: boolean, window?: WindowSnapshot): void {
    if (this.role === 'answered') return;
    this.state.role = mine ? 'sending' : 'waiting';
    if (mine) this.state.window = window;
  }

  /**
   * A sender's candidates, in order: its own missing domains first (a range needing several requests lets the cells
   * waiting beside it go first, they may be one domain each), then those other running cells wait for, oldest first,
   * then those of =DAPA cells not running yet; never one tried in this turn, nor one a background step has in flight,
   * nor one whose send ended after its cell asked (one asked for again since is sent again).
   */
  candidates(queue: FormulaQueue, ahead: readonly string[]): string[] {
    const wanted = Object.entries(queue.wanted)
      .sort((a, b) => a[1] - b[1])
      .map(([key]) => key);
    const endedFor = (k: string) => {
      const e = queue.ended[k];
      return e !== undefined && e.at >= (queue.wanted[k] ?? -Infinity);
    };
    const own = this.missing();
    const others = wanted.filter((k) => !this.own.has(k));
    const stepHas = new Set(queue.step?.keys ?? []);
    const first =
      own.length > (this.plannedWindow?.limits.maxUrlsPerRequest?.value ?? Infinity) ? others : own;
    return [...new Set([...first, ...own, ...wanted, ...ahead])]
      .filter(
        (k) =>
          !this.tried.has(k) && !this.found.has(k) && !stepHas.has(k) && (this.own.has(k) || !endedFor(k)),
      )
      .slice(0, LOOK_AHEAD);
  }

  /**
   * A sender's round: the candidates nobody holds a record of, as many as the window's room takes now. The turn's
   * first round is one request (a blocked network or a wrong key costs one, whatever the last execution saw); requests
   * go side by side only while the window knows what the minute allows, else one after another, so that the first
   * refusal teaches the limit before a window of requests is spent.
   */
  private plan(now: number, view: View): Action {
    const known = view.known ?? new Map<string, DomainRecord>();
    const candidates = this.candidates(view.queue, view.ahead ?? []).filter((k) => !known.has(k));
    if (candidates.length === 0) return this.answer('nothing to send');
    const room = roomIn(this.plannedWindow, now, candidates.length);
    if (room.urls <= 0) {
      // A wait no longer than a round's own work is slept; a longer one is left to the background (or a refresh).
      if (room.freeAt - now > ROUND_WAIT_MS || room.freeAt > this.deadlines.lastRequest)
        return this.answer('no room now');
      return { kind: 'wait', until: room.freeAt };
    }
    const perRequest = Number.isFinite(room.perRequest) ? room.perRequest : DEFAULT_BATCH_SIZE;
    const knowsMinute =
      this.plannedWindow?.limits.urlsPerMinute !== undefined && Number.isFinite(room.requests);
    const first = this.tried.size === 0;
    const parallel = !first && knowsMinute;
    const requests = first ? 1 : parallel ? Math.max(1, room.requests) : SEQUENTIAL_REQUESTS;
    const batch = candidates.slice(0, Math.min(room.urls, perRequest * requests));
    // Not knowing the plan's maximum, the round ends once a 422 taught it, and is planned anew with it.
    // When the round should be answered: one request's time side by side, else one after another.
    const inTurn = parallel ? 1 : Math.ceil(batch.length / perRequest);
    const answerBy = now + inTurn * (this.state.requestMs ?? REQUEST_MS);
    return { kind: 'send', batch, requests, parallel, learning: !Number.isFinite(room.perRequest), answerBy };
  }

  /** Google refused a network call: the turn answers, and the cells say what to allow. */
  refusedBy(message: string | undefined): void {
    if (message !== undefined) this.state.refused ??= message;
  }

  /** What the budget leaves after the turn, when the cells still wait: none left, they say the budget. */
  budgetLeft(left: number | undefined): void {
    if (left !== undefined && left <= 0) this.state.budgetSpent = true;
  }

  /** The credits held for a round were none: the budget is spent, the cells say so. */
  noCredits(): void {
    this.state.budgetSpent = true;
    this.answer('budget');
  }

  /** How long a round of `requests` took (`parallel`: side by side): the next rounds' answer times follow from it. */
  roundTook(ms: number, requests: number, parallel: boolean): void {
    if (requests > 0) this.state.requestMs = Math.max(1, Math.round(parallel ? ms : ms / requests));
  }

  /** A round's report: what it found, what ended, the window it left. Answers what the queue must be told. */
  sent(batch: readonly string[], report: Report): Sent {
    for (const key of batch) this.tried.add(key);
    for (const o of report.outcomes)
      if (o.kind === 'error' && o.code === 'cancelled' && o.key) this.tried.delete(o.key);
    this.state.window = report.window;
    for (const { key, record } of report.fresh) if (this.own.has(key)) this.foundMap.set(key, record);
    const ended: Array<[string, Outcome]> = [];
    for (const outcome of report.outcomes) {
      if (outcome.kind === 'record' || !outcome.key || stillWanted(outcome)) continue;
      ended.push([outcome.key, outcome]);
      if (this.own.has(outcome.key)) this.endedMap.set(outcome.key, outcome);
    }
    if (report.fatal) this.state.fatal = report.fatal;
    const done = [...report.fresh.map((f) => f.key), ...ended.map(([key]) => key)];
    return { done, ended, window: report.window, fatal: report.fatal };
  }

  /** One outcome per position: records found, what sends ended in, the budget, else unfinished. */
  outcomes(values: readonly unknown[], baseUrl: string, now: number): Outcome[] {
    const run = new CheckRun(values, { baseUrl, deadline: now, maxSend: 0 });
    run.addCached(this.found);
    const report = runSync(run, {
      now: () => now,
      sleep: () => undefined,
      send: () => {
        throw new Error('nothing is sent here');
      },
    });
    return report.outcomes.map((outcome) => {
      if (outcome.kind === 'record' || !outcome.key) return outcome;
      const ended = this.ended.get(outcome.key);
      if (ended) return ended;
      if (this.state.budgetSpent && outcome.kind === 'error' && outcome.code === 'unfinished')
        return { kind: 'skip', reason: 'credit_budget', retryable: true, key: outcome.key };
      return outcome;
    });
  }
}
