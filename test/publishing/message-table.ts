// The product's message table, built from its code (never a hand-copied list): every text a user can meet in Sheets
// (cells, menu dialogs, the sidebar) and in n8n (errors, Skipped messages, hints, the credential test), and every code
// the core ends a row with. docs/troubleshooting.md must have an entry for each (test/publishing/troubleshooting.test.ts),
// so a message added later without one fails the test.
//
// How a text is found (TypeScript's own parser, so wording and layout do not matter), in every module a user's text
// can come from: all of shared/, the Sheets shell (apps-script/src and its sidebar) and the n8n node and credential:
// - every export of apps-script/src/messages.ts (a constant's value, each text a function returns), whether or not
//   another module uses it yet; path fragments (`..._PATH`, MENU_NAME) are parts of messages, not messages;
// - everywhere: what is thrown (`new Error(x)`, n8n's NodeOperationError), what a result, hint, note or warning says
//   (a `message:`, `note:` or `warning:` property; an n8n error's `description:` beside its message), what the menu
//   alerts and toasts, what the sidebar fails with (`fail(x)`), shows (`showMessage`), shows as an error
//   (`{ text, error: true }` or `kind: 'error'`) or writes into its panels (`setText`, `textContent`);
//   a name or a call in these places is followed to its declaration: in the same file (at any depth), or through a
//   relative import into the module it comes from;
// - the core's wording of outcomes (shared/wording.ts): each text its functions return;
// - the codes a row or a run can end with, which Sheets shows before a Status and n8n as `reason` (shared/outcome.ts:
//   ErrorCode, SkipReason).
// An entry must quote every fixed part of its message whole (each stretch between the parts that vary), not a few
// words of it: a page that quotes "The script answered" does not cover "The script answered … after … retries".
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '../..');

export interface Message {
  /** Where it is written: file and line. */
  at: string;
  /** What names the message: its opening words, or its longest fixed part. */
  quote: string;
  /** What the troubleshooting page must quote, each whole: every fixed part with a word in it. */
  parts: string[];
  /** The whole text with each part that varies shown as `…`. */
  text: string;
}

/** Fixed text with `\u0000` where a part varies. */
type Template = string;
const HOLE = '\u0000';

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out.sort();
}

/** Parsed files, by path (a test may put another text of a file here first). */
const parsed = new Map<string, ts.SourceFile>();
/** Each file's names (its declarations and what it imports), by path. */
const scopes = new Map<string, Map<string, ts.Node>>();

function parse(file: string, text?: string): ts.SourceFile {
  let source = text === undefined ? parsed.get(file) : undefined;
  if (!source) {
    source = ts.createSourceFile(
      file,
      text ?? readFileSync(join(root, file), 'utf8'),
      ts.ScriptTarget.ES2020,
      true,
    );
    parsed.set(file, source);
    scopes.delete(file);
  }
  return source;
}

/** The file a relative import names, when it is one of the project's TypeScript modules. */
function importedFile(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = join(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) {
    try {
      if (statSync(join(root, candidate)).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * The names a file's texts can use, by name: its top-level declarations (exported or not), the declarations inside its
 * functions (where no top-level one has the name), and what it imports from the project's own modules.
 */
function declarations(source: ts.SourceFile): Map<string, ts.Node> {
  const known = scopes.get(source.fileName);
  if (known) return known;
  const found = new Map<string, ts.Node>();
  scopes.set(source.fileName, found);
  const nested = new Map<string, ts.Node>();
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionDeclaration(node) && node.name && !nested.has(node.name.text))
      nested.set(node.name.text, node);
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      !nested.has(node.name.text)
    )
      nested.set(node.name.text, node.initializer);
    ts.forEachChild(node, visit);
  };
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name) found.set(statement.name.text, statement);
    if (ts.isVariableStatement(statement))
      for (const d of statement.declarationList.declarations)
        if (ts.isIdentifier(d.name) && d.initializer) found.set(d.name.text, d.initializer);
    ts.forEachChild(statement, visit);
  }
  for (const [name, node] of nested) if (!found.has(name)) found.set(name, node);
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings) || statement.importClause?.isTypeOnly) continue;
    const file = importedFile(source.fileName, statement.moduleSpecifier.text);
    if (!file) continue;
    const theirs = declarations(parse(file));
    for (const element of bindings.elements) {
      const node = theirs.get((element.propertyName ?? element.name).text);
      if (node && !found.has(element.name.text)) found.set(element.name.text, node);
    }
  }
  return found;
}

/** Whether a declaration (or a variable's initializer) is of its file's top level: a constant, not a local. */
function isTopLevel(node: ts.Node): boolean {
  const declaration = ts.isVariableDeclaration(node.parent) ? node.parent : node;
  const statement = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
  return ts.isSourceFile(statement.parent);
}

/** The names a node's texts can use: those of the file it is written in. */
const namesAt = (node: ts.Node) => declarations(node.getSourceFile());

/** The texts an expression can produce (each branch of a condition its own), as templates. */
function textsOf(node: ts.Node, local: Map<string, ts.Node>, seen = new Set<ts.Node>()): Template[] {
  if (seen.has(node)) return [];
  seen.add(node);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node)) {
    // A span that names one fixed text (a menu path, a constant) is part of the fixed text; others vary.
    let out: Template[] = [node.head.text];
    for (const span of node.templateSpans) {
      const declared = ts.isIdentifier(span.expression)
        ? namesAt(span.expression).get(span.expression.text)
        : undefined;
      const fixed =
        declared && isTopLevel(declared) ? textsOf(declared, namesAt(declared), new Set(seen)) : [];
      const middle = fixed.length === 1 && !fixed[0].includes(HOLE) ? fixed[0] : HOLE;
      out = out.map((t) => t + middle + span.literal.text);
    }
    return out;
  }
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node))
    return textsOf(node.expression, local, seen);
  if (ts.isConditionalExpression(node))
    return [...textsOf(node.whenTrue, local, seen), ...textsOf(node.whenFalse, local, seen)];
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    // A concatenation is one text; a part that is not fixed text (a call, a condition) is a hole.
    const part = (n: ts.Expression): Template[] => {
      const inner = ts.isParenthesizedExpression(n) ? n.expression : n;
      if (ts.isBinaryExpression(inner) && inner.operatorToken.kind === ts.SyntaxKind.PlusToken)
        return textsOf(inner, local, seen);
      if (
        ts.isStringLiteral(inner) ||
        ts.isNoSubstitutionTemplateLiteral(inner) ||
        ts.isTemplateExpression(inner)
      )
        return textsOf(inner, local, seen);
      // A condition between fixed texts: each branch its own text.
      if (ts.isConditionalExpression(inner)) {
        const branches = textsOf(inner, local, seen);
        if (branches.length > 0) return branches;
      }
      return [HOLE];
    };
    const left = part(node.left);
    const right = part(node.right);
    return left.flatMap((l) => right.map((r) => l + r));
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.BarBarToken)
    return [...textsOf(node.left, local, seen), ...textsOf(node.right, local, seen)];
  if (ts.isIdentifier(node)) {
    const declared = namesAt(node).get(node.text) ?? local.get(node.text);
    return declared ? textsOf(declared, namesAt(declared), seen) : [];
  }
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
    const declared = namesAt(node).get(node.expression.text) ?? local.get(node.expression.text);
    return declared ? textsOf(declared, namesAt(declared), seen) : [];
  }
  if (ts.isFunctionDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    if (node.body && !ts.isBlock(node.body)) return textsOf(node.body, local, seen);
    const out: Template[] = [];
    const visit = (n: ts.Node): void => {
      if (n !== node && (ts.isFunctionDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n)))
        return;
      if (ts.isReturnStatement(n) && n.expression) out.push(...textsOf(n.expression, local, seen));
      ts.forEachChild(n, visit);
    };
    visit(node);
    return out;
  }
  if (ts.isObjectLiteralExpression(node) || ts.isArrayLiteralExpression(node)) {
    // A table of texts (a record of wordings): each text in it.
    const out: Template[] = [];
    node.forEachChild((child) => {
      const value = ts.isPropertyAssignment(child) ? child.initializer : child;
      out.push(...textsOf(value, local, seen));
    });
    return out;
  }
  return [];
}

/** Names of the functions whose first (or second) argument is a message, and which argument. */
const MESSAGE_ARGUMENT: Record<string, number> = {
  Error: 0, // new Error(message)
  NodeOperationError: 1, // new NodeOperationError(node, message, ...)
  fail: 0, // the sidebar's failure notice
  showMessage: 1, // the sidebar's notices: showMessage(element id, text, kind)
  toast: 0, // spreadsheet.toast(message, title)
  alert: 1, // ui.alert(title, message, buttons)
  setText: 1, // the sidebar's panels
};

function calleeName(node: ts.CallExpression | ts.NewExpression): string | undefined {
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

/** Whether an object literal is an error or warning shown to the user (`error: true`, `kind: 'error'`). */
function shownAsError(object: ts.ObjectLiteralExpression): boolean {
  return object.properties.some(
    (p) =>
      ts.isPropertyAssignment(p) &&
      ts.isIdentifier(p.name) &&
      ((p.name.text === 'error' && p.initializer.kind === ts.SyntaxKind.TrueKeyword) ||
        (p.name.text === 'kind' && ts.isStringLiteral(p.initializer) && p.initializer.text === 'error')),
  );
}

/** Whether an object with a `description` is an error's wording: it has a message, or is an n8n error's options. */
function describesError(object: ts.ObjectLiteralExpression): boolean {
  const hasMessage = object.properties.some(
    (p) =>
      (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && p.name.getText() === 'message',
  );
  const parent = object.parent;
  const errorOptions =
    ts.isNewExpression(parent) &&
    ['NodeOperationError', 'NodeApiError'].includes(calleeName(parent) ?? '') &&
    parent.arguments?.indexOf(object) === 2;
  return hasMessage || errorOptions;
}

/** The texts a file shows: thrown, alerted, failed with, set in a panel, or given as a `message`. */
function shownIn(file: string): Array<{ at: string; template: Template }> {
  const source = parse(file);
  const local = declarations(source);
  const out: Array<{ at: string; template: Template }> = [];
  const add = (node: ts.Node, texts: Template[]) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    for (const template of texts) out.push({ at: `${file}:${line}`, template });
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && node.arguments) {
      const name = calleeName(node);
      const index = name === undefined ? undefined : MESSAGE_ARGUMENT[name];
      const arg = index === undefined ? undefined : node.arguments[index];
      if (arg && !(name === 'alert' && node.arguments.length < 2)) add(arg, textsOf(arg, local));
    }
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      node.left.name.text === 'textContent'
    )
      add(node.right, textsOf(node.right, local));
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name)) {
      const object = node.parent;
      if (['message', 'note', 'warning'].includes(node.name.text))
        add(node.initializer, textsOf(node.initializer, local));
      // An n8n error's description, shown under its message: beside a `message`, or in an error's options.
      if (node.name.text === 'description' && ts.isObjectLiteralExpression(object) && describesError(object))
        add(node.initializer, textsOf(node.initializer, local));
      if (node.name.text === 'text' && ts.isObjectLiteralExpression(object) && shownAsError(object))
        add(node.initializer, textsOf(node.initializer, local));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Every export of messages.ts that is a message: its texts. */
function messagesModule(): Array<{ at: string; template: Template; name: string }> {
  const file = 'apps-script/src/messages.ts';
  const source = parse(file);
  const local = declarations(source);
  const out: Array<{ at: string; template: Template; name: string }> = [];
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement)
      ? ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) continue;
    const named: Array<[string, ts.Node]> = [];
    if (ts.isFunctionDeclaration(statement) && statement.name) named.push([statement.name.text, statement]);
    if (ts.isVariableStatement(statement))
      for (const d of statement.declarationList.declarations)
        if (ts.isIdentifier(d.name) && d.initializer) named.push([d.name.text, d.initializer]);
    for (const [name, node] of named) {
      if (isFragment(name)) continue;
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      for (const template of textsOf(node, local))
        out.push({ at: `${file}:${line} (${name})`, template, name });
    }
  }
  return out;
}

/** Exports of messages.ts that are pieces of other messages (menu paths, the menu's name), not messages. */
export function isFragment(name: string): boolean {
  return name === 'MENU_NAME' || name.endsWith('_PATH');
}

const words = (s: string) => (s.match(/[A-Za-z]{2,}/g) ?? []).length;

/**
 * What names a template: its opening words, else its longest fixed part; none when what is fixed is too little to
 * recognise it by (fewer than three words in every part).
 */
export function quoteOf(template: Template): string | undefined {
  const parts = template.split(HOLE).map((p) => p.replace(/\s+/g, ' ').trim());
  if (words(parts[0]) >= 3) return parts[0];
  const longest = [...parts].sort((a, b) => words(b) - words(a) || b.length - a.length)[0];
  return words(longest) >= 3 ? longest : undefined;
}

/** What a page must quote of a template, each whole: every fixed part with a word in it, spaces made single. */
export function partsOf(template: Template): string[] {
  return template
    .split(HOLE)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => words(p) > 0);
}

/** Every module a user's text can come from: the core, the Sheets shell with its sidebar, the n8n node. */
export const SOURCES = [
  ...filesUnder('shared', (f) => f.endsWith('.ts')),
  ...filesUnder('apps-script/src', (f) => f.endsWith('.ts') && !f.endsWith('messages.ts')),
  ...filesUnder('apps-script/sidebar', (f) => f.endsWith('.ts')),
  ...filesUnder('n8n-node/nodes', (f) => f.endsWith('.ts')),
  ...filesUnder('n8n-node/credentials', (f) => f.endsWith('.ts')),
];

/**
 * Texts a user never meets, each with the reason: thrown for a caller's programming mistake or an impossible state,
 * caught before anyone sees it.
 */
export const NOT_SHOWN: Record<string, string> = {
  'nothing is sent here': 'cell-check.ts: a run that is told to send nothing; an invariant, never reached',
  'The sidebar markup lacks #':
    'dom.ts: the built page lacks an element; a build error the browser test catches',
  'startJob needs { source: "selection" } or { source: "column", column: "B", headerRow: true }.':
    'job-run.ts: the sidebar always sends one of the two; only a caller of the server function could',
  'saveSettings needs an object.': 'account.ts: the sidebar always sends an object',
  'CheckRun: unknown key': 'step.ts: a domain the run was never given; an invariant, never reached',
  'Sample data (made up inside the add-on)':
    'sample.ts: the envelope sample mode answers itself; its cells show SAMPLE',
};

/** The message table: one entry per text, with where it is written (`messagesSource`: another messages.ts). */
export function messageTable(options: { messagesSource?: string } = {}): Message[] {
  parsed.clear();
  scopes.clear();
  if (options.messagesSource !== undefined) parse('apps-script/src/messages.ts', options.messagesSource);
  const raw = [
    ...messagesModule(),
    ...SOURCES.flatMap(shownIn),
    ...(() => {
      // The core's wording: each text its functions return (outcomeText and the sentences it is made of), and its
      // tables of words (what is wrong with a URL).
      const file = 'shared/wording.ts';
      const source = parse(file);
      const local = declarations(source);
      const topLevel = new Set(
        source.statements.flatMap((st) =>
          ts.isFunctionDeclaration(st) && st.name
            ? [st.name.text]
            : ts.isVariableStatement(st)
              ? st.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []))
              : [],
        ),
      );
      return [...local.entries()]
        .filter(([name]) => topLevel.has(name))
        .flatMap(([name, node]) =>
          textsOf(node, local).map((template) => ({
            at: `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} (${name})`,
            template,
          })),
        );
    })(),
  ];
  const table = new Map<string, Message>();
  for (const { at, template } of raw) {
    const quote = quoteOf(template);
    if (!quote || Object.keys(NOT_SHOWN).some((hidden) => quote.startsWith(hidden))) continue;
    const text = template.split(HOLE).join('…');
    const key = partsOf(template).join('…');
    if (!table.has(key)) table.set(key, { at, quote, parts: partsOf(template), text });
  }
  return [...table.values()];
}

/** The members of a string-literal union type in a file (`type X = 'a' | 'b' | ...`). */
function unionMembers(file: string, typeName: string): string[] {
  const source = parse(file);
  for (const statement of source.statements) {
    if (ts.isTypeAliasDeclaration(statement) && statement.name.text === typeName) {
      const members: string[] = [];
      const visit = (n: ts.Node): void => {
        if (ts.isLiteralTypeNode(n) && ts.isStringLiteral(n.literal)) members.push(n.literal.text);
        ts.forEachChild(n, visit);
      };
      visit(statement.type);
      return members;
    }
  }
  throw new Error(`${file} has no type ${typeName}`);
}

/** Every code a row or a run can end with, and where its type is declared. */
export function codeTable(): Array<{ code: string; at: string }> {
  const codes = [
    ...['ErrorCode', 'SkipReason'].flatMap((type) =>
      unionMembers('shared/outcome.ts', type).map((code) => ({ code, at: `shared/outcome.ts (${type})` })),
    ),
  ];
  const unique = new Map(codes.map((c) => [c.code, c]));
  return [...unique.values()];
}

export const relativeToRoot = (path: string) => relative(root, path);
