// Builds the Sheets sidebar into apps-script/dist/Sidebar.html: index.html with styles.css and the
// esbuild-bundled sidebar.ts inlined, one self-contained file that clasp pushes and HtmlService serves.
import { build, transform } from 'esbuild';
import { Buffer } from 'node:buffer';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const distDir = join(here, '..', 'dist');
const outFile = join(distDir, 'Sidebar.html');

const STYLES_MARK = '<!-- INLINE:STYLES -->';
const SCRIPT_MARK = '<!-- INLINE:SCRIPT -->';

function fail(message) {
  console.error(`sidebar build: ${message}`);
  process.exit(1);
}

const bundle = await build({
  entryPoints: [join(here, 'sidebar.ts')],
  bundle: true,
  write: false,
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
// `</script` inside the bundle would end the inline script early; `<\/` means the same in JS strings and regexes.
const script = bundle.outputFiles[0].text.trim().replace(/<\/(script)/gi, '<\\/$1');

const css = await readFile(join(here, 'styles.css'), 'utf8');
const styles = (await transform(css, { loader: 'css', minify: true, legalComments: 'none' })).code
  .trim()
  .replace(/<\/(style)/gi, '<\\/$1');

const template = await readFile(join(here, 'index.html'), 'utf8');
for (const mark of [STYLES_MARK, SCRIPT_MARK]) {
  if (template.split(mark).length !== 2) fail(`index.html must contain ${mark} exactly once`);
}
const html = template
  .replace(/<!-- The Sheets sidebar's markup;[^>]*-->\n/, '')
  .replace(STYLES_MARK, () => `<style>${styles}</style>`)
  .replace(SCRIPT_MARK, () => `<script>${script}</script>`);

// HtmlService would treat `<?` as a template scriptlet, and the sidebar must not load anything from the network.
if (html.includes('<?'))
  fail('the output contains "<?", which HtmlService templates would read as a scriptlet');
const external = html.match(/<(?:link|script|img|iframe)\b[^>]*\b(?:href|src)\s*=\s*["']?(?:https?:)?\/\//i);
if (external) fail(`the output loads an external resource: ${external[0]}`);
if (/@import\b|url\(\s*["']?(?:https?:)?\/\//i.test(styles))
  fail('styles.css must not load external resources');

await mkdir(distDir, { recursive: true });
await writeFile(outFile, html);
console.log(
  `sidebar: ${outFile} ${(Buffer.byteLength(html) / 1024).toFixed(1)} KB (script ${(Buffer.byteLength(script) / 1024).toFixed(1)} KB)`,
);
