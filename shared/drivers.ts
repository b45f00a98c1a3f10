// The two driver loops: the only place where a check meets I/O. The synchronous one is for Apps Script
// (UrlFetchApp + Utilities.sleep), the asynchronous one for n8n and Node (a Promise-returning send + sleep).
import type { Report } from './outcome';
import type { CheckRun, HttpRequest, NetworkFailure } from './run';
import type { HttpAnswer } from './wire';

export interface SyncIo {
  send(request: HttpRequest): HttpAnswer;
  sleep(ms: number): void;
  now(): number;
}

export interface AsyncIo {
  send(request: HttpRequest): Promise<HttpAnswer>;
  sleep(ms: number): Promise<void>;
  now(): number;
  /** Checked between steps; when it says so, the run is cancelled. */
  cancelled?: () => boolean;
}

function failure(error: unknown): NetworkFailure {
  return { error: error instanceof Error ? error.message : String(error) };
}

export function runSync(run: CheckRun, io: SyncIo): Report {
  for (;;) {
    const step = run.next(io.now());
    if (step.type === 'done') return run.report();
    if (step.type === 'wait') {
      io.sleep(step.ms);
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
