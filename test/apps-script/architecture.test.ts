// The Sheets shell's architecture as its imports draw it: apps-script/src is cut into folders named after what they
// hold, stacked in layers, and every import runs down (or stays in its folder): never back up, never in a cycle.
// Prints the picture (folders, the arrows between them and how many imports each carries). The sidebar page
// (apps-script/sidebar) is held to the same, with its own layers, one store and one timer.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(__dirname, '../../apps-script/src');
const PAGE = path.resolve(__dirname, '../../apps-script/sidebar');

/** The layers, bottom first: a folder may import from folders of lower layers only (and from itself). */
const LAYERS: ReadonlyArray<ReadonlyArray<string>> = [
  ['messages'], // messages.ts: the words a user reads
  ['platform'], // Apps Script ports, Google's granular consent, Sheets' cell rules
  ['stores'], // every stored value: settings, the plan's window, results, the job, background state, the lock
  ['checks', 'triggers'], // checking cells (values, formulas, the sidebar's job); the user's triggers
  ['formula'], // =DAPA: one execution's turn (and the formulas' queue transitions) and its driver
  ['background'], // background steps (they mark what they send in the formulas' queue), the planner, the handlers
  ['sidebar', 'sample'], // the menu's and the sidebar's server functions; sample mode (=DAPA_SAMPLE, no request)
  ['main'], // main.ts: the entry points
];

/** The sidebar page's layers: a module at the top is its own folder; the panels share theirs. */
const PAGE_LAYERS: ReadonlyArray<ReadonlyArray<string>> = [
  ['contract'], // the server functions and their shapes
  ['dom', 'server', 'state'], // drawing helpers, google.script.run, the one state and its transitions
  ['store'], // the state, replaced whole by each change
  ['job-loop', 'scheduler'], // the job's steps; the one timer
  ['actions'], // what events do
  ['panels'], // a file per panel: draws its slice, hands its events to the actions
  ['page'], // the one render, the wiring
  ['sidebar'], // the entry: puts the page together
];

/** Files longer than this say why in their header ("Over 300 lines: ..."). */
const MAX_LINES = 300;
/** A panel of the page is shorter. */
const MAX_PANEL_LINES = 250;

interface Graph {
  /** file (relative to src, without .ts) → the src files it imports */
  imports: Map<string, Set<string>>;
  lines: Map<string, number>;
  headers: Map<string, string>;
  /** file → its names declared at the top with `let` or `var` (state kept outside a function) */
  topLevelLets: Map<string, string[]>;
  /** file → the timer functions it names (setTimeout, setInterval ...) */
  timers: Map<string, string[]>;
}

const TIMERS = new Set(['setTimeout', 'setInterval', 'requestAnimationFrame', 'requestIdleCallback']);

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

function emptyGraph(): Graph {
  return {
    imports: new Map(),
    lines: new Map(),
    headers: new Map(),
    topLevelLets: new Map(),
    timers: new Map(),
  };
}

/** Every import and re-export of every file of `dir` that resolves to another file of `dir`. */
function importGraph(dir: string): Graph {
  const graph = emptyGraph();
  for (const file of sourceFiles(dir)) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    const name = file.replace(/\.ts$/, '');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2020, false);
    const targets = new Set<string>();
    for (const statement of source.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
      if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
      const target = path.relative(dir, path.resolve(path.dirname(path.join(dir, file)), specifier.text));
      const inside = target.split(path.sep).join('/');
      if (!inside.startsWith('..') && fs.existsSync(path.join(dir, inside + '.ts'))) targets.add(inside);
    }
    graph.imports.set(name, targets);
    graph.lines.set(name, text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
    graph.headers.set(name, /^(\/\/.*\n)+/.exec(text)?.[0] ?? '');
    graph.topLevelLets.set(
      name,
      source.statements
        .filter(ts.isVariableStatement)
        .filter((s) => !(s.declarationList.flags & ts.NodeFlags.Const))
        .flatMap((s) => s.declarationList.declarations.map((d) => d.name.getText(source))),
    );
    const timers = new Set<string>();
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && TIMERS.has(node.text)) timers.add(node.text);
      ts.forEachChild(node, visit);
    };
    visit(source);
    graph.timers.set(name, [...timers]);
  }
  return graph;
}

/** A file's folder: its first path segment, or (a file at the top) its own name. */
function folderOf(file: string): string {
  return file.split('/')[0];
}

/** Arrows between folders with how many file imports each carries. */
function folderArrows(graph: Graph): Map<string, number> {
  const arrows = new Map<string, number>();
  for (const [file, targets] of graph.imports)
    for (const target of targets) {
      const [from, to] = [folderOf(file), folderOf(target)];
      if (from !== to) arrows.set(`${from} → ${to}`, (arrows.get(`${from} → ${to}`) ?? 0) + 1);
    }
  return arrows;
}

/** What breaks the layering: files outside the table's folders, and arrows that do not run down. */
function layeringFaults(graph: Graph, layers: ReadonlyArray<ReadonlyArray<string>>): string[] {
  const rank = new Map(layers.flatMap((folders, i) => folders.map((f) => [f, i] as const)));
  const faults: string[] = [];
  for (const file of graph.imports.keys())
    if (!rank.has(folderOf(file))) faults.push(`${file}.ts is in no layer (folder "${folderOf(file)}")`);
  for (const [file, targets] of graph.imports)
    for (const target of targets) {
      const [from, to] = [rank.get(folderOf(file)), rank.get(folderOf(target))];
      if (folderOf(file) === folderOf(target) || from === undefined || to === undefined) continue;
      if (to >= from)
        faults.push(
          `${file}.ts imports ${target}.ts: ${to > from ? 'back up' : 'sideways'} (layer ${from} → ${to})`,
        );
    }
  return faults;
}

/** The cycles of a directed graph (each as its nodes, in order), by depth-first search. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

function folderEdges(graph: Graph): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const arrow of folderArrows(graph).keys()) {
    const [from, to] = arrow.split(' → ');
    edges.set(from, (edges.get(from) ?? new Set()).add(to));
  }
  return edges;
}

/** The picture: the layers with their folders and files, then every arrow between folders with its count. */
function picture(graph: Graph, layers: ReadonlyArray<ReadonlyArray<string>>, title: string): string {
  const filesIn = (folder: string) => [...graph.imports.keys()].filter((f) => folderOf(f) === folder);
  const arrows = folderArrows(graph);
  const total = [...graph.imports.values()].reduce((n, t) => n + t.size, 0);
  const lines = [
    `${title}: ${graph.imports.size} files in ${layers.flat().length} folders on ${layers.length} layers, ` +
      `${total} import arrows (${[...arrows.values()].reduce((a, b) => a + b, 0)} between folders)`,
  ];
  [...layers].reverse().forEach((folders, i) => {
    const layer = layers.length - 1 - i;
    for (const folder of folders) {
      const files = filesIn(folder);
      const biggest = Math.max(...files.map((f) => graph.lines.get(f) ?? 0));
      lines.push(
        `  ${layer} ${folder.padEnd(10)} ${String(files.length).padStart(2)} files, longest ${biggest} lines: ` +
          files.map((f) => f.slice(folder.length + 1) || f).join(', '),
      );
    }
  });
  for (const [arrow, n] of [...arrows].sort()) lines.push(`    ${arrow.padEnd(26)} ${n}`);
  return lines.join('\n');
}

describe('the Sheets shell’s folders', () => {
  const graph = importGraph(SRC);

  it('every import runs down a layer or stays in its folder, and the picture is printed', () => {
    console.log(picture(graph, LAYERS, 'apps-script/src'));
    expect(graph.imports.size).toBeGreaterThan(20);
    expect(layeringFaults(graph, LAYERS)).toEqual([]);
  });

  it('no cycle between folders', () => {
    expect(cycles(folderEdges(graph))).toEqual([]);
  });

  it(`no file over ${MAX_LINES} lines without a reason in its header`, () => {
    const long = [...graph.lines]
      .filter(([file, n]) => n > MAX_LINES && !/Over \d+ lines:/i.test(graph.headers.get(file) ?? ''))
      .map(([file, n]) => `${file}.ts: ${n} lines`);
    expect(long).toEqual([]);
  });

  it('every module opens with a line on its role', () => {
    const bare = [...graph.headers].filter(([, header]) => header.trim() === '').map(([file]) => file);
    expect(bare).toEqual([]);
  });
});

/** Containers a module could keep state in between calls. */
const MUTABLE = new Set(['Map', 'Set', 'WeakMap', 'WeakSet']);

/**
 * What a module keeps at its top level that can change between calls (a `let` or `var`, a `const` holding a new Map
 * or Set) and the lines where it calls `locked(`: the store session's rules (one owner per store, the lock order in
 * one place) as the source draws them.
 */
function stateAndLocks(text: string): { state: string[]; locks: number[] } {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.ES2020, true);
  const state: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const isConst = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const d of statement.declarationList.declarations) {
      const init = d.initializer;
      const container =
        init !== undefined &&
        ts.isNewExpression(init) &&
        ts.isIdentifier(init.expression) &&
        MUTABLE.has(init.expression.text);
      if (!isConst || container) state.push(d.name.getText(source));
    }
  }
  const locks: number[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'locked')
      locks.push(source.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { state, locks };
}

describe('one owner per store (the store session)', () => {
  const files = sourceFiles(SRC).map((file) => ({
    file,
    ...stateAndLocks(fs.readFileSync(path.join(SRC, file), 'utf8')),
  }));

  it('no module but stores/session.ts keeps state between calls (module-level let, var, Map or Set)', () => {
    const kept = files
      .filter(({ file, state }) => state.length > 0 && file !== 'stores/session.ts')
      .map(({ file, state }) => `${file}: ${state.join(', ')}`);
    expect(kept).toEqual([]);
    // The session does keep the execution's tiers, in one variable a test can start afresh.
    expect(files.find((f) => f.file === 'stores/session.ts')?.state).toEqual(['current']);
  });

  it('only apps-script/src/stores takes a lock (locked(): the lock order is enforced there once)', () => {
    const outside = files
      .filter(({ file, locks }) => locks.length > 0 && !file.startsWith('stores/'))
      .map(({ file, locks }) => `${file}:${locks.join(',')}`);
    expect(outside).toEqual([]);
    expect(files.filter((f) => f.locks.length > 0).length).toBeGreaterThan(0);
  });

  it('the check itself finds a module-level let, a Map kept at the top, and a locked( call', () => {
    const found = stateAndLocks(
      [
        'let deadline: number | undefined;',
        'const memo = new Map<string, string>();',
        'const TABLE = { a: 1 };',
        "export function f() { return locked('user', () => 1); }",
      ].join('\n'),
    );
    expect(found).toEqual({ state: ['deadline', 'memo'], locks: [4] });
  });
});

describe('the sidebar page’s modules (apps-script/sidebar)', () => {
  const graph = importGraph(PAGE);
  const files = [...graph.imports.keys()];
  const panels = files.filter((f) => folderOf(f) === 'panels');

  it('every import runs down a layer, and the picture is printed', () => {
    console.log(picture(graph, PAGE_LAYERS, 'apps-script/sidebar'));
    expect(panels.length).toBeGreaterThanOrEqual(5);
    expect(layeringFaults(graph, PAGE_LAYERS)).toEqual([]);
    expect(cycles(folderEdges(graph))).toEqual([]);
  });

  it('a panel draws the state and hands its events to the actions: it imports no other panel, no server, no store', () => {
    const reaching = panels.flatMap((panel) =>
      [...(graph.imports.get(panel) ?? [])]
        .filter((target) => folderOf(target) === 'panels' || target === 'server' || target === 'store')
        .map((target) => `${panel}.ts imports ${target}.ts`),
    );
    expect(reaching).toEqual([]);
  });

  it('keeps its state in the one store: no module keeps a `let` or `var` of its own', () => {
    const kept = [...graph.topLevelLets]
      .filter(([, names]) => names.length > 0)
      .map(([f, n]) => `${f}: ${n}`);
    expect(kept).toEqual([]);
  });

  it('has one timer, the scheduler’s: no other module sets one', () => {
    const timed = [...graph.timers].filter(([, names]) => names.length > 0).map(([file]) => file);
    expect(timed).toEqual(['scheduler']);
  });

  it(`no panel over ${MAX_PANEL_LINES} lines, no module over ${MAX_LINES} without a reason; each says its role`, () => {
    const long = [...graph.lines]
      .filter(([file, n]) => n > (folderOf(file) === 'panels' ? MAX_PANEL_LINES : MAX_LINES))
      .filter(([file]) => !/Over \d+ lines:/i.test(graph.headers.get(file) ?? ''))
      .map(([file, n]) => `${file}.ts: ${n} lines`);
    expect(long).toEqual([]);
    expect([...graph.headers].filter(([, header]) => header.trim() === '').map(([file]) => file)).toEqual([]);
  });
});

describe('the layering check itself', () => {
  /** A graph of a few named files (folder/file), with the imports given. */
  function graphOf(imports: Record<string, string[]>): Graph {
    const graph = emptyGraph();
    for (const [file, targets] of Object.entries(imports)) graph.imports.set(file, new Set(targets));
    return graph;
  }
  const layers = [['stores'], ['checks', 'triggers'], ['sidebar']];

  it('reports an arrow back up, one sideways, and a file in no layer', () => {
    const graph = graphOf({
      'stores/a': ['sidebar/b'],
      'sidebar/b': ['stores/a', 'checks/c'],
      'checks/c': ['triggers/d'],
      'triggers/d': [],
      'elsewhere/e': [],
    });
    expect(layeringFaults(graph, layers)).toEqual([
      'elsewhere/e.ts is in no layer (folder "elsewhere")',
      'stores/a.ts imports sidebar/b.ts: back up (layer 0 → 2)',
      'checks/c.ts imports triggers/d.ts: sideways (layer 1 → 1)',
    ]);
  });

  it('finds a cycle between folders and none where the arrows run one way', () => {
    const looped = graphOf({
      'stores/a': ['checks/b'],
      'checks/b': ['sidebar/c'],
      'sidebar/c': ['stores/a'],
    });
    expect(cycles(folderEdges(looped))).toEqual([['checks', 'sidebar', 'stores', 'checks']]);
    const oneWay = graphOf({
      'sidebar/c': ['checks/b', 'stores/a'],
      'checks/b': ['stores/a'],
      'stores/a': [],
    });
    expect(cycles(folderEdges(oneWay))).toEqual([]);
  });
});
