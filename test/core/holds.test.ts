// The window's holds, one per cause: a later hold never hides why an earlier one was set, the latest says when the
// next request may go, the server's Retry-After still wins over the window's guesses, and snapshots stored before
// the table (a single `hold`) are still read by every shell.
import { CheckRun, mergeWindows, restoreWindow, roomIn, type WindowSnapshot } from '../../shared';
import { PlanWindow } from '../../shared/window';

const T = 1_000_000;
/** A minute spent up to the window's guess of 60 URLs a minute: the guess frees at T + 50 001. */
const full = (): WindowSnapshot => ({
  v: 1,
  at: T,
  sends: [[T - 10_000, 60]],
  limits: {
    maxUrlsPerRequest: { value: 5, exact: true, at: T },
    urlsPerMinute: { value: 60, exact: false, at: T },
  },
  pressure: { urls: T },
});

describe('the holds, one per cause', () => {
  test('a later hold of another cause keeps the earlier one and its cause; the latest decides when', () => {
    const w = new PlanWindow();
    w.holdUntil(T + 5000, 'failure');
    w.holdUntil(T + 9000, 'rate_limit');
    w.holdUntil(T + 4000, 'failure'); // an earlier hold of the same cause changes nothing
    const snapshot = w.snapshot(T);
    expect(snapshot.holds).toEqual({ failure: T + 5000, rate_limit: T + 9000 });
    expect(snapshot.hold).toEqual({ until: T + 9000, cause: 'rate_limit' });
    expect(w.heldFor('failure', T + 5000)).toBe(true);
    expect(w.heldFor('failure', T + 5001)).toBe(false);
    expect(w.plan(T, 5).at).toBe(T + 9000);
    // Each is dropped once it has passed.
    expect(w.snapshot(T + 5000).holds).toEqual({ rate_limit: T + 9000 });
    expect(w.snapshot(T + 9000)).not.toHaveProperty('holds');
  });

  test("the server's Retry-After wins over the guesses while it is the latest; a later backoff of our own does not", () => {
    const w = new PlanWindow(full());
    w.holdUntil(T + 1000, 'failure');
    w.holdUntil(T + 2000, 'retry_after');
    expect(w.plan(T, 5)).toEqual({ at: T + 2000, urls: 5, probe: false });
    w.holdUntil(T + 3000, 'rate_limit');
    expect(w.plan(T, 5).at).toBe(T + 50_001);
    // On a tie, the server's word.
    const tie = new PlanWindow(full());
    tie.holdUntil(T + 2000, 'rate_limit');
    tie.holdUntil(T + 2000, 'retry_after');
    expect(tie.plan(T, 5)).toEqual({ at: T + 2000, urls: 5, probe: false });
    expect(tie.snapshot(T).hold).toEqual({ until: T + 2000, cause: 'retry_after' });
  });

  test('a request that goes ends the holds', () => {
    const w = new PlanWindow();
    w.holdUntil(T + 2000, 'retry_after');
    w.holdUntil(T + 1000, 'failure');
    w.sent(T + 2000);
    expect(w.plan(T + 2000, 5).at).toBe(T + 2000);
    expect(w.snapshot(T + 1500)).not.toHaveProperty('hold');
  });

  test('with waiting off, a run still waits out a backoff after failures, not a rate-limit hold', () => {
    const run = (holds: WindowSnapshot['holds']) =>
      new CheckRun(['a.com'], {
        baseUrl: 'http://fake',
        deadline: T + 60_000,
        waitForRateLimits: false,
        window: { v: 1, at: T, sends: [], limits: {}, holds },
      });
    expect(run({ failure: T + 5000, rate_limit: T + 3000 }).next(T)).toEqual({ type: 'wait', ms: 5000 });
    const limited = run({ failure: T + 3000, rate_limit: T + 5000 });
    expect(limited.next(T)).toEqual({ type: 'done' });
    expect(limited.report().outcomes[0]).toMatchObject({ kind: 'skip', reason: 'rate_limit_reached' });
  });
});

describe('snapshots stored before the table (a single hold) are still read', () => {
  /** A snapshot as shells stored it before the holds' table: one `hold`, no `holds`. */
  const older = (until: number, cause: string) => JSON.stringify({ ...full(), hold: { until, cause } });

  test('restored from JSON text: its hold is kept under its cause and honoured by the next run', () => {
    const restored = restoreWindow(older(T + 2000, 'retry_after'), T);
    expect(restored?.holds).toEqual({ retry_after: T + 2000 });
    expect(restored?.hold).toEqual({ until: T + 2000, cause: 'retry_after' });
    // The server's word still wins over the guess that frees at T + 50 001.
    expect(new PlanWindow(restored).plan(T, 5)).toEqual({ at: T + 2000, urls: 5, probe: false });
    expect(roomIn(restored, T)).toMatchObject({ urls: 0, freeAt: T + 2000 });
    const backoff = restoreWindow(older(T + 2000, 'failure'), T);
    expect(backoff?.holds).toEqual({ failure: T + 2000 });
    expect(new PlanWindow(backoff).plan(T, 5).at).toBe(T + 50_001);
  });

  test('a passed or unreadable hold is none; an unknown cause is honoured as a backoff of our own', () => {
    expect(restoreWindow(older(T, 'failure'), T)).not.toHaveProperty('holds');
    expect(restoreWindow(older(T + 1000, 'later'), T)?.holds).toEqual({ rate_limit: T + 1000 });
    const unreadable = { ...full(), hold: { until: 'soon', cause: 'failure' } };
    expect(restoreWindow(unreadable, T)).not.toHaveProperty('hold');
    const badTable = { ...full(), holds: { failure: 'soon', retry_after: T + 1000 } };
    expect(restoreWindow(badTable, T)?.holds).toEqual({ retry_after: T + 1000 });
  });

  test('merged with a snapshot that has the table: each cause keeps its latest hold', () => {
    const stored = JSON.parse(older(T + 9000, 'failure')) as WindowSnapshot;
    const newer: WindowSnapshot = { ...full(), holds: { failure: T + 4000, retry_after: T + 6000 } };
    const merged = mergeWindows(stored, newer);
    expect(merged?.holds).toEqual({ failure: T + 9000, retry_after: T + 6000 });
    expect(merged?.hold).toEqual({ until: T + 9000, cause: 'failure' });
  });
});
