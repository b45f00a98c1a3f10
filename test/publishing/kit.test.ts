// The publishing kit of the Sheets add-on (apps-script/publishing/) and the published manifests: the scopes table is
// appsscript.json's scopes exactly, the listing keeps to Google's limits, no manifest or listing carries a placeholder,
// the privacy policy names every place the add-on stores something, and the images have the sizes the kit claims.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SAMPLE_SHEET, SAMPLE_URLS } from '../../apps-script/src/sample/sample';
import { DOCUMENT_PROPERTY, STORE_SHEET, USER_PROPERTY } from '../../apps-script/src/stores/storage-keys';

const root = join(__dirname, '../..');
const kit = join(root, 'apps-script/publishing');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const manifest = JSON.parse(read('apps-script/appsscript.json')) as { oauthScopes: string[] };

/** `| scope | justification |` rows of SCOPES.md's table. */
function scopeTable(markdown: string): Array<{ scope: string; why: string }> {
  return markdown
    .split('\n')
    .map((line) => /^\|\s*`(https:\/\/www\.googleapis\.com\/auth\/[^`]+)`\s*\|(.*)\|\s*$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ scope: match[1], why: match[2].trim() }));
}

const shortScope = (scope: string) => scope.replace('https://www.googleapis.com/auth/', '');
const manifestShort = manifest.oauthScopes.map(shortScope);

/** Scope names written in backticks (`spreadsheets`, `script.scriptapp`, or the full URL), in order, once each. */
function namedScopes(text: string): string[] {
  const names = [
    ...text.matchAll(
      /`(?:https:\/\/www\.googleapis\.com\/auth\/)?((?:script|spreadsheets|drive|documents|gmail|userinfo)[\w.]*)`/g,
    ),
  ].map((match) => match[1]);
  return [...new Set(names)];
}

/** What each scope's justification in SCOPES.md must say (a scope added to the manifest needs its entry here). */
const SCOPE_REASONS: Record<string, RegExp[]> = {
  'script.external_request': [/https:\/\/www\.dapachecker\.org/, /API key/],
  spreadsheets: [
    /standalone/,
    /time-driven trigger/,
    /no active spreadsheet/,
    /SpreadsheetApp\.openById/,
    /`spreadsheets\.currentonly` does not allow/,
    /No other file/,
  ],
  'script.container.ui': [/menu/, /sidebar/],
  'script.scriptapp': [/triggers/, /turn them on/, /turn them off/],
};

/** The text under `## <title>` of LISTING.md, up to the next heading. */
function section(markdown: string, title: string): string {
  const match = new RegExp(`^## ${title}\\n([\\s\\S]*?)(?=^## |$(?![\\s\\S]))`, 'm').exec(markdown);
  if (!match) throw new Error(`LISTING.md has no "## ${title}" section`);
  return match[1].trim();
}

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const data = readFileSync(file);
  expect(data.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

const PLACEHOLDER =
  /\.invalid\b|\bexample\b|\bTODO\b|\bFIXME\b|\bTBD\b|lorem ipsum|PASTE[-_ ]?YOUR|your[-_ ]name|changeme/i;

describe('Sheets publishing kit', () => {
  test('the scopes table lists exactly the scopes of appsscript.json, each with a one-line justification', () => {
    const rows = scopeTable(readFileSync(join(kit, 'SCOPES.md'), 'utf8'));
    expect(rows.map((row) => row.scope)).toEqual(manifest.oauthScopes);
    expect(new Set(manifest.oauthScopes).size).toBe(manifest.oauthScopes.length);
    for (const row of rows) expect(row.why.length).toBeGreaterThan(40);
  });

  test('each justification says what its scope is for; spreadsheets says why the full scope (openById)', () => {
    const rows = scopeTable(readFileSync(join(kit, 'SCOPES.md'), 'utf8'));
    for (const scope of manifest.oauthScopes) {
      const reasons = SCOPE_REASONS[shortScope(scope)];
      expect({ scope, hasReasonsInTest: reasons !== undefined }).toEqual({ scope, hasReasonsInTest: true });
      const why = rows.find((row) => row.scope === scope)?.why ?? '';
      for (const reason of reasons ?? [])
        expect({ scope, reason: reason.source, said: reason.test(why) }).toEqual({
          scope,
          reason: reason.source,
          said: true,
        });
    }
  });

  test('no kit text calls a scope of the manifest "not needed" or names a scope the manifest lacks', () => {
    const scopes = readFileSync(join(kit, 'SCOPES.md'), 'utf8');
    const notNeeded = /^Not needed[\s\S]*?(?=\n\n)/m.exec(scopes)?.[0];
    expect(notNeeded).toBeDefined();
    expect(namedScopes(notNeeded ?? '').filter((scope) => manifestShort.includes(scope))).toEqual([]);
    // What the user reads about the add-on's access names only scopes it asks for.
    for (const file of ['PRIVACY.md', 'LISTING.md']) {
      const named = namedScopes(readFileSync(join(kit, file), 'utf8'));
      expect({ file, unknown: named.filter((scope) => !manifestShort.includes(scope)) }).toEqual({
        file,
        unknown: [],
      });
    }
    // The manifest row of docs/developers.md ("What `npm run build` produces") lists the manifest's scopes, no other.
    const row = read('docs/developers.md')
      .split('\n')
      .find((line) => line.startsWith('| `appsscript.json`'));
    expect(namedScopes(row ?? '').sort()).toEqual([...manifestShort].sort());
  });

  test('the scope checks catch the drifts they are for', () => {
    // A justification of spreadsheets that does not say why the full scope, and a "not needed" that names it.
    const vague = 'Reads the URLs and writes the results in the spreadsheet you use it in, never any other.';
    expect(SCOPE_REASONS.spreadsheets.every((reason) => reason.test(vague))).toBe(false);
    expect(namedScopes('Not needed: no `spreadsheets` (all spreadsheets), no Drive scope.')).toEqual([
      'spreadsheets',
    ]);
    expect(namedScopes('(the `spreadsheets.currentonly` scope)')).toEqual(['spreadsheets.currentonly']);
  });

  test('the scope check catches a drift (a scope added to the manifest only)', () => {
    const rows = scopeTable(readFileSync(join(kit, 'SCOPES.md'), 'utf8')).map((row) => row.scope);
    const drifted = [...manifest.oauthScopes, 'https://www.googleapis.com/auth/drive'];
    expect(rows).not.toEqual(drifted);
  });

  test("the listing keeps to Google's limits", () => {
    const listing = readFileSync(join(kit, 'LISTING.md'), 'utf8');
    const name = section(listing, 'Application name');
    const short = section(listing, 'Short description');
    const detailed = section(listing, 'Detailed description');
    expect(name.length).toBeLessThanOrEqual(50);
    expect(name).not.toMatch(/google|sheets|workspace|docs|drive|gmail/i);
    expect(short.length).toBeGreaterThan(50);
    expect(short.length).toBeLessThanOrEqual(200);
    expect(detailed.length).toBeGreaterThan(500);
    expect(detailed.length).toBeLessThan(16_000);
    // The consent screen uses the same name (PUBLISHING.md says so).
    expect(readFileSync(join(kit, 'PUBLISHING.md'), 'utf8')).toContain(`app name **${name}**`);
  });

  test('no placeholder in any published manifest or in the listing', () => {
    // The n8n package as committed and as pack.mjs checks it for release (the identity is the maintainer's to set).
    const dir = mkdtempSync(join(tmpdir(), 'kit-'));
    try {
      const released = join(dir, 'package.json');
      writeFileSync(released, read('n8n-node/package.json'));
      execFileSync(
        process.execPath,
        [join(root, 'n8n-node/pack.mjs'), '--fill', released, '--repo', 'dapa/dapa'],
        {
          env: { ...process.env, PACKAGE_AUTHOR_EMAIL: '' },
          stdio: 'pipe',
        },
      );
      const texts: Record<string, string> = {
        'n8n-node/package.json': read('n8n-node/package.json'),
        'n8n-node/package.json as released': readFileSync(released, 'utf8'),
        'apps-script/appsscript.json': read('apps-script/appsscript.json'),
        'apps-script/publishing/LISTING.md': read('apps-script/publishing/LISTING.md'),
      };
      for (const [name, text] of Object.entries(texts)) {
        expect({ name, placeholder: PLACEHOLDER.exec(text)?.[0] }).toEqual({ name, placeholder: undefined });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The pattern itself catches what it is for.
    for (const bad of ['a@x.invalid', 'https://example.com', 'TODO: fill']) expect(bad).toMatch(PLACEHOLDER);
  });

  test('the pricing is one of Google\'s values, and not "Free of charge" while checks need a paid plan', () => {
    const listing = readFileSync(join(kit, 'LISTING.md'), 'utf8');
    const value = section(listing, 'Pricing').split('\n')[0].trim();
    const GOOGLE = ['Free of charge', 'Paid', 'Free of charge trial', 'Free of charge with paid features'];
    expect(GOOGLE).toContain(value);
    // The API needs a paid DAPA plan (the detailed description says so): nothing is free of charge without a caveat.
    expect(section(listing, 'Detailed description')).toMatch(/paid DAPA checker plan/);
    expect(value).toBe('Paid');
    expect(readFileSync(join(kit, 'PUBLISHING.md'), 'utf8')).not.toMatch(/Pricing: free of charge/i);
  });

  test('PUBLISHING.md leaves nothing to guess: every step in order, every asset named, no size from memory', () => {
    const publishing = readFileSync(join(kit, 'PUBLISHING.md'), 'utf8');
    const steps = [...publishing.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1]));
    expect(steps).toEqual(steps.map((_n, i) => i + 1));
    for (const needed of [
      'npm ci',
      'clasp login',
      'clasp create',
      'npm run push',
      'Test deployments',
      'VIDEO.md',
      'REVIEWERS.md',
      'create-version',
      'App Configuration',
      'Store Listing',
      'Publish',
    ])
      expect({ needed, said: publishing.includes(needed) }).toEqual({ needed, said: true });
    for (const file of readdirSync(join(kit, 'assets')))
      expect({ file, named: publishing.includes(file) }).toEqual({ file, named: true });
    expect(publishing).not.toMatch(/from memory|if asked/i);
  });

  test('the demo video script shows every scope of the manifest, the consent screen in English and the client ID', () => {
    const video = readFileSync(join(kit, 'VIDEO.md'), 'utf8');
    for (const scope of manifestShort)
      expect({ scope, shown: video.includes(`\`${scope}\``) }).toEqual({ scope, shown: true });
    expect(video).toMatch(/English/);
    expect(video).toMatch(/client ID/);
    expect(video).toMatch(/Try with sample data/);
    expect([...video.matchAll(/^\| (\d+) +\|/gm)].length).toBeGreaterThanOrEqual(10);
  });

  test("the reviewers' instructions name what the add-on really shows: the menu item, the sample sheet, the key test", () => {
    const reviewers = readFileSync(join(kit, 'REVIEWERS.md'), 'utf8');
    expect(read('apps-script/src/sidebar/menu.ts')).toContain("'Try with sample data'");
    expect(reviewers).toContain('Try with sample data');
    expect(reviewers).toContain(`"${SAMPLE_SHEET}"`);
    expect(reviewers).toContain('"SAMPLE"');
    for (const url of ['not a domain', 'github.com']) expect(SAMPLE_URLS).toContain(url);
    expect(reviewers).toContain('The API key works and the plan is active');
    expect(read('shared/keyprobe.ts')).toContain('The API key works and the plan is active');
  });

  test('the privacy policy names the API, the key and every place the add-on stores something', () => {
    const privacy = readFileSync(join(kit, 'PRIVACY.md'), 'utf8');
    expect(privacy).toContain('https://www.dapachecker.org');
    expect(privacy).toMatch(/API key/);
    expect(privacy).toContain(STORE_SHEET);
    const keys = [...Object.values(USER_PROPERTY), ...Object.values(DOCUMENT_PROPERTY)];
    for (const key of keys)
      expect({ key, named: privacy.includes(key.replace(/\.$/, '')) }).toEqual({ key, named: true });
    expect(privacy).toMatch(/## How to delete it/);
    expect(readFileSync(join(kit, 'TERMS.md'), 'utf8')).toMatch(/MIT License/);
  });

  test('the icons, banner and screenshots have their stated sizes', () => {
    const assets = join(kit, 'assets');
    const expected: Record<string, [number, number]> = {
      'icon-128.png': [128, 128],
      'icon-32.png': [32, 32],
      'card-banner-220x140.png': [220, 140],
      'screenshot-1-formula.png': [1280, 800],
      'screenshot-2-sidebar.png': [1280, 800],
    };
    expect(readdirSync(assets).sort()).toEqual(Object.keys(expected).sort());
    for (const [file, [width, height]] of Object.entries(expected)) {
      expect({ file, ...pngSize(join(assets, file)) }).toEqual({ file, width, height });
    }
  });
});

describe('the publisher checklist', () => {
  const checker = join(kit, 'publisher.mjs');
  const filled = {
    name: 'Example Tools Ltd',
    email: 'support@dapa-addon.test',
    verifiedDomain: 'dapa-addon.test',
    homePage: 'https://dapa-addon.test/',
    privacyPolicy: 'https://www.dapa-addon.test/privacy',
    termsOfService: 'https://dapa-addon.test/terms',
    support: 'https://github.com/owner/repo/issues',
  };
  const run = (args: string[], cwd = root) =>
    spawnSync(process.execPath, [checker, ...args], { cwd, encoding: 'utf8' });

  test('the repository leaves it unfilled, and the check fails loudly naming every field', () => {
    const committed = JSON.parse(read('apps-script/publishing/publisher.json')) as Record<string, string>;
    expect(Object.values(committed).every((v) => v === '')).toBe(true);
    const result = run([]);
    expect(result.status).toBe(1);
    for (const field of Object.keys(filled)) expect(result.stderr).toContain(`- ${field}: unfilled`);
  });

  /** Calls an export of publisher.mjs (an ES module, which jest's CommonJS cannot import) in a Node of its own. */
  function call(name: string, ...args: unknown[]): unknown {
    const code =
      `import * as m from ${JSON.stringify(pathToFileURL(checker).href)};\n` +
      `const value = m.${name}; const out = typeof value === 'function' ? value(...${JSON.stringify(args)}) : value;\n` +
      'process.stdout.write(JSON.stringify(out));';
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
    if (result.status !== 0)
      throw new Error(
        result.stderr
          .trim()
          .split('\n')
          .find((l) => /Error/.test(l)),
      );
    return JSON.parse(result.stdout);
  }

  test('a complete checklist passes; pages off the verified domain, or not https, are refused', () => {
    expect(call('publisherProblems', filled)).toEqual([]);
    expect(
      call('publisherProblems', { ...filled, homePage: 'https://github.com/owner/repo#readme' }),
    ).toEqual([
      'homePage: "https://github.com/owner/repo#readme" is not on the verified domain dapa-addon.test',
    ]);
    expect(call('publisherProblems', { ...filled, privacyPolicy: 'http://dapa-addon.test/privacy' })).toEqual(
      ['privacyPolicy: "http://dapa-addon.test/privacy" is not an https address'],
    );
    expect(call('publisherProblems', { ...filled, email: 'nobody' })).toEqual([
      'email: "nobody" is not an e-mail address',
    ]);
  });

  test('the privacy policy and the terms name the publisher and a contact, filled in from the checklist', () => {
    expect(call('PAGES')).toEqual(['PRIVACY.md', 'TERMS.md']);
    for (const page of ['PRIVACY.md', 'TERMS.md']) {
      const text = readFileSync(join(kit, page), 'utf8');
      expect({ page, name: text.includes('{{publisher.name}}') }).toEqual({ page, name: true });
      expect({ page, contact: text.includes('{{publisher.email}}') }).toEqual({ page, contact: true });
      const rendered = call('renderPage', text, filled) as string;
      expect({ page, left: /\{\{publisher\./.exec(rendered)?.[0] }).toEqual({ page, left: undefined });
      expect(rendered).toContain('Example Tools Ltd');
      expect(rendered).toContain('support@dapa-addon.test');
    }
    expect(() => call('renderPage', '{{publisher.phone}}', filled)).toThrow(/unknown placeholder/);
  });

  test('publishing refuses while it is unfilled: npm run push -- --version, and the rendering of the policies', () => {
    const push = spawnSync(
      process.execPath,
      [join(root, 'apps-script/push.mjs'), '--dry-run', '--version', 'release 1'],
      { encoding: 'utf8' },
    );
    expect(push.status).toBe(1);
    expect(push.stderr).toContain('the publisher checklist is unfilled');
    expect(push.stdout).not.toContain('create-version');
    const dir = mkdtempSync(join(tmpdir(), 'publisher-'));
    try {
      expect(run(['--out', dir]).status).toBe(1);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('PUBLISHING.md asks for the pages on the verified domain, not the README, and names the checklist', () => {
    const publishing = readFileSync(join(kit, 'PUBLISHING.md'), 'utf8').replace(/\s+/g, ' ');
    expect(publishing).toContain('a website on a verified domain hosting publicly-accessible information');
    expect(publishing).toContain('publisher.json');
    expect(publishing).toContain('npm run push -- --version');
    expect(publishing).not.toMatch(/home page \(the repository's README/);
  });
});

describe('sensitive scopes: one answer', () => {
  test("SCOPES.md and PUBLISHING.md leave the classification to the Cloud console, with Google's words", () => {
    const quote = 'are indicated automatically in the Google Cloud Console';
    for (const file of ['SCOPES.md', 'PUBLISHING.md', 'VIDEO.md']) {
      const text = readFileSync(join(kit, file), 'utf8').replace(/\s+/g, ' ');
      if (file !== 'VIDEO.md') expect({ file, quote: text.includes(quote) }).toEqual({ file, quote: true });
      // No kit text decides the console's classification on its own.
      expect({
        file,
        claim: /(?:is|are) not sensitive|the other three are not|`spreadsheets` is sensitive/.exec(text)?.[0],
      }).toEqual({
        file,
        claim: undefined,
      });
    }
  });
});
