// apps-script/CONCURRENCY.md against the code: every locked section sits in a module the table lists with that guard,
// every stored key is named there, and nothing asks for the script lock, the script cache or the script properties
// (in a published add-on each is every user's, in every spreadsheet).
import fs from 'node:fs';
import path from 'node:path';
import {
  DOCUMENT_PROPERTY,
  STORE_SHEET,
  USER_PROPERTY,
  VERSIONS_SHEET,
} from '../../apps-script/src/stores/storage-keys';

const ROOT = path.join(__dirname, '..', '..', 'apps-script');
const DOC = fs.readFileSync(path.join(ROOT, 'CONCURRENCY.md'), 'utf8');

function sources(dir = path.join(ROOT, 'src')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sources(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The table's rows: the modules each names (`src/...ts`) and the guards its guard column names. */
function tableRows(): Array<{ modules: string[]; guards: string[] }> {
  return DOC.split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| state') && !line.startsWith('| ---'))
    .map((line) => {
      const cells = line.split(' | ');
      return {
        modules: [...cells[0].matchAll(/`(src\/[\w/-]+\.ts)`/g)].map((m) => m[1]),
        guards: [...(cells[3] ?? '').matchAll(/`(user|document)`/g)].map((m) => m[1]),
      };
    });
}

describe('the shared state (CONCURRENCY.md)', () => {
  it('names a module and a guard for every locked section in the code', () => {
    const rows = tableRows();
    const documented = new Map<string, Set<string>>();
    for (const row of rows)
      for (const m of row.modules) {
        const guards = documented.get(m) ?? new Set<string>();
        for (const g of row.guards) guards.add(g);
        documented.set(m, guards);
      }
    const found: string[] = [];
    for (const file of sources()) {
      const rel = path.relative(ROOT, file).split(path.sep).join('/');
      if (rel === 'src/stores/storage.ts') continue; // the policy itself
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\blocked\('(user|document)'/g)) {
        found.push(`${rel} ${m[1]}`);
        expect({ module: rel, guard: m[1], documented: documented.get(rel)?.has(m[1]) ?? false }).toEqual({
          module: rel,
          guard: m[1],
          documented: true,
        });
      }
    }
    expect(found.length).toBeGreaterThan(5);
  });

  it('names every module it lists as one that exists', () => {
    for (const { modules } of tableRows())
      for (const m of modules)
        expect({ m, exists: fs.existsSync(path.join(ROOT, m)) }).toEqual({ m, exists: true });
  });

  it('names every stored key and the hidden sheet', () => {
    const keys = [
      ...Object.values(USER_PROPERTY),
      ...Object.values(DOCUMENT_PROPERTY),
      STORE_SHEET,
      VERSIONS_SHEET,
    ];
    for (const key of keys) expect({ key, named: DOC.includes(`\`${key}`) }).toEqual({ key, named: true });
  });

  it('never asks for the script lock, the script cache or the script properties (source and built Code.js)', () => {
    const script = /getScriptLock|getScriptCache|getScriptProperties/;
    for (const file of sources())
      expect({ file, script: script.test(fs.readFileSync(file, 'utf8')) }).toEqual({ file, script: false });
    const built = path.join(ROOT, 'dist', 'Code.js');
    expect(fs.existsSync(built)).toBe(true);
    expect(script.test(fs.readFileSync(built, 'utf8'))).toBe(false);
  });
});
