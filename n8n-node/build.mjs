// Builds the installable n8n package into n8n-node/dist/: the node and the credential as CommonJS bundles (the shared
// core and zod bundled in, `n8n-workflow` left to the host n8n), plus the icons and the codex file. Prints sizes.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');

const bundles = [
  ['nodes/DapaChecker/DapaChecker.node.ts', 'nodes/DapaChecker/DapaChecker.node.js'],
  ['credentials/DapaCheckerApi.credentials.ts', 'credentials/DapaCheckerApi.credentials.js'],
];
const assets = [
  'nodes/DapaChecker/dapa.svg',
  'nodes/DapaChecker/dapa.dark.svg',
  'nodes/DapaChecker/DapaChecker.node.json',
];

rmSync(dist, { recursive: true, force: true });

for (const [source, target] of bundles) {
  const result = await build({
    entryPoints: [join(root, source)],
    outfile: join(dist, target),
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
  console.log(`n8n-node: dist/${target}  ${kib(join(dist, target))}  (${inputs} modules bundled)`);
}

for (const asset of assets) {
  mkdirSync(dirname(join(dist, asset)), { recursive: true });
  copyFileSync(join(root, asset), join(dist, asset));
}
console.log(`n8n-node: copied ${assets.map((a) => relative('nodes/DapaChecker', a)).join(', ')}`);

function kib(path) {
  return `${(statSync(path).size / 1024).toFixed(1)} KiB`;
}
