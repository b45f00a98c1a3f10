// Short ways through (issue 46, item 4): the files a background step (the trigger's handler, as main.ts exports it
// under triggers/handlers.ts's STEP_HANDLER) and a =DAPA call reach when every call is followed (reach-walk.ts).
// `npx tsx test/apps-script/reach.ts [--why] [--json]` prints them (--why: each file's shortest chain of calls from
// the entry point); reach.test.ts holds the counts of apps-script/src to apps-script/reach-limits.json.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { CORE, type Entry, exported, measureReach, programOf, type Reach, SHELL } from './reach-walk';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = 'apps-script/src/main.ts';
const HANDLERS = 'apps-script/src/triggers/handlers.ts';
export const LIMITS_FILE = 'apps-script/reach-limits.json';

/** The handler name the background step's trigger is created with (STEP_HANDLER in triggers/handlers.ts). */
function stepHandler(program: ts.Program): string {
  const declaration = exported(program, ROOT, HANDLERS, 'STEP_HANDLER');
  const init = ts.isVariableDeclaration(declaration) ? declaration.initializer : undefined;
  if (!init || !ts.isStringLiteral(init))
    throw new Error(`${HANDLERS}: STEP_HANDLER is not a string literal`);
  return init.text;
}

/** The two entry points of the add-on as Apps Script runs them: the step trigger's handler and =DAPA, from main.ts. */
export function measureAddOn(): Reach[] {
  const program = programOf(ROOT, [MAIN, HANDLERS]);
  const entries: Entry[] = [
    { name: 'step', file: MAIN, exportName: stepHandler(program) },
    { name: 'dapa', file: MAIN, exportName: 'DAPA' },
  ];
  return measureReach(ROOT, entries, program);
}

/** The ceilings the test holds the shell's counts to, and the target they go down to. */
export interface Limits {
  step: number;
  dapa: number;
  target: number;
  why: string;
}

export function readLimits(): Limits {
  return JSON.parse(fs.readFileSync(path.join(ROOT, LIMITS_FILE), 'utf8')) as Limits;
}

/** The report: per entry point, the shell's count (the one limited), the core's beside it, the files; then both's. */
export function describeReach(reaches: Reach[], limits?: Limits, withWhy = false): string {
  const lines: string[] = [];
  for (const r of reaches) {
    const ceiling = limits
      ? ` (ceiling ${limits[r.entry as 'step' | 'dapa'] ?? '-'}, target ${limits.target})`
      : '';
    lines.push(
      `${r.entry} (${r.from}): ${r.shell.length} files of ${SHELL}${ceiling}; ${r.core.length} of ${CORE} beside` +
        (r.other.length > 0 ? `; ${r.other.length} other` : ''),
    );
    for (const f of [...r.shell, ...r.core, ...r.other])
      lines.push(
        `  ${f}` + (withWhy ? `: ${[...r.why[f]].reverse().join(' ← ').split(SHELL).join('')}` : ''),
      );
    if (r.constantsOnly.length > 0)
      lines.push(`  constants only read (not counted): ${r.constantsOnly.join(', ')}`);
  }
  if (reaches.length === 2) {
    const [a, b] = reaches.map((r) => new Set([...r.shell, ...r.core, ...r.other]));
    const both = [...a].filter((f) => b.has(f));
    const shell = both.filter((f) => f.startsWith(SHELL)).length;
    lines.push(
      `in both: ${shell} files of ${SHELL}, ${both.length - shell} of ${CORE}`,
      ...both.map((f) => `  ${f}`),
    );
  }
  return lines.join('\n');
}

if (require.main === module) {
  const reaches = measureAddOn();
  if (process.argv.includes('--json'))
    console.log(JSON.stringify({ limits: readLimits(), reaches }, null, 2));
  else console.log(describeReach(reaches, readLimits(), process.argv.includes('--why')));
}
