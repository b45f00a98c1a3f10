// One owner per store, and the upkeep's decision as pure code: the log's rows weighed without a service call (dead
// results and claims, the oldest result, past the retention or not); each store touched by the one owner module the
// stores table of docs/developers.md names, each memory tier handed to its owner alone, the check session's four
// steps, and "Remove DAPA" deleting stored values through their owners' operations, never the raw stores.
import fs from 'node:fs';
import path from 'node:path';
import { CLAIM_GRACE_MS, CLAIM_PREFIX } from '../../apps-script/src/stores/store-sheet';
import { batchRows, weigh } from '../../apps-script/src/stores/results';

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

/** The stores table of docs/developers.md: each row's store and the one owner module it names. */
function storesTable(): Array<{ store: string; owner: string }> {
  const text = fs.readFileSync(path.resolve(__dirname, '../../docs/developers.md'), 'utf8');
  const section = text.slice(text.indexOf('### Stores: one owner each'));
  const rows = section.slice(section.indexOf('| store')).split('\n');
  return rows
    .slice(
      2,
      rows.findIndex((line, i) => i > 1 && !line.startsWith('|')),
    )
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map(([, store, owner]) => ({ store, owner: owner.replace(/^`|`$/g, '') }));
}

/**
 * What touching each store is, in the source: the raw handle or Google's own calls on it. `platform/gas.ts` (Google's
 * services asked, nothing read or written) and `stores/session.ts` (the handles, asked once an execution) are allowed
 * beside the owner where they hand the handle over.
 */
const STORES: Array<{ row: string; owner: string; touch: RegExp; handedBy?: string[] }> = [
  {
    row: 'user properties',
    owner: 'stores/storage.ts',
    touch: /\buserProperties\(\)|getUserProperties\(/,
    handedBy: ['platform/gas.ts', 'stores/session.ts'],
  },
  {
    row: 'document properties',
    owner: 'stores/storage.ts',
    touch: /\bdocumentProperties\(\)|getDocumentProperties\(/,
    handedBy: ['platform/gas.ts', 'stores/session.ts'],
  },
  {
    row: 'developer metadata',
    owner: 'stores/storage.ts',
    touch: /DeveloperMetadata/,
  },
  {
    row: 'document cache',
    owner: 'stores/storage.ts',
    touch: /\bdocumentCache\(\)|getDocumentCache\(/,
    handedBy: ['platform/gas.ts', 'stores/session.ts'],
  },
  {
    row: 'user cache',
    owner: 'stores/storage.ts',
    touch: /\buserCache\(\)|getUserCache\(/,
    handedBy: ['platform/gas.ts', 'stores/session.ts'],
  },
  {
    row: 'hidden sheet `_dapa_results`',
    owner: 'stores/store-sheet.ts',
    touch:
      /getSheetByName\(STORE_SHEET|\bSTORE_SHEET\b(?![^\n]*RegExp)[^\n]*(getSheetByName|insertSheet|deleteSheet|getRange)/,
  },
  {
    row: 'hidden sheet `_dapa_versions`',
    owner: 'stores/store-sheet.ts',
    touch:
      /getSheetByName\(VERSIONS_SHEET|\bVERSIONS_SHEET\b(?![^\n]*RegExp)[^\n]*(getSheetByName|insertSheet|deleteSheet|getRange)/,
  },
];

/** The files that name `pattern`, comments left out (a comment may name a store without touching it). */
function touching(pattern: RegExp): string[] {
  return sources()
    .filter(({ text }) => pattern.test(text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '')))
    .map(({ file }) => file)
    .sort();
}

/** Which modules import `name` from the store session. */
function importersOf(name: string): string[] {
  return sources()
    .filter(({ text }) =>
      [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'[./]*(?:stores\/)?session'/g)].some((m) =>
        m[1].split(',').some((part) => part.trim() === name),
      ),
    )
    .map(({ file }) => file)
    .sort();
}

describe('one owner per store', () => {
  const table = storesTable();

  it.each(STORES)('$row: read and written by $owner alone, as the stores table says', (store) => {
    expect(touching(store.touch)).toEqual([store.owner, ...(store.handedBy ?? [])].sort());
    expect(table.find((r) => r.store.startsWith(store.row))?.owner).toBe(store.owner);
  });

  it("the hidden sheets are made, hidden and deleted by their owner alone (the sample sheet is the user's, not a store)", () => {
    expect(touching(/\.(deleteSheet|hideSheet|insertSheet)\(/)).toEqual([
      'sample/sample.ts',
      'sidebar/remove-all.ts',
      'stores/store-sheet.ts',
    ]);
    // "Remove DAPA" deletes the sample sheet (the user's to look at, not a store) itself, and nothing else.
    const removal = fs.readFileSync(path.join(SRC, 'sidebar/remove-all.ts'), 'utf8');
    expect([...removal.matchAll(/\.deleteSheet\((\w+)\)/g)].map((m) => m[1])).toEqual(['sample']);
    expect(removal).toMatch(/const sample = spreadsheet\.getSheetByName\(SAMPLE_SHEET\)/);
    // Other modules name the hidden sheets only to read references in formula text.
    const naming = sources().filter(
      ({ file, text }) => file !== 'stores/store-sheet.ts' && /\b(STORE_SHEET|VERSIONS_SHEET)\b/.test(text),
    );
    for (const { file, text } of naming)
      for (const line of text.split('\n').filter((l) => /\b(STORE_SHEET|VERSIONS_SHEET)\b/.test(l)))
        expect(`${file}: ${line.trim()}`).toMatch(
          /^[^:]+: (import |export const|\/\/|\*|const \w+ = new RegExp)/,
        );
  });

  it('every row of the stores table is held by a case above, and names one module', () => {
    expect(table.length).toBeGreaterThanOrEqual(STORES.length);
    for (const { store, owner } of table) {
      expect(owner).toMatch(/^stores\/[a-z-]+\.ts$/);
      expect(fs.existsSync(path.join(SRC, owner))).toBe(true);
      expect([...STORES.map((s) => s.row), 'memory tiers'].some((row) => store.startsWith(row))).toBe(true);
    }
  });

  it('the session hands each memory tier to its one owner only, and the whole session to nobody', () => {
    const session = fs.readFileSync(path.join(SRC, 'stores/session.ts'), 'utf8');
    const tiers = [...session.matchAll(/^export const (\w+Tier) = /gm)].map((m) => m[1]);
    expect(tiers.length).toBeGreaterThanOrEqual(8);
    const row = table.find((r) => r.store.startsWith('memory tiers'));
    expect(row?.owner).toBe('stores/session.ts');
    const text = fs.readFileSync(path.resolve(__dirname, '../../docs/developers.md'), 'utf8');
    for (const tier of tiers) {
      const owners = importersOf(tier);
      expect({ tier, owners: owners.length }).toEqual({ tier, owners: 1 });
      // The table names the same owner.
      const owner = owners[0].replace(/^stores\//, '');
      expect(text).toContain(`\`${tier}\` \`${owner}\``);
    }
    expect(session).not.toMatch(/^export function session\(/m);
  });

  it('the check session holds, runs, keeps and settles (no flag decides whether a check keeps)', () => {
    const check = fs.readFileSync(path.join(SRC, 'checks/check.ts'), 'utf8');
    const body = check.slice(
      check.indexOf('export class CheckSession'),
      check.indexOf('\n}\n', check.indexOf('export class CheckSession')),
    );
    for (const step of ['hold(', 'run(', 'keep(', 'settle(']) expect(body).toContain(`\n  ${step}`);
    expect(check).not.toMatch(/\bkeep: (true|false|boolean)/);
    // Results are kept by the session alone: the result store and the saved count are written nowhere else here.
    for (const keeps of ['storeRecords(', 'noteSaved('])
      expect(check.split(keeps).length).toBe(body.split(keeps).length);
    expect(body.split('storeRecords(').length).toBe(2);
  });

  it('removes DAPA through the owners of what it stored, never the raw stores', () => {
    const text = fs.readFileSync(path.join(SRC, 'sidebar/remove-all.ts'), 'utf8');
    expect(text).not.toMatch(
      /documentProperties|deleteKeys|USER_PROPERTY|PropertiesService|DeveloperMetadata|STORE_SHEET|VERSIONS_SHEET/,
    );
    expect(text).toMatch(/deleteHiddenSheets\(/);
    expect(text).toMatch(/forgetJob\(/);
    expect(text).toMatch(/forgetAllMetadata\(/);
    expect(text).toMatch(/forgetBackground\(/);
    expect(text).toMatch(/forgetSaved\(/);
  });
});
