// The job loop: a check is stepped by one continueJob() call at a time, each one short server execution; the next
// step is wanted at once, or after a pause when a step moved nothing. Cancel stops it after the step in flight.
import { errorMessage, jobCalls } from './server';
import { isRunning, type Retry } from './state';
import type { JobState } from './contract';
import type { Store } from './store';

/** After a step that moved nothing (a rate limit, another step holding the job), wait before the next one. */
const IDLE_PAUSE_MS = [1_000, 2_000, 4_000, 8_000];

/** What the loop needs of the other actions. */
export interface LoopKit {
  store: Store;
  setJob(next: JobState | null): void;
  refreshBackground(): void;
  fail(text: string, retry?: Retry): void;
  hideFailure(): void;
  whileBusy<T>(work: () => Promise<T>): Promise<T>;
}

export function createJobLoop({ store, setJob, refreshBackground, fail, hideFailure, whileBusy }: LoopKit) {
  /** Starts the loop that steps the job until it is no longer running (its first step is wanted at once). */
  function drive(): void {
    if (store.state.loop.driving) return;
    store.update((state) => ({
      ...state,
      resume: undefined,
      failure: null,
      loop: { driving: true, stopRequested: false, idleSteps: 0 },
      wanted: { ...state.wanted, step: Date.now() },
    }));
  }

  function endLoop(): void {
    store.update((state) => ({
      ...state,
      loop: { driving: false, stopRequested: false, idleSteps: 0 },
      wanted: { ...state.wanted, step: undefined },
    }));
  }

  /** One step (the scheduler runs it when `wanted.step` is due): it wants the next one, or ends the loop. */
  async function step(): Promise<void> {
    const { job, loop } = store.state;
    if (!loop.driving) return;
    if (!job || !isRunning(job)) return endLoop();
    try {
      if (loop.stopRequested) {
        setJob(await jobCalls.cancel());
        return endLoop();
      }
      setJob(await jobCalls.continue());
      if (loop.idleSteps > 0) refreshBackground();
      const now = store.state;
      const idleSteps = now.job && now.job.done > job.done ? 0 : loop.idleSteps + 1;
      if (!isRunning(now.job)) return endLoop();
      const pause =
        idleSteps > 0 && !now.loop.stopRequested
          ? IDLE_PAUSE_MS[Math.min(idleSteps, IDLE_PAUSE_MS.length) - 1]
          : 0;
      store.update((state) => ({
        ...state,
        loop: { ...state.loop, idleSteps },
        wanted: { ...state.wanted, step: Date.now() + pause },
      }));
    } catch (error) {
      if (store.state.loop.stopRequested) fail(`Could not cancel: ${errorMessage(error)}`, 'discard');
      else fail(`The check paused: ${errorMessage(error)}`, 'resume');
      endLoop();
    }
  }

  /** Cancels the stored job at once (no loop running, or the loop's cancel failed). */
  async function discard(): Promise<void> {
    hideFailure();
    try {
      setJob(await whileBusy(() => jobCalls.cancel()));
    } catch (error) {
      fail(`Could not cancel: ${errorMessage(error)}`, 'discard');
    }
  }

  /**
   * Cancel asks the server at once (a running step polls the stored job and stops early); should that call fail
   * or the server not stop the step, the loop cancels after the step in flight returns.
   */
  function cancel(): void {
    if (!store.state.loop.driving) return void discard();
    store.update((state) => ({ ...state, loop: { ...state.loop, stopRequested: true } }));
    // The answer is not shown: the step in flight returns the cancelled job. A failure is covered by the loop.
    jobCalls.cancel().catch(() => undefined);
  }

  async function retrySkipped(): Promise<void> {
    hideFailure();
    try {
      setJob(await whileBusy(() => jobCalls.retrySkipped()));
    } catch (error) {
      fail(`Could not retry: ${errorMessage(error)}`, 'retrySkipped');
      return;
    }
    drive();
  }

  return { drive, step, cancel, discard, retrySkipped };
}
