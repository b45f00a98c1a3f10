// `--help` for the project's TypeScript commands: the command's own header comment (its role and its options) is its
// usage, printed before anything is started, built or written.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Whether the command line asks for help (`--help` or `-h`). */
export function helpRequested(argv: string[] = process.argv.slice(2)): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** A file's leading comment block (after a shebang), without its comment markers. */
export function headerOf(file: string): string {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: string[] = [];
  for (const line of lines.slice(lines[0]?.startsWith('#!') ? 1 : 0)) {
    const m = /^(?:\/\/|#) ?(.*)$/.exec(line);
    if (!m) break;
    out.push(m[1]);
  }
  return out.join('\n');
}

/** With --help: prints `file`'s header and ends the process (exit 0); otherwise returns. */
export function exitWithHelpIfAsked(file: string, argv: string[] = process.argv.slice(2)): void {
  if (!helpRequested(argv)) return;
  console.log(`Usage (${path.relative(path.resolve(__dirname, '..'), file)}):\n${headerOf(file)}`);
  process.exit(0);
}

/** `npm run build`, for the commands that need the bundles (after their --help). Ends the process if it fails. */
export function buildFirst(): void {
  const built = spawnSync('npm', ['run', 'build', '--silent'], {
    cwd: path.resolve(__dirname, '..'),
    stdio: 'inherit',
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
