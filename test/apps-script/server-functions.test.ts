// The sidebar's server functions are listed once, in SERVER_FUNCTIONS (apps-script/sidebar/contract.ts): the built
// Code.js declares each as a top-level function with the contract's parameters, and its bundle exports each.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import ts from 'typescript';
import { SERVER_FUNCTIONS } from '../../apps-script/sidebar/contract';
import { DIST_DIR } from './harness';
import { assertBundleIsCurrent } from './support';

type Contract = Record<string, { readonly params: readonly string[] }>;

/** A script's top-level function declarations, with their parameters' names. */
function topLevelFunctions(code: string): Map<string, string[]> {
  const file = ts.createSourceFile('Code.js', code, ts.ScriptTarget.ES2020, false, ts.ScriptKind.JS);
  return new Map(
    file.statements
      .filter(ts.isFunctionDeclaration)
      .map((f) => [f.name?.text ?? '', f.parameters.map((p) => p.name.getText(file))]),
  );
}

/** What the bundle of src/main.ts exports (its global `__dapa`), read by running the script in a bare realm. */
function bundleExports(code: string): string[] {
  const realm = vm.createContext({});
  vm.runInContext(code, realm);
  return vm.runInContext('Object.keys(__dapa)', realm) as string[];
}

/** Where the contract's list and a built Code.js disagree, one sentence each (none: they agree). */
function disagreements(contract: Contract, code: string): string[] {
  const declared = topLevelFunctions(code);
  const exported = new Set(bundleExports(code));
  const found: string[] = [];
  for (const [name, { params }] of Object.entries(contract)) {
    const stub = declared.get(name);
    if (!stub) found.push(`${name}: in the contract, no top-level function in Code.js`);
    else if (stub.join(', ') !== params.join(', '))
      found.push(`${name}: (${stub.join(', ')}) in Code.js, (${params.join(', ')}) in the contract`);
    if (!exported.has(name)) found.push(`${name}: in the contract, not exported by src/main.ts`);
  }
  for (const name of declared.keys())
    if (!exported.has(name))
      found.push(`${name}: a top-level function of Code.js that src/main.ts does not export`);
  for (const name of exported)
    if (!declared.has(name)) found.push(`${name}: exported by src/main.ts, no top-level function in Code.js`);
  return found;
}

describe('the server functions the sidebar calls', () => {
  const code = fs.readFileSync(path.join(DIST_DIR, 'Code.js'), 'utf8');

  beforeAll(() => assertBundleIsCurrent());

  it('are top-level functions of the built Code.js, with the contract’s parameters, and exported by src/main.ts', () => {
    expect(Object.keys(SERVER_FUNCTIONS).length).toBeGreaterThanOrEqual(20);
    expect(disagreements(SERVER_FUNCTIONS, code)).toEqual([]);
  });

  it('are told apart from the build when they are not: a missing function, other parameters, a stray stub', () => {
    const contract: Contract = {
      ...SERVER_FUNCTIONS,
      saveSettings: { params: ['settings'] },
      exportJob: { params: ['format'] },
    };
    const doctored = code
      .replace(/^function testKey\(\) \{.*\}$/m, '')
      .concat('\nfunction stray() { return __dapa.stray(); }\n');
    expect(disagreements(contract, doctored)).toEqual([
      'saveSettings: (change) in Code.js, (settings) in the contract',
      'testKey: in the contract, no top-level function in Code.js',
      'exportJob: in the contract, no top-level function in Code.js',
      'exportJob: in the contract, not exported by src/main.ts',
      'stray: a top-level function of Code.js that src/main.ts does not export',
      'testKey: exported by src/main.ts, no top-level function in Code.js',
    ]);
  });
});
