// The sidebar page's state and its one timer, without a browser: each timed server call happens at the earliest
// time the state's `wanted` table holds, and answers arriving out of order never show older figures.
import type { BackgroundInfo, JobState } from '../../apps-script/sidebar/contract';
import { startScheduler } from '../../apps-script/sidebar/scheduler';
import { backgroundArrived, initialState, jobArrived, type PageState } from '../../apps-script/sidebar/state';
import { createStore } from '../../apps-script/sidebar/store';

function job(done: number, status: JobState['status'] = 'running', id = 'j1'): JobState {
  const counts = { records: done, skipped: 0, errors: 0, requests: 0, billed: 0, cached: 0, retryable: 0 };
  return { id, sheetName: 'Sheet1', a1: 'A2:A11', total: 10, done, status, counts, skippedByReason: {} };
}

function background(patch: Partial<BackgroundInfo> = {}): BackgroundInfo {
  return {
    on: true,
    mode: 'bound',
    cadence: 'minute',
    rowsLeft: 0,
    creditsUsed: 0,
    steps: 0,
    runtimeMs: 0,
    savedCredits: 0,
    retentionDays: 30,
    ...patch,
  };
}

describe('the sidebar page’s scheduler', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('runs each task at the time the state wants it, the earliest first, and once', () => {
    const store = createStore(initialState);
    const ran: string[] = [];
    startScheduler(store, {
      step: () => ran.push(`step@${Date.now()}`),
      drive: () => ran.push(`drive@${Date.now()}`),
    });
    store.update((s) => ({ ...s, wanted: { drive: 1_005_000, step: 1_002_000 } }));
    jest.advanceTimersByTime(10_000);
    expect(ran).toEqual(['step@1002000', 'drive@1005000']);
    expect(store.state.wanted).toEqual({});
  });

  it('moves a call when a newer answer wants it at another time, and drops it when none is wanted', () => {
    const store = createStore(initialState);
    const ran: number[] = [];
    startScheduler(store, { step: () => undefined, drive: () => ran.push(Date.now()) });
    store.update((s) => backgroundArrived(s, background({ driveAt: 1_030_000 }), 0, Date.now()));
    jest.advanceTimersByTime(10_000);
    store.update((s) => backgroundArrived(s, background({ driveAt: 1_012_000 }), 0, Date.now()));
    jest.advanceTimersByTime(10_000);
    store.update((s) => backgroundArrived(s, background({ driveAt: 1_040_000 }), 0, Date.now()));
    store.update((s) => backgroundArrived(s, background(), 0, Date.now()));
    jest.advanceTimersByTime(60_000);
    expect(ran).toEqual([1_012_000]);
  });

  it('drives the background at once while rows are left and the server names no time', () => {
    const next = backgroundArrived(initialState, background({ rowsLeft: 3 }), 0, 1_000_000);
    expect(next.wanted).toEqual({ drive: 1_000_000 });
  });
});

describe('the sidebar page’s state', () => {
  it('never replaces a running job by an older answer, and counts a check that stops', () => {
    const running: PageState = jobArrived(initialState, job(4));
    expect(jobArrived(running, job(2))).toBe(running);
    const finished = jobArrived(running, job(10, 'done'));
    expect(finished.checkStops).toBe(1);
    expect(jobArrived(finished, job(9))).toBe(finished);
    expect(jobArrived(finished, job(0, 'running', 'j2')).job?.id).toBe('j2');
  });

  it('drops background figures asked for before the ones shown', () => {
    const stopped = { ...initialState, checkStops: 1 };
    const fresh = backgroundArrived(stopped, background({ rowsLeft: 0 }), 1, 0);
    expect(backgroundArrived(fresh, background({ rowsLeft: 30 }), 0, 0)).toBe(fresh);
  });
});
