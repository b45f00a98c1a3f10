// The files an execution reaches when every call is followed, for any TypeScript project: from an entry point, a
// worklist of declarations resolved with the TypeScript checker: calls, `new` (the constructor, the field
// initializers, the base class), methods and getters reached through fields typed as classes, functions passed as
// values. Type-only references, .d.ts files and node_modules do not count. reach.ts applies it to the add-on.
import path from 'node:path';
import ts from 'typescript';

/** Where the shell and the core are, relative to the project's root: a reached file is counted in one or the other. */
export const SHELL = 'apps-script/src/';
export const CORE = 'shared/';

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

/** Declarations with a body that runs when called. */
const FUNCTIONS = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
]);
/** The declarations a walk follows into; any other (an interface's member, a type, a parameter) has no code of its own. */
const FOLLOWED = new Set<ts.SyntaxKind>([
  ...FUNCTIONS,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.ClassExpression,
  ts.SyntaxKind.VariableDeclaration,
  ts.SyntaxKind.PropertyAssignment,
  ts.SyntaxKind.PropertyDeclaration,
  ts.SyntaxKind.EnumDeclaration,
  ts.SyntaxKind.EnumMember,
  ts.SyntaxKind.ExportAssignment,
]);

const isFunctionLike = (node: ts.Node): node is ts.FunctionLikeDeclaration => FUNCTIONS.has(node.kind);

/** The parts of a declaration that run when it is reached (a class: its field initializers and base; its constructor
 * is a declaration of its own, reachFrom steps to it). */
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
        if (ts.isClassStaticBlockDeclaration(m)) return [m];
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
      FUNCTIONS.has(n.kind) ||
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
  const reached: ts.Node[] = [];
  const step = (from: ts.Node, to: ts.Node) => {
    if (via.has(to) || !FOLLOWED.has(to.kind) || !counted(to.getSourceFile())) return;
    via.set(to, from);
    reached.push(to);
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
  const options: ts.CompilerOptions = { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS };
  Object.assign(options, {
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    esModuleInterop: true,
  });
  Object.assign(options, { resolveJsonModule: true, skipLibCheck: true, noEmit: true, types: [] });
  return ts.createProgram(
    files.map((f) => path.join(root, f)),
    options,
  );
}

/** The declaration behind an exported name of a file (through re-exports); throws when there is none. */
export function exported(program: ts.Program, root: string, file: string, name: string): ts.Declaration {
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
