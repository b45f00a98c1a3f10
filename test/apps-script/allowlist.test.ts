// The add-on's URL allowlist: the built manifest's urlFetchWhitelist keeps Google's rules and covers every address the
// add-on fetches in production, and the stand-in, told to apply it as a versioned deployment does, refuses a fetch
// outside it with Google's words (standin/allowlist.ts), before anything reaches the network.
import fs from 'node:fs';
import path from 'node:path';
import { BASE_URLS, endpointUrl, keyProbeRequest } from '../../shared';
import { DIST_DIR } from './harness';
import { allowlistRefusal, manifestAllowlist, matchesPrefix, prefixProblem } from './standin/allowlist';
import { assertBundleIsCurrent, sheetsAddress, standInFor, statsOf, useSuiteSandbox } from './support';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';

const builtManifest = () => fs.readFileSync(path.join(DIST_DIR, 'appsscript.json'), 'utf8');

describe("the manifest's urlFetchWhitelist", () => {
  beforeAll(() => assertBundleIsCurrent());

  test("is in the built manifest, and every prefix keeps Google's rules (https, full domain, a path)", () => {
    const prefixes = manifestAllowlist(builtManifest());
    expect(prefixes).toEqual(['https://www.dapachecker.org/api/user/dapa-checker']);
    for (const prefix of prefixes ?? [])
      expect({ prefix, problem: prefixProblem(prefix) }).toEqual({ prefix });
  });

  test('covers every address the add-on fetches from the production service (checks and the key test)', () => {
    const prefixes = manifestAllowlist(builtManifest()) ?? [];
    for (const url of [endpointUrl(BASE_URLS.production), keyProbeRequest(BASE_URLS.production).url])
      expect({ url, allowed: allowlistRefusal(url, prefixes) === undefined }).toEqual({ url, allowed: true });
    // Nothing else of the service's site, nor another host.
    expect(allowlistRefusal('https://www.dapachecker.org/account', prefixes)).toMatch(/not been whitelisted/);
    expect(allowlistRefusal('https://dapachecker.org/api/user/dapa-checker', prefixes)).toBeDefined();
  });

  test("the rule check refuses what Google refuses, with Google's own examples", () => {
    expect(prefixProblem('https://www.google.com/')).toBeUndefined();
    expect(prefixProblem('https://www.google.com')).toMatch(/no path/);
    expect(prefixProblem('http://www.dapachecker.org/api/')).toMatch(/https/);
    expect(prefixProblem('https://localhost/api/')).toMatch(/full domain/);
    expect(prefixProblem('https://127.0.0.1:8787/api/')).toMatch(/full domain/);
    expect(prefixProblem('https://*.example.com/')).toBeUndefined();
    expect(prefixProblem('https://api.*.example.com/')).toMatch(/wildcard/);
  });

  test("a URL matches a prefix it equals or is a child of; path matching is case-sensitive (Google's examples)", () => {
    const prefix = 'https://example.com/foo';
    for (const url of [
      'https://example.com/foo',
      'https://example.com/foo/',
      'https://example.com/foo/bar',
      'https://example.com/foo?bar',
    ])
      expect({ url, match: matchesPrefix(url, prefix) }).toEqual({ url, match: true });
    for (const url of ['https://example.com/Foo', 'https://example.com/foobar', 'http://example.com/foo'])
      expect({ url, match: matchesPrefix(url, prefix) }).toEqual({ url, match: false });
    expect(matchesPrefix('https://api.example.com/x', 'https://*.example.com/')).toBe(true);
    expect(matchesPrefix('https://example.com/x', 'https://*.example.com/')).toBe(false);
  });
});

describe('the stand-in applies the allowlist as a versioned deployment does', () => {
  let sandbox: RunningSandbox;
  useSuiteSandbox(DEFAULT_CONFIG, (s) => (sandbox = s));

  test("a fetch outside the allowlist is refused with Google's words and never reaches the server", async () => {
    const gas = await standInFor(sandbox, 'sandbox-premium', {
      clock: 'virtual',
      urlFetchAllowlist: 'manifest',
    });
    try {
      const result = await gas.run<{ ok: boolean; message: string }>('testKey');
      expect(result.ok).toBe(false);
      expect(result.message).toContain(
        `Request to ${sheetsAddress(sandbox.url)}/api/user/dapa-checker failed because the URL has not been whitelisted in the script manifest.`,
      );
      gas.sheet.setValues('A1:A2', [['example.com'], ['example.org']]);
      const cells = await gas.runCustomFunction('=DAPA(A1:A2)', { cell: 'B1' });
      expect(JSON.stringify(cells)).not.toMatch(/\d{2}/);
      expect(statsOf(sandbox, 'sandbox-premium').requests).toBe(0);
    } finally {
      await gas.close();
    }
  });

  test('a copy whose manifest lists its own https server reaches it (what a self-installed copy adds)', async () => {
    const own = `${sheetsAddress(sandbox.url)}/api/user/dapa-checker`;
    const gas = await standInFor(sandbox, 'sandbox-premium', {
      urlFetchAllowlist: [...(manifestAllowlist(builtManifest()) ?? []), own],
    });
    try {
      expect(await gas.run('testKey')).toMatchObject({ ok: true });
      expect(statsOf(sandbox, 'sandbox-premium').requests).toBe(1);
    } finally {
      await gas.close();
    }
  });

  test('a test deployment (the default) enforces no allowlist, as Google says', async () => {
    const gas = await standInFor(sandbox, 'sandbox-premium');
    try {
      expect(await gas.run('testKey')).toMatchObject({ ok: true });
    } finally {
      await gas.close();
    }
  });
});
