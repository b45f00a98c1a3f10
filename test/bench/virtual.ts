// The benches' virtual environment: the sandbox's own request handling in this process, on the suites' virtual
// clock (test/sandbox/virtual.ts): a wait or the simulated latency moves time forward instead of passing it, so ten
// rate-limited minutes take milliseconds and repeat exactly.
import { createSandbox, emptyStats, type FaultConfig } from '../sandbox/handler';
import { sandboxAnswers, VirtualClock, virtualIo } from '../sandbox/virtual';
import { BENCH_KEY, benchConfig, processedOf, sentOf, type BenchEnv, type Exchange } from './env';

/** Where the virtual clock starts (a plausible epoch, so HTTP dates in Retry-After read sensibly). */
const EPOCH = Date.UTC(2025, 0, 6, 9, 0, 0);
const LATER_MS = 10 * 60_000;

export function virtualEnv(faults: FaultConfig, key = BENCH_KEY): BenchEnv {
  const sandbox = createSandbox(benchConfig(faults));
  const exchanges: Exchange[] = [];
  const harnessErrors: string[] = [];
  const clock = new VirtualClock(EPOCH);
  const answers = sandboxAnswers(sandbox, key);
  const io = virtualIo(
    clock,
    {
      handle: (request, now) => {
        try {
          return answers.handle(request, now);
        } catch (error) {
          harnessErrors.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
          throw error;
        }
      },
    },
    {
      onExchange: (request, answer, sentAt, answeredAt) =>
        exchanges.push({
          sentAt,
          sent: sentOf(request),
          answeredAt,
          status: answer.status,
          processed: processedOf(answer),
        }),
    },
  );

  return {
    kind: 'virtual',
    baseUrl: 'http://sandbox.virtual',
    now: io.now,
    sleep: async (ms) => io.sleep(ms),
    send: async (request) => io.send(request),
    sync: { now: io.now, sleep: io.sleep, send: io.send },
    stats: () => sandbox.stats()[key] ?? emptyStats(),
    later: () => clock.advance(LATER_MS),
    exchanges,
    harnessErrors,
    close: async () => undefined,
  };
}
