// The shared minute as pure transitions (sharing/storeMinute.ts): which sends the store is still to be told of, when a
// reserved request goes or how long it waits, what a flush writes and frees, and when the claims' heartbeat is due.
import type { WindowSnapshot } from '../../shared/index';
import {
  emptyMinute,
  longerForSend,
  noteSends,
  planToKeep,
  renewalDue,
  requestAnswered,
  requestBack,
  requestReturned,
  requestTaken,
  reservation,
  reserveStep,
  sendsNotIn,
  toFlush,
  type Heartbeat,
  type Send,
} from '../../n8n-node/nodes/DapaChecker/sharing/storeMinute';

const NOW = 1_000_000;
const window = (sends: Send[], urlsPerMinute?: number): WindowSnapshot => ({
  v: 1,
  at: NOW,
  sends,
  limits: urlsPerMinute === undefined ? {} : { urlsPerMinute: { value: urlsPerMinute, exact: true, at: 0 } },
});

describe('the run’s sends the store is to be told of', () => {
  test('equal sends are distinct: each counted as often as it appears', () => {
    expect(
      sendsNotIn(
        [
          [1, 5],
          [1, 5],
          [2, 3],
        ],
        [[1, 5]],
      ),
    ).toEqual([
      [1, 5],
      [2, 3],
    ]);
  });

  test('with the store up, only sends not seen before join, once', () => {
    const minute = emptyMinute();
    minute.seen = [[NOW - 10, 4]];
    noteSends(
      minute,
      window([
        [NOW - 10, 4],
        [NOW - 5, 6],
      ]),
      window([[NOW - 20, 9]]),
      true,
    );
    expect(minute.unsent).toEqual([[NOW - 5, 6]]);
    expect(minute.seen).toEqual([
      [NOW - 20, 9],
      [NOW - 10, 4],
      [NOW - 5, 6],
    ]);
    noteSends(
      minute,
      window([
        [NOW - 10, 4],
        [NOW - 5, 6],
      ]),
      undefined,
      true,
    );
    expect(minute.unsent).toEqual([[NOW - 5, 6]]);
  });

  test('with the store down, nothing is kept to tell it, but the sends are seen', () => {
    const minute = emptyMinute();
    noteSends(minute, window([[NOW - 5, 6]]), undefined, false);
    expect(minute.unsent).toEqual([]);
    expect(minute.seen).toEqual([[NOW - 5, 6]]);
  });
});

describe('a reserved request', () => {
  test('each reservation has its own entry: owner, number, URLs, time', () => {
    const minute = emptyMinute();
    expect(reservation(minute, 'o', 5, 7)).toBe('o:1:5:7');
    expect(reservation(minute, 'o', 5, 7)).toBe('o:2:5:7');
  });

  test('goes at once into an empty minute with nothing reserved before it', () => {
    expect(reserveStep(undefined, NOW, 10, [], NOW + 60_000, 10_000)).toEqual({ go: true });
  });

  test('waits for the oldest send to leave a full minute (a minute after it, exclusive), in slices of 250 ms or more', () => {
    const full = window([[NOW - 50_000, 10]], 10);
    expect(reserveStep(full, NOW, 5, [], NOW + 60_000, 30_000)).toEqual({ go: false, waitMs: 10_001 });
    expect(reserveStep(full, NOW, 5, [], NOW + 60_000, 4_000)).toEqual({ go: false, waitMs: 4_000 });
    expect(reserveStep(full, NOW + 9_900, 5, [], NOW + 60_000, 30_000)).toEqual({ go: false, waitMs: 250 });
    expect(reserveStep(full, NOW + 10_001, 5, [], NOW + 60_000, 30_000)).toEqual({ go: true });
  });

  test('counts the URLs reserved before it against the minute', () => {
    const room = window([], 10);
    expect(reserveStep(room, NOW, 5, [5], NOW + 60_000, 30_000)).toEqual({ go: true });
    expect(reserveStep(room, NOW, 5, [8], NOW + 60_000, 30_000).go).toBe(false);
  });

  test('while the URL limit is unknown, waits for the requests reserved before it (one at a time)', () => {
    expect(reserveStep(undefined, NOW, 5, [3], NOW + 60_000, 30_000)).toEqual({ go: false, waitMs: 250 });
  });

  test('goes when it gives up waiting, and never waits past that', () => {
    const full = window([[NOW - 50_000, 10]], 10);
    expect(reserveStep(full, NOW, 5, [], NOW + 3_000, 30_000)).toEqual({ go: false, waitMs: 3_000 });
    expect(reserveStep(full, NOW + 3_000, 5, [], NOW + 3_000, 30_000)).toEqual({ go: true });
  });
});

describe('what a flush writes', () => {
  test('the sends once, and answered reservations only once every answer is taken in', () => {
    const minute = emptyMinute();
    minute.unsent.push([NOW, 3]);
    requestAnswered(minute);
    requestAnswered(minute);
    requestBack(minute, 'o:1:3:0');
    requestTaken(minute);
    expect(toFlush(minute)).toEqual({ sends: [[NOW, 3]], freed: [] });
    requestBack(minute, 'o:2:3:0');
    requestTaken(minute);
    expect(toFlush(minute)).toEqual({ sends: [], freed: ['o:1:3:0', 'o:2:3:0'] });
    expect(toFlush(minute)).toEqual({ sends: [], freed: [] });
  });

  test('taking in more than was answered never holds reservations back', () => {
    const minute = emptyMinute();
    requestTaken(minute);
    requestBack(minute, 'e');
    expect(toFlush(minute).freed).toEqual(['e']);
  });

  test('a plan lesson is kept once, and not when the store holds it already', () => {
    const minute = emptyMinute();
    const taught = window([], 10);
    expect(planToKeep(minute, taught, undefined)).toBe(taught);
    expect(planToKeep(minute, taught, undefined)).toBeUndefined();
    const other = emptyMinute();
    expect(planToKeep(other, taught, window([], 10))).toBeUndefined();
    expect(planToKeep(other, window([], 20), window([], 10))).toBeUndefined();
    expect(planToKeep(emptyMinute(), undefined, undefined)).toBeUndefined();
  });

  test('a newer lesson than the store’s is kept', () => {
    const minute = emptyMinute();
    const stored = window([]);
    const taught: WindowSnapshot = {
      ...window([]),
      limits: { urlsPerMinute: { value: 10, exact: false, at: 5 } },
    };
    expect(planToKeep(minute, taught, stored)).toBe(taught);
  });
});

describe('the claims’ heartbeat', () => {
  test('renewed when due, at the usual lease', () => {
    const beat: Heartbeat = { renewedAt: 0, sendingLease: true };
    expect(renewalDue(beat, 999, 1000)).toBe(false);
    expect(renewalDue(beat, 1000, 1000)).toBe(true);
    expect(beat).toEqual({ renewedAt: 1000, sendingLease: false });
  });

  test('made longer once for a request out, only when claims are held', () => {
    const beat: Heartbeat = { renewedAt: 0, sendingLease: false };
    expect(longerForSend(beat, 5, false)).toBe(false);
    expect(longerForSend(beat, 5, true)).toBe(true);
    expect(longerForSend(beat, 6, true)).toBe(false);
    expect(beat).toEqual({ renewedAt: 5, sendingLease: true });
  });

  test('a request back makes the next renewal due at once', () => {
    const beat: Heartbeat = { renewedAt: 5, sendingLease: true };
    requestReturned(beat);
    expect(renewalDue(beat, 6, 1000)).toBe(true);
  });
});
