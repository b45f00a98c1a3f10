// The GitHub Actions workflows, checked here rather than on the first tag: each passes a workflow linter from npm
// (@action-validator/cli: GitHub's workflow schema, in WebAssembly, offline), a workflow broken on purpose fails it,
// and the release workflow keeps to what npm's trusted publishing and n8n's provenance rule need, with no secret.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const workflowsDir = join(root, '.github/workflows');
const validator = join(root, 'node_modules/@action-validator/cli/cli.mjs');
const workflows = readdirSync(workflowsDir).filter((name) => /\.ya?ml$/.test(name));
const read = (name: string) => readFileSync(join(workflowsDir, name), 'utf8');

function lint(file: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [validator, file], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('GitHub Actions workflows', () => {
  test('there are the CI, release and optional Apps Script deploy workflows', () => {
    expect(workflows.sort()).toEqual(['ci.yml', 'deploy-apps-script.yml', 'release.yml']);
  });

  test.each(workflows)('%s passes the workflow linter', (name) => {
    const result = lint(join(workflowsDir, name));
    expect(result.output).toBe('');
    expect(result.status).toBe(0);
  });

  test('a workflow broken on purpose fails the linter, naming the mistakes', () => {
    const result = lint(join(__dirname, 'fixtures/broken-workflow.yml'));
    expect(result.status).toBe(1);
    expect(result.output).toContain("Additional property 'runs_on' is not allowed");
    expect(result.output).toContain('/jobs/test/runs-on');
  });

  test('CI runs the README commands and the heavy suite; .ci/run runs the same', () => {
    const ci = read('ci.yml');
    expect(ci).toMatch(/npm ci [^\n]*&& npm run demo/);
    expect(ci).toMatch(/run: npm test\n/);
    expect(ci).toMatch(/run: npm run test:e2e\n/);
    const local = readFileSync(join(root, '.ci/run'), 'utf8');
    // npm ci, the e2e installs started in the background, npm test beside them, then the e2e suite.
    const steps = ['npm ci', 'bash test/n8n-e2e/run.sh install', 'npm test', 'npm run test:e2e'].map((step) =>
      local.indexOf(`${step} `),
    );
    expect(steps.every((at) => at > 0)).toBe(true);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    expect(local).toMatch(/run\.sh install [^\n]*&\n/);
  });

  test('the release publishes n8n-node/ on a version tag, with provenance, by trusted publishing (no token)', () => {
    const release = read('release.yml');
    expect(release).toMatch(/tags:\n\s+- 'n8n-node-v\*'/);
    expect(release).toMatch(/permissions:\n\s+contents: read\n\s+id-token: write/);
    expect(release).toContain(
      'npm publish "${{ steps.pack.outputs.tarball }}" --provenance --access public --tag "${{ steps.pack.outputs.dist_tag }}"',
    );
    expect(release).toContain('node n8n-node/pack.mjs --release --repo "$GITHUB_REPOSITORY" --tag "$tag"');
    expect(release).toContain('echo "dist_tag=$(node n8n-node/pack.mjs --dist-tag)" >> "$GITHUB_OUTPUT"');
    // The scanner's source leg on the tagged commit first (the refusal), then tests, the pack, the strict lint and
    // the scanner's tarball leg, all before the upload.
    const order = [
      'node test/n8n-e2e/scanner.mjs gate --ref "$GITHUB_SHA"',
      'run: npm test',
      'n8n-node/pack.mjs --release',
      'run: npm run lint:n8n',
      'node test/n8n-e2e/scanner.mjs tarball "${{ steps.pack.outputs.tarball }}"',
      'npm publish "$',
    ].map((s) => release.indexOf(s));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // The scanner comes from its committed lock, with no install scripts.
    expect(release).toContain(
      'cp test/n8n-e2e/scanner-install/package.json test/n8n-e2e/scanner-install/package-lock.json',
    );
    expect(release).toContain('npm ci --ignore-scripts');
    expect(release).not.toMatch(/NODE_AUTH_TOKEN|NPM_TOKEN|secrets\.|PACKAGE_AUTHOR_EMAIL/);
  });

  test('Node 24 (the LTS) in the release, the Apps Script deploy and the CI test job; the e2e job keeps Node 20 for n8n 2.8.4', () => {
    const versions = (text: string) => [...text.matchAll(/node-version: '(\d+)'/g)].map((m) => m[1]);
    expect(versions(read('release.yml'))).toEqual(['24']);
    // Node 20 reached its end of life; the deploy only builds and runs clasp, which Node 24 runs.
    expect(versions(read('deploy-apps-script.yml'))).toEqual(['24']);
    const ci = read('ci.yml');
    const [test, e2e] = ci.split('\n  e2e:\n');
    expect(versions(test)).toEqual(['24']);
    expect(versions(e2e)).toEqual(['20']);
    expect(e2e).toContain('test/n8n-e2e/work/scanner');
  });

  test('no workflow holds a secret value; only the optional deploy reads a stored credential', () => {
    for (const name of workflows) {
      const text = read(name);
      expect(text).not.toMatch(/npm_[A-Za-z0-9]{30,}|ghp_[A-Za-z0-9]{30,}|ya29\.|"refresh_token"\s*:/);
      const secrets = [...text.matchAll(/secrets\.([A-Z0-9_]+)/g)].map((m) => m[1]);
      expect(new Set(secrets)).toEqual(
        name === 'deploy-apps-script.yml' ? new Set(['CLASPRC_JSON']) : new Set(),
      );
    }
    expect(read('deploy-apps-script.yml')).toMatch(/on:\n\s+workflow_dispatch:/);
  });
});
