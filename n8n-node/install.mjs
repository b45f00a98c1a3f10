// Installs the node from this clone into a self-hosted n8n's nodes folder, `~/.n8n/nodes` (where n8n keeps community
// packages and loads every `n8n-nodes-*` package at start; docs/guide.md, "Install the node"): packs the package as it
// is published (pack.mjs: a fresh build), copies the tarball into the folder and `npm install`s it from there, without
// the peer n8n-workflow (n8n brings its own). The folder's package.json then names that copy
// (`file:n8n-nodes-dapa-checker-<version>.tgz`), which stays there: a later `npm install` in the folder (another
// community node) finds it. The real-n8n e2e suite installs the node with this script too, into the nodes folder of
// each n8n's user folder. A local install is not a release: pack.mjs's notes on publishing (an unset publisher
// identity) are not printed here; `node n8n-node/pack.mjs` and the release workflow say them.
//
//   node n8n-node/install.mjs ~/.n8n/nodes                  pack, then install into that folder (made if missing)
//   node n8n-node/install.mjs <folder> --tarball <file>    install a tarball packed earlier
//   node n8n-node/install.mjs --help                        print this usage (nothing packed, nothing installed)
//
// Prints the installed package's folder (last line). Restart n8n afterwards.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const PACKAGE = 'n8n-nodes-dapa-checker';
/** npm's flags: no peer n8n-workflow, no audit or funding calls; the tarball has no dependencies to fetch. */
export const INSTALL_FLAGS = ['--legacy-peer-deps', '--no-audit', '--no-fund', '--prefer-offline'];
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

/** This file's usage: the comment lines at its top from the first that runs the script. */
export function usage(source = readFileSync(fileURLToPath(import.meta.url), 'utf8')) {
  const lines = source.split('\n');
  const from = lines.findIndex((l) => l.includes('node n8n-node/install.mjs ~/.n8n/nodes'));
  const to = lines.findIndex((l, i) => i > from && !l.startsWith('//'));
  return ['Usage:', ...lines.slice(from, to).map((l) => l.replace(/^\/\/ ?/, ''))].join('\n');
}

/** The command line: the folder, a tarball, or help; anything else is refused with what was wrong. */
export function parseArgs(args) {
  const out = { folder: undefined, tarball: undefined, help: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--help' || arg === '-h') out.help = true;
    else if (arg === '--tarball') {
      const value = args[++i];
      if (value === undefined || value.startsWith('-')) return { error: '--tarball needs a file.' };
      out.tarball = value;
    } else if (arg.startsWith('-')) return { error: `unknown option ${arg} (--tarball <file> or --help).` };
    else if (out.folder !== undefined) return { error: `one folder only (got ${out.folder} and ${arg}).` };
    else out.folder = arg;
  }
  if (!out.help && out.folder === undefined) return { error: 'no folder given.' };
  return out;
}

function main() {
  const parsed = parseArgs(process.argv.slice(2));
  if (parsed.error) fail(`${parsed.error}\n${usage()}`);
  if (parsed.help) {
    console.log(usage());
    return;
  }
  const folder = resolve(parsed.folder.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
  let tarball = parsed.tarball;
  let packDir;
  if (!tarball) {
    packDir = mkdtempSync(join(tmpdir(), 'dapa-node-pack-'));
    // pack.mjs's stderr carries release notes (publisher identity): shown only when packing fails.
    const packed = spawnSync(process.execPath, [join(here, 'pack.mjs'), '--out', packDir], {
      encoding: 'utf8',
    });
    if (packed.status !== 0)
      fail(`packing failed (${packed.status}):\n${(packed.stderr ?? '').slice(-2000)}`);
    tarball = packed.stdout.trim().split('\n').pop();
  }
  if (!tarball || !existsSync(tarball)) fail(`no tarball at ${tarball}`);
  mkdirSync(folder, { recursive: true });
  // npm installs into the nearest folder with a package.json: give the nodes folder its own (as n8n does).
  if (!existsSync(join(folder, 'package.json')))
    writeFileSync(join(folder, 'package.json'), '{"name":"installed-nodes","private":true}\n');
  // The tarball is kept in the folder, so that the reference npm writes into its package.json stays valid.
  const kept = basename(tarball);
  if (resolve(tarball) !== join(folder, kept)) copyFileSync(resolve(tarball), join(folder, kept));
  if (packDir) rmSync(packDir, { recursive: true, force: true });
  const result = spawnSync('npm', ['install', ...INSTALL_FLAGS, '--prefix', folder, `./${kept}`], {
    cwd: folder,
    encoding: 'utf8',
  });
  const installed = join(folder, 'node_modules', PACKAGE);
  if (result.status !== 0 || !BUILT.every((file) => existsSync(join(installed, file))))
    fail(
      `npm install of ${tarball} failed (${result.status}):\n${(result.stdout + result.stderr).slice(-2000)}`,
    );
  // Earlier copies of the package (other versions) are no longer named by package.json.
  for (const file of readdirSync(folder)) {
    if (file !== kept && file.startsWith(`${PACKAGE}-`) && file.endsWith('.tgz')) rmSync(join(folder, file));
  }
  console.error(`n8n-node install: ${PACKAGE} installed into ${folder}; restart n8n to load it`);
  console.log(installed);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
