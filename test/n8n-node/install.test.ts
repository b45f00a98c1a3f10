// n8n-node/install.mjs as a self-hoster runs it, and the README's manual npm route: help without side effects,
// unknown options refused, an install that leaves no reference to a file that is gone, and `npm install` of the
// package in a nodes folder that pulls no n8n-workflow (whose isolated-vm does not build on Node.js 20).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const INSTALL = path.join(ROOT, 'n8n-node', 'install.mjs');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'dapa-install-test-'));
let tarball = '';
/** A copy of the packed tarball that no test removes. */
let kept = '';

function run(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [INSTALL, ...args], { cwd, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A fresh empty folder to run in: whatever the script makes appears in it. */
function emptyDir(name: string): string {
  const dir = path.join(scratch, name);
  mkdirSync(dir);
  return dir;
}

beforeAll(() => {
  const packed = spawnSync(
    process.execPath,
    [path.join(ROOT, 'n8n-node', 'pack.mjs'), '--out', path.join(scratch, 'pack')],
    {
      encoding: 'utf8',
    },
  );
  if (packed.status !== 0) throw new Error(`pack.mjs failed: ${packed.stderr}`);
  tarball = packed.stdout.trim().split('\n').pop() ?? '';
  kept = path.join(emptyDir('kept'), path.basename(tarball));
  copyFileSync(tarball, kept);
}, 120_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('node n8n-node/install.mjs', () => {
  test.each([[['-h']], [['--help']], [['./nodes', '--help']], [['-h', './nodes']]])(
    '%j prints the usage and installs nothing',
    (args) => {
      const cwd = emptyDir(`help-${args.join('_').replace(/[^\w-]/g, '')}`);
      const result = run(args, cwd);
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('Usage:');
      expect(result.stdout).toContain('node n8n-node/install.mjs ~/.n8n/nodes');
      expect(result.stdout).toContain('--tarball <file>');
      expect(readdirSync(cwd)).toEqual([]);
    },
  );

  test.each([
    [['./nodes', '--bogus'], 'unknown option --bogus'],
    [['-x'], 'unknown option -x'],
    [['./nodes', './other'], 'one folder only'],
    [['./nodes', '--tarball'], '--tarball needs a file'],
    [[], 'no folder given'],
  ])('%j is refused (%s), with the usage, and installs nothing', (args, message) => {
    const cwd = emptyDir(`bad-${args.join('_').replace(/[^\w-]/g, '') || 'none'}`);
    const result = run(args, cwd);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`n8n-node install: ${message}`);
    expect(result.stderr).toContain('Usage:');
    expect(readdirSync(cwd)).toEqual([]);
  });

  test('an install leaves every file: reference of the folder pointing at a file that is there', () => {
    const folder = path.join(scratch, 'nodes');
    for (let round = 0; round < 2; round++) {
      // Twice: an update over an install keeps one copy.
      const result = run([folder, '--tarball', tarball], scratch);
      expect(result.status).toBe(0);
      expect(result.stdout.trim()).toBe(path.join(folder, 'node_modules', 'n8n-nodes-dapa-checker'));
    }
    rmSync(path.dirname(tarball), { recursive: true, force: true }); // the packed tarball's folder goes, as pack's does
    const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const reference = manifest.dependencies['n8n-nodes-dapa-checker'];
    expect(reference).toBe(`file:${path.basename(tarball)}`);
    const lock = readFileSync(path.join(folder, 'package-lock.json'), 'utf8');
    const references = [
      ...Object.values(manifest.dependencies),
      ...[...lock.matchAll(/"(file:[^"]+)"/g)].map((m) => m[1]),
    ].filter((r) => r.startsWith('file:'));
    expect(references.length).toBeGreaterThan(0);
    for (const r of references) expect(existsSync(path.resolve(folder, r.slice('file:'.length)))).toBe(true);
    expect(readdirSync(folder).filter((f) => f.endsWith('.tgz'))).toEqual([path.basename(tarball)]);
    // A later plain `npm install` in the folder (another community node's) still finds the package.
    const again = spawnSync(
      'npm',
      ['install', '--legacy-peer-deps', '--offline', '--no-audit', '--no-fund'],
      {
        cwd: folder,
        encoding: 'utf8',
      },
    );
    expect(again.status).toBe(0);
  }, 120_000);
});

describe("n8n-node/README.md's manual route (npm install in ~/.n8n/nodes)", () => {
  test('runs as written (the package from its tarball) and installs no n8n-workflow or isolated-vm', () => {
    const readme = readFileSync(path.join(ROOT, 'n8n-node', 'README.md'), 'utf8');
    const command = /`(npm install [^`]*n8n-nodes-dapa-checker)` in `~\/\.n8n\/nodes`/.exec(readme)?.[1];
    expect(command).toBeDefined();
    const folder = emptyDir('manual-nodes');
    // The published name stands for the same package packed here; --offline: nothing may come from the registry.
    const args = (command ?? '').split(/\s+/).slice(1);
    const local = path.join(folder, path.basename(kept));
    copyFileSync(kept, local);
    const result = spawnSync(
      'npm',
      [
        ...args.map((a) => (a === 'n8n-nodes-dapa-checker' ? local : a)),
        '--offline',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: folder, encoding: 'utf8' },
    );
    expect(result.status).toBe(0);
    expect(existsSync(path.join(folder, 'node_modules', 'n8n-nodes-dapa-checker', 'package.json'))).toBe(
      true,
    );
    expect(existsSync(path.join(folder, 'node_modules', 'n8n-workflow'))).toBe(false);
    expect(existsSync(path.join(folder, 'node_modules', 'isolated-vm'))).toBe(false);
  }, 120_000);
});
