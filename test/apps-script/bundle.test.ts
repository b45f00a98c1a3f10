// The built bundle itself: what clasp pushes, its size, the top-level functions Apps Script sees, and no use of
// globals that Apps Script does not have.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { SERVER_FUNCTIONS } from '../../apps-script/sidebar/contract';
import { DIST_DIR } from './harness';
import { assertBundleIsCurrent } from './support';

const FORBIDDEN = [
  'setTimeout',
  'setInterval',
  'setImmediate',
  'queueMicrotask',
  'fetch',
  'URL',
  'URLSearchParams',
  'TextEncoder',
  'TextDecoder',
  'atob',
  'btoa',
  'process',
  'require',
  'module',
  'exports',
  'Buffer',
  'window',
  'document',
  'structuredClone',
];

/** Identifiers the code reads as free variables (not property names, not declared anywhere in the file). */
function freeIdentifiers(code: string): Set<string> {
  const file = ts.createSourceFile('Code.js', code, ts.ScriptTarget.ES2020, true, ts.ScriptKind.JS);
  const declared = new Set<string>();
  const used = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) {
      const parent = node.parent;
      const isName =
        (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
        (ts.isPropertyAssignment(parent) && parent.name === node) ||
        (ts.isMethodDeclaration(parent) && parent.name === node) ||
        (ts.isPropertyDeclaration(parent) && parent.name === node) ||
        (ts.isBindingElement(parent) && parent.propertyName === node) ||
        ts.isLabeledStatement(parent);
      const isDeclaration =
        ((ts.isVariableDeclaration(parent) ||
          ts.isFunctionDeclaration(parent) ||
          ts.isFunctionExpression(parent) ||
          ts.isClassDeclaration(parent) ||
          ts.isClassExpression(parent) ||
          ts.isParameter(parent) ||
          ts.isBindingElement(parent)) &&
          (parent as ts.NamedDeclaration).name === node) ||
        ts.isCatchClause(parent);
      if (isDeclaration) declared.add(node.text);
      else if (!isName) used.add(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return new Set([...used].filter((name) => !declared.has(name)));
}

describe('the Apps Script bundle (apps-script/dist)', () => {
  const code = fs.readFileSync(path.join(DIST_DIR, 'Code.js'), 'utf8');

  beforeAll(() => assertBundleIsCurrent());

  // The limit is the build's own (apps-script/code-size.json, which says how it grew from the first 60 KB target).
  const limitKB = (
    JSON.parse(fs.readFileSync(path.join(__dirname, '../../apps-script/code-size.json'), 'utf8')) as {
      maxKB: number;
    }
  ).maxKB;
  it('is one script within the size limit the build applies, with no module syntax', () => {
    const kb = Buffer.byteLength(code) / 1024;
    console.log(`apps-script/dist/Code.js: ${kb.toFixed(1)} KB minified (limit ${limitKB} KB)`);
    expect(kb).toBeLessThanOrEqual(limitKB);
    const file = ts.createSourceFile('Code.js', code, ts.ScriptTarget.ES2020, true, ts.ScriptKind.JS);
    const moduleSyntax = file.statements.filter(
      (s) => ts.isImportDeclaration(s) || ts.isExportDeclaration(s) || ts.isExportAssignment(s),
    );
    expect(moduleSyntax).toHaveLength(0);
  });

  it('reads none of the globals Apps Script lacks (timers, fetch, URL, TextEncoder, atob, process, ...)', () => {
    const free = freeIdentifiers(code);
    expect(FORBIDDEN.filter((name) => free.has(name))).toEqual([]);
    // What it does read are Apps Script services and standard JavaScript.
    const services = [
      'UrlFetchApp',
      'PropertiesService',
      'CacheService',
      'LockService',
      'Utilities',
      'SpreadsheetApp',
      'HtmlService',
    ];
    for (const service of services) expect(free.has(service)).toBe(true);
  });

  it('declares every entry point as a top-level function, and DAPA with its @customfunction JSDoc', () => {
    const file = ts.createSourceFile('Code.js', code, ts.ScriptTarget.ES2020, true, ts.ScriptKind.JS);
    const functions = file.statements.filter(ts.isFunctionDeclaration).map((f) => f.name?.text);
    // DAPA, DAPA_SAMPLE, DAPA_CACHE (the relay cell's, checks/formulas.ts), the menu's and the triggers', and the
    // sidebar's (server-functions.test.ts checks those against the contract).
    expect(functions.sort()).toEqual(
      [
        'DAPA',
        'DAPA_SAMPLE',
        'DAPA_CACHE',
        'trySampleData',
        'onOpen',
        'onInstall',
        'showSidebar',
        'promptApiKey',
        'checkSelection',
        'refreshDapaFormulas',
        'showHelp',
        'removeDapa',
        'dapaBackgroundStep',
        'dapaOnEdit',
        'dapaBackgroundWatch',
        ...Object.keys(SERVER_FUNCTIONS),
      ].sort(),
    );
    const doc =
      /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*function DAPA\(urls, metrics, header, refresh\)/.exec(code)?.[1] ??
      '';
    expect(doc).toMatch(/@customfunction/);
    expect(doc).toMatch(/@param \{A2:A50\} urls/);
    expect(doc).toMatch(/@param \{"da,pa,mr,spam"\} metrics/);
    expect(doc).toMatch(/@param \{TRUE\} header/);
    const sampleDoc =
      /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*function DAPA_SAMPLE\(urls, metrics, header\)/.exec(code)?.[1] ?? '';
    expect(sampleDoc).toMatch(/@customfunction/);
    expect(sampleDoc).toMatch(/nothing is\s+\* sent to the DAPA service and nothing is billed/);
  });

  it('ships a V8 manifest with exactly the four scopes it needs (triggers for background checks)', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(DIST_DIR, 'appsscript.json'), 'utf8')) as {
      runtimeVersion: string;
      oauthScopes: string[];
    };
    expect(manifest.runtimeVersion).toBe('V8');
    expect(manifest.oauthScopes.sort()).toEqual(
      [
        'https://www.googleapis.com/auth/script.external_request',
        'https://www.googleapis.com/auth/spreadsheets',
        'https://www.googleapis.com/auth/script.container.ui',
        'https://www.googleapis.com/auth/script.scriptapp',
      ].sort(),
    );
  });
});
