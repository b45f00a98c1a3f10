// Builds what `clasp push` sends into apps-script/dist: Code.js (one minified esbuild IIFE of src/main.ts, global
// `__dapa`, plus a one-line top-level stub per entry point, the custom function's with its @customfunction JSDoc)
// and appsscript.json; the sidebar's server functions come from sidebar/contract.ts's SERVER_FUNCTIONS, and the build
// stops when src/main.ts's exports and the stubs differ. The sidebar's own build writes dist/Sidebar.html.
import { build } from 'esbuild';
import { Buffer } from 'node:buffer';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const GLOBAL = '__dapa';
/** The size limit of Code.js, shared with test/apps-script/bundle.test.ts (code-size.json says why it is what it is). */
const SIZE_LIMIT_KB = JSON.parse(await readFile(join(here, 'code-size.json'), 'utf8')).maxKB;

const DAPA_DOC = `/**
 * Domain Authority, Page Authority, MR and Spam Score of each URL, from the DAPA checker API (one request per range).
 *
 * @param {A2:A50} urls A cell or a range of URLs or domains: one result row per cell, row by row.
 * @param {"da,pa,mr,spam"} metrics Optional. Which columns, in which order: da, pa, mr, spam, domain.
 * @param {TRUE} header Optional. TRUE adds a header row.
 * @param {_dapa_versions!A1} refresh Optional; added by background checks: a cell they change to refresh the results.
 * @return One row per cell: DA, PA, MR, Spam Score (or the reason a cell was skipped).
 * @customfunction
 */`;

const DAPA_SAMPLE_DOC = `/**
 * Made-up DA, PA, MR and Spam Score to try the add-on without an API key: every value reads "SAMPLE ...", nothing is
 * sent to the DAPA service and nothing is billed. For real metrics use DAPA with your key.
 *
 * @param {A2:A9} urls A cell or a range of URLs or domains: one result row per cell, row by row.
 * @param {"da,pa,mr,spam"} metrics Optional. Which columns, in which order: da, pa, mr, spam, domain.
 * @param {TRUE} header Optional. TRUE adds a header row.
 * @return One row per cell: SAMPLE values (or the reason a cell was skipped).
 * @customfunction
 */`;

/** The top-level functions Apps Script sees besides the sidebar's: DAPA, DAPA_SAMPLE, DAPA_CACHE, the menu's and the triggers'. */
const OTHER_ENTRY_POINTS = [
  { name: 'DAPA', params: ['urls', 'metrics', 'header', 'refresh'], doc: DAPA_DOC },
  { name: 'DAPA_SAMPLE', params: ['urls', 'metrics', 'header'], doc: DAPA_SAMPLE_DOC },
  // Written by background checks in their hidden sheet (checks/shown-relay.ts): no @customfunction, so it stays out
  // of the autocomplete, but Sheets runs it as it runs any function of the script.
  { name: 'DAPA_CACHE', params: ['service', 'domains', 'askedAt'] },
  { name: 'trySampleData', params: [] },
  { name: 'onOpen', params: ['e'] },
  { name: 'onInstall', params: ['e'] },
  { name: 'showSidebar', params: [] },
  { name: 'promptApiKey', params: [] },
  { name: 'checkSelection', params: [] },
  { name: 'refreshDapaFormulas', params: [] },
  { name: 'showHelp', params: [] },
  { name: 'removeDapa', params: [] },
  { name: 'dapaBackgroundStep', params: ['e'] },
  { name: 'dapaOnEdit', params: ['e'] },
  { name: 'dapaBackgroundWatch', params: ['e'] },
];

/** The sidebar's server functions (google.script.run), read from the one list of them in sidebar/contract.ts. */
async function sidebarEntryPoints() {
  const contract = await build({
    entryPoints: [join(here, 'sidebar', 'contract.ts')],
    write: false,
    format: 'cjs',
    platform: 'neutral',
    logLevel: 'warning',
  });
  const module = { exports: {} };
  vm.runInContext(contract.outputFiles[0].text, vm.createContext({ module, exports: module.exports }));
  return Object.entries(module.exports.SERVER_FUNCTIONS).map(([name, { params }]) => ({
    name,
    params: [...params],
  }));
}

function fail(message) {
  console.error(`apps-script build: ${message}`);
  process.exit(1);
}

/** The wire schemas' zod/mini calls go to apps-script/zod-mini.ts, a compact part of zod that answers as zod does. */
const zodMini = {
  name: 'zod-mini',
  setup(b) {
    b.onResolve({ filter: /^zod\/mini$/ }, () => ({ path: join(here, 'zod-mini.ts') }));
  },
};

/** Every top-level function Apps Script sees. */
const ENTRY_POINTS = [...OTHER_ENTRY_POINTS, ...(await sidebarEntryPoints())];

const result = await build({
  entryPoints: [join(here, 'src', 'main.ts')],
  plugins: [zodMini],
  bundle: true,
  write: false,
  format: 'iife',
  globalName: GLOBAL,
  platform: 'neutral',
  mainFields: ['module', 'main'],
  // Apps Script's V8 runtime runs ES2020 (optional chaining, ??); class fields and later syntax are lowered.
  target: 'es2020',
  minify: true,
  legalComments: 'none',
  charset: 'utf8',
  logLevel: 'warning',
});
const bundle = result.outputFiles[0].text.trim();

// Every export needs a stub and every stub an export: a missing one would be invisible to Apps Script.
const realm = vm.createContext({});
vm.runInContext(bundle, realm);
const exported = vm.runInContext(`Object.keys(${GLOBAL})`, realm).sort();
const stubbed = ENTRY_POINTS.map((e) => e.name).sort();
if (JSON.stringify(exported) !== JSON.stringify(stubbed)) {
  fail(`src/main.ts exports [${exported}] but the stubs are [${stubbed}]`);
}

const stubs = ENTRY_POINTS.map(({ name, params, doc }) => {
  const list = params.join(', ');
  const line = `function ${name}(${list}) { return ${GLOBAL}.${name}(${list}); }`;
  return doc ? `${doc}\n${line}` : line;
}).join('\n');

const code = `${bundle}\n\n${stubs}\n`;
await mkdir(dist, { recursive: true });
await writeFile(join(dist, 'Code.js'), code);
await copyFile(join(here, 'appsscript.json'), join(dist, 'appsscript.json'));

const kb = (n) => (n / 1024).toFixed(1);
const bytes = Buffer.byteLength(code);
console.log(
  `apps-script: dist/Code.js ${kb(bytes)} KB minified (limit ${SIZE_LIMIT_KB} KB, apps-script/code-size.json; bundle ${kb(Buffer.byteLength(bundle))} KB + ${ENTRY_POINTS.length} stubs), dist/appsscript.json`,
);
if (bytes > SIZE_LIMIT_KB * 1024)
  fail(`dist/Code.js is ${kb(bytes)} KB, over its ${SIZE_LIMIT_KB} KB limit (apps-script/code-size.json)`);
