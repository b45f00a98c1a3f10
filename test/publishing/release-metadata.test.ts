// The release-time fields of n8n-node/package.json (n8n-node/pack.mjs --fill, as the release, the e2e suite and
// lint:n8n use them): repository, homepage and bugs filled in from the repository the release runs in unless fixed in
// the file, a fixed one that names another repository refused (npm's provenance check would refuse it at upload),
// the author's e-mail n8n's lint requires, and the tag held to the package's version.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const script = join(root, 'n8n-node/pack.mjs');
const manifest = JSON.parse(readFileSync(join(root, 'n8n-node/package.json'), 'utf8'));

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'release-metadata-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(content: object, repo: string, tag?: string, env: NodeJS.ProcessEnv = {}) {
  const file = join(dir, 'package.json');
  writeFileSync(file, JSON.stringify(content));
  const args = [script, '--fill', file, '--repo', repo, ...(tag ? ['--tag', tag] : [])];
  const clean = { ...process.env, PACKAGE_AUTHOR_EMAIL: '', GITHUB_REPOSITORY_OWNER_ID: '', ...env };
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', env: clean });
  return { ...result, written: JSON.parse(readFileSync(file, 'utf8')) };
}

describe('release metadata', () => {
  test('the file does not fix repository, homepage or bugs: each fork names itself at release', () => {
    expect(manifest.repository).toBeUndefined();
    expect(manifest.homepage).toBeUndefined();
    expect(manifest.bugs).toBeUndefined();
  });

  test('a fork publishes under its own name', () => {
    const result = run(manifest, 'some-fork/dapa-fork', `n8n-node-v${manifest.version}`);
    expect(result.status).toBe(0);
    expect(result.written.repository).toEqual({
      type: 'git',
      url: 'git+https://github.com/some-fork/dapa-fork.git',
      directory: 'n8n-node',
    });
    expect(result.written.homepage).toBe('https://github.com/some-fork/dapa-fork/tree/HEAD/n8n-node#readme');
    expect(result.written.bugs).toEqual({ url: 'https://github.com/some-fork/dapa-fork/issues' });
    // n8n's lint requires an author e-mail: the owner's GitHub address unless the repository sets one.
    expect(result.written.author).toEqual({
      ...manifest.author,
      email: 'some-fork@users.noreply.github.com',
    });
    // Everything else is left as it is.
    const { repository: _r, homepage: _h, bugs: _b, author: _a, ...rest } = result.written;
    const { author: _ma, ...manifestRest } = manifest;
    expect(rest).toEqual(manifestRest);
  });

  test('the author e-mail comes from PACKAGE_AUTHOR_EMAIL, else the owner id + name noreply address', () => {
    const set = run(manifest, 'o/r', undefined, { PACKAGE_AUTHOR_EMAIL: 'maintainer@dapa.test' });
    expect(set.written.author.email).toBe('maintainer@dapa.test');
    const withId = run(manifest, 'some-fork/r', undefined, { GITHUB_REPOSITORY_OWNER_ID: '4242' });
    expect(withId.written.author.email).toBe('4242+some-fork@users.noreply.github.com');
  });

  test('a repository fixed in the file is kept when it is this one, refused when it is another', () => {
    const fixed = { ...manifest, repository: { type: 'git', url: 'https://github.com/Owner/Repo.git' } };
    expect(run(fixed, 'owner/repo').status).toBe(0);
    const refused = run(fixed, 'someone-else/repo');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /fixes "repository" to "https:\/\/github.com\/Owner\/Repo.git".*someone-else\/repo/,
    );
    expect(refused.written).toEqual(fixed); // not written
  });

  test('the tag must be the package version', () => {
    expect(run(manifest, 'o/r', `v${manifest.version}`).status).toBe(0);
    const wrong = run(manifest, 'o/r', 'n8n-node-v9.9.9');
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(`says 9.9.9, but n8n-node/package.json has version ${manifest.version}`);
    const garbled = run(manifest, 'o/r', 'release-1');
    expect(garbled.status).toBe(1);
    expect(garbled.stderr).toContain('is not n8n-node-v<version>');
  });

  test('a missing or malformed repository name is a clear error', () => {
    const result = run(manifest, 'not a repo');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('must be "owner/name"');
    expect(() => execFileSync(process.execPath, [script, '--repo', 'o/r'], { stdio: 'pipe' })).toThrow(
      /Usage/,
    );
  });
});
