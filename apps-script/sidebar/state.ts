// The sidebar page's one state: what the server last answered, what the page is doing, and when each server call
// is wanted next; with the pure transitions for the answers that need more than a copy (a job, background figures).
import type { BackgroundInfo, CreditInfo, JobState, SelectionInfo, Settings } from './contract';

export interface Message {
  text: string;
  kind: 'ok' | 'error' | 'info';
}

/** What the failure notice's Retry does again. */
export type Retry = 'resume' | 'discard' | 'retrySkipped' | 'loadJob';

/** When each timed server call is wanted next (ms since epoch; absent: not wanted): the scheduler's table. */
export interface Wanted {
  /** The job loop's next continueJob (or cancelJob) call. */
  step?: number;
  /** The open sidebar's next driveBackground call, at the time the server's last figures ask for. */
  drive?: number;
}

export interface PageState {
  /** Server calls in flight other than the job loop's and the drive's: the buttons wait for them. */
  busy: number;
  key: {
    settings: Settings | null;
    /** The settings came from a save: the typed key is cleared and the form folds away once a key is kept. */
    saved: boolean;
    /** Reading the settings failed. */
    error?: string;
    message: Message;
  };
  selection: { info: SelectionInfo | null; error?: string };
  credits: CreditInfo | null;
  /** The texts of the last estimates: of the chosen check, of checking the formulas again. */
  estimates: { check: string; formulas: string };
  job: JobState | null;
  /** A stored job that is running with no loop here driving it: offered to resume. */
  resume?: JobState;
  /** The continueJob() loop: active, asked to stop by Cancel, and how many steps in a row moved nothing. */
  loop: { driving: boolean; stopRequested: boolean; idleSteps: number };
  background: {
    info: BackgroundInfo | null;
    /** `checkStops` when the shown figures were asked for (see leftText in panels/background.ts). */
    askedAt: number;
    /** Reading the figures when the page opened failed. */
    error?: string;
  };
  /** How many times a check shown here stopped running (finished, cancelled or stopped by an error). */
  checkStops: number;
  failure: { text: string; retry?: Retry } | null;
  wanted: Wanted;
}

export const initialState: PageState = {
  busy: 0,
  key: { settings: null, saved: false, message: { text: '', kind: 'info' } },
  selection: { info: null },
  credits: null,
  estimates: { check: '', formulas: '' },
  job: null,
  loop: { driving: false, stopRequested: false, idleSteps: 0 },
  background: { info: null, askedAt: 0 },
  checkStops: 0,
  failure: null,
  wanted: {},
};

export function isRunning(job: JobState | null | undefined): boolean {
  return job?.status === 'running';
}

/**
 * A job answer. Answers of calls side by side (a step, the background drive, a poll) may arrive out of order: a
 * running job's older state (fewer rows done, or still running once it ended) never replaces a newer one. A check
 * that stops counts in `checkStops`, which retires the background figures asked for while it ran.
 */
export function jobArrived(state: PageState, next: JobState | null): PageState {
  const { job } = state;
  const older =
    next?.status === 'running' && job?.id === next.id && (job.status !== 'running' || next.done < job.done);
  if (older) return state;
  const stopped = isRunning(job) && !isRunning(next);
  return {
    ...state,
    job: next,
    resume: isRunning(next) ? state.resume : undefined,
    checkStops: state.checkStops + (stopped ? 1 : 0),
  };
}

/**
 * Background figures, asked for when `checkStops` was `askedAt`. An answer asked for before the figures shown
 * (calls side by side) is older than them and dropped. The figures say when the open sidebar should drive the
 * background next: at the server's `driveAt`, at once while rows are left, else not at all.
 */
export function backgroundArrived(
  state: PageState,
  info: BackgroundInfo,
  askedAt: number,
  now: number,
): PageState {
  if (askedAt < state.background.askedAt) return state;
  const drive = info.driveAt ?? (info.rowsLeft > 0 ? now : undefined);
  return { ...state, background: { ...state.background, info, askedAt }, wanted: { ...state.wanted, drive } };
}
