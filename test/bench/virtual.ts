// The sandbox's own request handling in this process, on a virtual clock: a wait or the simulated latency moves
// time forward instead of passing it, so ten rate-limited minutes take milliseconds and repeat exactly.
import type { HttpAnswer, HttpRequest } from '../../shared';
import { createSandbox, type FaultConfig } from '../sandbox/handler';
import { emptyStats } from '../sandbox/handler';
import { BENCH_KEY, benchConfig, processedOf, sentOf, type BenchEnv, type Exchange } from './env';

/** Where the virtual clock starts (a plausible epoch, so HTTP dates in Retry-After read sensibly). */
const EPOCH = Date.UTC(2025, 0, 6, 9, 0, 0);
const LATER_MS = 10 * 60_000;

export function virtualEnv(faults: FaultConfig, key = BENCH_KEY): BenchEnv {
  const sandbox = createSandbox(benchConfig(faults));
  const exchanges: Exchange[] = [];
  const harnessErrors: string[] = [];
  let t = EPOCH;

  const handle = (request: HttpRequest) => {
    try {
      return sandbox.handle(
        {
          method: request.method,
          path: new URL(request.url).pathname,
          headers: { ...request.headers, authorization: `Bearer ${key}` },
          body: request.body,
        },
        t,
      );
    } catch (error) {
      harnessErrors.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
      throw error;
    }
  };

  const sendNow = (request: HttpRequest): HttpAnswer => {
    const sentAt = t;
    const answer = handle(request);
    t += answer.latencyMs;
    exchanges.push({
      sentAt,
      sent: sentOf(request),
      answeredAt: t,
      status: answer.status,
      processed: processedOf(answer),
    });
    return { status: answer.status, headers: answer.headers, body: answer.body };
  };

  const sleepNow = (ms: number): void => {
    t += Math.max(0, ms);
  };

  return {
    kind: 'virtual',
    baseUrl: 'http://sandbox.virtual',
    now: () => t,
    sleep: async (ms) => sleepNow(ms),
    send: async (request) => sendNow(request),
    sync: { now: () => t, sleep: sleepNow, send: sendNow },
    stats: () => sandbox.stats()[key] ?? emptyStats(),
    later: () => {
      t += LATER_MS;
    },
    exchanges,
    harnessErrors,
    close: async () => undefined,
  };
}
