// The core as a shell drives it: a CheckRun with the synchronous driver on the virtual clock (as in Apps Script)
// or the asynchronous one over HTTP (as in n8n), optionally starting from what an earlier run learned and cached.
import { CheckRun, runAsync, runSync, type DomainRecord, type Learned, type Report } from '../../shared';
import type { BenchEnv } from './env';
import { rowOfOutcome, type RowResult } from './score';

export interface CoreStart {
  /** Time budget of the run (a sidebar step has 6 minutes; n8n what the user sets). */
  deadlineMs: number;
  /** What an earlier run learned about the plan (the shell keeps `report.learned`). */
  learned?: Learned;
  /** Records an earlier run fetched, by key (the Sheets shell keeps `report.fresh` in CacheService). */
  cache?: ReadonlyMap<string, DomainRecord>;
}

export async function coreRun(
  rows: readonly unknown[],
  env: BenchEnv,
  start: CoreStart,
): Promise<{ results: RowResult[]; report: Report }> {
  const run = new CheckRun(rows, {
    baseUrl: env.baseUrl,
    deadline: env.now() + start.deadlineMs,
    maxUrlsPerRequest: start.learned?.maxUrlsPerRequest,
    pace: start.learned,
    seed: 1,
  });
  if (start.cache) run.addCached(start.cache);
  const report = env.sync ? runSync(run, env.sync) : await runAsync(run, env);
  return { results: report.outcomes.map(rowOfOutcome), report };
}

/** What a shell would cache after a run. */
export function cacheOf(report: Report): Map<string, DomainRecord> {
  return new Map(report.fresh.map(({ key, record }) => [key, record]));
}
