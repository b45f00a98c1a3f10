// Issue 45's scenarios for `npm run bench:sheets`: every promise on every path. The retention with nobody opening the
// spreadsheet for 32 days, whatever wrote the store; background checks turned on with Google's Properties quota
// already spent (the D12 shape: 50 calls left); a formula's time against a store of 50,000 results. Each returns its
// figures as a line, whatever the product does.
import { createHash } from 'node:crypto';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import { startVirtualSandbox } from '../sandbox/virtual';
import { type AppsScriptStandIn, loadAppsScript, type LoadOptions } from '../apps-script/harness';
import {
  domains,
  keptTimes,
  metricRows,
  sheetsAddress,
  sidebarCheck,
  storedKeys,
} from '../apps-script/support';
import { batchRows } from '../../apps-script/src/stores/results';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export interface LimitsWorld {
  gas: AppsScriptStandIn;
  /** The service's address as the spreadsheet's settings hold it. */
  baseUrl: string;
  /** The service ends the plan (every request answered 401 from now on). */
  expirePlan(): void;
  stats(): { requests: number; billed: number; billedTwice: number };
}

export type RetentionPath = 'never on' | 'turned off' | 'stopped by the service';

/**
 * A sidebar check of 120 domains with background checks `path`, then 32 days in which nobody opens the spreadsheet:
 * what the store keeps a day past the retention of its newest result and after 32 days, and the triggers left.
 */
export async function leftAlone(w: LimitsWorld, path: RetentionPath): Promise<string> {
  const { gas } = w;
  const t0 = gas.clock.now();
  const list = domains(120, 'alone');
  if (path !== 'never on') await gas.run('startBackground');
  await sidebarCheck(gas, undefined, 'A', list);
  await gas.runTriggers({
    until: gas.clock.now() + 3 * HOUR,
    stop: () => storedKeys(gas).size >= list.length,
  });
  if (path === 'turned off') await gas.run('stopBackground');
  if (path === 'stopped by the service') {
    w.expirePlan();
    gas.sheet.setValues('H1:H2', [['new-one.com'], ['new-two.com']]);
    await gas.edit('I1', '=DAPA(H1:H2)');
    await gas.runTriggers({ until: gas.clock.now() + 2 * HOUR });
  }
  const kept = keptTimes(gas);
  const checked = storedKeys(gas).size;
  await gas.runTriggers({ until: Math.max(...kept, t0) + 31 * DAY });
  const dayPast = keptTimes(gas).length;
  await gas.runTriggers({ until: t0 + 32 * DAY });
  const left = keptTimes(gas);
  const older = left.filter((at) => at < gas.clock.now() - 30 * DAY).length;
  const runs = gas.executions.filter((e) => e.kind === 'trigger');
  const runtime = runs.reduce((t, e) => t + (e.elapsedMs ?? 0), 0);
  const clocks = gas.triggers.filter((t) => t.kind === 'CLOCK' && !t.spent).length;
  const met = dayPast === 0 && left.length === 0 && clocks === 0;
  return (
    `${checked} domains kept (${kept.length} result rows); a day past the retention ${dayPast} rows left, after 32 ` +
    `days ${left.length} (${older} older than 30 days); ${runs.length} trigger executions, ` +
    `${(runtime / 1000).toFixed(1)} s of trigger runtime; ${clocks} time-driven trigger(s) left: ${met ? 'met' : 'MISSED'}`
  );
}

/**
 * The D12 shape with 50 calls left: the owner's Properties quota at 49,950 of 50,000, =DAPA(A2) dragged down 500 rows,
 * then "Turn on background checks": whether it turns them on and says when the work resumes, the cells' execution
 * time, and when every cell is filled after Google's reset.
 */
export async function quotaBeforeBackground(w: LimitsWorld): Promise<string> {
  const { gas } = w;
  const n = 500;
  gas.spendDailyQuota(gas.owner, 'properties', 49_950);
  const resetsAt = gas.dailyQuotaOf(gas.owner, 'properties').resetsAt as number;
  const list = domains(n, 'spent');
  gas.sheet.setValues(
    `A2:A${n + 1}`,
    list.map((d) => [d]),
  );
  for (let r = 3; r <= n + 1; r++) gas.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
  await gas.edit('B2', '=DAPA(A2)');
  const cells = gas.executions.filter((e) => e.kind === 'custom-function');
  const firstWave = cells.filter((e) => e.startedAt <= cells[0].startedAt + 1_000);
  const later = cells.filter((e) => !firstWave.includes(e));
  const seconds = cells.reduce((t, e) => t + (e.elapsedMs ?? 0), 0) / 1000;
  const slowest = Math.max(0, ...later.map((e) => e.elapsedMs ?? 0)) / 1000;
  // A first-wave cell meets the spent quota when Google first refuses a call: from then to its answer.
  const refusedAt = gas.dailyQuotaOf(gas.owner, 'properties').firstRefusedAt ?? Infinity;
  const ends = firstWave.map((e) => ({ start: e.startedAt, end: e.startedAt + (e.elapsedMs ?? 0) }));
  const afterRefusal =
    Math.max(0, ...ends.filter((e) => e.end >= refusedAt).map((e) => e.end - Math.max(e.start, refusedAt))) /
    1000;
  let turnedOn: string;
  try {
    const info = await gas.run<{ on: boolean; quota?: string }>('startBackground');
    turnedOn = info.on ? `on, saying "${(info.quota ?? '').slice(0, 60)}…"` : 'not on';
  } catch (error) {
    turnedOn = `refused: ${(error as Error).message.slice(0, 60)}…`;
  }
  const range = `B2:B${n + 1}`;
  await gas.runTriggers({ until: gas.clock.now() + 30 * HOUR, stop: () => metricRows(gas, range) === n });
  const filled = metricRows(gas, range);
  const after = (gas.clock.now() - resetsAt) / MINUTE;
  const s = w.stats();
  const met =
    filled === n && slowest <= 2 && afterRefusal <= 2 && s.billedTwice === 0 && turnedOn.startsWith('on');
  return (
    `Turn on background checks: ${turnedOn}; cells: ${seconds.toFixed(0)} execution-seconds for ${n}, the ` +
    `${later.length} after the first ${firstWave.length} side by side answered within ${slowest.toFixed(2)} s, ` +
    `the first ${firstWave.length} within ${afterRefusal.toFixed(2)} s of Google's first refusal; ` +
    `${filled} of ${n} filled ${after.toFixed(1)} min after Google's reset, ${s.billed} billed, billed twice ` +
    `${s.billedTwice}: ${met ? 'met' : 'MISSED'}`
  );
}

/** The store of `count` kept results checked now, written as checks write them (batches of results), in a new sheet. */
function fillStore(w: LimitsWorld, count: number, tag: string): void {
  const { gas } = w;
  const service = 's' + createHash('sha256').update(w.baseUrl).digest('base64url').slice(0, 12);
  const fresh = Array.from({ length: count }, (_, i) => {
    const key = `${tag}-${i}.example.com`;
    return { key, record: { domain: key, site_da: 10, site_pa: 20, site_mr: 3, spam_score: 1 } };
  });
  const rows = batchRows(service, fresh as never, gas.clock.now());
  gas.sheet.addSheet('_dapa_results', rows.length + 1, 4);
  gas.sheet.setValues(`'_dapa_results'!A1:D${rows.length + 1}`, [
    ['domain', 'service', 'record', 'checked at (ms)'],
    ...rows,
  ]);
}

/**
 * A formula's time against the store: one =DAPA(A2) over a kept domain no cache holds, the store holding `count`
 * results (a store of 500 as the baseline, in the same run).
 */
export async function formulaAgainstStore(w: LimitsWorld, count: number): Promise<number> {
  const { gas } = w;
  fillStore(w, count, 'kept');
  gas.sheet.setValues('K2', [[`kept-${Math.floor(count / 2)}.example.com`]]);
  const before = gas.executions.length;
  const billed = w.stats().billed;
  await gas.edit('L2', '=DAPA(K2)');
  const run = gas.executions.slice(before).find((e) => e.kind === 'custom-function');
  if (w.stats().billed !== billed) throw new Error('the kept domain was billed again');
  if (metricRows(gas, 'L2:L2') !== 1) throw new Error('the kept domain did not show');
  return run?.elapsedMs ?? NaN;
}

const KEY = 'sandbox-basic';

/** A stand-in on the bench's conditions (400 ms a request, 15 ms a service call, triggers late 0–60 s, seeded). */
export async function limitsWorld(load: LoadOptions = {}): Promise<LimitsWorld & { close(): Promise<void> }> {
  const sandbox = await startVirtualSandbox({ keys: DEFAULT_CONFIG.keys });
  const gas = await loadAppsScript({
    clock: 'virtual',
    virtualLatencyMs: 400,
    serviceCallMs: 15,
    // Workers started before the clock counts (WorkerPool.warm): 30 formulas side by side, a trigger, a sidebar call.
    warmWorkers: 32,
    ...load,
  });
  sandbox.useClock(gas.clock);
  await gas.run('saveSettings', { apiKey: KEY, environment: 'custom', baseUrl: sheetsAddress(sandbox.url) });
  return {
    gas,
    baseUrl: sheetsAddress(sandbox.url),
    expirePlan: () =>
      sandbox.sandbox.configure({
        keys: { ...DEFAULT_CONFIG.keys, [KEY]: { ...DEFAULT_CONFIG.keys[KEY], expired: true } },
      }),
    stats: () => {
      const s = sandbox.sandbox.stats()[KEY];
      return {
        requests: s?.requests ?? 0,
        billed: s?.billed ?? 0,
        billedTwice: Object.values(s?.billedByDomain ?? {}).filter((n) => n > 1).length,
      };
    },
    close: async () => {
      await gas.close();
      await sandbox.close();
    },
  };
}

/** Issue 45's lines for SHEETS.md, each scenario in a stand-in of its own; a scenario that fails says so. */
export async function issue45Lines(): Promise<string[]> {
  const lines: string[] = [];
  const run = async (label: string, load: LoadOptions, scenario: (w: LimitsWorld) => Promise<string>) => {
    const w = await limitsWorld(load);
    try {
      lines.push(`${label}: ${await scenario(w)}`);
    } catch (error) {
      lines.push(`${label}: the bench could not run it: ${(error as Error).message}`);
    } finally {
      await w.close();
    }
  };
  for (const [mode, installAs] of [
    ['bound script', 'script'],
    ['published add-on', 'addon'],
  ] as const)
    for (const path of ['never on', 'turned off', 'stopped by the service'] as RetentionPath[])
      await run(
        `Retention, ${mode}, a sidebar check with background checks ${path}, then 32 days alone`,
        { installAs },
        (w) => leftAlone(w, path),
      );
  await run(
    "Background checks turned on with the owner's Properties quota at 49,950 of 50,000 (=DAPA(A2) dragged down 500 rows, 50 calls left)",
    { customFunctionsAtOnce: 30 },
    quotaBeforeBackground,
  );
  const times: number[] = [];
  for (const count of [500, 50_000])
    await run(`store of ${count}`, {}, async (w) => String(times.push(await formulaAgainstStore(w, count))));
  const [small, big] = times;
  lines.splice(
    -2,
    2,
    `A formula over a kept domain against a store of 50,000 results: ${(big / 1000).toFixed(2)} s of execution ` +
      `(a store of 500 in the same run: ${(small / 1000).toFixed(2)} s; ${(big / small).toFixed(1)} ×); a custom ` +
      `function has 30 s: ${big <= 5_000 ? 'met' : 'MISSED'}`,
  );
  return lines;
}

if (require.main === module) {
  void issue45Lines().then(
    (lines) => lines.forEach((l) => console.log(`- ${l}`)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
