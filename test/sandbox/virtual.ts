// Virtual time, the one clock of the unit suites and the benches: a wait or the sandbox's simulated latency moves
// the clock instead of passing, so rate-limited minutes take milliseconds and repeat exactly. The sandbox (or the
// scripted layer over it, scripted.ts) answers on that clock in this process, for the core's drivers, or over
// loopback HTTP, for the Apps Script stand-in, whose clock (shared by its threads) is the SharedClock here.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CheckRun,
  runSync,
  type HttpAnswer,
  type HttpRequest,
  type Report,
  type RunOptions,
  type SyncIo,
} from '../../shared';
import { seededRandom } from '../../shared/random';
import { createSandbox, DEFAULT_CONFIG, type Sandbox, type SandboxConfig } from './handler';

/** What answers are given on: the time now, and moving it forward. */
export interface Clock {
  now(): number;
  advance(ms: number): void;
}

/** Time that moves only when told: every figure of a run on it repeats exactly. */
export class VirtualClock implements Clock {
  constructor(private at = 0) {}

  now(): number {
    return this.at;
  }

  advance(ms: number): void {
    if (ms > 0) this.at += ms;
  }
}

export type ClockMode = 'real' | 'virtual';

/**
 * A network latency drawn uniformly between `minMs` and `maxMs` for each request, seeded so that a run repeats (the
 * Apps Script stand-in's `virtualLatencyMs` takes it: e.g. fetches of 0.3–0.9 s).
 */
export function uniformLatency(seed: number, minMs: number, maxMs: number): () => number {
  const random = seededRandom(seed);
  return () => Math.round(minMs + random() * (maxMs - minMs));
}

/**
 * The Apps Script stand-in's clock, shared by every thread through a SharedArrayBuffer: real time plus an offset. A
 * virtual one makes Utilities.sleep advance the offset at once instead of waiting; `advance` moves time in both modes.
 */
export class SharedClock implements Clock {
  readonly offset = new Float64Array(new SharedArrayBuffer(8));

  constructor(readonly mode: ClockMode) {}

  now(): number {
    return Date.now() + this.offset[0];
  }

  advance(ms: number): void {
    if (ms > 0) this.offset[0] += ms;
  }

  /** Waits `ms` of stand-in time: really (real clock) or by moving the clock (virtual clock). */
  async sleep(ms: number): Promise<void> {
    if (ms <= 0) return;
    if (this.mode === 'virtual') this.advance(ms);
    else await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/** An answer given at a time, and how long it takes to arrive (the sandbox's simulated latency). */
export type TimedAnswer = HttpAnswer & { latencyMs?: number };

/** Something that answers the core's requests at a given time: the sandbox for one key, or a script over it. */
export interface Answers {
  handle(request: HttpRequest, now: number): TimedAnswer;
}

/** The sandbox answering for `key` (the client's request with that key as its bearer token). */
export function sandboxAnswers(sandbox: Sandbox, key: string): Answers {
  return {
    handle: (request, now) =>
      sandbox.handle(
        {
          method: request.method,
          path: new URL(request.url).pathname,
          headers: { ...request.headers, authorization: `Bearer ${key}` },
          body: request.body,
        },
        now,
      ),
  };
}

export interface VirtualIoOptions {
  /** Added to every request's time on the wire (the answer's own latency is added too). */
  latencyMs?: number;
  /** Told of every request answered (not of one that threw), with when it was sent and answered. */
  onExchange?: (request: HttpRequest, answer: TimedAnswer, sentAt: number, answeredAt: number) => void;
}

/** The I/O of the core's synchronous drivers on a clock: a request is answered when sent, the clock then moves on. */
export interface VirtualIo extends SyncIo {
  /** Every sleep asked for, in order. */
  readonly waits: number[];
  /** Requests sent together (runSyncAll): answered at one time, then the clock moves by the latency once. */
  sendAll(requests: readonly HttpRequest[]): Array<HttpAnswer | { error: string }>;
}

export function virtualIo(clock: Clock, answers: Answers, options: VirtualIoOptions = {}): VirtualIo {
  const latencyMs = options.latencyMs ?? 0;
  const waits: number[] = [];
  const answer = (request: HttpRequest, at: number): HttpAnswer & { latencyMs: number } => {
    const out = answers.handle(request, at);
    const took = (out.latencyMs ?? 0) + latencyMs;
    options.onExchange?.(request, out, at, at + took);
    return { status: out.status, headers: out.headers, body: out.body, latencyMs: took };
  };
  return {
    waits,
    now: () => clock.now(),
    sleep: (ms) => {
      waits.push(ms);
      clock.advance(ms);
    },
    send: (request) => {
      let took = latencyMs;
      try {
        const out = answer(request, clock.now());
        took = out.latencyMs;
        return { status: out.status, headers: out.headers, body: out.body };
      } finally {
        clock.advance(took);
      }
    },
    sendAll: (requests) => {
      const at = clock.now();
      const out = requests.map((request) => {
        try {
          const { status, headers, body } = answer(request, at);
          return { status, headers, body };
        } catch (error) {
          return { error: String(error) };
        }
      });
      clock.advance(latencyMs);
      return out;
    },
  };
}

export interface VirtualRun {
  report: Report;
  /** Virtual time the run took, and when it ended. */
  elapsed: number;
  end: number;
  waits: number[];
}

/**
 * Runs the core (runSync) against `answers` on a virtual clock starting at `start`, with an hour's deadline; every
 * request takes `latencyMs` on top of the answer's own latency.
 */
export function runVirtual(
  values: unknown[],
  answers: Answers,
  options: Partial<RunOptions> = {},
  { start = 0, latencyMs = 100 }: { start?: number; latencyMs?: number } = {},
): VirtualRun {
  const clock = new VirtualClock(start);
  const io = virtualIo(clock, answers, { latencyMs });
  const run = new CheckRun(values, { baseUrl: 'http://virtual', deadline: start + 3_600_000, ...options });
  const report = runSync(run, io);
  return { report, elapsed: clock.now() - start, end: clock.now(), waits: io.waits };
}

/** Runs the core against the sandbox's own handling for `key`, from `start` (requests take 20 ms more). */
export function runOnVirtualSandbox(
  sandbox: Sandbox,
  key: string,
  values: string[],
  options: Partial<RunOptions> = {},
  start = 0,
) {
  const run = runVirtual(values, sandboxAnswers(sandbox, key), options, { start, latencyMs: 20 });
  return { ...run, stats: sandbox.stats()[key] };
}

/** A step of several runs on one clock (see takeTurns). */
export interface Turn {
  run?: CheckRun;
  /** When the run's next step is due. */
  t: number;
  /** When it ended, and its report. */
  done?: number;
  report?: Report;
  /** The answer to the run's request, handed to it at its next turn (when the answer came). */
  pending?: { id: number; answer: HttpAnswer };
}

export interface Turns<R extends Turn> {
  /** The run, made at its first turn. */
  start(r: R): CheckRun;
  /** Answers a request sent at `at`; the answer comes `latencyMs` later. */
  send(r: R, request: HttpRequest, at: number): { answer: HttpAnswer; latencyMs: number };
  /** After each step of a run (its window may be shared, as in queue mode). */
  stepped?(r: R): void;
  /** The shortest wait (a wait of 0 ms would give the same run the turn again at once). */
  minWaitMs?: number;
}

/** Steps every run on one clock, always the one whose turn comes first (the earlier in the list on a tie). */
export function takeTurns<R extends Turn>(runners: R[], turns: Turns<R>, maxSteps = 1_000_000): R[] {
  for (let guard = 0; guard < maxSteps; guard++) {
    const open = runners.filter((r) => r.done === undefined);
    if (open.length === 0) return runners;
    const r = open.reduce((a, b) => (b.t < a.t ? b : a));
    const run = (r.run ??= turns.start(r));
    if (r.pending) run.receive(r.pending.id, r.pending.answer, r.t);
    r.pending = undefined;
    const step = run.next(r.t);
    turns.stepped?.(r);
    if (step.type === 'done') {
      r.report = run.report();
      r.done = r.t;
    } else if (step.type === 'wait') r.t += Math.max(turns.minWaitMs ?? 0, step.ms);
    else if (step.type === 'send') {
      const { answer, latencyMs } = turns.send(r, step.request, r.t);
      r.pending = { id: step.id, answer };
      r.t += latencyMs;
    }
  }
  throw new Error('runs did not finish');
}

/** The sandbox over loopback HTTP, answering on a clock (set once the stand-in exists). */
export interface VirtualSandbox {
  url: string;
  sandbox: Sandbox;
  /** The clock the answers are given on (set it to the stand-in's once the stand-in exists). */
  useClock(clock: Clock): void;
  close(): Promise<void>;
}

/**
 * The sandbox's handling over real HTTP on loopback, but `now` is the clock's (the stand-in's virtual time) and the
 * simulated latency moves that clock instead of being slept, so hours of rate-limited background work run in seconds.
 */
export async function startVirtualSandbox(config: SandboxConfig = DEFAULT_CONFIG): Promise<VirtualSandbox> {
  const sandbox = createSandbox(config);
  let clock: Clock | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const now = clock ? clock.now() : Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const out = sandbox.handle({ method: req.method ?? 'GET', path: req.url ?? '/', headers, body }, now);
      if (clock && out.latencyMs > 0) clock.advance(out.latencyMs);
      res.writeHead(out.status, { ...out.headers, 'content-length': String(Buffer.byteLength(out.body)) });
      res.end(out.body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    sandbox,
    useClock: (c) => {
      clock = c;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
