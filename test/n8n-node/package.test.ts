// The installable package as n8n loads it: the manifest, and the built bundles (built here into a folder of their own,
// so that an n8n-node/dist/ in use elsewhere is left alone) requiring nothing at run time but n8n-workflow and Node's
// own modules, and checking items against the sandbox.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { join } from 'node:path';
import type { IExecuteFunctions, INodeExecutionData, INodeType } from 'n8n-workflow';
import { CREDIT_BUDGET_WHEN_ADDED, DEFAULT_SETTINGS } from '../../n8n-node/nodes/DapaChecker/description';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { metricsFor } from '../sandbox/handler';
import { startSandbox, type RunningSandbox } from '../sandbox/server';
import { createExecuteContext } from './executeContext';

const packageDir = join(__dirname, '../../n8n-node');
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

// Under the root node_modules (ignored by git and the linters), so that the bundle resolves n8n-workflow from there,
// as it resolves it from the host n8n once installed.
const cacheDir = join(packageDir, '../node_modules/.cache');
mkdirSync(cacheDir, { recursive: true });
const buildDir = mkdtempSync(join(cacheDir, 'n8n-nodes-dapa-checker-'));
/** The built file for a path of the manifest (`dist/...`). */
const built = (manifestPath: string) => join(buildDir, manifestPath.replace(/^dist\//, ''));
const dist = built('dist/');

let server: RunningSandbox;
beforeAll(async () => {
  execFileSync(process.execPath, [join(packageDir, 'build.mjs'), '--outdir', buildDir], { stdio: 'pipe' });
  server = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await server.close();
  rmSync(buildDir, { recursive: true, force: true });
});

describe('n8n-nodes-dapa-checker package', () => {
  test('the manifest is an n8n community package with n8n-workflow as its only peer and no dependencies', () => {
    expect(manifest.name).toBe('n8n-nodes-dapa-checker');
    expect(manifest.keywords).toContain('n8n-community-node-package');
    expect(manifest.n8n).toEqual({
      n8nNodesApiVersion: 1,
      strict: true,
      credentials: [
        'dist/credentials/DapaCheckerApi.credentials.js',
        'dist/credentials/DapaSharedStateApi.credentials.js',
      ],
      nodes: ['dist/nodes/DapaChecker/DapaChecker.node.js'],
    });
    expect(manifest.peerDependencies).toEqual({ 'n8n-workflow': '*' });
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.files).toEqual(['dist', 'templates']);
  });

  test('the build writes every file the manifest names, with both icons and the codex', () => {
    const expected = [
      ...manifest.n8n.nodes,
      ...manifest.n8n.credentials,
      'dist/nodes/DapaChecker/dapa.svg',
      'dist/nodes/DapaChecker/dapa.dark.svg',
      'dist/nodes/DapaChecker/DapaChecker.node.json',
    ];
    for (const file of expected) expect(existsSync(built(file))).toBe(true);
    const codex = JSON.parse(readFileSync(built('dist/nodes/DapaChecker/DapaChecker.node.json'), 'utf8'));
    expect(codex.node).toBe('n8n-nodes-dapa-checker.dapaChecker');
  });

  test('the bundles require nothing at run time but n8n-workflow and Node built-in modules', () => {
    const allowed = new Set(['n8n-workflow', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const required = new Set<string>();
    for (const file of filesUnder(dist).filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(file, 'utf8');
      for (const match of code.matchAll(/\brequire\(\s*["'`]([^"'`]+)["'`]\s*\)/g)) required.add(match[1]);
      expect(code).not.toMatch(/\bimport\(/);
    }
    expect(required.has('n8n-workflow')).toBe(true);
    expect([...required].filter((name) => !allowed.has(name))).toEqual([]);
  });

  test('the built node loads like n8n loads it and checks items against the API', async () => {
    const load = createRequire(__filename);
    const bundle = load(built('dist/nodes/DapaChecker/DapaChecker.node.js')) as {
      DapaChecker: new () => INodeType;
    };
    const node = new bundle.DapaChecker();
    expect(node.description.name).toBe('dapaChecker');
    const double = createExecuteContext({
      items: [{ url: 'example.com' }, { url: 'nope' }],
      credentials: { apiKey: 'sandbox-premium', environment: 'custom', baseUrl: server.url },
    });
    const [results, skipped] = (await node.execute!.call(
      double.context as IExecuteFunctions,
    )) as INodeExecutionData[][];
    const answeredBy = Date.now();
    expect(results.map((item) => item.json)).toEqual([
      {
        ...{ url: 'example.com', domain: 'example.com', ...metricsFor('example.com'), no_data: [] },
        ...{ reused: false, checked_at: expect.any(String) },
      },
    ]);
    const checkedAt = Date.parse(String(results[0].json.checked_at));
    expect(checkedAt).toBeLessThanOrEqual(answeredBy);
    expect(answeredBy - checkedAt).toBeLessThan(60_000);
    expect(skipped.map((item) => [item.json.reason, item.pairedItem])).toEqual([
      ['invalid_url_format', { item: 1 }],
    ]);
  });

  test('the defaults shown in the editor are the defaults the node uses (the Credit Budget: none until added)', () => {
    const options = new DapaChecker().description.properties.find((p) => p.name === 'options');
    const shown = Object.fromEntries(
      (options?.options ?? []).map((o) => [
        'name' in o ? o.name : '',
        'default' in o ? o.default : undefined,
      ]),
    );
    expect(DEFAULT_SETTINGS.creditBudget).toBeUndefined();
    expect(shown).toEqual({ ...DEFAULT_SETTINGS, creditBudget: CREDIT_BUDGET_WHEN_ADDED });
  });
});
