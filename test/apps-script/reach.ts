// The files an execution reaches when every call is followed (issue 46, item 4): from an entry point, a worklist of
// declarations resolved with the TypeScript checker: calls, `new` (the constructor, the field initializers, the base
// class), methods and getters reached through fields typed as classes, functions passed as values. Type-only
// references, .d.ts files and node_modules do not count. `npx tsx test/apps-script/reach.ts [--why] [--json]` prints the
// files a background step (the trigger's handler) and a =DAPA call reach; reach.test.ts holds them to
// apps-script/reach-limits.json.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = 'apps-script/src/main.ts';
const HANDLERS = 'apps-script/src/triggers/handlers.ts';
export const SHELL = 'apps-script/src/';
export const CORE = 'shared/';
export const LIMITS_FILE = 'apps-script/reach-limits.json';

/** An entry point: a name exported by `file` (relative to the project's root). */
export interface Entry {
  name: string;
  file: string;
  exportName: string;
}

/** What one entry point reaches, as paths relative to the project's root, sorted. */
export interface Reach {
  entry: string;
  /** the exported function the walk started from, as `file#name` */
  from: string;
  /** files under apps-script/src (the shell) whose code is reached */
  shell: string[];
  /** files under shared/ (the core) whose code is reached */
  core: string[];
  /** other project files whose code is reached */
  other: string[];
  /** files of which only plain constants (no call, no function) are read: listed, not counted */
  constantsOnly: string[];
  /** per file reached, the shortest chain of declarations from the entry point to its first one */
  why: Record<string, string[]>;
}

/** A declaration a walk went through: code, or a constant (whose file counts only when code of it is reached too). */
type Reached = ts.Node;

function isFunctionLike(node: ts.Node): node is ts.SignatureDeclaration & { body?: ts.Node } {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node)
  );
}

/** The declarations a walk follows into; any other (an interface's member, a type, a parameter) has no code of its own. */
function isFollowed(node: ts.Node): boolean {
  return (
    isFunctionLike(node) ||
    ts.isClassDeclaration(node) ||
    ts.isClassExpression(node) ||
    ts.isVariableDeclaration(node) ||
    ts.isPropertyAssignment(node) ||
    ts.isPropertyDeclaration(node) ||
    ts.isEnumDeclaration(node) ||
    ts.isEnumMember(node) ||
    ts.isExportAssignment(node)
  );
}

/** The parts of a declaration that run when it is reached (a class: its constructor, field initializers, base). */
function bodiesOf(node: ts.Node): ts.Node[] {
  if (isFunctionLike(node))
    return [
      ...node.parameters.flatMap((p) => (p.initializer ? [p.initializer] : [])),
      ...(node.body ? [node.body] : []),
    ];
  if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
    const base = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
    return [
      ...(base ? [base.expression] : []),
      ...node.members.flatMap((m): ts.Node[] => {
        if (ts.isConstructorDeclaration(m) || ts.isClassStaticBlockDeclaration(m)) return [m];
        if (ts.isPropertyDeclaration(m) && m.initializer) return [m.initializer];
        return [];
      }),
    ];
  }
  if (ts.isEnumDeclaration(node)) return node.members.flatMap((m) => (m.initializer ? [m.initializer] : []));
  if (ts.isExportAssignment(node)) return [node.expression];
  const init = (node as { initializer?: ts.Node }).initializer;
  return init ? [init] : [];
}

/** A constant read as data: a variable, property or enum whose value holds no call, no `new`, no function, no class. */
function isPlainConstant(node: ts.Node): boolean {
  if (!ts.isVariableDeclaration(node) && !ts.isPropertyAssignment(node) && !ts.isEnumDeclaration(node))
    return ts.isEnumMember(node);
  let plain = true;
  const look = (n: ts.Node): void => {
    if (
      ts.isCallExpression(n) ||
      ts.isNewExpression(n) ||
      ts.isTaggedTemplateExpression(n) ||
      isFunctionLike(n) ||
      ts.isClassExpression(n)
    )
      plain = false;
    else ts.forEachChild(n, look);
  };
  for (const body of bodiesOf(node)) look(body);
  return plain;
}

/** The project's files: not a declaration file, not a package. */
function counted(file: ts.SourceFile): boolean {
  return !file.isDeclarationFile && !file.fileName.split(/[\\/]/).includes('node_modules');
}

/** The declarations a symbol stands for, past any import or re-export. */
function declarationsOf(checker: ts.TypeChecker, symbol: ts.Symbol | undefined): ts.Declaration[] {
  if (!symbol) return [];
  const real = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  return real.declarations ?? [];
}

/** The declarations a walk steps to from one node of a body it runs through. */
function stepsFrom(checker: ts.TypeChecker, node: ts.Node): ts.Declaration[] {
  const steps: ts.Declaration[] = [];
  if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
    steps.push(...declarationsOf(checker, checker.getSymbolAtLocation(node)));
    if (ts.isShorthandPropertyAssignment(node.parent) && node.parent.name === node)
      steps.push(...declarationsOf(checker, checker.getShorthandAssignmentValueSymbol(node.parent)));
    const element = node.parent;
    if (ts.isBindingElement(element) && ts.isObjectBindingPattern(element.parent)) {
      // `const { open } = books`: the property read of the destructured value.
      const name = element.propertyName ?? element.name;
      if (ts.isIdentifier(name) && (element.propertyName === node || element.name === node))
        steps.push(
          ...declarationsOf(checker, checker.getTypeAtLocation(element.parent).getProperty(name.text)),
        );
    }
  }
  if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isDecorator(node)) {
    const declaration = checker.getResolvedSignature(node)?.declaration;
    if (declaration && !ts.isJSDocSignature(declaration)) steps.push(declaration);
  }
  return steps;
}

/** Everything a body runs through that a walk follows: every node but types, and not into interfaces or aliases. */
function visitBody(node: ts.Node, visit: (node: ts.Node) => void): void {
  if (ts.isTypeNode(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) return;
  if (ts.isHeritageClause(node) && node.token === ts.SyntaxKind.ImplementsKeyword) return;
  visit(node);
  ts.forEachChild(node, (child) => visitBody(child, visit));
}

/**
 * The files reached from `start`, each declaration walked once: a worklist of declarations whose bodies are
 * searched for the declarations they step to. Deterministic: the result is sorted.
 */
export function reachFrom(
  program: ts.Program,
  start: ts.Declaration,
  root: string,
): Omit<Reach, 'entry' | 'from'> {
  const checker = program.getTypeChecker();
  const via = new Map<ts.Node, ts.Node | undefined>([[start, undefined]]);
  const reached: Reached[] = [];
  const step = (from: ts.Node, to: ts.Node) => {
    if (via.has(to) || !isFollowed(to) || !counted(to.getSourceFile())) return;
    via.set(to, from);
    reached.push(to as Reached);
  };
  reached.push(start);
  // Breadth first, so each file's chain below is a shortest one.
  for (let i = 0; i < reached.length; i++) {
    const next = reached[i];
    if (ts.isClassDeclaration(next) || ts.isClassExpression(next)) {
      const constructor = next.members.find(ts.isConstructorDeclaration);
      if (constructor) step(next, constructor);
    }
    for (const body of bodiesOf(next))
      visitBody(body, (node) => {
        for (const to of stepsFrom(checker, node)) step(next, to);
      });
  }
  const relative = (d: ts.Node) => path.relative(root, d.getSourceFile().fileName).split(path.sep).join('/');
  const chainTo = (d: ts.Node): string[] => {
    const chain: string[] = [];
    for (let at: ts.Node | undefined = d; at; at = via.get(at)) chain.unshift(nameOf(at, relative(at)));
    return chain;
  };
  // Each file's chain leads to its first declaration of code, or (a file of constants only) to its first constant.
  const why = new Map<string, string[]>();
  for (const d of reached) if (!why.has(relative(d)) && !isPlainConstant(d)) why.set(relative(d), chainTo(d));
  for (const d of reached) if (!why.has(relative(d))) why.set(relative(d), chainTo(d));
  const code = new Set(reached.filter((d) => !isPlainConstant(d)).map(relative));
  const data = new Set(reached.map(relative).filter((f) => !code.has(f)));
  const sorted = (files: Iterable<string>, keep: (f: string) => boolean) => [...files].filter(keep).sort();
  return {
    shell: sorted(code, (f) => f.startsWith(SHELL)),
    core: sorted(code, (f) => f.startsWith(CORE)),
    other: sorted(code, (f) => !f.startsWith(SHELL) && !f.startsWith(CORE)),
    constantsOnly: sorted(data, () => true),
    why: Object.fromEntries([...why].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

/** A declaration as the chains show it: its file, line and name (a class's member with its class). */
function nameOf(node: ts.Node, file: string): string {
  const source = node.getSourceFile();
  const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const own = (n: ts.Node): string | undefined => {
    const name = (n as { name?: ts.Node }).name;
    if (ts.isConstructorDeclaration(n)) return 'constructor';
    return name && (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name))
      ? name.text
      : undefined;
  };
  let label = own(node) ?? '(function)';
  const owner = node.parent;
  if (owner && (ts.isClassLike(owner) || ts.isObjectLiteralExpression(owner)))
    label = `${(ts.isClassLike(owner) && own(owner)) || (owner.parent && own(owner.parent)) || '{}'}.${label}`;
  return `${file}:${line} ${label}`;
}

/** A program over the entry files (types only where a file asks for them: none of the test setup's). */
export function programOf(root: string, files: string[]): ts.Program {
  return ts.createProgram(
    files.map((f) => path.join(root, f)),
    {
      target: ts.ScriptTarget.ES2020,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      strict: true,
      esModuleInterop: true,
      resolveJsonModule: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    },
  );
}

/** The declaration behind an exported name of a file (through re-exports); throws when there is none. */
function exported(program: ts.Program, root: string, file: string, name: string): ts.Declaration {
  const source = program.getSourceFile(path.join(root, file));
  const checker = program.getTypeChecker();
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  const symbol = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === name);
  const declaration = declarationsOf(checker, symbol)[0];
  if (!declaration) throw new Error(`${file} exports no "${name}"`);
  return declaration;
}

/** The files each entry point reaches, in a program over their files. */
export function measureReach(
  root: string,
  entries: Entry[],
  program = programOf(
    root,
    entries.map((e) => e.file),
  ),
): Reach[] {
  return entries.map((entry) => {
    const start = exported(program, root, entry.file, entry.exportName);
    const from = `${path.relative(root, start.getSourceFile().fileName).split(path.sep).join('/')}#${entry.exportName}`;
    return { entry: entry.name, from, ...reachFrom(program, start, root) };
  });
}

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
    lines.push(`in both: ${both.length} files`, ...both.map((f) => `  ${f}`));
  }
  return lines.join('\n');
}

if (require.main === module) {
  const reaches = measureAddOn();
  if (process.argv.includes('--json'))
    console.log(JSON.stringify({ limits: readLimits(), reaches }, null, 2));
  else console.log(describeReach(reaches, readLimits(), process.argv.includes('--why')));
}
