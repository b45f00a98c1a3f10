// One owner per store, and the upkeep's decision as pure code: the log's rows weighed without a service call (dead
// results and claims, the oldest result, past the retention or not), the document cache's handle taken by its owner
// module alone, and "Remove DAPA" deleting stored values through their owners' operations, never the raw stores.
import fs from 'node:fs';
import path from 'node:path';
import { CLAIM_GRACE_MS, CLAIM_PREFIX } from '../../apps-script/src/stores/claims';
import { batchRows } from '../../apps-script/src/stores/result-rows';
import { weigh } from '../../apps-script/src/stores/store-compaction';

const SRC = path.resolve(__dirname, '../../apps-script/src');
const DAY = 86_400_000;
const NOW = 100 * DAY;
const record = (domain: string) => ({ domain, site_da: 1, site_pa: 2, site_mr: 3, spam_score: 4 });
const results = (at: number, ...keys: string[]) =>
  batchRows(
    's1',
    keys.map((key) => ({ key, record: record(key) })),
    at,
  )[0];
const claimed = (at: number, until: number, holder = 'h1') => [at, CLAIM_PREFIX + 'step', holder, until];

describe("the upkeep's weighing (pure: the rows read once)", () => {
  const rows = [
    ['domain', 'service', 'record', 'checked at (ms)'],
    results(NOW - 40 * DAY, 'old.com'), // 1: past 30 days
    results(NOW - 2 * DAY, 'a.com'), // 2: superseded by row 3
    results(NOW - DAY, 'a.com', 'b.com'), // 3: live
    claimed(NOW - 3 * CLAIM_GRACE_MS, NOW - 2 * CLAIM_GRACE_MS), // 4: ended long ago
    claimed(NOW - 1000, NOW + 60_000), // 5: held now
    ['', '', '', ''], // 6: blank
  ];

  it('finds the superseded, expired, ended and blank rows, and the oldest result', () => {
    const weight = weigh(rows, NOW, 30);
    expect(weight.dead.sort((a, b) => a - b)).toEqual([1, 2, 4, 6]);
    expect(weight.oldest).toBe(NOW - 40 * DAY);
    expect(weight.expired).toBe(true);
  });

  it('keeps what a longer retention still keeps', () => {
    const weight = weigh(rows, NOW, 60);
    expect(weight.dead.sort((a, b) => a - b)).toEqual([2, 4, 6]);
    expect(weight.expired).toBe(false);
  });

  it('an empty log has nothing dead and no oldest result', () => {
    expect(weigh([rows[0]], NOW, 30)).toEqual({ dead: [], oldest: Infinity, expired: false });
  });
});

function sources(): Array<{ file: string; text: string }> {
  return fs
    .readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: f.split(path.sep).join('/'), text: fs.readFileSync(path.join(SRC, f), 'utf8') }));
}

describe('one owner per store', () => {
  it("takes the document cache's handle in its owner module only", () => {
    const takers = sources()
      .filter(({ text }) => /\bdocumentCache\(\)/.test(text))
      .map(({ file }) => file);
    expect(takers.sort()).toEqual(['stores/document-cache.ts', 'stores/session.ts']);
  });

  it('removes DAPA through the owners of what it stored, never the raw stores', () => {
    const text = fs.readFileSync(path.join(SRC, 'sidebar/remove-all.ts'), 'utf8');
    expect(text).not.toMatch(/documentProperties|deleteKeys|USER_PROPERTY|PropertiesService/);
    expect(text).toMatch(/forgetJob\(/);
    expect(text).toMatch(/forgetAllMetadata\(/);
    expect(text).toMatch(/forgetBackground\(/);
    expect(text).toMatch(/forgetSaved\(/);
  });
});
