// Per-cell formulas as spreadsheet people write them: `=DAPA(A2)` dragged down, every cell its own custom-function
// execution, `atOnce` of them side by side (Google does not say how many Sheets runs; at most 30 per user), run by the
// real built Code.js in the Apps Script stand-in on a virtual clock. One scenario, its figures: cells filled after
// the first recalculation, #ERROR! cells, 429s, requests, credits, domains billed twice, and when all were filled
// (with background checks on: by themselves; off: after Refresh from the menu, once a minute).
import { DEFAULT_CONFIG, type SandboxConfig } from '../sandbox/handler';
import { type AppsScriptStandIn, loadAppsScript, uniformLateness } from '../apps-script/harness';
import { domains, sheetsAddress } from '../apps-script/support';
import { startVirtualSandbox, type VirtualSandbox } from '../sandbox/virtual';

const MINUTE = 60_000;

export interface PerCellSetup {
  /** The sandbox key: its plan (sandbox-basic: 5 URLs a request, 60 a minute; sandbox-rpm: 50 a request, 10 requests a minute). */
  key: string;
  /** Distinct domains in A2:A(count+1), one `=DAPA(A{r})` beside each. */
  count: number;
  /** Formula cells Sheets runs side by side. */
  atOnce: number;
  background: boolean;
  /** The formulas are dragged on past the data to this row (blank rows: they must cost nothing). */
  dragTo?: number;
  /** The sandbox sends X-RateLimit-* headers. */
  headers?: boolean;
  /** The plan's bound for the list: what the plan lets through, in ms (the key's URLs a minute). */
  boundMs: number;
  /** Give up after this long (ms after the edit). */
  limitMs: number;
}

export interface PerCellResult {
  setup: PerCellSetup;
  filledFirst: number;
  errorCells: number;
  errorTexts: string[];
  unfinishedFirst: number;
  filled: number;
  tookMs: number;
  requests: number;
  billed: number;
  billedTwice: number;
  tooMany: number;
  refusedSimultaneous: number;
  maxSimultaneous: number;
  /** Requests the blank rows past the data cost (measured on a second recalculation of those rows alone). */
  blankRequests?: number;
  refreshes: number;
}

function numbersIn(gas: AppsScriptStandIn, a1: string): number {
  return gas.sheet.getValues(a1).filter((row) => typeof row[0] === 'number').length;
}

/** The #ERROR! (and other #) cells of a one-column range, each with Sheets' note (the error's message). */
function errorsIn(gas: AppsScriptStandIn, a1: string): string[] {
  const first = Number(/\d+/.exec(a1)?.[0] ?? 1);
  const column = /^[A-Z]+/.exec(a1)?.[0] ?? 'A';
  return gas.sheet
    .getValues(a1)
    .map((row, i) => [String(row[0]), first + i] as const)
    .filter(([v]) => v.startsWith('#'))
    .map(([v, r]) => `${v} ${gas.sheet.getNote(`${column}${r}`)}`);
}

function statsOf(sandbox: VirtualSandbox, key: string) {
  const s = sandbox.sandbox.stats()[key];
  return {
    requests: s?.requests ?? 0,
    billed: s?.billed ?? 0,
    billedTwice: Object.values(s?.billedByDomain ?? {}).filter((n) => n > 1).length,
    tooMany: s?.responsesByStatus?.[429] ?? 0,
  };
}

/** Runs one per-cell scenario; whatever the product does, the figures come back. */
export async function perCellScenario(setup: PerCellSetup): Promise<PerCellResult> {
  const config: SandboxConfig = {
    keys: DEFAULT_CONFIG.keys,
    faults: setup.headers ? { rateLimitHeaders: true } : undefined,
  };
  const sandbox = await startVirtualSandbox(config);
  const gas = await loadAppsScript({
    clock: 'virtual',
    virtualLatencyMs: 400,
    serviceCallMs: 15,
    customFunctionsAtOnce: setup.atOnce,
    // Time-driven triggers late by 0–60 s, seeded (the headline conditions of bench:sheets).
    triggerDelayMs: uniformLateness(7),
  });
  try {
    sandbox.useClock(gas.clock);
    await gas.run('saveSettings', {
      apiKey: setup.key,
      environment: 'custom',
      baseUrl: sheetsAddress(sandbox.url),
    });
    const { count } = setup;
    const last = count + 1;
    const dragTo = Math.max(last, setup.dragTo ?? last);
    // A sheet as long as the drag (a new sheet has 1,000 rows; Sheets adds rows as the user drags further).
    gas.sheet.addSheet('Cells', Math.max(1000, dragTo), 26);
    gas.sheet.activate('Cells');
    gas.sheet.setValues(
      `A2:A${last}`,
      domains(count, 'cell').map((d) => [d]),
    );
    if (setup.background) await gas.run('startBackground');
    for (let r = 3; r <= dragTo; r++) gas.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
    const t0 = gas.clock.now();
    const cells = `B2:B${last}`;
    await gas.edit('B2', '=DAPA(A2)');
    const filledFirst = numbersIn(gas, cells);
    const errorTexts = [...errorsIn(gas, `B2:B${dragTo}`)];
    const unfinishedFirst = gas.sheet
      .getValues(cells)
      .filter((row) => typeof row[0] === 'string' && /unfinished|budget/i.test(row[0] as string)).length;
    let refreshes = 0;
    const done = () => numbersIn(gas, cells) === count;
    if (setup.background) {
      await gas.runTriggers({ until: t0 + setup.limitMs, stop: done });
    } else {
      while (!done() && gas.clock.now() < t0 + setup.limitMs) {
        gas.clock.advance(MINUTE);
        await gas.run('refreshDapaFormulas');
        refreshes += 1;
        errorTexts.push(...errorsIn(gas, `B2:B${dragTo}`));
      }
    }
    const filled = numbersIn(gas, cells);
    const tookMs = filled === count ? gas.clock.now() - t0 : Infinity;
    errorTexts.push(...errorsIn(gas, `B2:B${dragTo}`));
    const stats = statsOf(sandbox, setup.key);
    let blankRequests: number | undefined;
    if (dragTo > last) {
      // The blank rows alone, written again: what they cost.
      const before = statsOf(sandbox, setup.key).requests;
      for (let r = last + 1; r <= dragTo; r++) gas.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
      await gas.recalculate();
      blankRequests = statsOf(sandbox, setup.key).requests - before;
    }
    return {
      setup,
      filledFirst,
      errorCells: errorTexts.length,
      errorTexts,
      unfinishedFirst,
      filled,
      tookMs,
      ...stats,
      refusedSimultaneous: gas.tooManySimultaneous.length,
      maxSimultaneous: gas.maxSimultaneous,
      blankRequests,
      refreshes,
    };
  } finally {
    await gas.close();
    await sandbox.close();
  }
}

/** Whether a row meets issue 25's targets (see perCellRows in sheets-background.ts for the limits). */
export function perCellMet(r: PerCellResult, targets: { withinMs?: number; maxRequests?: number }): boolean {
  return (
    r.errorCells === 0 &&
    r.billedTwice === 0 &&
    r.tooMany <= (r.setup.headers ? 0 : 3) &&
    (targets.withinMs === undefined || r.tookMs <= targets.withinMs) &&
    (targets.maxRequests === undefined || r.requests <= targets.maxRequests) &&
    (r.blankRequests === undefined || r.blankRequests === 0)
  );
}

const min = (ms: number) => (Number.isFinite(ms) ? `${(ms / MINUTE).toFixed(2)} min` : 'not all');

export function perCellRow(r: PerCellResult): string {
  const s = r.setup;
  const ratio = r.tookMs / s.boundMs;
  return [
    `${s.count} cells, ${s.key}, ${s.atOnce} side by side, background ${s.background ? 'on' : 'off'}${s.headers ? ', X-RateLimit headers' : ''}${s.dragTo ? `, dragged to row ${s.dragTo}` : ''}`,
    `${r.filledFirst} filled, ${r.unfinishedFirst} unfinished`,
    String(r.errorCells),
    String(r.tooMany),
    `${r.requests} / ${r.billed}`,
    String(r.billedTwice),
    Number.isFinite(r.tookMs)
      ? `${min(r.tookMs)} (${ratio.toFixed(3)} × bound)`
      : `${r.filled} of ${s.count}`,
    s.background ? '–' : String(r.refreshes),
    r.blankRequests === undefined ? '–' : String(r.blankRequests),
    `${r.maxSimultaneous} / ${r.refusedSimultaneous}`,
  ].join(' | ');
}

export const PER_CELL_HEADER =
  'scenario | after the first recalculation | #ERROR! | 429s | requests / billed | billed twice | all filled | Refreshes | requests for blank rows | most executions at once / refused';

if (require.main === module) {
  const [key = 'sandbox-basic', count = '500', atOnce = '4', background = 'on'] = process.argv.slice(2);
  const perMinute = key === 'sandbox-rpm' ? 500 : 60;
  const n = Number(count);
  void perCellScenario({
    key,
    count: n,
    atOnce: Number(atOnce),
    background: background === 'on',
    boundMs: (n / perMinute) * MINUTE,
    limitMs: 4 * (n / perMinute) * MINUTE + 10 * MINUTE,
  }).then((r) => {
    console.log(PER_CELL_HEADER);
    console.log(perCellRow(r));
    const counts = new Map<string, number>();
    for (const e of r.errorTexts)
      counts.set(e.replace(/\d+/g, 'N'), (counts.get(e.replace(/\d+/g, 'N')) ?? 0) + 1);
    if (counts.size) console.log('errors:', [...counts].slice(0, 8));
  });
}
