// The publisher identity of n8n-node/package.json and what n8n-node/pack.mjs checks before a release: the identity
// (author name and e-mail, repository, homepage, bugs) lives only in the committed file, which leaves it empty for
// the maintainer to set; nothing is filled in at pack time; --release refuses an incomplete identity naming every
// field to set, a repository other than the one the release runs in, and a tag that is not the version. A
// prerelease goes out under its own dist-tag, and a plain `npm publish` in n8n-node/ is refused by prepublishOnly.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const script = join(root, 'n8n-node/pack.mjs');
const manifest = JSON.parse(readFileSync(join(root, 'n8n-node/package.json'), 'utf8'));
const IDENTITY = ['author.name', 'author.email', 'homepage', 'repository.url', 'bugs.url'];
/** An identity for temporary copies (reserved .test names). */
const identity = {
  author: { name: 'Release Check', email: 'publisher@dapa-checker.test' },
  homepage: 'https://github.com/owner/repo/tree/HEAD/n8n-node#readme',
  repository: { type: 'git', url: 'git+https://github.com/owner/repo.git', directory: 'n8n-node' },
  bugs: { url: 'https://github.com/owner/repo/issues' },
};

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'release-metadata-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(content: object, args: string[], env: NodeJS.ProcessEnv = {}) {
  const file = join(dir, 'package.json');
  writeFileSync(file, JSON.stringify(content));
  const result = spawnSync(process.execPath, [script, '--fill', file, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GITHUB_REPOSITORY: '', ...env },
  });
  return { ...result, written: JSON.parse(readFileSync(file, 'utf8')) };
}

describe('release metadata', () => {
  test('the committed file holds every identity field, empty: the maintainer sets them', () => {
    expect(manifest.author).toEqual({ name: '', email: '' });
    expect(manifest.homepage).toBe('');
    expect(manifest.repository).toEqual({ type: 'git', url: '', directory: 'n8n-node' });
    expect(manifest.bugs).toEqual({ url: '' });
  });

  test('nothing is filled in at pack time: the manifest is packed as committed, whatever the repository', () => {
    const result = run(manifest, ['--repo', 'some-fork/dapa-fork'], { PACKAGE_AUTHOR_EMAIL: 'x@dapa.test' });
    expect(result.status).toBe(0);
    expect(result.written).toEqual(manifest);
    expect(result.stderr).toContain(`publisher identity not set (${IDENTITY.join(', ')})`);
  });

  test('--release refuses the committed manifest, naming every field to set and where', () => {
    const refused = run(manifest, ['--repo', 'owner/repo', '--release']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`set ${IDENTITY.join(', ')}`);
    expect(refused.stderr).toContain('n8n-node/README.md, "Publishing"');
    const partly = run({ ...manifest, author: { name: 'A', email: 'a@dapa-checker.test' } }, [
      '--repo',
      'owner/repo',
      '--release',
    ]);
    expect(partly.status).toBe(1);
    expect(partly.stderr).toContain('set homepage, repository.url, bugs.url');
  });

  test('--release accepts a complete identity for the repository it runs in (npm shorthand strings too)', () => {
    const complete = { ...manifest, ...identity };
    expect(
      run(complete, ['--repo', 'Owner/Repo', '--release', '--tag', `n8n-node-v${manifest.version}`]).status,
    ).toBe(0);
    const shorthand = {
      ...complete,
      author: 'Release Check <publisher@dapa-checker.test>',
      repository: 'github:owner/repo',
    };
    // "github:owner/repo" is not a URL npm's provenance check compares: refused with its own message.
    const result = run(shorthand, ['--repo', 'owner/repo', '--release']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('is not a GitHub repository');
    expect(
      run({ ...shorthand, repository: 'https://github.com/owner/repo' }, [
        '--repo',
        'owner/repo',
        '--release',
      ]).status,
    ).toBe(0);
  });

  test('a repository naming another repository is refused (npm provenance would refuse the upload)', () => {
    const complete = { ...manifest, ...identity };
    const refused = run(complete, ['--repo', 'someone-else/repo']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /repository.url names owner\/repo, but this release runs in someone-else\/repo/,
    );
  });

  test('the tag must be the package version', () => {
    expect(run(manifest, ['--repo', 'o/r', '--tag', `v${manifest.version}`]).status).toBe(0);
    const wrong = run(manifest, ['--repo', 'o/r', '--tag', 'n8n-node-v9.9.9']);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(`says 9.9.9, but n8n-node/package.json has version ${manifest.version}`);
    const garbled = run(manifest, ['--repo', 'o/r', '--tag', 'release-1']);
    expect(garbled.status).toBe(1);
    expect(garbled.stderr).toContain('is not n8n-node-v<version>');
  });

  test('a prerelease is published under the dist-tag next, a release under latest', () => {
    const distTag = (version: string) => {
      const file = join(dir, `v-${version}.json`);
      writeFileSync(file, JSON.stringify({ ...manifest, version }));
      return spawnSync(process.execPath, [script, '--dist-tag', '--manifest', file], { encoding: 'utf8' });
    };
    expect(distTag('1.2.0').stdout.trim()).toBe('latest');
    expect(distTag('1.2.0-rc.1').stdout.trim()).toBe('next');
    expect(distTag('2.0.0-beta').stdout.trim()).toBe('next');
    expect(distTag('1.2.0+build.5').stdout.trim()).toBe('latest');
    const bad = distTag('1.2');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('"1.2" is not a semantic version');
    expect(execFileSync(process.execPath, [script, '--dist-tag'], { encoding: 'utf8' }).trim()).toBe(
      manifest.version.includes('-') ? 'next' : 'latest',
    );
  });

  test('a plain npm publish in n8n-node/ is refused by prepublishOnly, saying how to release', () => {
    expect(manifest.scripts).toEqual({ prepublishOnly: 'node pack.mjs --prepublish-guard' });
    // --dry-run: even if the guard failed to refuse, nothing would be uploaded.
    const result = spawnSync('npm', ['publish', '--dry-run', '--ignore-scripts=false'], {
      cwd: join(root, 'n8n-node'),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('would upload dist/ as it happens to be');
    expect(result.stderr).toContain('n8n-node-v<version>');
  });

  test('a missing or malformed repository name, or no --out, is a clear error', () => {
    const result = run(manifest, ['--repo', 'not a repo']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('must be "owner/name"');
    expect(() => execFileSync(process.execPath, [script, '--repo', 'o/r'], { stdio: 'pipe' })).toThrow(
      /Usage/,
    );
  });
});
