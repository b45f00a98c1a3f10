// Short ways through (issue 46, item 4): the files a background step and a =DAPA call reach when every call is
// followed (reach.ts), held to the ceilings of apps-script/reach-limits.json so they cannot grow; the tool itself is
// checked first on small made-up projects whose answer is known.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeReach, measureAddOn, readLimits } from './reach';
import { measureReach, type Reach } from './reach-walk';

/** A made-up project in a fresh temporary folder: file path → text. */
function project(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dapa-reach-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

function reachOf(files: Record<string, string>, file: string, exportName: string): Reach {
  const root = project(files);
  try {
    return measureReach(root, [{ name: 'entry', file, exportName }])[0];
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

const all = (r: Reach) => [...r.shell, ...r.core, ...r.other];

describe('the walk itself, on made-up projects', () => {
  it('follows a method called through a class field, not a file imported as a type only', () => {
    // b.ts is imported as a type too, but its method is called through A's field: that call reaches it.
    const r = reachOf(
      {
        'a.ts': [
          "import type { B } from './b';",
          "import type { C } from './c';",
          'export class A {',
          '  constructor(private readonly b: B) {}',
          '  run(c?: C): number {',
          '    const seen: C | undefined = c;',
          '    return this.b.go() + (seen ? 1 : 0);',
          '  }',
          '}',
          'export function entry(b: B): number { return new A(b).run(); }',
        ].join('\n'),
        'b.ts': 'export class B { go(): number { return 2; } }\n',
        'c.ts': "import { unused } from './d';\nexport class C { n = unused(); }\n",
        'd.ts': 'export function unused(): number { return 3; }\n',
      },
      'a.ts',
      'entry',
    );
    expect(all(r)).toEqual(['a.ts', 'b.ts']);
  });

  it('counts functions passed as values (a shorthand property too), getters, base classes, re-exports and arrow constants; splits shell and core', () => {
    const r = reachOf(
      {
        'apps-script/src/main.ts': "export { entry } from './entry';\n",
        'apps-script/src/entry.ts': [
          '/// <reference path="./globals.d.ts" />',
          "import { later } from './passed';",
          "import { tabled } from './tabled';",
          "import { Sized } from './sized';",
          "import { Sub } from './sub';",
          "import { LIMIT } from './limits';",
          "import { helper } from '../../shared';",
          "import type * as Typed from './typed-only';",
          "import { neverCalled } from './unreached';",
          'function hand(f: () => void): void { f(); }',
          'export function entry(): number {',
          '  hand(later);',
          '  const handlers = { tabled };',
          '  hand(handlers.tabled);',
          '  ambient();',
          '  new Sub();',
          '  const k = {} as ReturnType<typeof Typed.shape>;',
          '  return new Sized().size + LIMIT + helper() + (k ? 0 : 1);',
          '}',
          'export function notTheEntry(): void { neverCalled(); }',
        ].join('\n'),
        'apps-script/src/passed.ts': 'export function later(): void {}\n',
        'apps-script/src/tabled.ts': 'export function tabled(): void {}\n',
        'apps-script/src/sized.ts':
          "import { count } from './count';\nexport class Sized { get size(): number { return count(); } }\n",
        'apps-script/src/count.ts': 'export const count = (): number => 1;\n',
        'apps-script/src/sub.ts': "import { Base } from './base';\nexport class Sub extends Base {}\n",
        'apps-script/src/base.ts': "import { seed } from './seed';\nexport class Base { n = seed(); }\n",
        'apps-script/src/seed.ts': 'export function seed(): number { return 4; }\n',
        'apps-script/src/limits.ts': 'export const LIMIT = 5;\n',
        'apps-script/src/typed-only.ts': 'export function shape(): { n: number } { return { n: 1 }; }\n',
        'apps-script/src/unreached.ts': 'export function neverCalled(): void {}\n',
        'apps-script/src/globals.d.ts': 'declare function ambient(): void;\n',
        'shared/index.ts': "export * from './helper';\n",
        'shared/helper.ts': 'export function helper(): number { return 6; }\n',
      },
      'apps-script/src/main.ts',
      'entry',
    );
    expect(r.from).toBe('apps-script/src/entry.ts#entry');
    expect(r.shell).toEqual(
      ['entry', 'passed', 'tabled', 'sized', 'count', 'sub', 'base', 'seed']
        .map((f) => `apps-script/src/${f}.ts`)
        .sort(),
    );
    expect(r.core).toEqual(['shared/helper.ts']);
    expect(r.other).toEqual([]);
    expect(r.constantsOnly).toEqual(['apps-script/src/limits.ts']);
    expect(r.why['apps-script/src/seed.ts']).toEqual([
      'apps-script/src/entry.ts:11 entry',
      'apps-script/src/sub.ts:2 Sub',
      'apps-script/src/base.ts:2 Base',
      'apps-script/src/seed.ts:1 seed',
    ]);
  });
});

describe('the add-on today: a background step and a =DAPA call', () => {
  const reaches = measureAddOn();
  const limits = readLimits();
  const [step, dapa] = reaches;

  it('prints what each reaches', () => {
    console.log(describeReach(reaches, limits));
    expect(step.from).toBe('apps-script/src/background/dispatcher.ts#dapaBackgroundStep');
    expect(dapa.from).toBe('apps-script/src/formula/dapa.ts#DAPA');
    // The books' fields and methods are followed: a step's StepBooks, a =DAPA call's FormulaBooks.
    expect(step.shell).toContain('apps-script/src/background/step.ts');
    expect(dapa.shell).toContain('apps-script/src/stores/books.ts');
  });

  it.each(['step', 'dapa'] as const)(
    '%s reaches no more files of apps-script/src than its ceiling',
    (entry) => {
      const reach = entry === 'step' ? step : dapa;
      expect(limits[entry]).toBeLessThanOrEqual(limits.target);
      expect(reach.shell.length).toBeLessThanOrEqual(limits[entry]);
      if (reach.shell.length < limits[entry])
        console.log(
          `${entry}: ${reach.shell.length} files, below its ceiling ${limits[entry]}: lower it in reach-limits.json`,
        );
    },
  );
});
