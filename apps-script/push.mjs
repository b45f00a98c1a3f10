// `npm run push`: the build (apps-script/dist) into an Apps Script project with clasp, the manifest of this repository
// replacing the remote one. The project carries the menu's name (MENU_NAME in src/messages.ts), because Google names
// the Extensions sub-menu after it: "if the script is bound to the document directly, the sub-menu name matches the
// script's name" (Ui.createAddonMenu).
//
//   npm run push -- --bind <spreadsheet URL or id>   first time: a project named after the menu, bound to that
//                                                     spreadsheet (clasp create --title ... --parentId ...), then push
//   npm run push -- --standalone                      first time, to publish: a standalone project with that name
//   npm run push                                      push to the project in apps-script/.clasp.json
//   npm run push -- --version "<description>"         push, then an Apps Script version for the Marketplace; refused
//                                                     while the publisher checklist (publishing/publisher.mjs) is unfilled
//   --dry-run                                         print the clasp commands instead of running them
//   --help                                            print this usage (nothing built, nothing pushed)
//   --build                                           build first (npm run build), once the project is known; the
//                                                     package.json script passes it, so `npm run push` builds
//   DAPA_PUSH_PROJECT_FILE=<file>                     another .clasp.json than apps-script/.clasp.json (the tests)
//   node apps-script/push.mjs --title                 print the project name (the menu's name)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publisherProblems, readPublisher } from './publishing/publisher.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const projectFile = process.env.DAPA_PUSH_PROJECT_FILE || join(here, '.clasp.json');
const args = process.argv.slice(2);
const dryRun = args.includes('--dry-run');

function fail(message) {
  console.error(`push: ${message}`);
  process.exit(1);
}

/** The value after a flag, or undefined when the flag is absent (a flag without a value fails). */
function option(name) {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) fail(`${name} needs a value.`);
  return value;
}

/** The menu's name, read from its one constant in src/messages.ts. */
export function menuName(source = readFileSync(join(here, 'src', 'messages.ts'), 'utf8')) {
  const match = /^export const MENU_NAME = '([^']+)';$/m.exec(source);
  if (!match) throw new Error("apps-script/src/messages.ts has no `export const MENU_NAME = '...';`");
  return match[1];
}

/** A spreadsheet id from its id or its address (https://docs.google.com/spreadsheets/d/<id>/edit...). */
export function spreadsheetId(text) {
  const fromUrl = /\/spreadsheets\/d\/([A-Za-z0-9_-]+)/.exec(text);
  const id = fromUrl ? fromUrl[1] : text.trim();
  if (!/^[A-Za-z0-9_-]{20,}$/.test(id))
    throw new Error(`"${text}" is not a spreadsheet's address or id (the part between /d/ and /edit).`);
  return id;
}

/**
 * The project's own clasp (the devDependency @google/clasp, pinned in package.json), resolved from this file, so that
 * it is found wherever clasp runs (a scratch folder outside the repository included) and never fetched from the
 * registry: its entry script, run with this Node, and its version.
 */
export function projectClasp() {
  let entry;
  try {
    entry = createRequire(import.meta.url).resolve('@google/clasp');
  } catch {
    return undefined;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    if (pkg.name !== '@google/clasp') continue;
    const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.clasp;
    return { script: join(dir, bin ?? relative(dir, entry)), version: pkg.version, dir };
  }
  return undefined;
}

function clasp(claspArgs, cwd = here) {
  console.log(`push: clasp ${claspArgs.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`);
  if (dryRun) return;
  const tool = projectClasp();
  if (!tool)
    fail(
      "the project's clasp (@google/clasp in package.json) is not installed: run `npm ci` at the repository root.",
    );
  console.log(`push: clasp ${tool.version} (${tool.dir})`);
  const result = spawnSync(process.execPath, [tool.script, ...claspArgs], { cwd, stdio: 'inherit' });
  if (result.status !== 0) fail(`clasp ${claspArgs[0]} failed (exit ${result.status ?? 'signal'}).`);
}

/**
 * A new project named after the menu. clasp writes .clasp.json and pulls the new project's default files where it
 * runs, so it runs in a scratch folder (the build in dist/ stays as built) and only its ids are kept.
 */
function createProject(title, parentId) {
  if (existsSync(projectFile))
    fail(
      'apps-script/.clasp.json exists already: this clone pushes to that project. Move it aside to create another.',
    );
  const scratch = mkdtempSync(join(tmpdir(), 'dapa-clasp-'));
  try {
    const create = ['create', '--type', 'standalone', '--title', title, '--rootDir', 'dist'];
    clasp(parentId ? [...create, '--parentId', parentId] : create, scratch);
    if (dryRun) return;
    const created = JSON.parse(readFileSync(join(scratch, '.clasp.json'), 'utf8'));
    const project = { scriptId: created.scriptId, rootDir: 'dist', ...(parentId ? { parentId } : {}) };
    writeFileSync(projectFile, `${JSON.stringify(project, null, 2)}\n`);
    console.log(
      `push: created the project "${title}" (${created.scriptId}); apps-script/.clasp.json written`,
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function checkProject() {
  if (dryRun && !existsSync(projectFile)) return;
  if (!existsSync(projectFile)) {
    fail(
      'apps-script/.clasp.json is missing. First time: npm run push -- --bind <spreadsheet URL> (a script bound to ' +
        'that spreadsheet) or -- --standalone (to publish); or copy apps-script/.clasp.json.example to it and set ' +
        'the scriptId of a project you made (docs/guide.md).',
    );
  }
  let project;
  try {
    project = JSON.parse(readFileSync(projectFile, 'utf8'));
  } catch (error) {
    fail(`apps-script/.clasp.json is not valid JSON: ${error.message}`);
  }
  if (!project.scriptId || /PASTE|YOUR/i.test(project.scriptId)) {
    fail(
      'set "scriptId" in apps-script/.clasp.json to your Apps Script project id (Project Settings → IDs).',
    );
  }
  if (project.rootDir !== 'dist')
    fail('"rootDir" in apps-script/.clasp.json must be "dist" (what npm run build writes).');
}

/** This file's usage: the comment block at its top, from the line that names `npm run push -- --bind`. */
export function usage(source = readFileSync(fileURLToPath(import.meta.url), 'utf8')) {
  const lines = source.split('\n');
  const from = lines.findIndex((l) => l.includes('npm run push -- --bind'));
  const to = lines.findIndex((l, i) => i > from && !l.startsWith('//'));
  return ['Usage:', ...lines.slice(from, to).map((l) => l.replace(/^\/\/ ?/, ''))].join('\n');
}

function build() {
  console.log('push: npm run build');
  if (dryRun) return;
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: join(here, '..'), stdio: 'inherit' });
  if (result.status !== 0) fail(`npm run build failed (exit ${result.status ?? 'signal'}).`);
}

function main() {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage());
    return;
  }
  const title = menuName();
  if (args.includes('--title')) {
    console.log(title);
    return;
  }
  const version = option('--version');
  if (version !== undefined) {
    const problems = publisherProblems(readPublisher());
    if (problems.length > 0)
      fail(
        `refused: a version goes to the Marketplace, and the publisher checklist is unfilled:\n` +
          problems.map((p) => `  - ${p}`).join('\n') +
          '\nFill apps-script/publishing/publisher.json (PUBLISHING.md, step 7).',
      );
  }
  const bind = option('--bind');
  if (bind !== undefined) {
    let parentId;
    try {
      parentId = spreadsheetId(bind);
    } catch (error) {
      fail(error.message);
    }
    createProject(title, parentId);
  } else if (args.includes('--standalone')) createProject(title);
  checkProject();
  if (args.includes('--build')) build();
  for (const file of ['Code.js', 'appsscript.json', 'Sidebar.html']) {
    if (!existsSync(join(here, 'dist', file)))
      fail(`apps-script/dist/${file} is missing: run npm run build.`);
  }
  clasp(['--project', here, 'push', '--force']);
  if (version !== undefined) clasp(['--project', here, 'create-version', version]);
  if (bind !== undefined)
    console.log(
      `push: reload the spreadsheet; the menu is Extensions → ${title} (docs/guide.md, "First run").`,
    );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
