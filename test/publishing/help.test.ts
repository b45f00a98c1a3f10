// Every command the documents name answers `--help` with its usage and does nothing else: run in a fresh clone of the
// committed tree, each leaves the clone as it found it (git status, ignored files included: nothing built, installed
// or written).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const DOCS = [
  'README.md',
  'docs/guide.md',
  'docs/developers.md',
  'n8n-node/README.md',
  'apps-script/README.md',
  'test/n8n-e2e/README.md',
];
/**
 * Named by a document but answered elsewhere: the scaling-out script is the shared-store work's (its modes are its
 * usage, run.sh runs it).
 */
const NOT_HERE = new Set(['npx tsx test/n8n-e2e/shared.ts']);

/** The commands the documents name: npm scripts, and node/bash/tsx scripts of the repository. */
function documentedCommands(): string[] {
  const found = new Set<string>();
  for (const doc of DOCS) {
    const text = readFileSync(path.join(REPO, doc), 'utf8');
    const pattern =
      /(npm run [a-z0-9:-]+|node [\w./-]+\.(?:mjs|js)|bash [\w./-]+\.sh|npx tsx [\w./-]+\.ts)(?![\w./:-])/g;
    for (const m of text.matchAll(pattern)) found.add(m[1]);
  }
  return [...found].filter((c) => !NOT_HERE.has(c)).sort();
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'dapa-help-'));
const clone = path.join(scratch, 'clone');
const status = () =>
  spawnSync('git', ['status', '--porcelain', '--ignored', '--untracked-files=all'], {
    cwd: clone,
    encoding: 'utf8',
  }).stdout;
let before = '';

beforeAll(() => {
  const cloned = spawnSync('git', ['clone', '--quiet', '--local', REPO, clone], { encoding: 'utf8' });
  if (cloned.status !== 0) throw new Error(`git clone failed: ${cloned.stderr}`);
  symlinkSync(path.join(REPO, 'node_modules'), path.join(clone, 'node_modules'));
  before = status();
}, 60_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test('the documents name the commands a user runs', () => {
  const commands = documentedCommands();
  for (const c of [
    'npm run push',
    'npm run sandbox',
    'npm run demo',
    'node n8n-node/install.mjs',
    'npm run build',
  ])
    expect(commands).toContain(c);
});

test.each(documentedCommands().map((c) => [c]))(
  '%s --help prints its usage and changes nothing',
  (command) => {
    const [tool, ...rest] = command.split(' ');
    const args = tool === 'npm' ? [...rest, '--', '--help'] : [...rest, '--help'];
    const run = spawnSync(tool, args, { cwd: clone, encoding: 'utf8', timeout: 60_000 });
    const output = `${run.stdout}${run.stderr}`;
    expect({ command, status: run.status }).toEqual({ command, status: 0 });
    expect(output).toMatch(/usage/i);
    expect(status()).toBe(before);
  },
  60_000,
);
