// Installs the node from this clone into a self-hosted n8n's custom nodes folder: packs the package as it is published
// (pack.mjs: a fresh build), then `npm install`s that tarball into the folder, without the peer n8n-workflow (n8n
// brings its own). n8n loads every node below its custom folders at startup: `~/.n8n/custom` by default, or the
// folders named in N8N_CUSTOM_EXTENSIONS (docs.n8n.io, "Specify custom nodes location"). The real-n8n e2e suite
// installs the node with this script, the way n8n-node/README.md ("Install from a clone") tells a self-hoster to.
//
//   node n8n-node/install.mjs <folder>                     pack, then install into <folder> (made if missing)
//   node n8n-node/install.mjs <folder> --tarball <file>    install a tarball packed earlier
//
// Prints the installed package's folder (last line). Restart n8n afterwards.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const PACKAGE = 'n8n-nodes-dapa-checker';
/** npm's flags: no peer n8n-workflow, no audit or funding calls; the tarball has no dependencies to fetch. */
const INSTALL_FLAGS = ['--legacy-peer-deps', '--no-audit', '--no-fund', '--prefer-offline'];
/** What an installed package must hold for n8n to load the node and its credential. */
const BUILT = [
  'dist/nodes/DapaChecker/DapaChecker.node.js',
  'dist/credentials/DapaCheckerApi.credentials.js',
  'dist/credentials/DapaSharedStateApi.credentials.js',
];

function fail(message) {
  console.error(`n8n-node install: ${message}`);
  process.exit(1);
}

function main() {
  const args = process.argv.slice(2);
  const folderArg = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--tarball');
  if (!folderArg) fail('usage: node n8n-node/install.mjs <folder> [--tarball <file>]');
  const folder = resolve(folderArg.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
  const at = args.indexOf('--tarball');
  let tarball = at >= 0 ? args[at + 1] : undefined;
  let packDir;
  if (!tarball) {
    packDir = mkdtempSync(join(tmpdir(), 'dapa-node-pack-'));
    const out = execFileSync(process.execPath, [join(here, 'pack.mjs'), '--out', packDir], {
      encoding: 'utf8',
    });
    tarball = out.trim().split('\n').pop();
  }
  if (!tarball || !existsSync(tarball)) fail(`no tarball at ${tarball}`);
  mkdirSync(folder, { recursive: true });
  // npm installs into the nearest folder with a package.json: give the custom folder its own.
  if (!existsSync(join(folder, 'package.json')))
    writeFileSync(join(folder, 'package.json'), '{"name":"n8n-custom-extensions","private":true}\n');
  const result = spawnSync('npm', ['install', ...INSTALL_FLAGS, '--prefix', folder, resolve(tarball)], {
    cwd: folder,
    encoding: 'utf8',
  });
  if (packDir) rmSync(packDir, { recursive: true, force: true });
  const installed = join(folder, 'node_modules', PACKAGE);
  if (result.status !== 0 || !BUILT.every((file) => existsSync(join(installed, file))))
    fail(
      `npm install of ${tarball} failed (${result.status}):\n${(result.stdout + result.stderr).slice(-2000)}`,
    );
  console.error(`n8n-node install: ${PACKAGE} installed into ${folder}; restart n8n to load it`);
  console.log(installed);
}

main();
