// A test-only option around the running sandbox, for the "Monthly watch" template: when drift is on, the metrics of
// chosen domains in a 200 answer are replaced by moved ones (lib/templates.ts, WATCH_DRIFT), as if the service's
// data had changed since last month. test/sandbox/ itself is unchanged: its handler is wrapped, not edited.
import { metricsFor, normalizeDomain, type SandboxResponse } from '../../sandbox/handler';
import type { RunningSandbox } from '../../sandbox/server';

export { metricsFor, normalizeDomain };

export interface RunningSandboxLike {
  /** Clears the sandbox's counters and rate windows (its configuration is kept). */
  reset(): void;
  /** Credits billed to `key` since the last reset. */
  billed(key: string): number;
  /** Domains billed more than once to `key` since the last reset. */
  billedTwice(key: string): string[];
  /** Whether answers carry the moved metrics. */
  drift(on: boolean): void;
}

/** Wraps `running`'s handler so that, with drift on, each record's metrics are `moved(domain)`. */
export function withMetricDrift(
  running: RunningSandbox,
  moved: (domain: string) => ReturnType<typeof metricsFor>,
): RunningSandboxLike {
  const sandbox = running.sandbox;
  const handle = sandbox.handle.bind(sandbox);
  let on = false;
  sandbox.handle = (req, now): SandboxResponse => {
    const res = handle(req, now);
    if (!on || res.status !== 200) return res;
    const body = JSON.parse(res.body) as { data?: Array<Record<string, unknown>> };
    for (const record of body.data ?? []) {
      const metrics = moved(normalizeDomain(String(record.domain)));
      record.site_da = metrics.site_da;
      record.spam_score = metrics.spam_score;
    }
    return { ...res, body: JSON.stringify(body) };
  };
  return {
    reset: () => sandbox.reset(),
    billed: (key) => sandbox.stats()[key]?.billed ?? 0,
    billedTwice: (key) =>
      Object.entries(sandbox.stats()[key]?.billedByDomain ?? {})
        .filter(([, times]) => times > 1)
        .map(([domain]) => domain),
    drift: (value) => {
      on = value;
    },
  };
}
