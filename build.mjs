// `npm run build`: every bundle in turn, the Sheets add-on (apps-script/build.mjs, Code.js and appsscript.json), its
// sidebar (apps-script/sidebar/build.mjs, Sidebar.html) and the n8n package (n8n-node/build.mjs, n8n-node/dist).
// `--help` prints this and builds nothing.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  const header = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  const end = header.findIndex((l) => !l.startsWith('//'));
  console.log(
    `Usage (build.mjs):\n${header
      .slice(0, end)
      .map((l) => l.replace(/^\/\/ ?/, ''))
      .join('\n')}`,
  );
  process.exit(0);
}
for (const script of ['apps-script/build.mjs', 'apps-script/sidebar/build.mjs', 'n8n-node/build.mjs']) {
  // Options (such as n8n-node/build.mjs's --outdir) are the n8n package build's.
  const own = script === 'n8n-node/build.mjs' ? args : [];
  const result = spawnSync(process.execPath, [join(here, script), ...own], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
