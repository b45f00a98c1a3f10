// Packs the n8n community package as it is published: a fresh build (build.mjs) into a staging copy of package.json,
// README.md and LICENSE, the release-time fields filled in, then `npm pack`. Prints the tarball's path (last line).
// Used by the release workflow, the real-n8n e2e suite (which installs this tarball into n8n's custom extensions
// folder) and `npm run lint:n8n` (which lints and scans it), so all three see the same package.
//
//   node n8n-node/pack.mjs --out <dir> [--repo owner/name] [--tag n8n-node-v1.2.3] [--release]
//   node n8n-node/pack.mjs --fill <package.json> [--repo owner/name]      (fills a copy in place, no pack)
//
// Release-time fields, when n8n-node/package.json does not fix them (so a fork publishes under its own name):
// - `repository`, `homepage`, `bugs`: the GitHub repository (--repo, else $GITHUB_REPOSITORY, else the `origin`
//   remote when it is on GitHub). npm refuses a provenance statement whose repository is not `repository.url`, so a
//   value fixed in the file that names another repository is an error here.
// - `author.email` (n8n's lint requires one): $PACKAGE_AUTHOR_EMAIL (a repository variable in Actions), else the
//   repository owner's GitHub address (<id>+<owner>@users.noreply.github.com).
// Outside a GitHub repository (a local clone without a GitHub remote) the repository is the stand-in
// `local/<folder name>`, said so on stderr; --release refuses it, and the release workflow always passes --release.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** "owner/name" of a GitHub git or web URL, as written; undefined for anything else. */
export function githubRepoOf(url) {
  const match =
    /^(?:git\+)?(?:(?:https?|ssh|git):\/\/(?:[^@/]+@)?github\.com\/|git@github\.com:)([^/]+)\/([^/#?]+?)(?:\.git)?\/?$/i.exec(
      url ?? '',
    );
  return match ? `${match[1]}/${match[2]}` : undefined;
}

/**
 * The manifest as released from `repo` ("owner/name"): the fields the file leaves out filled in, and the problems
 * that would make npm or n8n refuse it (a repository fixed in the file naming another repository, a tag that is not
 * the version). `ownerId` is GitHub's numeric id of the owner, when known.
 */
export function releaseManifest(manifest, { repo, tag, authorEmail, ownerId } = {}) {
  const problems = [];
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo ?? '')) {
    return {
      manifest,
      problems: [`the repository must be "owner/name", not ${JSON.stringify(repo)}`],
      filled: [],
    };
  }
  const web = `https://github.com/${repo}`;
  const owner = repo.split('/')[0];
  const next = { ...manifest };
  const filled = [];
  const fill = (field, value) => {
    if (next[field] === undefined) {
      next[field] = value;
      filled.push(field);
    }
  };
  fill('repository', { type: 'git', url: `git+${web}.git`, directory: 'n8n-node' });
  fill('homepage', `${web}/tree/HEAD/n8n-node#readme`);
  fill('bugs', { url: `${web}/issues` });
  const author =
    typeof next.author === 'object' && next.author !== null ? next.author : { name: next.author };
  if (!author.email) {
    const email = authorEmail || `${ownerId ? `${ownerId}+` : ''}${owner}@users.noreply.github.com`;
    next.author = { ...author, name: author.name || owner, email };
    filled.push('author.email');
  }

  const fixedUrl = typeof next.repository === 'string' ? next.repository : next.repository?.url;
  if (githubRepoOf(fixedUrl)?.toLowerCase() !== repo.toLowerCase()) {
    problems.push(
      `package.json fixes "repository" to ${JSON.stringify(fixedUrl)}, but this release runs in ${repo}: npm's ` +
        'provenance check would refuse it. Remove "repository" from n8n-node/package.json (it is filled in) or fix it.',
    );
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
  return { manifest: next, problems, filled };
}

/** The repository to release from: --repo, $GITHUB_REPOSITORY, the GitHub `origin` remote, else a local stand-in. */
function resolveRepo(explicit) {
  if (explicit) return { repo: explicit, standIn: false };
  if (process.env.GITHUB_REPOSITORY) return { repo: process.env.GITHUB_REPOSITORY, standIn: false };
  const origin = spawnSync('git', ['-C', here, 'remote', 'get-url', 'origin'], { encoding: 'utf8' });
  const fromOrigin = origin.status === 0 ? githubRepoOf(origin.stdout.trim()) : undefined;
  if (fromOrigin) return { repo: fromOrigin, standIn: false };
  const top = spawnSync('git', ['-C', here, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' });
  const folder = basename(top.status === 0 ? top.stdout.trim() : resolve(here, '..')).replace(
    /[^A-Za-z0-9_.-]/g,
    '-',
  );
  return { repo: `local/${folder}`, standIn: true };
}

function fail(message) {
  console.error(`pack: ${message}`);
  process.exit(1);
}

function main(argv) {
  const arg = (name) => {
    const at = argv.indexOf(name);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const { repo, standIn } = resolveRepo(arg('--repo'));
  const release = argv.includes('--release');
  if (standIn && release)
    fail('--release needs the GitHub repository (--repo owner/name or GITHUB_REPOSITORY)');
  if (standIn)
    console.error(`pack: no GitHub repository known; stand-in ${repo} (local use only, never published)`);
  const options = {
    repo,
    tag: arg('--tag'),
    authorEmail: process.env.PACKAGE_AUTHOR_EMAIL,
    ownerId: process.env.GITHUB_REPOSITORY_OWNER_ID,
  };

  const fillOnly = arg('--fill');
  const source = JSON.parse(readFileSync(fillOnly ?? join(here, 'package.json'), 'utf8'));
  const { manifest, problems, filled } = releaseManifest(source, options);
  if (problems.length > 0) fail(problems.join('\n'));
  const summary = `${manifest.name}@${manifest.version} from ${repo}${filled.length ? `; filled in ${filled.join(', ')}` : ''}`;
  if (fillOnly) {
    writeFileSync(fillOnly, `${JSON.stringify(manifest, null, 2)}\n`);
    console.error(`pack: ${summary}`);
    return;
  }

  const out = arg('--out');
  if (!out)
    fail('Usage: node n8n-node/pack.mjs --out <dir> [--repo owner/name] [--tag n8n-node-vX.Y.Z] [--release]');
  mkdirSync(out, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), 'n8n-node-pack-'));
  try {
    execFileSync(process.execPath, [join(here, 'build.mjs'), '--outdir', join(stage, 'dist')], {
      stdio: 'ignore',
    });
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const file of ['README.md', 'LICENSE']) copyFileSync(join(here, file), join(stage, file));
    const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', resolve(out)], {
      cwd: stage,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const name = packed.trim().split('\n').pop();
    console.error(`pack: ${summary}`);
    console.log(join(resolve(out), name));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2));
