// The code the Sheets benchmark measures, as one hash: test/bench/sheets-background.ts writes it into SHEETS.md with
// the figures, and test/publishing/docs.test.ts compares it with the checkout's, so figures measured on older code are
// said to be stale instead of being quoted as the code's.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');

/** The folders whose code the benchmark runs: the Sheets shell (built into Code.js) and the core. */
export const MEASURED_SOURCES = ['apps-script/src', 'shared'];

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir))
    .flatMap((name) => {
      const path = `${dir}/${name}`;
      return statSync(join(root, path)).isDirectory() ? filesUnder(path) : [path];
    })
    .filter((path) => path.endsWith('.ts'));
}

/** SHA-256 of every measured file's path and text (line ends as LF), in path order; the first 16 hex digits. */
export function measuredSourceHash(): string {
  const hash = createHash('sha256');
  for (const path of MEASURED_SOURCES.flatMap(filesUnder).sort()) {
    hash.update(`${path}\n`);
    hash.update(readFileSync(join(root, path), 'utf8').replace(/\r\n/g, '\n'));
    hash.update('\n');
  }
  return hash.digest('hex').slice(0, 16);
}

/** The line SHEETS.md carries, and how to read it back. */
export function measuredLine(hash: string): string {
  return `Measured code: \`${hash}\` (SHA-256 of ${MEASURED_SOURCES.map((d) => `${d}/**`).join(' and ')}, as \`test/publishing/measured-source.ts\` computes it).`;
}
export const MEASURED_LINE = /Measured code: `([0-9a-f]{16})`/;
