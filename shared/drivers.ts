// The driver loops: the only place where a check meets I/O. `runSync` is for Apps Script (UrlFetchApp.fetch +
// Utilities.sleep), `runSyncAll` for Apps Script sending a run's requests together (UrlFetchApp.fetchAll), `runAsync`
// for n8n and Node (a Promise-returning send + sleep). All three take their turns from `turn`.
import type { Report } from './outcome';
import type { CheckRun } from './run';
import type { HttpRequest, NetworkFailure, Step } from './step';
import type { DomainRecord, HttpAnswer } from './wire';

interface Io {
  now(): number;
  /**
   * Handed the records of each turn's answers as soon as they are in, before the run goes on: a shell keeps them
   * there (its cache), so an execution stopped later never pays for them again. A throw is ignored.
   */
  received?: (records: ReadonlyArray<{ key: string; record: DomainRecord }>) => void;
  /** Checked between steps (and, in the sync drivers, every 2 s of a wait); when true, the run is cancelled. */
  cancelled?: () => boolean;
}

interface SyncWait extends Io {
  sleep(ms: number): void;
}

export interface SyncIo extends SyncWait {
  send(request: HttpRequest): HttpAnswer;
}

export interface SyncAllIo extends SyncWait {
  /** Sends the requests together and answers each, in order (a thrown error fails them all). */
  sendAll(requests: readonly HttpRequest[]): Array<HttpAnswer | NetworkFailure>;
}

export interface AsyncIo extends Io {
  send(request: HttpRequest): Promise<HttpAnswer>;
  sleep(ms: number): Promise<void>;
}

/** A cancellable sync wait is slept in slices this long, so that Cancel is seen within them. */
const CANCEL_SLICE_MS = 2000;

type Sent = Extract<Step, { type: 'send' }>;
/** One turn of a driver: the requests to send now (as many as the run lets go before their answers), a wait, or the end. */
type Turn = { sends: Sent[] } | { wait: number } | { report: Report };

function failure(error: unknown): NetworkFailure {
  return { error: error instanceof Error ? error.message : String(error) };
}

function turn(run: CheckRun, io: Io): Turn {
  if (io.cancelled?.()) run.cancel();
  const sends: Sent[] = [];
  for (;;) {
    const step = run.next(io.now());
    if (step.type === 'send') sends.push(step);
    else if (sends.length > 0) return { sends };
    else if (step.type === 'wait') return { wait: step.ms };
    else return { report: run.report() }; // done ('receive' needs a request in flight, and none is)
  }
}

function handOver(run: CheckRun, io: Io): void {
  const records = run.newRecords();
  if (records.length === 0 || !io.received) return;
  try {
    io.received(records);
  } catch {
    // Keeping early only saves a later request: the report still carries every record.
  }
}

function sleepSync(io: SyncWait, ms: number): void {
  if (!io.cancelled) return io.sleep(ms);
  const until = io.now() + ms;
  for (let left = ms; left > 0 && !io.cancelled(); left = until - io.now())
    io.sleep(Math.min(left, CANCEL_SLICE_MS));
}

/** Drives the run with requests sent together: each turn's requests go in one `sendAll`, answered at one time. */
export function runSyncAll(run: CheckRun, io: SyncAllIo): Report {
  for (;;) {
    const t = turn(run, io);
    if ('report' in t) return t.report;
    if ('wait' in t) {
      sleepSync(io, t.wait);
      continue;
    }
    let answers: Array<HttpAnswer | NetworkFailure>;
    try {
      answers = io.sendAll(t.sends.map((s) => s.request));
    } catch (error) {
      answers = t.sends.map(() => failure(error));
    }
    const at = io.now();
    t.sends.forEach((s, i) => run.receive(s.id, answers[i], at));
    handOver(run, io);
  }
}

/** Drives the run one blocking request at a time. */
export function runSync(run: CheckRun, io: SyncIo): Report {
  const sendAll = (requests: readonly HttpRequest[]) =>
    requests.map((request) => {
      try {
        return io.send(request);
      } catch (error) {
        return failure(error);
      }
    });
  return runSyncAll(run, { ...io, sendAll });
}

/** Drives the run with Promise-returning I/O; each answer is handed back when it comes. */
export async function runAsync(run: CheckRun, io: AsyncIo): Promise<Report> {
  for (;;) {
    const t = turn(run, io);
    if ('report' in t) return t.report;
    if ('wait' in t) {
      await io.sleep(t.wait);
      continue;
    }
    await Promise.all(
      t.sends.map(async (s) => {
        let answer: HttpAnswer | NetworkFailure;
        try {
          answer = await io.send(s.request);
        } catch (error) {
          answer = failure(error);
        }
        run.receive(s.id, answer, io.now());
        handOver(run, io);
      }),
    );
  }
}
