// Packs the n8n community package as it is published: a fresh build (build.mjs) into a staging copy of package.json,
// README.md, LICENSE and the workflow templates, then `npm pack`. Prints the tarball's path (last line). Used by the
// release workflow, the real-n8n e2e suite (which installs this tarball into each n8n user folder's .n8n/nodes),
// `npm run lint:n8n` and the scanner checks (test/n8n-e2e/scanner.mjs), so all of them see the same package.
//
//   node n8n-node/pack.mjs --out <dir> [--manifest <package.json>] [--repo owner/name] [--tag n8n-node-v1.2.3] [--release]
//   node n8n-node/pack.mjs --fill <package.json> [--repo owner/name] [--release]   (checks a manifest as it would be packed)
//   node n8n-node/pack.mjs --dist-tag [--manifest <package.json>]                 (`latest`, or `next` for a prerelease)
//   node n8n-node/pack.mjs --prepublish-guard                                     (package.json's prepublishOnly)
//
// The publisher's identity (author name and e-mail, `repository`, `homepage`, `bugs`) lives in one place, the
// committed n8n-node/package.json, and is packed as it is there: nothing is filled in at pack time, so n8n's scanner,
// which lints the committed source a release attests, sees what the tarball carries. It is the maintainer's to set
// (n8n-node/README.md, "Publishing"); the committed file leaves it empty. --release refuses a manifest whose identity
// is incomplete, naming the fields to set, and one whose `repository` names another repository than the one the
// release runs in (npm's provenance check would refuse the upload). --manifest packs another copy of package.json
// (the tests' temporary copies with an identity set).
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The publisher's identity in package.json: the maintainer sets each of these (README, "Publishing"). */
export const IDENTITY_FIELDS = ['author.name', 'author.email', 'homepage', 'repository.url', 'bugs.url'];

/** The value of a dotted identity field; `author` and `repository` may also be npm's shorthand strings. */
function identityValue(manifest, field) {
  const [top, sub] = field.split('.');
  const value = manifest?.[top];
  if (sub === undefined) return value;
  if (typeof value === 'string') {
    if (top === 'repository') return sub === 'url' ? value : undefined;
    if (top === 'author') {
      const email = /<([^>]*)>/.exec(value)?.[1] ?? '';
      return sub === 'email' ? email : value.replace(/<[^>]*>|\([^)]*\)/g, '');
    }
    if (top === 'bugs') return sub === 'url' ? value : undefined;
  }
  return value && typeof value === 'object' ? value[sub] : undefined;
}

/** The identity fields a manifest leaves unset (missing, empty or blank), in IDENTITY_FIELDS order. */
export function missingIdentity(manifest) {
  return IDENTITY_FIELDS.filter((field) => {
    const value = identityValue(manifest, field);
    return typeof value !== 'string' || value.trim() === '';
  });
}

/** "owner/name" of a GitHub git or web URL, as written; undefined for anything else. */
export function githubRepoOf(url) {
  const match =
    /^(?:git\+)?(?:(?:https?|ssh|git):\/\/(?:[^@/]+@)?github\.com\/|git@github\.com:)([^/]+)\/([^/#?]+?)(?:\.git)?\/?$/i.exec(
      url ?? '',
    );
  return match ? `${match[1]}/${match[2]}` : undefined;
}

/** The npm dist-tag a version is published under: `latest` for a release, `next` for a prerelease (1.2.0-rc.1). */
export function distTagOf(version) {
  if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(version ?? '')) {
    throw new Error(`${JSON.stringify(version)} is not a semantic version such as 1.2.0 or 1.2.0-rc.1`);
  }
  return /^[^+]*-/.test(version) ? 'next' : 'latest';
}

/** What a maintainer must do about the unset identity fields, as one message. */
export function identityMessage(fields) {
  return (
    `n8n-node/package.json does not name its publisher: set ${fields.join(', ')} (the maintainer's to set, ` +
    'committed before tagging; see n8n-node/README.md, "Publishing"). n8n\'s scanner lints that committed file.'
  );
}

/**
 * The problems that would make npm or n8n refuse this manifest when released from `repo` ("owner/name", when
 * known): with `release`, unset identity fields; always, a `repository` that names another GitHub repository, and a
 * tag that is not the version.
 */
export function releaseProblems(manifest, { repo, tag, release = false } = {}) {
  const problems = [];
  if (repo !== undefined && !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) {
    return [`the repository must be "owner/name", not ${JSON.stringify(repo)}`];
  }
  const missing = missingIdentity(manifest);
  if (release && missing.length > 0) problems.push(identityMessage(missing));
  const url = identityValue(manifest, 'repository.url');
  if (typeof url === 'string' && url.trim() !== '') {
    const named = githubRepoOf(url);
    if (!named) {
      problems.push(
        `package.json's repository.url ${JSON.stringify(url)} is not a GitHub repository (npm's provenance needs one)`,
      );
    } else if (repo !== undefined && named.toLowerCase() !== repo.toLowerCase()) {
      problems.push(
        `package.json's repository.url names ${named}, but this release runs in ${repo}: npm's provenance check ` +
          'would refuse it. Set repository.url (and homepage, bugs) in n8n-node/package.json to this repository.',
      );
    }
  }
  if (tag) {
    const version = /^(?:n8n-node-)?v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag)?.[1];
    if (!version)
      problems.push(`the tag ${JSON.stringify(tag)} is not n8n-node-v<version> (such as n8n-node-v0.2.0)`);
    else if (version !== manifest.version) {
      problems.push(
        `the tag ${tag} says ${version}, but n8n-node/package.json has version ${manifest.version}`,
      );
    }
  }
  return problems;
}

/** The repository the release runs in: --repo, else $GITHUB_REPOSITORY, else the GitHub `origin` remote, if any. */
function resolveRepo(explicit) {
  if (explicit) return explicit;
  if (process.env.GITHUB_REPOSITORY) return process.env.GITHUB_REPOSITORY;
  const origin = spawnSync('git', ['-C', here, 'remote', 'get-url', 'origin'], { encoding: 'utf8' });
  return origin.status === 0 ? githubRepoOf(origin.stdout.trim()) : undefined;
}

function fail(message) {
  console.error(`pack: ${message}`);
  process.exit(1);
}

const GUARD_MESSAGE =
  'pack: `npm publish` in n8n-node/ would upload dist/ as it happens to be (stale, or built from uncommitted ' +
  'sources, and unchecked). Release by pushing a tag n8n-node-v<version> (.github/workflows/release.yml tests, ' +
  'builds, packs and scans first), or publish the tarball `node n8n-node/pack.mjs --release --out <dir>` prints.';

/** This file's header comment: its usage. */
function usage() {
  const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  const end = lines.findIndex((l) => !l.startsWith('//'));
  return `Usage (n8n-node/pack.mjs):\n${lines
    .slice(0, end)
    .map((l) => l.replace(/^\/\/ ?/, ''))
    .join('\n')}`;
}

function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage());
    return;
  }
  const arg = (name) => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  if (argv.includes('--prepublish-guard')) {
    console.error(GUARD_MESSAGE);
    process.exit(1);
  }
  const fillOnly = arg('--fill');
  const manifestFile = fillOnly ?? arg('--manifest') ?? join(here, 'package.json');
  let source;
  try {
    source = JSON.parse(readFileSync(manifestFile, 'utf8'));
  } catch (error) {
    fail(`cannot read ${manifestFile}: ${error.message}`);
  }
  if (argv.includes('--dist-tag')) {
    try {
      console.log(distTagOf(source.version));
    } catch (error) {
      fail(`the version in ${manifestFile}: ${error.message}`);
    }
    return;
  }
  const release = argv.includes('--release');
  const repo = resolveRepo(arg('--repo'));
  if (release && !repo)
    fail('--release needs the GitHub repository (--repo owner/name or GITHUB_REPOSITORY)');
  const problems = releaseProblems(source, { repo, tag: arg('--tag'), release });
  if (problems.length > 0) fail(problems.join('\n'));
  const missing = missingIdentity(source);
  const summary =
    `${source.name}@${source.version}` +
    (missing.length ? `; publisher identity not set (${missing.join(', ')}): not publishable as it is` : '');
  if (fillOnly) {
    writeFileSync(fillOnly, `${JSON.stringify(source, null, 2)}\n`);
    console.error(`pack: ${summary}`);
    return;
  }

  const out = arg('--out');
  if (!out) {
    fail(
      'Usage: node n8n-node/pack.mjs --out <dir> [--manifest <package.json>] [--repo owner/name] ' +
        '[--tag n8n-node-vX.Y.Z] [--release]',
    );
  }
  mkdirSync(out, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), 'n8n-node-pack-'));
  try {
    execFileSync(process.execPath, [join(here, 'build.mjs'), '--outdir', join(stage, 'dist')], {
      stdio: 'ignore',
    });
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(source, null, 2)}\n`);
    for (const file of ['README.md', 'LICENSE']) copyFileSync(join(here, file), join(stage, file));
    if (existsSync(join(here, 'templates')))
      cpSync(join(here, 'templates'), join(stage, 'templates'), { recursive: true });
    // --ignore-scripts: the staging copy has no pack.mjs, and the manifest's only script guards `npm publish`.
    const packed = execFileSync(
      'npm',
      ['pack', '--silent', '--ignore-scripts', '--pack-destination', resolve(out)],
      {
        cwd: stage,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const name = packed.trim().split('\n').pop();
    console.error(`pack: ${summary}`);
    console.log(join(resolve(out), name));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2));
