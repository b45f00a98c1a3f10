// The same runs over real HTTP: the sandbox server on an ephemeral loopback port, Node's fetch, the real clock.
// Only for the short scenarios; the sandbox sleeps its simulated latency for real.
import type { HttpAnswer, HttpRequest } from '../../shared';
import type { FaultConfig } from '../sandbox/handler';
import { startSandbox } from '../sandbox/server';
import { emptyStats } from '../sandbox/handler';
import { BENCH_KEY, benchConfig, processedOf, sentOf, type BenchEnv, type Exchange } from './env';

export async function httpEnv(faults: FaultConfig, key = BENCH_KEY): Promise<BenchEnv> {
  const server = await startSandbox({ port: 0, host: '127.0.0.1', config: benchConfig(faults) });
  const exchanges: Exchange[] = [];

  const send = async (request: HttpRequest): Promise<HttpAnswer> => {
    const sentAt = Date.now();
    const res = await fetch(request.url, {
      method: request.method,
      headers: { ...request.headers, Authorization: `Bearer ${key}` },
      body: request.body,
    });
    const answer: HttpAnswer = {
      status: res.status,
      headers: Object.fromEntries(res.headers),
      body: await res.text(),
    };
    exchanges.push({
      sentAt,
      sent: sentOf(request),
      answeredAt: Date.now(),
      status: res.status,
      processed: processedOf(answer),
    });
    return answer;
  };

  return {
    kind: 'http',
    baseUrl: server.url,
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
    send,
    stats: () => server.sandbox.stats()[key] ?? emptyStats(),
    // Real minutes cannot be skipped: clear the sandbox's rate windows instead (its counters restart too).
    later: () => server.sandbox.reset(),
    exchanges,
    harnessErrors: [],
    close: () => server.close(),
  };
}
