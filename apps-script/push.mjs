// `npm run push`: checks apps-script/.clasp.json (copied from .clasp.json.example, with your scriptId) and runs
// `clasp push --force` on apps-script/dist, so the manifest in this repository is the one deployed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const projectFile = join(here, '.clasp.json');

function fail(message) {
  console.error(`push: ${message}`);
  process.exit(1);
}

if (!existsSync(projectFile)) {
  fail(
    'apps-script/.clasp.json is missing: copy apps-script/.clasp.json.example to it and set your scriptId (see apps-script/README.md).',
  );
}
let project;
try {
  project = JSON.parse(readFileSync(projectFile, 'utf8'));
} catch (error) {
  fail(`apps-script/.clasp.json is not valid JSON: ${error.message}`);
}
if (!project.scriptId || /PASTE|YOUR/i.test(project.scriptId)) {
  fail('set "scriptId" in apps-script/.clasp.json to your Apps Script project id (Project Settings → IDs).');
}
if (project.rootDir !== 'dist')
  fail('"rootDir" in apps-script/.clasp.json must be "dist" (what npm run build writes).');
for (const file of ['Code.js', 'appsscript.json', 'Sidebar.html']) {
  if (!existsSync(join(here, 'dist', file))) fail(`apps-script/dist/${file} is missing: run npm run build.`);
}

const result = spawnSync('npx', ['--no-install', 'clasp', '--project', here, 'push', '--force'], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
