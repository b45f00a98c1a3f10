// The shared store's claims as pure transitions (sharing/storeClaims.ts): what the run is told to do when the store
// answers a batch, when a domain is handed over in the process, and when the store goes down (refused, or past its
// budget): no domain another worker may be sending is ever sent here.
import type { DomainRecord } from '../../shared/index';
import type { ClaimReply } from '../../n8n-node/nodes/DapaChecker/sharing/redisShare';
import {
  answered,
  claimed,
  emptyClaims,
  handBack,
  handedOver,
  nextPoll,
  polled,
  unsettled,
  wentDown,
} from '../../n8n-node/nodes/DapaChecker/sharing/storeClaims';

const answer = (domain: string) => ({ record: { domain } as unknown as DomainRecord, checkedAt: 1 });
const up = { up: true, timedOut: false };
const refused = { up: false, timedOut: false };
const stalled = { up: false, timedOut: true };

describe('claiming at the start', () => {
  test('mine are held, busy set aside, answered taken as cached', () => {
    const book = emptyClaims();
    const out = claimed(
      book,
      new Map<string, ClaimReply>([
        ['a.com', 'mine'],
        ['b.com', 'busy'],
        ['c.com', answer('c.com')],
      ]),
    );
    expect([...book.mine]).toEqual(['a.com']);
    expect([...book.busy]).toEqual(['b.com']);
    expect(out.aside).toEqual(['b.com']);
    expect([...out.taken.keys()]).toEqual(['c.com']);
    expect(out.resolved).toEqual([]);
    expect(out.abandoned).toEqual([]);
  });
});

describe('asking again about busy domains', () => {
  test('answered ones resolve with the answer, free ones become mine and are sent, busy ones wait', () => {
    const book = emptyClaims();
    claimed(
      book,
      new Map<string, ClaimReply>([
        ['a.com', 'busy'],
        ['b.com', 'busy'],
        ['c.com', 'busy'],
      ]),
    );
    const out = polled(
      book,
      new Map<string, ClaimReply>([
        ['a.com', answer('a.com')],
        ['b.com', 'mine'],
        ['c.com', 'busy'],
      ]),
    );
    expect(out.resolved).toEqual([
      ['a.com', answer('a.com')],
      ['b.com', undefined],
    ]);
    expect([...book.busy]).toEqual(['c.com']);
    expect([...book.mine]).toEqual(['b.com']);
  });

  test('a reply for a domain no longer waited on changes nothing', () => {
    const book = emptyClaims();
    expect(polled(book, new Map<string, ClaimReply>([['x.com', 'mine']])).resolved).toEqual([]);
    expect(book.mine.size).toBe(0);
  });

  test('polls slow down while nothing changes and come back at once when something does', () => {
    expect([1000, 2000, 4000, 8000].map((ms) => nextPoll(ms, false, 1000, 8000))).toEqual([
      2000, 4000, 8000, 8000,
    ]);
    expect(nextPoll(8000, true, 1000, 8000)).toBe(1000);
  });
});

describe('a domain handed over in the process', () => {
  test('with its answer: resolved', () => {
    expect(handedOver(emptyClaims(), 'a.com', answer('a.com'), false, up).resolved).toEqual([
      ['a.com', answer('a.com')],
    ]);
  });

  test('with its claim in the store: this execution holds it and sends it', () => {
    const book = emptyClaims();
    expect(handedOver(book, 'a.com', undefined, true, up).resolved).toEqual([['a.com', undefined]]);
    expect(book.mine.has('a.com')).toBe(true);
  });

  test('without the claim (another worker holds it): waited for in the store', () => {
    const book = emptyClaims();
    const out = handedOver(book, 'a.com', undefined, false, up);
    expect(out.resolved).toEqual([]);
    expect(book.busy.has('a.com')).toBe(true);
  });

  test('without the claim, the store down past its budget: abandoned, never sent here', () => {
    expect(handedOver(emptyClaims(), 'a.com', undefined, false, stalled).abandoned).toEqual(['a.com']);
  });

  test('the store refused (not in use): sent by this process', () => {
    expect(handedOver(emptyClaims(), 'a.com', undefined, false, refused).resolved).toEqual([
      ['a.com', undefined],
    ]);
  });
});

describe('the store going down', () => {
  test('domains others held are abandoned; its own are kept and sent', () => {
    const book = emptyClaims();
    claimed(
      book,
      new Map<string, ClaimReply>([
        ['a.com', 'mine'],
        ['b.com', 'busy'],
      ]),
    );
    expect(wentDown(book).abandoned).toEqual(['b.com']);
    expect([...book.mine]).toEqual(['a.com']);
    expect(book.busy.size).toBe(0);
  });

  test('past its budget before the store said who holds them: the unknown ones are abandoned too', () => {
    const book = emptyClaims();
    claimed(book, new Map<string, ClaimReply>([['a.com', 'mine']]));
    const known = (k: string) => k === 'c.com';
    expect(unsettled(book, stalled, ['a.com', 'b.com', 'c.com'], known).abandoned).toEqual(['b.com']);
    // Refused (nothing landed, the store is not in use): nothing more to abandon.
    expect(unsettled(book, refused, ['a.com', 'b.com', 'c.com'], known).abandoned).toEqual([]);
    expect(unsettled(book, up, ['b.com'], known).abandoned).toEqual([]);
  });

  test('its own answers free its claims', () => {
    const book = emptyClaims();
    claimed(
      book,
      new Map<string, ClaimReply>([
        ['a.com', 'mine'],
        ['b.com', 'mine'],
      ]),
    );
    answered(book, ['a.com']);
    expect([...book.mine]).toEqual(['b.com']);
  });
});

describe('the end', () => {
  test('unanswered domains held in the store are freed, or passed to the execution each was handed to', () => {
    const book = emptyClaims();
    claimed(
      book,
      new Map<string, ClaimReply>([
        ['a.com', 'mine'],
        ['b.com', 'mine'],
        ['c.com', 'busy'],
      ]),
    );
    const handed = new Map([
      ['b.com', 'other'],
      ['d.com', 'other'],
    ]);
    const back = handBack(book, ['a.com', 'b.com', 'c.com', 'd.com'], handed);
    // d.com was never held in the store (only in this process), c.com is another worker's: neither is the store's to free.
    expect(back.free).toEqual(['a.com']);
    expect([...back.passed]).toEqual([['b.com', 'other']]);
  });
});
