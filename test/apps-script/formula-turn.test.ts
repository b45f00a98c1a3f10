// One =DAPA execution's turn as a pure state machine (apps-script/src/formula/turn.ts): told the queue, the records
// known and the time, it answers ask, wait, send or answer. These are its transitions, without Apps Script.
import type { DomainRecord, Outcome, Report, WindowSnapshot } from '../../shared';
import {
  applyAnswer,
  deadlinesOf,
  endTurn,
  FormulaTurn,
  markStep,
  registerAsk,
  REQUEST_MS,
  SEQUENTIAL_REQUESTS,
  startRound,
} from '../../apps-script/src/formula/turn';
import type { FormulaQueue } from '../../apps-script/src/stores/formula-queue';

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
    expect(q.sender).toEqual({ id: 'me', until: ANSWER_BY + 3_000 });
    expect(before).toEqual(queue()); // the queue as read is not changed: the next one is answered
    t.asked(true, entryWindow());
    expect(t.role).toBe('sending');
  });

  it("waits, polling, while another execution's turn sends its domains in time", () => {
    const t = turn(['a.com']);
    const q = queue({ sender: { id: 'other', until: ANSWER_BY }, window: entryWindow() });
    expect(t.next(T, { queue: q })).toEqual({ kind: 'ask' });
    expect(t.register(q, T).mine).toBe(false);
    t.asked(false);
    expect(t.next(T + 10, { queue: q })).toEqual({ kind: 'wait', until: T + 1_010 });
    // The sender's record arrives in the cache: the cell answers.
    expect(t.next(T + 1_010, { queue: q, known: known('a.com') })).toEqual({ kind: 'answer', why: 'all in' });
  });

  it('answers at once, without asking, when the window cannot send its domains before its last request', () => {
    const t = turn(['late.com']);
    // 60 URLs went just now, and 40 more wait before this cell: nothing of it can go within its 23 seconds.
    const wanted = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`w${i}.com`, T - 1_000]));
    const q = queue({ sender: { id: 'other', until: ANSWER_BY }, window: entryWindow(60), wanted });
    expect(t.next(T, { queue: q })).toEqual({ kind: 'answer', why: 'no room in time' });
  });

  it('waits for a domain in flight whatever the window says', () => {
    const t = turn(['late.com']);
    const q = queue({
      sender: { id: 'other', until: ANSWER_BY },
      window: entryWindow(60),
      sending: ['late.com'],
    });
    expect(t.next(T, { queue: q })).toEqual({ kind: 'ask' });
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

  it('waits for the window inside its deadline, and answers when the room comes too late', () => {
    const t = turn(['a.com']);
    t.register(queue(), T);
    t.asked(true, entryWindow(60, T - 50_000)); // the minute frees 10 s from now
    expect(t.next(T, { queue: queue() })).toEqual({ kind: 'wait', until: T + 10_001 });
    const late = turn(['b.com']);
    late.register(queue(), T);
    late.asked(true, entryWindow(60, T)); // frees in 60 s: past the deadline
    expect(late.next(T, { queue: queue() })).toEqual({ kind: 'answer', why: 'no room in time' });
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
    expect(first.queue.sender).toEqual({ id: 'me', until: T + 30_000 });
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
    const q = startRound(queue({ wanted: { 'a.com': T, 'b.com': T, 'c.com': T } }), ['a.com', 'b.com']);
    expect(q.sending).toEqual(['a.com', 'b.com']);
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
    expect(applyAnswer(q, undefined, T)).toEqual({ ...before, sending: [] });
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
