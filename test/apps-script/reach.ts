// Short ways through (issue 46, item 4): the files a background step (the trigger's handler, as main.ts exports it
// under background/dispatcher.ts's STEP_HANDLER) and a =DAPA call reach when every call is followed (reach-walk.ts).
// `npx tsx test/apps-script/reach.ts [--why] [--json] [--from file#name]` prints them (--why: each file's shortest
// chain of calls from the entry point; --from: any exported function instead); reach.test.ts holds the counts of
// apps-script/src to apps-script/reach-limits.json.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { CORE, type Entry, exported, measureReach, programOf, type Reach, SHELL } from './reach-walk';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = 'apps-script/src/main.ts';
const HANDLERS = 'apps-script/src/background/dispatcher.ts';
export const LIMITS_FILE = 'apps-script/reach-limits.json';

/** The handler name the background step's trigger is created with (STEP_HANDLER in background/dispatcher.ts). */
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
    const limited = limits && (r.entry === 'step' || r.entry === 'dapa');
    const ceiling = limited
      ? ` (ceiling ${limits[r.entry as 'step' | 'dapa']}, target ${limits.target})`
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
    const count = (dir: string) => both.filter((f) => f.startsWith(dir)).length;
    lines.push(`in both: ${count(SHELL)} files of ${SHELL}, ${count(CORE)} of ${CORE}`);
    lines.push(...both.map((f) => `  ${f}`));
  }
  return lines.join('\n');
}

/** `--from file#name` (repeatable): any exported function instead of the add-on's two entry points. */
function entriesAsked(argv: string[]): Entry[] {
  return argv.flatMap((arg, i) => {
    if (arg !== '--from') return [];
    const [file, exportName] = (argv[i + 1] ?? '').split('#');
    if (!file || !exportName)
      throw new Error('--from takes file#name, e.g. apps-script/src/background/step.ts#runStep');
    return [{ name: exportName, file, exportName }];
  });
}

function main(argv: string[]): void {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(
      'Usage: npx tsx test/apps-script/reach.ts [--why] [--json] [--from file#name]\n' +
        'Counts the files of apps-script/src a background step and a =DAPA call reach when every call is followed.\n' +
        "  --why             each file's shortest chain of calls from the entry point\n" +
        '  --json            the counts and files as JSON\n' +
        '  --from file#name  any exported function instead of the two entry points (repeatable)',
    );
    return;
  }
  const unknown = argv.filter(
    (a, i) => a.startsWith('-') && !['--why', '--json', '--from'].includes(a) && argv[i - 1] !== '--from',
  );
  if (unknown.length > 0) throw new Error(`Unknown option ${unknown[0]}: see --help.`);
  const asked = entriesAsked(argv);
  const reaches = asked.length > 0 ? measureReach(ROOT, asked) : measureAddOn();
  if (argv.includes('--json')) console.log(JSON.stringify({ limits: readLimits(), reaches }, null, 2));
  else console.log(describeReach(reaches, readLimits(), argv.includes('--why')));
}

if (require.main === module) main(process.argv.slice(2));
