// Runs a CheckRun against a FakeApi on a virtual clock: waits advance time instead of sleeping.
import { CheckRun, runSync, type Report, type RunOptions } from '../../shared';
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
