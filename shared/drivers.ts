// The two driver loops: the only place where a check meets I/O. The synchronous one is for Apps Script
// (UrlFetchApp + Utilities.sleep), the asynchronous one for n8n and Node (a Promise-returning send + sleep).
import type { Report } from './outcome';
import type { CheckRun, HttpRequest, NetworkFailure } from './run';
import type { HttpAnswer } from './wire';

interface Io {
  now(): number;
  /** Checked between steps (and, in the sync driver, every 2 s of a wait); when true, the run is cancelled. */
  cancelled?: () => boolean;
}

export interface SyncIo extends Io {
  send(request: HttpRequest): HttpAnswer;
  sleep(ms: number): void;
}

export interface AsyncIo extends Io {
  send(request: HttpRequest): Promise<HttpAnswer>;
  sleep(ms: number): Promise<void>;
}

/** A cancellable sync wait is slept in slices this long, so that Cancel is seen within them. */
const CANCEL_SLICE_MS = 2000;

function failure(error: unknown): NetworkFailure {
  return { error: error instanceof Error ? error.message : String(error) };
}

export function runSync(run: CheckRun, io: SyncIo): Report {
  for (;;) {
    if (io.cancelled?.()) run.cancel();
    const step = run.next(io.now());
    if (step.type === 'done') return run.report();
    if (step.type === 'wait') {
      if (!io.cancelled) io.sleep(step.ms);
      else {
        const until = io.now() + step.ms;
        for (let left = step.ms; left > 0 && !io.cancelled(); left = until - io.now()) {
          io.sleep(Math.min(left, CANCEL_SLICE_MS));
        }
      }
      continue;
    }
    let answer: HttpAnswer | NetworkFailure;
    try {
      answer = io.send(step.request);
    } catch (error) {
      answer = failure(error);
    }
    run.receive(step.id, answer, io.now());
  }
}

export async function runAsync(run: CheckRun, io: AsyncIo): Promise<Report> {
  for (;;) {
    if (io.cancelled?.()) run.cancel();
    const step = run.next(io.now());
    if (step.type === 'done') return run.report();
    if (step.type === 'wait') {
      await io.sleep(step.ms);
      continue;
    }
    let answer: HttpAnswer | NetworkFailure;
    try {
      answer = await io.send(step.request);
    } catch (error) {
      answer = failure(error);
    }
    run.receive(step.id, answer, io.now());
  }
}
