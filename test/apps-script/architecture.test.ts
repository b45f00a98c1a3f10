// The Sheets shell's architecture as its imports draw it: apps-script/src is cut into folders named after what they
// hold, stacked in layers, and every import runs down (or stays in its folder): never back up, never in a cycle.
// Prints the picture (folders, the arrows between them and how many imports each carries).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(__dirname, '../../apps-script/src');

/** The layers, bottom first: a folder may import from folders of lower layers only (and from itself). */
const LAYERS: ReadonlyArray<ReadonlyArray<string>> = [
  ['messages'], // messages.ts: the words a user reads
  ['platform'], // Apps Script ports, Google's granular consent, Sheets' cell rules
  ['stores'], // every stored value: settings, the plan's window, results, the job, background state, the lock
  ['checks', 'triggers'], // checking cells (values, formulas, the sidebar's job); the user's triggers
  ['formula', 'background'], // =DAPA; background steps, their planner and the trigger handlers
  ['sidebar', 'sample'], // the menu's and the sidebar's server functions; sample mode (=DAPA_SAMPLE, no request)
  ['main'], // main.ts: the entry points
];

/** Files longer than this say why in their header ("Over 300 lines: ..."). */
const MAX_LINES = 300;

interface Graph {
  /** file (relative to src, without .ts) → the src files it imports */
  imports: Map<string, Set<string>>;
  lines: Map<string, number>;
  headers: Map<string, string>;
}

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

/** Every import and re-export of every file of `dir` that resolves to another file of `dir`. */
function importGraph(dir: string): Graph {
  const graph: Graph = { imports: new Map(), lines: new Map(), headers: new Map() };
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
function picture(graph: Graph): string {
  const filesIn = (folder: string) => [...graph.imports.keys()].filter((f) => folderOf(f) === folder);
  const arrows = folderArrows(graph);
  const total = [...graph.imports.values()].reduce((n, t) => n + t.size, 0);
  const lines = [
    `apps-script/src: ${graph.imports.size} files in ${LAYERS.flat().length} folders on ${LAYERS.length} layers, ` +
      `${total} import arrows (${[...arrows.values()].reduce((a, b) => a + b, 0)} between folders)`,
  ];
  [...LAYERS].reverse().forEach((folders, i) => {
    const layer = LAYERS.length - 1 - i;
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
    console.log(picture(graph));
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

describe('the layering check itself', () => {
  /** A graph of a few named files (folder/file), with the imports given. */
  function graphOf(imports: Record<string, string[]>): Graph {
    const graph: Graph = { imports: new Map(), lines: new Map(), headers: new Map() };
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
