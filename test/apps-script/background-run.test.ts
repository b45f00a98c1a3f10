// The background step as a run with no I/O (apps-script/src/background/step.ts): told the room, the work and the time,
// it answers check, wait or end, and ends in one outcome whose wanted table says when the next step comes and why.
import type { Room } from '../../shared';
import { BackgroundRun, RETRY_FAILURE_MS, type RunStart } from '../../apps-script/src/background/step';
import { earliest } from '../../apps-script/src/stores/background-store';

const T = 1_000_000;
const FREE: Room = {
  urls: 60,
  requests: 60,
  perRequest: 5,
  capacity: 60,
  freeAt: T,
  emptyAt: T,
  probe: false,
};
const FULL: Room = { ...FREE, urls: 0, requests: 0, freeAt: T + 50_000, emptyAt: T + 50_000 };
const BUDGET = 45 * 60_000;

function run(change: Partial<RunStart> = {}): BackgroundRun {
  return new BackgroundRun({
    cadence: 'minute',
    endsAt: T + 240_000,
    lateness: { typicalMs: 30_000, lowMs: 0, highMs: 60_000 },
    pending: [],
    jobRunning: false,
    jobLeft: 0,
    ...change,
  });
}

const keys = (n: number) => Array.from({ length: n }, (_, i) => `d${i}.example.com`);

describe('a background run', () => {
  it('with nothing to do ends at once and wants no step', () => {
    const r = run();
    expect(r.next(T, FREE, BUDGET)).toEqual({ kind: 'end' });
    expect(earliest(r.outcome(T, T + 1e9).wanted)).toBeUndefined();
  });

  it('checks the formulas first (one request first), then the job, and ends when both are done', () => {
    const r = run({ pending: keys(100), jobRunning: true, jobLeft: 300 });
    expect(r.next(T, FREE, BUDGET)).toMatchObject({ kind: 'check', work: 'formulas', n: 5 });
    r.checked(T, { billed: 5, done: keys(5), answered: keys(5), moved: true });
    expect(r.next(T, FREE, BUDGET)).toMatchObject({ kind: 'check', work: 'formulas', n: 60 });
    r.checked(T, { billed: 95, done: keys(100), moved: true });
    expect(r.next(T, FREE, BUDGET)).toMatchObject({ kind: 'check', work: 'job' });
    r.checked(T, { billed: 0, job: { running: false, left: 0 }, moved: true });
    expect(r.next(T, FREE, BUDGET)).toEqual({ kind: 'end' });
    const outcome = r.outcome(T, T + 1e9);
    expect(outcome.billed).toBe(100);
    expect(outcome.answered).toEqual(keys(5));
    expect(earliest(outcome.wanted)).toBeUndefined();
  });

  it('when a check moves nothing, waits for the window here if the step lasts, else wants the window', () => {
    const r = run({ pending: keys(10) });
    r.next(T, FREE, BUDGET);
    r.checked(T, { billed: 0, done: [], moved: false });
    expect(r.next(T, FULL, BUDGET)).toEqual({ kind: 'wait', until: T + 50_000 });

    const late = run({ pending: keys(10), endsAt: T + 10_000 });
    late.next(T, FREE, BUDGET);
    late.checked(T, { billed: 0, done: [], moved: false });
    expect(late.next(T, FULL, BUDGET)).toEqual({ kind: 'end' });
    const next = earliest(late.outcome(T, T + 1e9).wanted);
    expect(next?.cause).toBe('window');
    // Due ahead of the window by the triggers' lateness (the step sleeps the rest if it comes early).
    expect(next?.at).toBeLessThan(T + 50_000);
  });

  it('after a failure that retrying may fix, wants a retry in 5 minutes; after one it cannot, stops and says why', () => {
    const failed = run({ pending: keys(10) });
    failed.next(T, FREE, BUDGET);
    failed.checked(T, { billed: 0, moved: false, fatal: { code: 'server_error', message: 'kept failing' } });
    expect(failed.next(T, FREE, BUDGET)).toEqual({ kind: 'end' });
    const outcome = failed.outcome(T, T + 1e9);
    expect(outcome.failed).toBe(true);
    expect(earliest(outcome.wanted)).toEqual({ at: T + RETRY_FAILURE_MS, cause: 'retry' });

    const stopped = run({ pending: keys(10) });
    stopped.next(T, FREE, BUDGET);
    stopped.checked(T, { billed: 0, moved: false, fatal: { code: 'bad_key', message: 'wrong key' } });
    expect(stopped.outcome(T, T + 1e9)).toMatchObject({ stopped: 'wrong key', wanted: {} });
  });

  it('domains past the budget want the month’s turn; work left with no other reason wants the next step soon', () => {
    const r = run({ pending: keys(10) });
    r.next(T, FREE, BUDGET);
    r.checked(T, { billed: 4, done: keys(4), past: keys(10).slice(4), moved: true });
    expect(r.next(T, FREE, BUDGET)).toEqual({ kind: 'end' });
    expect(earliest(r.outcome(T, T + 7e8).wanted)).toEqual({ at: T + 7e8, cause: 'month' });

    const left = run({ jobRunning: true, jobLeft: 1000, endsAt: T });
    expect(left.next(T + 1, FULL, BUDGET)).toEqual({ kind: 'end' });
    expect(earliest(left.outcome(T + 1, T + 1e9).wanted)?.cause).toBe('window');
  });

  it('without a key ends at once and says so', () => {
    const r = run({ pending: keys(3), stopped: 'No DAPA API key is set.' });
    expect(r.next(T, FREE, BUDGET)).toEqual({ kind: 'end' });
    expect(r.outcome(T, T).stopped).toBe('No DAPA API key is set.');
  });
});

describe('the wanted table', () => {
  it('answers its earliest entry and why', () => {
    expect(earliest({ schedule: 50, window: 20, month: 90 })).toEqual({ at: 20, cause: 'window' });
    expect(earliest({ work: undefined })).toBeUndefined();
  });
});
