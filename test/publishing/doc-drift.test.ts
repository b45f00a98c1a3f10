// What the user documents say about the n8n node and the plan's pace comes from the code that decides it: the
// options' defaults from the node's description (and what the node uses when an option is not added), the guide's
// times for 60, 500 and 5,000 domains from the demo's estimator (`npm run demo`: the core on the sandbox's entry plan,
// on a virtual clock), and one route for importing the shipped templates.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_SETTINGS, dapaCheckerProperties } from '../../n8n-node/nodes/DapaChecker/description';
import { readSettings } from '../../n8n-node/nodes/DapaChecker/settings';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
/** A document with its line breaks as spaces (sentences are wrapped). */
const flat = (file: string) => read(file).replace(/\s+/g, ' ');

interface OptionProperty {
  displayName: string;
  name: string;
  default: unknown;
}
const options = (
  dapaCheckerProperties.find((p) => p.name === 'options') as unknown as { options: OptionProperty[] }
).options;

/** The README's Options table: option name → its Default cell. */
function optionsTable(): Map<string, string> {
  const rows = new Map<string, string>();
  const section = read('n8n-node/README.md').split('### Options')[1]?.split('\n### ')[0] ?? '';
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length > 3 && cells[1] && !/^-+$/.test(cells[1]) && cells[1] !== 'Option')
      rows.set(cells[1], cells[2]);
  }
  return rows;
}

describe("the n8n node's option defaults in the documents are the node's", () => {
  const table = optionsTable();
  const unset = readSettings({});
  if ('message' in unset) throw new Error(unset.message);

  test('the README lists every option of the node, and no other', () => {
    expect([...table.keys()].sort()).toEqual(options.map((o) => o.displayName).sort());
  });

  test.each(options.map((o) => [o.displayName, o] as const))(
    '%s: the Default cell is what the node uses when the option is not added',
    (_name, option) => {
      const cell = table.get(option.displayName) ?? '';
      const used = (unset as unknown as Record<string, unknown>)[option.name];
      expect(used).toBe(DEFAULT_SETTINGS[option.name as keyof typeof DEFAULT_SETTINGS]);
      if (typeof used === 'boolean') expect(cell).toBe(used ? 'on' : 'off');
      else if (used === undefined) expect(cell).toBe('none');
      else expect(cell.split(' ')[0]).toBe(String(used));
      // An option whose field shows another value when added says so.
      if (option.default !== used)
        expect(flat('n8n-node/README.md')).toContain(`shown as ${String(option.default)} when added`);
    },
  );

  test("the guide's word on what the node keeps between executions is Reuse Results For's default", () => {
    const hours = options.find((o) => o.name === 'reuseResultsHours')?.default as number;
    expect(hours).toBe(unset.reuseResultsHours);
    const guide = flat('docs/guide.md');
    expect(guide).toContain(
      `reused by later executions with the same key for **Reuse Results For (Hours)**, by default ${hours} hours (${hours / 24} days)`,
    );
    expect(guide).not.toMatch(/keeps no results/);
  });
});

describe("the guide's times for a list on the entry plan are the demo's", () => {
  /** `npm run demo`'s lines "  500 distinct domains: 8.0 min (... = 7.3 min at least)", by list length. */
  const demo = new Map<number, { takes: string; least?: string }>();
  beforeAll(() => {
    const run = spawnSync(
      process.execPath,
      [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'test/demo.ts', '--no-build'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    for (const m of run.stdout.matchAll(/^\s+(\d+) distinct domains: ([\d.]+ (?:s|min)) \(([^;]*)\);/gm)) {
      demo.set(Number(m[1]), { takes: m[2], least: /= ([\d.]+ min) at least/.exec(m[3])?.[1] });
    }
    if (demo.size !== 3) throw new Error(`the demo printed no plan durations:\n${run.stdout}\n${run.stderr}`);
  }, 120_000);

  test('"Limits of the entry plan": 60, 500 and 5,000 domains', () => {
    const guide = flat('docs/guide.md');
    const d = (n: number) => demo.get(n) ?? { takes: '?' };
    expect(d(60).least).toBeUndefined(); // within the first minute's allowance
    expect(guide).toContain(
      `60 domains ${d(60).takes}, 500 domains ${d(500).takes} (${d(500).least} at least), 5,000 domains ${d(5000).takes} (${d(5000).least} at least)`,
    );
  });

  test('"How fast" in Sheets: 500 new domains', () => {
    const guide = flat('docs/guide.md');
    const d = demo.get(500);
    expect(guide).toContain(`500 new domains take at least ${d?.least} whatever the tool`);
    expect(guide).toContain(`\`npm run demo\` takes ${d?.takes} with the core`);
    expect(guide).not.toMatch(/at least 500 \/ 60/);
  });
});

test('the templates are imported the same way in the guide and the README (the editor’s ⋯ menu)', () => {
  const route = "the editor's **⋯** menu (top right) → **Import from File...**";
  expect(flat('docs/guide.md')).toContain(route);
  expect(flat('n8n-node/README.md')).toContain(route);
  for (const file of ['docs/guide.md', 'n8n-node/README.md', 'README.md'])
    expect(flat(file)).not.toContain('Workflows → Import from File');
});
