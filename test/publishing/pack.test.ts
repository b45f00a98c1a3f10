// What is published of n8n-node/: the tarball of n8n-node/pack.mjs (a fresh build, package.json as committed; the
// release workflow uploads it, the e2e suite loads it in real n8n) holds only dist/, the workflow templates, the
// README, the LICENSE and package.json; no source maps or local paths; no sources or tests. It installs into an empty folder without the
// network (no runtime dependencies; n8n-workflow is the host n8n's) and its node and credential load from there.
// And `npm pack` of the folder itself (what a hand-run `npm publish` in n8n-node/ would take) picks the same files.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

const root = join(__dirname, '../..');
const packageDir = join(root, 'n8n-node');
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));

/** npm's environment without what an outer `npm test` sets for its own package. */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_/i.test(name) || /^npm_config_(prefix|global|local_prefix)$/i.test(name))
      continue;
    env[name] = value;
  }
  return { ...env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
}

function npm(args: string[], cwd: string): string {
  const result = spawnSync('npm', args, { cwd, env: npmEnv(), encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) {
    throw new Error(`npm ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** The entries of a .tgz (ustar, as npm writes it): path and content. */
function untar(file: string): Map<string, Buffer> {
  const data = gunzipSync(readFileSync(file));
  const entries = new Map<string, Buffer>();
  let longName: string | undefined;
  for (let at = 0; at + 512 <= data.length;) {
    const header = data.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    const body = data.subarray(at + 512, at + 512 + size);
    longName = undefined;
    if (type === 'L') longName = body.toString('utf8').replace(/\0.*$/s, '');
    else if (type === '0' || type === '') entries.set(name, Buffer.from(body));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

const FORK = 'some-fork/dapa-fork';
let work: string;
let tarball: string;
let entries: Map<string, Buffer>;
let released: Record<string, unknown>;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'n8n-pack-'));
  const args = [join(packageDir, 'pack.mjs'), '--out', join(work, 'pack'), '--repo', FORK];
  const packed = spawnSync(process.execPath, args, {
    env: { ...npmEnv(), PACKAGE_AUTHOR_EMAIL: '', GITHUB_REPOSITORY_OWNER_ID: '' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (packed.status !== 0) throw new Error(`pack.mjs failed:\n${packed.stdout}\n${packed.stderr}`);
  tarball = packed.stdout.trim().split('\n').pop()!;
  entries = untar(tarball);
  // The manifest as packed for FORK, by the same script's --fill (nothing is filled in: the file is the one place).
  const copy = join(work, 'package.json');
  writeFileSync(copy, JSON.stringify(manifest));
  execFileSync(process.execPath, [join(packageDir, 'pack.mjs'), '--fill', copy, '--repo', FORK], {
    env: { ...process.env, PACKAGE_AUTHOR_EMAIL: '', GITHUB_REPOSITORY_OWNER_ID: '' },
    stdio: 'pipe',
  });
  released = JSON.parse(readFileSync(copy, 'utf8'));
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm pack of n8n-node/', () => {
  test('the tarball is named after the package version', () => {
    expect(tarball.endsWith(`n8n-nodes-dapa-checker-${manifest.version}.tgz`)).toBe(true);
  });

  test('it holds only dist/, the workflow templates, the README, the LICENSE and package.json', () => {
    const files = [...entries.keys()].map((path) => path.replace(/^package\//, '')).sort();
    expect(files).toEqual([
      'LICENSE',
      'README.md',
      'dist/credentials/DapaCheckerApi.credentials.js',
      'dist/credentials/DapaSharedStateApi.credentials.js',
      'dist/nodes/DapaChecker/DapaChecker.node.js',
      'dist/nodes/DapaChecker/DapaChecker.node.json',
      'dist/nodes/DapaChecker/dapa.dark.svg',
      'dist/nodes/DapaChecker/dapa.svg',
      'package.json',
      'templates/check-only-what-is-new.json',
      'templates/monthly-watch.json',
    ]);
  });

  test('the LICENSE shipped is the MIT license of the repository', () => {
    const shipped = entries.get('package/LICENSE')!.toString('utf8');
    expect(shipped).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
    expect(shipped).toMatch(/^MIT License\n/);
    expect(manifest.license).toBe('MIT');
  });

  test('no source maps, no sources, no tests, no local paths', () => {
    const local = [root, packageDir, work, homedir(), tmpdir()].filter((path) => path.length > 1);
    for (const [path, content] of entries) {
      expect(path).not.toMatch(/\.map$|\.ts$|\.test\.|\/test\/|__tests__|\.mjs$|\.sh$/);
      expect(path.startsWith('package/')).toBe(true);
      const text = content.toString('utf8');
      expect(text).not.toMatch(/sourceMappingURL/);
      for (const dir of local) expect({ path, has: text.includes(dir) }).toEqual({ path, has: false });
    }
  });

  test('the packed package.json is the committed manifest as it is (nothing filled in), with no dependencies', () => {
    const packed = JSON.parse(entries.get('package/package.json')!.toString('utf8'));
    expect(packed).toEqual(released);
    expect(packed).toEqual(manifest);
    expect(packed.dependencies).toBeUndefined();
    expect(packed.bundleDependencies ?? packed.bundledDependencies).toBeUndefined();
  });

  test('it installs into an empty folder offline, and its node and credential load there', () => {
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'clean-app', version: '1.0.0', private: true }),
    );
    // --offline: nothing may be fetched; --legacy-peer-deps: the peer n8n-workflow is the host n8n's, not installed.
    npm(['install', '--offline', '--legacy-peer-deps', '--no-audit', '--no-fund', tarball], app);
    expect(readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual([
      'n8n-nodes-dapa-checker',
    ]);
    const installed = join(app, 'node_modules/n8n-nodes-dapa-checker');
    for (const file of [...manifest.n8n.nodes, ...manifest.n8n.credentials]) {
      expect(existsSync(join(installed, file))).toBe(true);
    }
    // Loaded as n8n loads it, with n8n-workflow coming from elsewhere (here the root node_modules).
    const probe = `
      const p = require('n8n-nodes-dapa-checker/package.json');
      const node = require('n8n-nodes-dapa-checker/' + p.n8n.nodes[0]);
      const cred = require('n8n-nodes-dapa-checker/' + p.n8n.credentials[0]);
      console.log(JSON.stringify({ node: new node.DapaChecker().description.name, credential: new cred.DapaCheckerApi().name }));`;
    const out = execFileSync(process.execPath, ['-e', probe], {
      cwd: app,
      env: { ...process.env, NODE_PATH: join(root, 'node_modules') },
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ node: 'dapaChecker', credential: 'dapaCheckerApi' });
  });

  test('npm pack of the n8n-node/ folder itself picks the same kinds of files (its `files` rule)', () => {
    const [report] = JSON.parse(npm(['pack', '--dry-run', '--json', '--silent'], packageDir)) as Array<{
      files: Array<{ path: string }>;
    }>;
    const paths = report.files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
    expect(
      paths.filter(
        (path) =>
          !['LICENSE', 'README.md', 'package.json'].includes(path) &&
          !path.startsWith('dist/') &&
          !path.startsWith('templates/'),
      ),
    ).toEqual([]);
    expect(paths.filter((path) => /\.map$|\.ts$|\.test\./.test(path))).toEqual([]);
  });
});
