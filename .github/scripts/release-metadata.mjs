// Release step (.github/workflows/release.yml): makes n8n-node/package.json name the repository the release runs
// in, and checks that the tag is the package's version.
//
//   node .github/scripts/release-metadata.mjs <package.json> <owner/name> [tag]
//
// - `repository`, `homepage` and `bugs` are filled in from <owner/name> (in Actions: $GITHUB_REPOSITORY) when the file
//   does not fix them, so a fork publishes under its own name. npm checks a provenance statement against
//   `repository.url`: a value fixed in the file that names another repository would fail at `npm publish`, so it
//   fails here instead, with the reason.
// - With a tag (`n8n-node-v1.2.3`, or `v1.2.3`), the tag must be the package's version.
// Writes the file in place (on the runner only; nothing is committed) and prints what it set. Exit 1 with a message
// on any problem.
import { readFileSync, writeFileSync } from 'node:fs';

export function releaseMetadata(manifest, repo, tag) {
  const problems = [];
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo ?? '')) {
    problems.push(`the repository must be "owner/name" (GITHUB_REPOSITORY), not ${JSON.stringify(repo)}`);
    return { manifest, problems, set: [] };
  }
  const web = `https://github.com/${repo}`;
  const expected = {
    repository: { type: 'git', url: `git+${web}.git`, directory: 'n8n-node' },
    homepage: `${web}/tree/HEAD/n8n-node#readme`,
    bugs: { url: `${web}/issues` },
  };
  const next = { ...manifest };
  const set = [];
  for (const field of ['repository', 'homepage', 'bugs']) {
    if (manifest[field] === undefined) {
      next[field] = expected[field];
      set.push(field);
    }
  }
  const url = typeof next.repository === 'string' ? next.repository : next.repository?.url;
  if (repoOf(url) !== repo.toLowerCase()) {
    problems.push(
      `package.json fixes "repository" to ${JSON.stringify(url)}, but this release runs in ${repo}: npm's provenance ` +
        'check would refuse it. Remove "repository" from n8n-node/package.json (it is filled in at release) or fix it.',
    );
  }
  if (tag !== undefined && tag !== '') {
    const version = /^(?:n8n-node-)?v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag)?.[1];
    if (!version)
      problems.push(
        `the tag ${JSON.stringify(tag)} is not n8n-node-v<version> (for example n8n-node-v0.2.0)`,
      );
    else if (version !== manifest.version) {
      problems.push(
        `the tag ${tag} says ${version}, but n8n-node/package.json has version ${manifest.version}`,
      );
    }
  }
  return { manifest: next, problems, set };
}

/** "owner/name" (lower case) of a GitHub git or web URL; undefined for anything else. */
function repoOf(url) {
  const match =
    /^(?:git\+)?(?:https?|ssh|git):\/\/(?:git@)?github\.com[/:]([^/]+)\/([^/#?]+?)(?:\.git)?\/?$/i.exec(
      url ?? '',
    );
  return match ? `${match[1]}/${match[2]}`.toLowerCase() : undefined;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const [file, repo, tag] = process.argv.slice(2);
  if (!file || !repo) {
    console.error('Usage: node .github/scripts/release-metadata.mjs <package.json> <owner/name> [tag]');
    process.exit(2);
  }
  const { manifest, problems, set } = releaseMetadata(JSON.parse(readFileSync(file, 'utf8')), repo, tag);
  if (problems.length > 0) {
    for (const problem of problems) console.error(`release-metadata: ${problem}`);
    process.exit(1);
  }
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(
    `release-metadata: ${manifest.name}@${manifest.version} from ${repo}` +
      (set.length > 0
        ? `; filled in ${set.join(', ')}`
        : '; repository, homepage and bugs fixed in the file'),
  );
}
