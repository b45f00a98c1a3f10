// The scaling-out figures as text, with no I/O beyond reading a file: the BENCH.md table of the four figures before
// and after, read back from it, and the README's figures block rendered from its rows (the writer, lib/scalingDoc.ts,
// and the jest test test/publishing/scaling-figures.test.ts both use these).
import { existsSync, readFileSync } from 'node:fs';

export const BLOCK_START = '<!-- scaling-figures:start -->';
export const BLOCK_END = '<!-- scaling-figures:end -->';

export interface TableRow {
  setup: string;
  node: string;
  executions: number;
  distinct: number;
  billed: number;
  limitExceeded: number;
  allRefused: number;
  tooMany: number;
  lastS: number;
  pace: number;
  lost: number;
}

const HEADER = [
  'Setup',
  'Node',
  'Executions',
  'Distinct domains',
  'Credits billed',
  '422 Limit Exceeded',
  'Requests all refused (rate_limit_reached)',
  '429s',
  'Last done (s)',
  'Pace (last / time the distinct need)',
  'Items lost',
];

export function table(rows: TableRow[]): string {
  const cells = (r: TableRow) => [
    r.setup,
    r.node,
    r.executions,
    r.distinct,
    r.billed,
    r.limitExceeded,
    r.allRefused,
    r.tooMany,
    r.lastS.toFixed(1),
    r.pace.toFixed(2),
    r.lost,
  ];
  return [
    `| ${HEADER.join(' | ')} |`,
    `| ${HEADER.map((_h, i) => (i < 2 ? '---' : '--:')).join(' | ')} |`,
    ...rows.map((r) => `| ${cells(r).join(' | ')} |`),
  ].join('\n');
}

/** The rows of the table in a scaling section (the inverse of `table`). */
export function parseTable(section: string): TableRow[] {
  const lines = section.split('\n').filter((l) => /^\|/.test(l.trim()));
  const at = lines.findIndex((l) => l.includes('Requests all refused'));
  if (at < 0) return [];
  return lines.slice(at + 2).map((l) => {
    const c = l
      .split('|')
      .slice(1, -1)
      .map((x) => x.trim());
    const n = c.map(Number);
    return {
      setup: c[0],
      node: c[1],
      executions: n[2],
      distinct: n[3],
      billed: n[4],
      limitExceeded: n[5],
      allRefused: n[6],
      tooMany: n[7],
      lastS: n[8],
      pace: n[9],
      lost: n[10],
    };
  });
}

/** The README's figures block, rendered from the table's rows. */
export function readmeBlock(rows: TableRow[]): string {
  const pick = (r: TableRow) =>
    `${r.billed} credits for ${r.distinct} domains, ${r.limitExceeded} "Limit Exceeded", ${r.allRefused} ${r.allRefused === 1 ? 'request' : 'requests'} refused whole as \`rate_limit_reached\`, ` +
    `${r.pace.toFixed(2)} x the time the domains need, ${r.lost} items lost`;
  const setups = [...new Set(rows.map((r) => r.setup))];
  return setups
    .map((setup) => {
      const of = rows.filter((r) => r.setup === setup);
      const n = of[0];
      const by = (node: string) => of.find((r) => r.node === node);
      const before = by('before');
      const after = by('after');
      // Lists overlapping their neighbour by half: distinct = size / 2 x (executions + 1).
      const size = Math.round((2 * n.distinct) / (n.executions + 1));
      const plan = /\(plan: ([^)]*)\)/.exec(setup);
      const where = plan ? setup.replace(plan[0], '').trim() : setup;
      const head =
        `- ${where}, ${n.executions} executions of lists of ${size.toLocaleString('en-US')} overlapping by half, started together, ` +
        `on ${plan ? `a plan of ${plan[1]}` : 'the entry plan'}: `;
      if (!before && after) return `${head}with sharing ${pick(after)}.`;
      return (
        head +
        `before ${before ? pick(before) : 'not measured'}; with sharing ${after ? pick(after) : 'not measured'}.`
      );
    })
    .join('\n');
}

/** The README's figures block as it stands (between the markers), or undefined. */
export function readmeBlockOf(readme: string): string | undefined {
  const from = readme.indexOf(BLOCK_START);
  const to = readme.indexOf(BLOCK_END);
  if (from < 0 || to < from) return undefined;
  return readme.slice(from + BLOCK_START.length, to).trim();
}

/** The scaling section of a BENCH.md (lib/benchDoc.ts's markers), if any. */
export function benchSection(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const found = /<!-- section:scaling [^>]*-->([\s\S]*?)<!-- \/section:scaling -->/.exec(
    readFileSync(file, 'utf8'),
  );
  return found?.[1];
}
