// n8n's community package scanner (@n8n/scan-community-package, pinned in scanner-install/, installed by run.sh on
// Node 24 into scanner/) run offline with its own exports and rule set on the two things n8n's verification lints:
// the source leg (the tree a tag attests: `git archive` of a commit, the folder whose package.json carries the
// package's name found by the scanner's findPackageRoot, linted with SOURCE_FILE_PATTERNS) and the tarball leg (the
// packed package's `**/*.js` and package.json). Uncommitted edits never count: the source leg reads a commit.
//
//   node test/n8n-e2e/scanner.mjs check [--tarball <file.tgz>]   the project's checks; last line `N passed, N failed`
//   node test/n8n-e2e/scanner.mjs gate [--ref <commit>] [--tree <dir>]   the release's refusal (exit 1, saying what to set)
//   node test/n8n-e2e/scanner.mjs source [--ref <commit>] | tarball <file.tgz>   one leg, its findings printed
//
// SCANNER_DIR overrides where the scanner is installed (default test/n8n-e2e/scanner).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const PACKAGE_NAME = 'n8n-nodes-dapa-checker';
const TARBALL_PATTERNS = ['**/*.js', 'package.json']; // the scanner's tarball leg (analyzePackageByName)
/** A publisher identity for temporary copies only (reserved .test names; never committed, never published). */
export const TEST_IDENTITY = JSON.parse(readFileSync(join(here, 'test-identity.json'), 'utf8'));

const scannerDir = resolve(process.env.SCANNER_DIR ?? join(here, 'scanner'));
const scannerModule = join(scannerDir, 'node_modules/@n8n/scan-community-package/scanner/scanner.mjs');
const { missingIdentity, identityMessage } = await import(
  pathToFileURL(join(root, 'n8n-node/pack.mjs')).href
);

async function loadScanner() {
  if (!existsSync(scannerModule)) {
    throw new Error(
      `the scanner is not installed at ${scannerDir}: run bash test/n8n-e2e/run.sh, or npm ci --ignore-scripts ` +
        'in a copy of test/n8n-e2e/scanner-install/ (SCANNER_DIR names it)',
    );
  }
  const scanner = await import(pathToFileURL(scannerModule).href);
  const requireFromScanner = createRequire(scannerModule);
  return { scanner, ESLint: requireFromScanner('eslint').ESLint, glob: requireFromScanner('fast-glob') };
}
const { scanner, ESLint, glob } = await loadScanner();

/**
 * Which publisher identity field a finding is about (undefined for any other finding): the community rules'
 * valid-author and require-homepage, and nodes-base's author / repository "still default" checks.
 */
export function identityFieldOf(finding) {
  const rule = finding.ruleId ?? '';
  if (rule.endsWith('/valid-author') || /community-package-json-author-(missing|name|email)/.test(rule)) {
    if (/email/i.test(rule) || /email/i.test(finding.message)) return 'author.email';
    if (/name/i.test(rule) || /name/i.test(finding.message)) return 'author.name';
    return 'author';
  }
  if (rule.endsWith('/require-homepage')) return 'homepage';
  if (rule.endsWith('/community-package-json-repository-url-still-default')) return 'repository.url';
  return undefined;
}

/**
 * Lints `dir` as the scanner does: its verdict (analyzePackage: passes without errors) and every finding, errors and
 * warnings, with the rule, from the same configuration (buildScanConfig, inline disables off).
 */
async function lintLeg(dir, patterns) {
  const verdict = await scanner.analyzePackage(dir, patterns);
  const eslint = new ESLint({
    cwd: dir,
    allowInlineConfig: false,
    overrideConfigFile: true,
    overrideConfig: await scanner.buildScanConfig(),
  });
  const files = glob.sync(patterns, {
    cwd: dir,
    absolute: true,
    ignore: ['node_modules/**', '**/package-lock.json'],
  });
  const results = files.length ? await eslint.lintFiles(files) : [];
  const findings = results.flatMap((result) =>
    result.messages.map((m) => ({
      file: relative(dir, result.filePath),
      line: m.line,
      severity: m.severity === 2 ? 'error' : 'warning',
      ruleId: m.ruleId,
      message: m.message,
    })),
  );
  return { passed: verdict.passed === true, message: verdict.message, files: files.length, findings };
}

/** The repository's tree at `ref` (`git archive`), extracted into a new temporary folder. */
function treeAt(ref) {
  const dir = mkdtempSync(join(tmpdir(), 'scanner-source-'));
  const archive = spawnSync('git', ['-C', root, 'archive', '--format=tar', ref], { maxBuffer: 1 << 30 });
  if (archive.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `git archive ${ref} failed: ${archive.stderr.toString().trim()} (the source leg reads a commit)`,
    );
  }
  execFileSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  return dir;
}

/** The source leg over a tree: the package folder found by the scanner's own findPackageRoot, then linted. */
export async function sourceLeg(tree) {
  const packageRoot = scanner.findPackageRoot(tree, PACKAGE_NAME);
  if (!packageRoot) {
    return {
      packageRoot,
      passed: false,
      message: `no package.json named ${PACKAGE_NAME}`,
      files: 0,
      findings: [],
    };
  }
  return { packageRoot, ...(await lintLeg(packageRoot, scanner.SOURCE_FILE_PATTERNS)) };
}

/** The tarball leg: the packed package extracted, its `**\/*.js` and package.json linted. */
export async function tarballLeg(tarball) {
  const dir = mkdtempSync(join(tmpdir(), 'scanner-tarball-'));
  try {
    execFileSync('tar', ['-xzf', resolve(tarball), '-C', dir, '--strip-components=1']);
    return await lintLeg(dir, TARBALL_PATTERNS);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function describe(leg) {
  const errors = leg.findings.filter((f) => f.severity === 'error').length;
  const lines = leg.findings.map((f) => `    ${f.file}:${f.line} ${f.severity} ${f.message} (${f.ruleId})`);
  return [`${leg.files} files, ${errors} errors, ${leg.findings.length - errors} warnings`, ...lines].join(
    '\n',
  );
}

/** Identity fields named by the findings, and the findings that are about something else. */
function sortFindings(findings) {
  const fields = [...new Set(findings.map(identityFieldOf).filter(Boolean))].sort();
  const others = findings.filter((f) => !identityFieldOf(f));
  return { fields, others };
}

/**
 * The release's refusal: the source leg of the tree at `ref` (or the folder `tree`) must have no finding at all,
 * and the manifest must name its whole publisher identity. Returns the message to print and the exit status.
 */
async function gate({ ref, tree }) {
  const dir = tree ? resolve(tree) : treeAt(ref);
  try {
    const leg = await sourceLeg(dir);
    const where = tree ? dir : `${ref}`;
    const manifest = leg.packageRoot
      ? JSON.parse(readFileSync(join(leg.packageRoot, 'package.json'), 'utf8'))
      : {};
    const { fields, others } = sortFindings(leg.findings);
    const unset = [...new Set([...missingIdentity(manifest), ...fields])];
    if (leg.passed && leg.findings.length === 0 && unset.length === 0) {
      return {
        status: 0,
        text: `scanner gate: the source leg of ${where} passes n8n's scanner with no finding`,
      };
    }
    const lines = [`scanner gate: refused: n8n's scanner, source leg of ${where}: ${describe(leg)}`];
    if (unset.length) lines.push(identityMessage(unset));
    if (others.length)
      lines.push(`fix the other ${others.length} finding(s) above in n8n-node/ before tagging`);
    if (!leg.packageRoot) lines.push(leg.message);
    return { status: 1, text: lines.join('\n') };
  } finally {
    if (!tree) rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the project's checks --------------------------------------------------------------------------------

let passed = 0;
let failed = 0;
function check(name, ok, detail = '') {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`  ${ok ? 'ok  ' : 'FAIL'}  scanner: ${name}${ok || !detail ? '' : ` -- ${detail}`}`);
  return ok;
}

/** The identity fields the scanner itself checks (repository.url and bugs.url are pack.mjs --release's). */
const SCANNED_IDENTITY = ['author.email', 'author.name', 'homepage'];

async function runChecks(packedTarball) {
  const head = execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const tree = treeAt('HEAD');
  const work = mkdtempSync(join(tmpdir(), 'scanner-check-'));
  try {
    // 1. The source leg on the committed tree: the findings are exactly the identity fields left unset.
    const committed = await sourceLeg(tree);
    console.log(`scanner: source leg on HEAD (${head}), n8n-node/ as committed: ${describe(committed)}`);
    check(
      'the source leg finds the package at n8n-node/ (findPackageRoot)',
      committed.packageRoot === join(tree, 'n8n-node'),
    );
    const manifest = JSON.parse(readFileSync(join(tree, 'n8n-node/package.json'), 'utf8'));
    const unset = missingIdentity(manifest);
    const { fields, others } = sortFindings(committed.findings);
    const expected = SCANNED_IDENTITY.filter((field) => unset.includes(field));
    check(
      `the source leg reports exactly the identity fields left unset (${expected.join(', ') || 'none'}) and nothing else`,
      JSON.stringify(fields) === JSON.stringify(expected) && others.length === 0,
      `reported ${JSON.stringify(fields)}, others ${JSON.stringify(others)}`,
    );

    // 2. The release's gate, as the workflow runs it, on HEAD.
    const gateRun = spawnSync(process.execPath, [fileURLToPath(import.meta.url), 'gate', '--ref', 'HEAD'], {
      encoding: 'utf8',
      env: { ...process.env, GITHUB_ACTIONS: '' },
    });
    const gateText = gateRun.stdout + gateRun.stderr;
    console.log(gateText.trimEnd().replace(/^/gm, '    | '));
    if (unset.length > 0) {
      check(
        `the release gate refuses the committed manifest (exit 1), naming every field to set (${unset.join(', ')})`,
        gateRun.status === 1 && /refused/.test(gateText) && unset.every((field) => gateText.includes(field)),
        `exit ${gateRun.status}`,
      );
    } else {
      check(
        'the committed manifest names its publisher: the release gate lets it through',
        gateRun.status === 0,
        gateText,
      );
    }

    // 3. The same tree with the identity fields set (a temporary copy): the source leg passes with no finding.
    const copy = join(work, 'tree');
    cpSync(tree, copy, { recursive: true });
    const copyManifest = join(copy, 'n8n-node/package.json');
    writeFileSync(copyManifest, `${JSON.stringify({ ...manifest, ...TEST_IDENTITY }, null, 2)}\n`);
    const identified = await sourceLeg(copy);
    console.log(`scanner: source leg on a copy with the identity fields set: ${describe(identified)}`);
    check(
      'with the identity set, the source leg passes with no error and no warning',
      identified.passed && identified.findings.length === 0,
      describe(identified),
    );
    const copyGate = await gate({ tree: copy });
    check('with the identity set, the release gate lets it through', copyGate.status === 0, copyGate.text);

    // 4. The tarball leg on the package packed (n8n-node/pack.mjs) from that manifest: clean.
    const packed = execFileSync(
      process.execPath,
      [join(root, 'n8n-node/pack.mjs'), '--manifest', copyManifest, '--out', join(work, 'pack')],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    )
      .trim()
      .split('\n')
      .pop();
    const tarball = await tarballLeg(packed);
    console.log(`scanner: tarball leg on ${relative(work, packed)} (identity set): ${describe(tarball)}`);
    check(
      'the tarball leg is clean (no error, no warning)',
      tarball.passed && tarball.findings.length === 0 && tarball.files >= 3,
      describe(tarball),
    );

    // 5. The tarball the e2e suite loads (the committed manifest, packed): nothing but the same identity fields.
    if (packedTarball) {
      const e2e = await tarballLeg(packedTarball);
      const sorted = sortFindings(e2e.findings);
      console.log(
        `scanner: tarball leg on the e2e suite's ${relative(root, packedTarball)}: ${describe(e2e)}`,
      );
      check(
        'the tarball as packed from the committed manifest: only the identity fields left unset',
        JSON.stringify(sorted.fields) === JSON.stringify(expected) && sorted.others.length === 0,
        describe(e2e),
      );
    }
  } finally {
    rmSync(tree, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

async function main(argv) {
  const arg = (name) => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  switch (argv[0]) {
    case 'check':
      return runChecks(arg('--tarball') ?? process.env.E2E_NODE_TARBALL);
    case 'gate': {
      const result = await gate({ ref: arg('--ref') ?? 'HEAD', tree: arg('--tree') });
      if (result.status !== 0 && process.env.GITHUB_ACTIONS === 'true') {
        console.log(`::error title=n8n scanner, source leg::${result.text.split('\n').slice(-2).join(' ')}`);
      }
      console.log(result.text);
      return result.status;
    }
    case 'source': {
      const tree = treeAt(arg('--ref') ?? 'HEAD');
      try {
        const leg = await sourceLeg(tree);
        console.log(`source leg: ${describe(leg)}`);
        return leg.passed ? 0 : 1;
      } finally {
        rmSync(tree, { recursive: true, force: true });
      }
    }
    case 'tarball': {
      const leg = await tarballLeg(argv[1]);
      console.log(`tarball leg: ${describe(leg)}`);
      return leg.passed ? 0 : 1;
    }
    default:
      console.error(
        'Usage: node test/n8n-e2e/scanner.mjs check | gate [--ref <commit>] [--tree <dir>] | source [--ref <commit>] | tarball <file.tgz>',
      );
      return 2;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(`scanner: ${error.stack ?? error}`);
      if (process.argv[2] === 'check') console.log(`${passed} passed, ${failed + 1} failed`);
      process.exit(1);
    },
  );
}
