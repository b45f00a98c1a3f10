// The code the Sheets benchmark measures, as one hash: test/bench/sheets-background.ts writes it into SHEETS.md with
// the figures, and test/publishing/docs.test.ts compares it with the checkout's, so figures measured on older code are
// said to be stale instead of being quoted as the code's.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

const root = join(__dirname, '../..');

/**
 * The code the benchmark runs: the Sheets shell (built into Code.js) and the files of the core it imports, directly
 * or through other core files. Core files only the n8n node uses (its sharing run) are not measured, so changing them
 * leaves the Sheets figures current.
 */
export const MEASURED_SOURCES = ['apps-script/src', 'the files of shared/ it imports'];

const SHELL = 'apps-script/src';
const IMPORT = /(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/g;

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir))
    .flatMap((name) => {
      const path = `${dir}/${name}`;
      return statSync(join(root, path)).isDirectory() ? filesUnder(path) : [path];
    })
    .filter((path) => path.endsWith('.ts'));
}

/** The file a relative import names: `x.ts`, or `x/index.ts`. */
function resolveImport(from: string, spec: string): string | undefined {
  const base = posix.normalize(posix.join(posix.dirname(from), spec));
  return [`${base}.ts`, `${base}/index.ts`, base].find(
    (path) => path.endsWith('.ts') && existsSync(join(root, path)),
  );
}

/** Every .ts file of the shell, and the core files reached from them by relative imports. */
export function measuredFiles(): string[] {
  const seen = new Set<string>();
  const todo = filesUnder(SHELL);
  for (let path = todo.pop(); path !== undefined; path = todo.pop()) {
    if (seen.has(path)) continue;
    seen.add(path);
    for (const match of readFileSync(join(root, path), 'utf8').matchAll(IMPORT)) {
      const target = resolveImport(path, match[1]);
      if (target && (target.startsWith(`${SHELL}/`) || target.startsWith('shared/'))) todo.push(target);
    }
  }
  return [...seen].sort();
}

/** SHA-256 of every measured file's path and text (line ends as LF), in path order; the first 16 hex digits. */
export function measuredSourceHash(): string {
  const hash = createHash('sha256');
  for (const path of measuredFiles()) {
    hash.update(`${path}\n`);
    hash.update(readFileSync(join(root, path), 'utf8').replace(/\r\n/g, '\n'));
    hash.update('\n');
  }
  return hash.digest('hex').slice(0, 16);
}

/** The line SHEETS.md carries, and how to read it back. */
export function measuredLine(hash: string): string {
  return `Measured code: \`${hash}\` (SHA-256 of apps-script/src/** and the files of shared/ it imports, as \`test/publishing/measured-source.ts\` computes it).`;
}
export const MEASURED_LINE = /Measured code: `([0-9a-f]{16})`/;
