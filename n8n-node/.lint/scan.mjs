// n8n's community package scanner (@n8n/scan-community-package), run on a local package instead of one fetched
// from npm: its own ESLint config (community rules + n8n-nodes-base rulesets + no-console, inline disables off) on
// the packed tarball's `**/*.js` + package.json, and on the sources. Prints error/warning counts; exits 1 on errors.
// Usage: node scan.mjs <unpacked tarball dir> <package source dir>
import { ESLint } from 'eslint';
import glob from 'fast-glob';
import { buildScanConfig, SOURCE_FILE_PATTERNS } from '@n8n/scan-community-package/scanner/scanner.mjs';

const [packedDir, sourceDir] = process.argv.slice(2);
if (!packedDir || !sourceDir) {
  console.error('Usage: node scan.mjs <unpacked tarball dir> <package source dir>');
  process.exit(2);
}

async function scan(label, cwd, patterns) {
  const eslint = new ESLint({
    cwd,
    allowInlineConfig: false,
    overrideConfigFile: true,
    overrideConfig: await buildScanConfig(),
  });
  const files = glob.sync(patterns, {
    cwd,
    absolute: true,
    ignore: ['node_modules/**', '**/package-lock.json'],
  });
  const results = await eslint.lintFiles(files);
  const errors = results.reduce((n, r) => n + r.errorCount, 0);
  const warnings = results.reduce((n, r) => n + r.warningCount, 0);
  const output = await (await eslint.loadFormatter('stylish')).format(results);
  if (output.trim()) console.log(output);
  console.log(`n8n package scanner, ${label}: ${files.length} files, ${errors} errors, ${warnings} warnings`);
  return errors;
}

const distErrors = await scan('tarball (dist/**/*.js, package.json)', packedDir, ['**/*.js', 'package.json']);
const sourceErrors = await scan('sources', sourceDir, SOURCE_FILE_PATTERNS);
process.exit(distErrors + sourceErrors > 0 ? 1 : 0);
