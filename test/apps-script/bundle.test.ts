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

  // The target was 60 KB; background checks, the result store and schedules (issue 9) cost about 15 KB and the
  // core's real-service changes 2 KB, a trade stated in apps-script/README.md: 76.0 KB before issues 13 and 14,
  // which asked for no growth. Their window, wording and add-on engine (+12 KB) are paid for by apps-script/zod-mini.ts
  // (zod/mini's 17 KB out of the bundle, checked against zod in zod-mini.test.ts). Issue 19's published add-on
  // (the dispatcher that opens spreadsheets by id, granular consent, the shared lock and step lease, metadata
  // storage) adds about 4 KB: 82 KB. Issue 21's monthly credit budget (the user's ledger with holds under the shared
  // lock and the script-cache fallback for custom functions that may not write it, estimates before a check,
  // schedule forecasts, four server functions for the sidebar) adds about 4.5 KB: 85.8 KB (79.5 KB before it). Issue
  // 26's mark on the output columns (a second check without a header row knows its own results) and "Check again"
  // billing a domain once per job add about 1 KB: 86.8 KB. Issue 25's per-cell formulas (the formulas' queue in the
  // script cache, one sender for every waiting cell, refresh writes in runs) add about 8 KB: 94.7 KB; issue 26's
  // background run (the step's decisions with no I/O, the wanted table, the job's pace) about 1.8 KB: 96.5 KB, allowed 97 KB.
  it('is one script of at most 97 KB, with no module syntax', () => {
    const kb = Buffer.byteLength(code) / 1024;
    console.log(`apps-script/dist/Code.js: ${kb.toFixed(1)} KB minified`);
    expect(kb).toBeLessThanOrEqual(97);
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
    // DAPA, the menu's and the triggers', and the sidebar's (server-functions.test.ts checks those against the contract).
    expect(functions.sort()).toEqual(
      [
        'DAPA',
        'onOpen',
        'onInstall',
        'showSidebar',
        'promptApiKey',
        'checkSelection',
        'refreshDapaFormulas',
        'showHelp',
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
