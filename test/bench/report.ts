// Renders the benchmark's figures: markdown tables (printed, and written as RESULTS.md) and the SVG chart of the
// rate-bound run. Every figure is shown against its baseline or bound; absolute times are shown, never asserted.
import type { CpuFigures, LoadFigures, SizeFigure } from './cost';
import { CUSTOM_FUNCTION_BUDGET_MS } from './cost';
import type { Exchange } from './env';
import type { Point, RateBoundFigures, RunFigures, SheetFigures, Target } from './scenarios';

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** `value` against the core's `reference`: "×2.5", or what the core had when it had nothing. */
export function versus(value: number, reference: number): string {
  if (reference === 0) return value === 0 ? '= core' : 'core: 0';
  const r = value / reference;
  return `×${r >= 10 ? Math.round(r) : r.toFixed(r < 1 ? 2 : 1)}`;
}

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

function kb(bytes: number | undefined): string {
  return bytes === undefined ? '—' : `${(bytes / 1024).toFixed(1)} KB`;
}

const COLUMNS = ['contender · run', 'requests', 'billed queries', '429 responses', 'rows lost', 'time'];

/**
 * One row of a scenario table: the core's figures plain, a baseline's with its ratio to the core's run of the same
 * kind; against a recalculation (which costs the core nothing) the core's own figure is shown instead of a ratio.
 */
function runRow(label: string, run: RunFigures, core?: RunFigures, coreIsRecalc = false): string[] {
  const compare = (value: number, reference: number | undefined, text: string, referenceText: string) => {
    if (core === undefined || reference === undefined) return text;
    return `${text} (${coreIsRecalc ? `core: ${referenceText}` : versus(value, reference)})`;
  };
  const count = (value: number, reference: number | undefined) =>
    compare(value, reference, String(value), String(reference));
  const lost =
    run.score.wrong > 0 ? `${run.score.lost} (${run.score.wrong} wrong record)` : String(run.score.lost);
  return [
    label,
    count(run.requests, core?.requests),
    count(run.billed, core?.billed) +
      (run.billedTwice > 0 ? `, ${run.billedTwice} domains billed again` : ''),
    String(run.rateLimited),
    lost,
    compare(run.timeMs, core?.timeMs, duration(run.timeMs), duration(core?.timeMs ?? 0)),
  ];
}

export function sheetTable(sheet: SheetFigures, note?: string): string {
  const { core, perRow, fixed } = sheet;
  const rows: string[][] = [runRow('**core**, first run', core.first)];
  if (core.later) rows.push(runRow('**core**, later run (learned maximum, empty cache)', core.later));
  if (core.recalc) rows.push(runRow('**core**, recalculation (cache)', core.recalc));
  if (perRow) {
    rows.push(runRow('per row, first run', perRow.first, core.first));
    if (perRow.recalc) rows.push(runRow('per row, recalculation', perRow.recalc, core.recalc, true));
  } else if (note) rows.push(['per row', note, '', '', '', '']);
  rows.push(runRow('fixed batches, first run', fixed.first, core.first));
  if (fixed.recalc) rows.push(runRow('fixed batches, recalculation', fixed.recalc, core.recalc, true));
  return table(COLUMNS, rows);
}

export function rateBoundTable(rate: RateBoundFigures): string {
  const row = (label: string, run: RunFigures) => {
    const perMinute = run.timeMs > 0 ? (run.score.records / run.timeMs) * 60_000 : 0;
    return [
      label,
      String(run.requests),
      String(run.billed),
      String(run.rateLimited),
      String(run.score.lost),
      duration(run.timeMs),
      (run.timeMs / rate.lowerBoundMs).toFixed(3),
      `${Math.round(perMinute)}`,
    ];
  };
  return table(
    [
      'contender',
      'requests',
      'billed queries',
      '429 responses',
      'rows lost',
      'time',
      'time / lower bound',
      'records per minute',
    ],
    [row('**core**, first run', rate.core), row('per row', rate.perRow), row('fixed batches', rate.fixed)],
  );
}

/** One line per (scenario, plan): the core's run against the plan's bound, so that plans can be read side by side. */
export function planTable(
  lines: Array<{ scenario: string; plan: string; run: RunFigures; boundMs: number; requestsFewest?: number }>,
): string {
  return table(
    [
      'scenario',
      'plan',
      'time',
      'plan bound',
      'time / bound',
      'requests',
      '429 responses',
      'rows lost',
      'billed twice',
    ],
    lines.map(({ scenario, plan, run, boundMs, requestsFewest }) => [
      scenario,
      plan,
      duration(run.timeMs),
      duration(boundMs),
      (run.timeMs / boundMs).toFixed(3),
      requestsFewest ? `${run.requests} (fewest ${requestsFewest})` : String(run.requests),
      String(run.rateLimited),
      String(run.score.lost),
      String(run.billedTwice),
    ]),
  );
}

export function targetsTable(targets: Target[]): string {
  return table(
    ['scenario', 'figure', 'measured', 'target', 'met'],
    targets.map((t) => [t.scenario, t.what, t.actual, t.target, t.met ? 'yes' : '**NO**']),
  );
}

/** The requests of a run in order: status, and URLs processed of URLs sent. */
export function trace(exchanges: readonly Exchange[], startedAt = exchanges[0]?.sentAt ?? 0): string {
  return exchanges
    .map((e) => `${e.status} ${e.processed}/${e.sent} @${((e.sentAt - startedAt) / 1000).toFixed(1)} s`)
    .join(' · ');
}

/**
 * What a run's requests were spent on: plan-maximum probes (422 Limit Exceeded), server failures (5xx, HTML pages),
 * and answered batches, against the fewest batches that could have carried the same URL sends at `max` per request.
 */
export function requestBreakdown(exchanges: readonly Exchange[], max: number): string {
  const probes = exchanges.filter((e) => e.status === 422 && e.sent > max).length;
  const failures = exchanges.filter((e) => e.status >= 500 || e.status === 0).length;
  const throttled = exchanges.filter((e) => e.status === 429).length;
  const batches = exchanges.filter((e) => e.status === 200 || (e.status === 422 && e.sent <= max));
  const sends = batches.reduce((sum, e) => sum + e.sent, 0);
  const fewest = Math.ceil(sends / max);
  const partial = batches.filter((e) => e.sent < max).length;
  return (
    `${exchanges.length} requests = ${probes} plan-maximum probe(s) (422 Limit Exceeded) + ${failures} server failure(s)` +
    (throttled > 0 ? ` + ${throttled} 429(s)` : '') +
    ` + ${batches.length} answered batches carrying ${sends} URL sends, retries included` +
    ` (at least ⌈${sends} / ${max}⌉ = ${fewest} batches; ${partial} of the ${batches.length} were partial)`
  );
}

export function costTable(cpu: CpuFigures, load: LoadFigures, sizes: SizeFigure[]): string {
  const rows: string[][] = [
    [
      `core CPU per 10,000 rows (${cpu.distinct} distinct, mixed spellings; median of ${cpu.runs})`,
      `${cpu.coreMs.toFixed(1)} ms (${cpu.coreRequests} requests)`,
      `${versus(cpu.coreMs, cpu.fixedBatchesMs)} the fixed-batches client (${cpu.fixedBatchesMs.toFixed(1)} ms, ${cpu.fixedBatchesRequests} requests)`,
    ],
  ];
  if ('missing' in load) rows.push(['Apps Script bundle load into a fresh node:vm realm', load.missing, '']);
  else
    rows.push([
      `Apps Script bundle load into a fresh node:vm realm (${kb(load.bytes)}, ${load.entryPoints.length} global functions)`,
      `first ${load.firstMs.toFixed(1)} ms, median of next ${load.runs} ${load.medianMs.toFixed(1)} ms`,
      `${((load.firstMs / CUSTOM_FUNCTION_BUDGET_MS) * 100).toFixed(3)}% of a custom function's 30 s`,
    ]);
  const core = sizes[0];
  for (const size of sizes) {
    if (size.missing) {
      rows.push([`${size.name} size`, size.missing, '']);
      continue;
    }
    const share =
      size === core || !core.minifiedBytes || !size.minifiedBytes
        ? 'reference'
        : `core is ${((core.minifiedBytes / size.minifiedBytes) * 100).toFixed(0)}% of it`;
    const built = size.builtBytes !== size.minifiedBytes ? `; ${kb(size.builtBytes)} as built` : '';
    rows.push([
      `${size.name} size (\`${size.file}\`)`,
      `${kb(size.minifiedBytes)} minified, ${kb(size.gzipBytes)} gzip${built}`,
      share,
    ]);
  }
  return table(['figure', 'measured', 'against'], rows);
}

// ---- SVG chart ------------------------------------------------------------------------------------------------

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Records billed against time for each contender, with the plan's lower bound and the 1.10 × target. */
export function rateBoundSvg(rate: RateBoundFigures): string {
  const width = 800;
  const height = 420;
  const left = 64;
  const right = 280;
  const top = 36;
  const bottom = 52;
  const boundMin = rate.lowerBoundMs / 60_000;
  const runs: Array<{ name: string; color: string; series: Point[]; dash?: string }> = [
    { name: 'core', color: '#1a7f37', series: rate.core.series },
    { name: 'fixed batches', color: '#bc4c00', series: rate.fixed.series },
    { name: 'per row', color: '#8250df', series: rate.perRow.series },
  ];
  const maxMin = Math.max(boundMin * 1.2, ...runs.map((r) => r.series[r.series.length - 1]?.minutes ?? 0));
  const xMax = Math.ceil(maxMin);
  const yMax = rate.domains;
  const x = (minutes: number) => left + (minutes / xMax) * (width - left - right);
  const y = (records: number) => height - bottom - (records / yMax) * (height - top - bottom);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">Rate-bound: ${rate.domains.toLocaleString('en-US')} distinct domains, records billed over time</text>`,
  );
  const xStep = xMax <= 12 ? 1 : 2;
  for (let m = 0; m <= xMax; m += xStep) {
    parts.push(
      `<line x1="${x(m)}" y1="${y(0)}" x2="${x(m)}" y2="${y(yMax)}" stroke="#eeeeee"/>`,
      `<text x="${x(m)}" y="${y(0) + 16}" text-anchor="middle">${m}</text>`,
    );
  }
  for (let r = 0; r <= yMax; r += 1000) {
    parts.push(
      `<line x1="${x(0)}" y1="${y(r)}" x2="${x(xMax)}" y2="${y(r)}" stroke="#eeeeee"/>`,
      `<text x="${x(0) - 6}" y="${y(r) + 4}" text-anchor="end">${r}</text>`,
    );
  }
  parts.push(
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(xMax)}" y2="${y(0)}" stroke="#444444"/>`,
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(0)}" y2="${y(yMax)}" stroke="#444444"/>`,
    `<text x="${(x(0) + x(xMax)) / 2}" y="${height - 14}" text-anchor="middle">minutes (virtual clock)</text>`,
    // The plan's ceiling: URLs per minute, reaching every domain at the lower bound.
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(boundMin)}" y2="${y(yMax)}" stroke="#57606a" stroke-dasharray="6 4"/>`,
    `<line x1="${x(boundMin)}" y1="${y(0)}" x2="${x(boundMin)}" y2="${y(yMax)}" stroke="#57606a" stroke-dasharray="2 3"/>`,
    `<line x1="${x(boundMin * 1.1)}" y1="${y(0)}" x2="${x(boundMin * 1.1)}" y2="${y(yMax)}" stroke="#cf222e" stroke-dasharray="2 3"/>`,
  );
  for (const run of runs) {
    let path = `M${x(0)},${y(0)}`;
    let last = 0;
    for (const p of run.series) {
      path += ` H${x(p.minutes).toFixed(1)} V${y(p.records).toFixed(1)}`;
      last = p.records;
    }
    const end = run.series[run.series.length - 1]?.minutes ?? 0;
    parts.push(
      `<path d="${path}" fill="none" stroke="${run.color}" stroke-width="2"/>`,
      `<circle cx="${x(end).toFixed(1)}" cy="${y(last).toFixed(1)}" r="3" fill="${run.color}"/>`,
    );
  }
  const legend: Array<[string, string, string?]> = [
    ...runs.map((r): [string, string] => {
      const end = r.series[r.series.length - 1] ?? { minutes: 0, records: 0 };
      return [r.color, `${r.name}: ${end.records} of ${yMax}, ${end.minutes.toFixed(1)} min`];
    }),
    ['#57606a', `lower bound: ${boundMin.toFixed(0)} min`, '6 4'],
    ['#cf222e', 'target: 1.10 × lower bound', '2 3'],
  ];
  legend.forEach(([color, label, dash], i) => {
    const ly = top + 14 + i * 20;
    const lx = width - right + 12;
    parts.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`,
      `<text x="${lx + 28}" y="${ly}">${escapeXml(label)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
