// The first steps of the user guide work as written: the clone command names the one recorded address, `npm run push
// -- --help` prints its usage without building, a local install of the n8n node says nothing about publishing, the
// Docker route's folder in the clone is ignored by git, Prettier and ESLint, and n8n's import is where n8n shows it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyProbeRequest, readKeyProbe } from '../../shared';
import { createSandbox, DEFAULT_CONFIG } from '../sandbox/handler';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const rootPackage = JSON.parse(read('package.json')) as {
  repository?: { url?: string };
  scripts: Record<string, string>;
};

/** The documents a user follows that clone the repository. */
const CLONING = ['docs/guide.md', 'n8n-node/README.md', 'apps-script/publishing/PUBLISHING.md'];

describe('before paying: what the README and the guide say about a service that refuses Google', () => {
  const flat = (path: string) => read(path).replace(/\s+/g, ' ');

  test('the key test they point to bills nothing, and tells a refused network from any key', () => {
    // One request whose only entry is empty: the spec skips it (empty_url) and bills only what it returns.
    const probe = keyProbeRequest('https://www.dapachecker.org');
    expect(JSON.parse(probe.body)).toEqual({ urls: [''] });
    const sandbox = createSandbox({ ...DEFAULT_CONFIG, keys: { ...DEFAULT_CONFIG.keys } });
    const answer = sandbox.handle(
      {
        method: 'POST',
        path: '/api/user/dapa-checker',
        headers: { authorization: 'Bearer sandbox-basic', 'content-type': 'application/json' },
        body: probe.body,
      },
      0,
    );
    expect(readKeyProbe({ status: answer.status, headers: answer.headers, body: answer.body }).ok).toBe(true);
    expect(sandbox.stats()['sandbox-basic'].billed).toBe(0);
    // A refused network answers the same for any text saved as a key, before the key is looked at.
    const blocked = createSandbox({ ...DEFAULT_CONFIG, faults: { blockNetwork: true } });
    const refused = blocked.handle(
      {
        method: 'POST',
        path: '/api/user/dapa-checker',
        headers: { authorization: 'Bearer test', 'content-type': 'application/json' },
        body: probe.body,
      },
      0,
    );
    expect(
      readKeyProbe({ status: refused.status, headers: refused.headers, body: refused.body }),
    ).toMatchObject({ ok: false, code: 'network_blocked' });
  });

  test('both say it before any purchase, with what the add-on shows and what to do', () => {
    for (const file of ['README.md', 'docs/guide.md']) {
      const text = flat(file);
      expect({ file, says: text.includes('Before you pay') }).toEqual({ file, says: true });
      expect({
        file,
        says: text.includes(
          "The DAPA service refused requests from this server's network (HTTP 403): not your API key.",
        ),
      }).toEqual({ file, says: true });
      expect({ file, says: /which the service never bills|so it bills nothing/.test(text) }).toEqual({
        file,
        says: true,
      });
      expect({ file, says: text.includes('ask DAPA checker support') }).toEqual({ file, says: true });
      expect({
        file,
        says: /n8n node\]?(\(#n8n\))? on (a self-hosted n8n on )?your own machine/.test(text),
      }).toEqual({
        file,
        says: true,
      });
    }
    // In the guide, before the install steps and in "What you need", which comes before buying.
    const guide = read('docs/guide.md');
    expect(guide.indexOf('#### Before you pay')).toBeLessThan(guide.indexOf('#### Copy-paste'));
    expect(guide.indexOf('**Before you pay**')).toBeLessThan(guide.indexOf('## Google Sheets'));
  });
});

describe('first steps work as written', () => {
  test('every clone command names the address recorded in package.json (or says where to find it while unset)', () => {
    const url = rootPackage.repository?.url ?? '';
    for (const file of CLONING) {
      const clones = [...read(file).matchAll(/git clone (\S+)/g)].map((m) => m[1]);
      expect({ file, clones: clones.length > 0 }).toEqual({ file, clones: true });
      for (const address of clones) expect({ file, address }).toEqual({ file, address: url || '<address>' });
    }
    if (!url) {
      // While unset, the guide says what `<address>` is and where it is recorded.
      const guide = read('docs/guide.md').replace(/\s+/g, ' ');
      expect(guide).toContain("`<address>` is the repository's clone address");
      expect(guide).toContain('`repository.url` in the root `package.json`');
    }
  });

  test('npm run push -- --help prints the usage and builds nothing (the script builds only after it)', () => {
    expect(rootPackage.scripts.push).toBe('node apps-script/push.mjs --build');
    const result = spawnSync(process.execPath, [join(root, 'apps-script/push.mjs'), '--build', '--help'], {
      encoding: 'utf8',
      env: { ...process.env, DAPA_PUSH_PROJECT_FILE: join(tmpdir(), 'no-such-clasp.json') },
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage:\n/);
    expect(result.stdout).toContain('npm run push -- --bind <spreadsheet URL or id>');
    expect(result.stdout).not.toContain('npm run build\n');
    expect(result.stderr).toBe('');
    // Without --help and without a project, it stops before the build and says what to do.
    const dry = spawnSync(process.execPath, [join(root, 'apps-script/push.mjs'), '--build'], {
      encoding: 'utf8',
      env: { ...process.env, DAPA_PUSH_PROJECT_FILE: join(tmpdir(), 'no-such-clasp.json') },
    });
    expect(dry.status).toBe(1);
    expect(dry.stdout).not.toContain('push: npm run build');
    expect(dry.stderr).toContain('apps-script/.clasp.json is missing');
  });

  test('a local install of the n8n node says where it went and nothing about publishing', () => {
    const folder = mkdtempSync(join(tmpdir(), 'dapa-nodes-'));
    try {
      const result = spawnSync(process.execPath, [join(root, 'n8n-node/install.mjs'), folder], {
        encoding: 'utf8',
      });
      expect(result.status).toBe(0);
      expect(result.stdout.trim()).toBe(join(folder, 'node_modules', 'n8n-nodes-dapa-checker'));
      expect(result.stderr).toContain('restart n8n to load it');
      expect(result.stderr).not.toMatch(/publish|identity/i);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    // Its header names the folder the guide does.
    expect(read('n8n-node/install.mjs')).toContain('node n8n-node/install.mjs ~/.n8n/nodes');
    expect(read('docs/guide.md')).toContain('node n8n-node/install.mjs ~/.n8n/nodes');
  });

  test("the Docker route's folder in the clone is ignored by git, Prettier and ESLint (npm test passes after it)", () => {
    const guide = read('docs/guide.md');
    const folder = /node n8n-node\/install\.mjs \.\/([\w-]+)\n/.exec(guide)?.[1];
    expect(folder).toBe('n8n-nodes');
    const files = [
      `${folder}/package.json`,
      `${folder}/package-lock.json`,
      `${folder}/node_modules/x/index.js`,
    ];
    // Prettier and ESLint answer through their own APIs, in a child (both load their configuration as ES modules).
    const script = `
      import { ESLint } from 'eslint';
      import * as prettier from 'prettier';
      const files = ${JSON.stringify(files)};
      const eslint = new ESLint({ overrideConfigFile: 'test/eslint.config.mjs' });
      const out = [];
      for (const file of files) {
        const info = await prettier.getFileInfo(file, { ignorePath: '.prettierignore' });
        out.push({ file, prettier: info.ignored, eslint: await eslint.isPathIgnored(file.replace(/\\.json$/, '.js')) });
      }
      console.log(JSON.stringify(out));`;
    const answered = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' }),
    ) as Array<{ file: string; prettier: boolean; eslint: boolean }>;
    for (const file of files) {
      const git = spawnSync('git', ['check-ignore', '-q', file], { cwd: root }).status === 0;
      expect({ file, git }).toEqual({ file, git: true });
      expect(answered.find((a) => a.file === file)).toEqual({ file, prettier: true, eslint: true });
    }
  });

  test("n8n's import is in the workflow editor's ⋯ menu, as n8n shows it", () => {
    const guide = read('docs/guide.md').replace(/\s+/g, ' ');
    expect(guide).toContain("the editor's **⋯** menu (top right) → **Import from File...**");
    expect(guide).not.toContain('Workflows → Import from File');
  });
});
