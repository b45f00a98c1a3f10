// One =DAPA execution's turn as a pure state machine (apps-script/src/formula/turn.ts): told the queue, the records
// known and the time, it answers ask, wait, send or answer. These are its transitions, without Apps Script.
import type { DomainRecord, Outcome, Report, WindowSnapshot } from '../../shared';
import {
  applyAnswer,
  deadlinesOf,
  endTurn,
  FormulaTurn,
  IN_FLIGHT_MS,
  markStep,
  POLL_MS,
  registerAsk,
  REQUEST_MS,
  ROUND_START_MS,
  SEQUENTIAL_REQUESTS,
  startRound,
} from '../../apps-script/src/formula/turn';
import type { FormulaQueue } from '../../apps-script/src/stores/books';

const T = 1_000_000;
const ANSWER_BY = T + 23_000;
const BASE = 'https://dapa.example';

const record = (domain: string): DomainRecord => ({
  domain,
  site_da: 10,
  site_pa: 20,
  site_mr: 3,
  spam_score: 1,
});
const known = (...keys: string[]) => new Map(keys.map((k) => [k, record(k)]));
const queue = (change: Partial<FormulaQueue> = {}): FormulaQueue => ({ wanted: {}, ended: {}, ...change });
const turn = (keys: string[], id = 'me') => new FormulaTurn(id, keys, deadlinesOf(T, ANSWER_BY));

/** The entry plan, learned: 5 URLs a request, 60 a minute; `sent` URLs went at `at`. */
const entryWindow = (sent = 0, at = T): WindowSnapshot => ({
  v: 1,
  at,
  sends: sent > 0 ? [[at, sent]] : [],
  limits: {
    maxUrlsPerRequest: { value: 5, exact: true, at },
    urlsPerMinute: { value: 60, exact: true, at },
    requestsPerMinute: { value: 60, exact: true, at },
  },
});

function report(batch: string[], change: Partial<Report> = {}): Report {
  return {
    outcomes: batch.map((key) => ({ kind: 'record', key, record: record(key) }) as Outcome),
    fresh: batch.map((key) => ({ key, record: record(key) })),
    window: entryWindow(batch.length),
    ...change,
  } as Report;
}

describe('a formula turn', () => {
  it('answers at once, asking nobody, when every domain is known', () => {
    const t = turn(['a.com', 'b.com']);
    t.know(known('a.com', 'b.com'));
    expect(t.next(T, { queue: queue() })).toEqual({ kind: 'answer', why: 'all in' });
    expect(t.role).toBe('answered');
  });

  it('asks the queue, and sends when nobody has the turn', () => {
    const t = turn(['a.com']);
    expect(t.next(T, { queue: queue() })).toEqual({ kind: 'ask' });
    const before = queue();
    const { queue: q, mine } = t.register(before, T);
    expect(mine).toBe(true);
    expect(q.wanted).toEqual({ 'a.com': T });
    expect(q.sender).toEqual({ id: 'me', until: ANSWER_BY + 3_000, since: T });
    expect(before).toEqual(queue()); // the queue as read is not changed: the next one is answered
    t.asked(true, entryWindow());
    expect(t.role).toBe('sending');
  });

  it('waits for a request in flight that carries its domains, while the sender expects it answered soon', () => {
    const t = turn(['a.com']);
    const sender = { id: 'other', until: ANSWER_BY, since: T - 5_000 };
    const q = queue({ sender, window: entryWindow(), sending: ['a.com'], answerBy: T + 400 });
    expect(t.next(T, { queue: q })).toEqual({ kind: 'wait', until: T + POLL_MS });
    // The sender's record arrives in the cache: the cell answers.
    expect(t.next(T + POLL_MS, { queue: q, known: known('a.com') })).toEqual({
      kind: 'answer',
      why: 'all in',
    });
  });

  it('never waits for a round whose answer is expected later than a request side by side, nor past its own bound', () => {
    const sender = { id: 'other', until: ANSWER_BY, since: T - 5_000 };
    const slow = queue({ sender, window: entryWindow(), sending: ['a.com'], answerBy: T + IN_FLIGHT_MS + 1 });
    expect(turn(['a.com']).next(T, { queue: slow })).toEqual({ kind: 'answer', why: 'another sends' });
    // A round that never answers: the cell waits twice IN_FLIGHT_MS from its first look at most.
    const t = turn(['a.com']);
    const stuck = (at: number) =>
      queue({ sender, window: entryWindow(), sending: ['a.com'], answerBy: at + 100 });
    let at = T;
    for (let action = t.next(at, { queue: stuck(at) }); action.kind === 'wait';) {
      at = action.until;
      action = t.next(at, { queue: stuck(at) });
    }
    expect(at).toBeLessThanOrEqual(T + 2 * IN_FLIGHT_MS);
    expect(t.role).toBe('answered');
  });

  it('answers at once, without waiting, while another execution sends other domains', () => {
    const t = turn(['late.com']);
    const sender = { id: 'other', until: ANSWER_BY, since: T - 5_000 };
    const q = queue({ sender, window: entryWindow(), sending: ['x.com'], answerBy: T + 400 });
    expect(t.next(T, { queue: q })).toEqual({ kind: 'answer', why: 'another sends' });
  });

  it('waits for the first request of a turn just taken when its domains fit in it, else answers', () => {
    const sender = { id: 'other', until: ANSWER_BY, since: T };
    const q = queue({ sender, window: entryWindow(), wanted: { 'a.com': T, 'b.com': T + 1 } });
    expect(turn(['b.com']).next(T + 10, { queue: q })).toEqual({ kind: 'wait', until: T + 10 + POLL_MS });
    // Five asked before it: the first request (5 URLs) is full.
    const full = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`w${i}.com`, T - 100]));
    const crowded = queue({ sender, window: entryWindow(), wanted: { ...full, 'b.com': T + 1 } });
    expect(turn(['b.com']).next(T + 10, { queue: crowded })).toEqual({
      kind: 'answer',
      why: 'another sends',
    });
    // Past ROUND_START_MS the round has begun or will not: nothing to wait for.
    expect(turn(['b.com']).next(T + ROUND_START_MS, { queue: q })).toEqual({
      kind: 'answer',
      why: 'another sends',
    });
    // The plan's maximum unknown, the first request may be refused whole: no wait.
    const unknown = entryWindow();
    delete unknown.limits.maxUrlsPerRequest;
    expect(turn(['b.com']).next(T + 10, { queue: { ...q, window: unknown } })).toEqual({
      kind: 'answer',
      why: 'another sends',
    });
  });

  it('answers at once, without asking, when the window the formulas left has no room now', () => {
    const t = turn(['late.com']);
    const q = queue({ window: entryWindow(60) });
    expect(t.next(T, { queue: q })).toEqual({ kind: 'answer', why: 'no room now' });
  });

  it("sends its turn's first round as one request, then several (side by side once the minute is known)", () => {
    const t = turn(['a.com']);
    t.register(queue(), T);
    t.asked(true, entryWindow());
    const ahead = Array.from({ length: 100 }, (_, i) => `r${i}.com`);
    const first = t.next(T, { queue: queue(), ahead });
    expect(first).toMatchObject({ kind: 'send', requests: 1, parallel: false });
    expect(first.kind === 'send' && first.batch).toEqual(['a.com', 'r0.com', 'r1.com', 'r2.com', 'r3.com']);
    if (first.kind !== 'send') throw new Error('a send');
    t.sent(first.batch, report(first.batch));
    const second = t.next(T + 500, { queue: queue(), ahead });
    // The minute's 60 URLs less the 5 sent: 55, in requests of 5 side by side.
    expect(second).toMatchObject({ kind: 'send', parallel: true });
    expect(second.kind === 'send' && second.requests).toBeGreaterThanOrEqual(11);
    expect(second.kind === 'send' && second.batch).toHaveLength(55);
  });

  it('sends one after another while the minute is not known', () => {
    const t = turn(['a.com']);
    t.register(queue(), T);
    const window = entryWindow();
    delete window.limits.urlsPerMinute;
    delete window.limits.requestsPerMinute;
    t.asked(true, window);
    const ahead = Array.from({ length: 100 }, (_, i) => `r${i}.com`);
    const first = t.next(T, { queue: queue(), ahead });
    if (first.kind !== 'send') throw new Error('a send');
    t.sent(first.batch, report(first.batch, { window }));
    expect(t.next(T + 500, { queue: queue(), ahead })).toMatchObject({
      kind: 'send',
      requests: SEQUENTIAL_REQUESTS,
      parallel: false,
    });
  });

  it('puts its own domains first, then the waiting cells oldest first, then the cells not yet running', () => {
    const t = turn(['own.com']);
    t.register(queue(), T);
    t.asked(true, entryWindow());
    const q = queue({ wanted: { 'new.com': T - 10, 'old.com': T - 500 } });
    expect(t.candidates(q, ['ahead.com', 'old.com'])).toEqual(['own.com', 'old.com', 'new.com', 'ahead.com']);
  });

  it('never sends what the caches or the result store hold (the next day, the store keeps yesterday)', () => {
    const t = turn(['new.com']);
    t.register(queue(), T);
    t.asked(true, entryWindow());
    const ahead = ['kept1.com', 'kept2.com', 'new.com', 'other.com'];
    const action = t.next(T, { queue: queue(), ahead, known: known('kept1.com', 'kept2.com') });
    expect(action.kind === 'send' && action.batch).toEqual(['new.com', 'other.com']);
  });

  it('goes on sending for the cells beside it once its own domains are in, and answers when nothing is left', () => {
    const t = turn(['a.com']);
    t.register(queue(), T);
    t.asked(true, entryWindow());
    const first = t.next(T, { queue: queue(), ahead: ['b.com'] });
    if (first.kind !== 'send') throw new Error('a send');
    t.sent(first.batch, report(first.batch));
    expect(t.missing()).toEqual([]);
    const q = queue({ wanted: { 'c.com': T } });
    expect(t.next(T + 500, { queue: q, ahead: ['b.com'] })).toMatchObject({ kind: 'send', batch: ['c.com'] });
    expect(t.next(T + 900, { queue: queue(), ahead: ['b.com'], known: known('c.com') })).toEqual({
      kind: 'answer',
      why: 'nothing to send',
    });
  });

  it('waits for the window no longer than a round works, and answers when the room comes later', () => {
    const t = turn(['a.com']);
    t.register(queue(), T);
    t.asked(true, entryWindow(60, T - 59_500)); // the minute frees half a second from now
    expect(t.next(T, { queue: queue() })).toEqual({ kind: 'wait', until: T + 501 });
    const later = turn(['b.com']);
    later.register(queue(), T);
    later.asked(true, entryWindow(60, T - 50_000)); // frees in 10 s: left to the background or a refresh
    expect(later.next(T, { queue: queue() })).toEqual({ kind: 'answer', why: 'no room now' });
  });

  it('begins no request after its last moment', () => {
    const t = turn(['a.com']);
    expect(t.next(ANSWER_BY - REQUEST_MS, { queue: queue() })).toEqual({ kind: 'answer', why: 'time' });
  });

  it("takes what other cells' sends ended in since it began, and an error for every cell, not older ones", () => {
    const skip: Outcome = { kind: 'skip', reason: 'invalid_domain', retryable: false, key: 'bad' };
    const t = turn(['bad', 'old.com']);
    const q = queue({
      ended: { bad: { outcome: skip, at: T + 5 }, 'old.com': { outcome: skip, at: T - 5 } },
    });
    t.next(T + 10, { queue: q });
    expect(t.ended.get('bad')).toEqual(skip);
    expect(t.missing()).toEqual(['old.com']);
    const fatal = queue({ fatal: { fatal: { code: 'bad_key' } as never, at: T + 1 } });
    expect(t.next(T + 20, { queue: fatal })).toEqual({ kind: 'answer', why: 'fatal' });
  });

  it('after a round: cancelled domains may go again, ended ones are reported to the queue', () => {
    const t = turn(['a.com', 'b.com', 'c.com']);
    t.register(queue(), T);
    t.asked(true, entryWindow());
    const skip: Outcome = { kind: 'skip', reason: 'invalid_domain', retryable: false, key: 'b.com' };
    const cancelled: Outcome = { kind: 'error', code: 'cancelled', retryable: true, key: 'c.com' } as Outcome;
    const sent = t.sent(
      ['a.com', 'b.com', 'c.com'],
      report(['a.com'], {
        outcomes: [{ kind: 'record', key: 'a.com', record: record('a.com') }, skip, cancelled] as Outcome[],
      }),
    );
    expect(sent.done).toEqual(['a.com', 'b.com']);
    expect(sent.ended).toEqual([['b.com', skip]]);
    expect(t.missing()).toEqual(['c.com']);
    expect(t.candidates(queue(), [])).toEqual(['c.com']);
  });

  it('says the budget on the cells it could not send when the credits held were none', () => {
    const t = turn(['a.com']);
    t.noCredits();
    expect(t.role).toBe('answered');
    const outcomes = t.outcomes(['a.com'], BASE, T);
    expect(outcomes[0]).toMatchObject({ kind: 'skip', reason: 'credit_budget' });
  });
});

describe("the formulas' queue, one pure transition at a time", () => {
  const frozen = (q: FormulaQueue): FormulaQueue => JSON.parse(JSON.stringify(q)) as FormulaQueue;

  it('register: wanted from the first ask on, the turn taken only when nobody else has it', () => {
    const q = queue({ wanted: { 'a.com': T - 5 } });
    const before = frozen(q);
    const first = registerAsk(q, { id: 'me', missing: ['a.com', 'b.com'], until: T + 30_000 }, T);
    expect(first.mine).toBe(true);
    expect(first.queue.wanted).toEqual({ 'a.com': T - 5, 'b.com': T });
    expect(first.queue.sender).toEqual({ id: 'me', until: T + 30_000, since: T });
    expect(q).toEqual(before); // the queue read is never changed
    const other = registerAsk(first.queue, { id: 'other', missing: ['c.com'], until: T + 40_000 }, T + 1);
    expect(other.mine).toBe(false);
    expect(other.queue.sender?.id).toBe('me');
    expect(other.queue.wanted['c.com']).toBe(T + 1);
    // Once the turn has run out, the next ask takes it.
    expect(registerAsk(first.queue, { id: 'other', missing: [], until: T + 70_000 }, T + 30_000).mine).toBe(
      true,
    );
  });

  it('start a round: its batch is in flight; apply its answer: done domains leave, ended ones are shown', () => {
    const q = startRound(
      queue({ wanted: { 'a.com': T, 'b.com': T, 'c.com': T } }),
      ['a.com', 'b.com'],
      T + 400,
    );
    expect(q.sending).toEqual(['a.com', 'b.com']);
    expect(q.answerBy).toBe(T + 400);
    const skip: Outcome = { kind: 'skip', reason: 'invalid_domain', retryable: false, key: 'b.com' };
    const before = frozen(q);
    const after = applyAnswer(
      q,
      {
        done: ['a.com', 'b.com'],
        ended: [['b.com', skip]],
        window: entryWindow(2),
        fatal: { code: 'x' } as never,
      },
      T + 9,
    );
    expect(q).toEqual(before);
    expect(after.sending).toEqual([]);
    expect(after.wanted).toEqual({ 'c.com': T });
    expect(after.ended).toEqual({ 'b.com': { outcome: skip, at: T + 9 } });
    expect(after.window).toEqual(entryWindow(2));
    expect(after.fatal).toEqual({ fatal: { code: 'x' }, at: T + 9 });
    // A round that sent nothing (no credits) only ends what was in flight.
    expect(applyAnswer(q, undefined, T)).toEqual({ ...before, sending: [], answerBy: undefined });
  });

  it("end a turn: the sender's turn goes only if it is still the sender's, and nothing stays in flight", () => {
    const q = queue({ sender: { id: 'me', until: T + 1 }, sending: ['a.com'] });
    expect(endTurn(q, 'me')).toEqual(queue({ sending: [] }));
    expect(endTurn(q, 'other')).toEqual(queue({ sender: { id: 'me', until: T + 1 }, sending: [] }));
  });

  it('mark a background step: what it may send until when, and the mark gone when it ends', () => {
    const marked = markStep(queue(), ['a.com', 'b.com'], T + 300_000);
    expect(marked.step).toEqual({ keys: ['a.com', 'b.com'], until: T + 300_000 });
    expect(markStep(marked, [], 0).step).toBeUndefined();
    // A sender leaves what the step has in flight out of its candidates.
    const t = turn(['a.com', 'c.com']);
    t.asked(true, entryWindow());
    expect(t.candidates(marked, [])).toEqual(['c.com']);
  });
});
