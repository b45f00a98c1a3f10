// Builds the installable n8n package into n8n-node/dist/: the node and the credential as CommonJS bundles (the shared
// core and zod bundled in, `n8n-workflow` left to the host n8n), plus the icons and the codex file. Prints sizes.
// `node build.mjs --outdir <dir>` builds elsewhere (the unit tests do, so as not to touch a dist/ in use).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const at = process.argv.indexOf('--outdir');
const dist = at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]) : join(root, 'dist');

const bundles = [
  ['nodes/DapaChecker/DapaChecker.node.ts', 'nodes/DapaChecker/DapaChecker.node.js'],
  ['credentials/DapaCheckerApi.credentials.ts', 'credentials/DapaCheckerApi.credentials.js'],
  ['credentials/DapaSharedStateApi.credentials.ts', 'credentials/DapaSharedStateApi.credentials.js'],
];
const assets = [
  'nodes/DapaChecker/dapa.svg',
  'nodes/DapaChecker/dapa.dark.svg',
  'nodes/DapaChecker/DapaChecker.node.json',
];

// Built next to the target, then swapped in: an n8n reading dist/ meanwhile never sees it half written.
mkdirSync(dirname(dist), { recursive: true });
const staging = mkdtempSync(join(dirname(dist), '.dist-building-'));

try {
  await buildInto(staging);
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  throw error;
}

const old = `${staging}.old`;
try {
  renameSync(dist, old);
} catch {
  // no previous build
}
renameSync(staging, dist);
rmSync(old, { recursive: true, force: true });

async function buildInto(staging) {
  for (const [source, target] of bundles) {
    const result = await build({
      entryPoints: [join(root, source)],
      outfile: join(staging, target),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      external: ['n8n-workflow'],
      legalComments: 'none',
      // zod keeps its global config on `globalThis`. Bundled, it gets a module-local object instead: this copy of zod
      // then shares nothing with the host n8n's own zod, and the bundle touches no global (n8n's scanner forbids it).
      define: { globalThis: 'bundleScope' },
      banner: { js: "'use strict';\nvar bundleScope = {};" },
      logLevel: 'warning',
      metafile: true,
    });
    const inputs = Object.keys(result.metafile.inputs).length;
    console.log(`n8n-node: dist/${target}  ${kib(join(staging, target))}  (${inputs} modules bundled)`);
  }

  for (const asset of assets) {
    mkdirSync(dirname(join(staging, asset)), { recursive: true });
    copyFileSync(join(root, asset), join(staging, asset));
  }
  console.log(`n8n-node: copied ${assets.map((a) => relative('nodes/DapaChecker', a)).join(', ')}`);
}

function kib(path) {
  return `${(statSync(path).size / 1024).toFixed(1)} KiB`;
}
