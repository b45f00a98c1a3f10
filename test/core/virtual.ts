// Runs a CheckRun against a FakeApi, or the sandbox's own handling, on a virtual clock: waits advance time
// instead of sleeping.
import { CheckRun, DAPA_PATH, runSync, type Report, type RunOptions } from '../../shared';
import type { Sandbox } from '../sandbox/handler';
import type { FakeApi } from './fake-api';

export function runVirtual(
  values: unknown[],
  api: FakeApi,
  options: Partial<RunOptions> = {},
  latencyMs = 100,
): { report: Report; elapsed: number; waits: number[] } {
  let t = 0;
  const waits: number[] = [];
  const run = new CheckRun(values, { baseUrl: 'http://fake', deadline: 3_600_000, ...options });
  const report = runSync(run, {
    now: () => t,
    sleep: (ms) => {
      waits.push(ms);
      t += ms;
    },
    send: (request) => {
      t += latencyMs;
      return api.handle(request);
    },
  });
  return { report, elapsed: t, waits };
}

/** Runs the core against the sandbox's own handling in this process, on a virtual clock starting at `start`. */
export function runOnVirtualSandbox(
  sandbox: Sandbox,
  key: string,
  values: string[],
  options: Partial<RunOptions> = {},
  start = 0,
) {
  let t = start;
  const run = new CheckRun(values, { baseUrl: 'http://virtual', deadline: start + 3_600_000, ...options });
  const report = runSync(run, {
    now: () => t,
    sleep: (ms) => (t += ms),
    send: (request) => {
      const headers = { authorization: `Bearer ${key}` };
      const res = sandbox.handle({ method: 'POST', path: DAPA_PATH, headers, body: request.body }, t);
      t += res.latencyMs + 20;
      return res;
    },
  });
  return { report, elapsed: t - start, end: t, stats: sandbox.stats()[key] };
}
