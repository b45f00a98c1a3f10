// The scaling-out figures n8n-node/README.md quotes (between <!-- scaling-figures:start --> and :end) are the ones
// test/n8n-e2e/BENCH.md's scaling section measured (`npm run bench:n8n:scale` writes both): the block is rendered
// again from the committed table and compared, so a hand edit or a stale copy fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchSection, parseTable, readmeBlock, readmeBlockOf, table } from '../n8n-e2e/lib/scalingFigures';

const root = join(__dirname, '../..');
const readme = readFileSync(join(root, 'n8n-node/README.md'), 'utf8');
/** Whitespace and table alignment do not count (prettier rewraps and realigns). */
const normal = (text: string) =>
  text
    .replace(/\|\s*:?-+:?\s*(?=\|)/g, '|-')
    .replace(/\s+/g, ' ')
    .trim();

describe('scaling-out figures', () => {
  const section = benchSection(join(root, 'test/n8n-e2e/BENCH.md'));
  const block = readmeBlockOf(readme);

  test('the README keeps the marked figures block', () => {
    expect(block).toBeDefined();
  });

  test('the README quotes exactly what BENCH.md measured (or nothing, before the first bench run)', () => {
    const rows = section ? parseTable(section) : [];
    if (rows.length === 0) {
      expect(block).not.toMatch(/\d+ credits/);
      return;
    }
    expect(normal(block ?? '')).toBe(normal(readmeBlock(rows)));
  });

  test('the table reads back as it was written (the parser and the writer agree)', () => {
    const rows = section ? parseTable(section) : [];
    if (rows.length === 0) return;
    expect(rows.every((r) => Object.values(r).every((v) => v !== '' && !Number.isNaN(v)))).toBe(true);
    expect(normal(table(rows))).toBe(
      normal(section?.slice(section.indexOf('| Setup')).split('\n\n')[0] ?? ''),
    );
  });

  test('a changed figure in the README is caught', () => {
    const rows =
      parseTable(`| Setup | Node | Executions | Distinct domains | Credits billed | 422 Limit Exceeded | Requests all refused (rate_limit_reached) | 429s | Last done (s) | Pace (last / time the distinct need) | Items lost |
| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |
| 1 process | before | 20 | 105 | 200 | 1 | 3 | 0 | 181.2 | 1.73 | 0 |
| 1 process | after | 20 | 105 | 105 | 1 | 0 | 0 | 101.0 | 0.96 | 0 |`);
    expect(rows).toHaveLength(2);
    const good = readmeBlock(rows);
    expect(good).toContain('before 200 credits for 105 domains');
    expect(normal(good.replace('200 credits', '190 credits'))).not.toBe(normal(readmeBlock(rows)));
  });
});
