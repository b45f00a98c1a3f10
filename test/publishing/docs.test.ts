// The documents stay true: every figure the READMEs, the user guide (docs/guide.md), the developer document
// (docs/developers.md), the CHANGELOG and the privacy policy give about sizes, times, scopes, storage keys and cache
// locations is held here to what the build, the bench output (test/bench/SHEETS.md, written by `npm run bench:sheets`,
// and measured on the code as it is), the manifest, the storage keys and the pinned installs say; the README keeps its
// two commands; the Node versions are the dependencies'; no document names a file that is not there. Each check names
// the file and the figure, so a drift says where to look.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CACHE_PREFIX,
  DOCUMENT_PROPERTY,
  STORE_SHEET,
  VERSIONS_SHEET,
  USER_PROPERTY,
} from '../../apps-script/src/stores/storage-keys';

import { DEFAULT_CONFIG } from '../sandbox/handler';
import { MEASURED_LINE, MEASURED_SOURCES, measuredFiles, measuredSourceHash } from './measured-source';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
/** Whether a path of the repository exists. */
function statSafe(path: string): boolean {
  try {
    statSync(join(root, path));
    return true;
  } catch {
    return false;
  }
}
/** A document as one line of text: figures and phrases that a line break would split still match. */
const flat = (path: string) => read(path).replace(/\s+/g, ' ');

const READMES = [
  'README.md',
  'apps-script/README.md',
  'n8n-node/README.md',
  'test/n8n-e2e/README.md',
  'docs/guide.md',
  'docs/developers.md',
  'docs/troubleshooting.md',
];
/** Where a user reads figures and first steps. */
const USER_DOCS = ['README.md', 'apps-script/README.md', 'n8n-node/README.md', 'docs/guide.md'];

describe('sizes', () => {
  const limitKB = (JSON.parse(read('apps-script/code-size.json')) as { maxKB: number }).maxKB;

  test("Code.js: the documents give its limit, the build's and the bundle test's one number, never a stale size", () => {
    expect(read('apps-script/build.mjs')).toContain("'code-size.json'");
    expect(read('test/apps-script/bundle.test.ts')).toContain('code-size.json');
    const stated = [
      ...flat('docs/developers.md').matchAll(
        /code-size\.json\]\(\.\.\/apps-script\/code-size\.json\), (\d+) KB/g,
      ),
    ];
    expect(stated.map((m) => Number(m[1]))).toEqual([limitKB]);
    expect(flat('docs/developers.md')).toContain(
      `\`maxKB\` in [code-size.json](../apps-script/code-size.json) (${limitKB} KB)`,
    );
    for (const file of READMES) {
      const claims = [...flat(file).matchAll(/Code\.js`?[^.]{0,60}?\b(\d+\.\d) KB/g)].map((m) => m[0]);
      expect({ file, claims }).toEqual({ file, claims: [] });
    }
  });

  test('the core: the developer document gives the limit of test/core/bare-v8.test.ts, not a size of the day', () => {
    const limit = Number(/MAX_CORE_BYTES = (\d+) \* 1024/.exec(read('test/core/bare-v8.test.ts'))?.[1]);
    expect(limit).toBeGreaterThan(0);
    const readme = flat('docs/developers.md');
    expect([...readme.matchAll(/at most (\d+) KB/g)].map((m) => Number(m[1]))).toEqual([limit, limit]);
    expect(readme).not.toMatch(/\d+\.\d KB minified with zod/);
  });
});

describe('times', () => {
  const sheets = read('test/bench/SHEETS.md');
  /** The "all filled after" and trigger runtime cells of a scenario row of SHEETS.md's D table. */
  function row(scenario: string): { minutes: string; ratio: string; runtimeDay?: string } {
    const line = sheets.split('\n').find((l) => l.startsWith(`| ${scenario} `));
    if (!line) throw new Error(`test/bench/SHEETS.md has no row "${scenario}"`);
    const m = /\| ([\d.]+) min \(([\d.]+) × bound[^|]*\|[^|]*most in a day ([\d.]+) min/.exec(line);
    if (!m) throw new Error(`cannot read the row "${scenario}" of test/bench/SHEETS.md`);
    return { minutes: m[1], ratio: m[2], runtimeDay: m[3] };
  }
  const bound = row('D: bound script, left alone');
  const sidebarOpen = row('D: Editor add-on, sidebar open');
  const closed = row('D: Editor add-on, sidebar closed');
  const tenThousand = /B: 10,000 rows in ([\d.]+) × the bound/.exec(sheets)?.[1];
  const twoSheets =
    /the same 500 domains in two spreadsheets of one user: \d+ of \d+ rows filled in ([\d.]+) min/.exec(
      sheets,
    )?.[1];

  test("500 domains: the plan's bound is 500 / 60, said the same way everywhere", () => {
    const planBound = (500 / 60).toFixed(2);
    for (const file of ['docs/guide.md', 'docs/developers.md']) {
      const text = flat(file);
      expect({ file, bound: text.includes(`500 / 60 = ${planBound} min`) }).toEqual({ file, bound: true });
    }
    for (const file of READMES) {
      const text = flat(file);
      // No other figure for the same thing (8.0, 8.3 or 8.4 minutes as "500 domains take").
      expect({ file, other: /500 (new )?domains (take|need) (about )?\d/.exec(text)?.[0] }).toEqual({
        file,
        other: undefined,
      });
    }
  });

  test('the Sheets bench figures in docs/developers.md are the last SHEETS.md run (the guide carries none)', () => {
    // The user guide says what a user meets; the measured figures are the developer document's.
    const guide = 'docs/developers.md';
    const developers = 'docs/developers.md';
    expect(flat('docs/guide.md')).not.toMatch(/Properties calls|stand-in|× the bound|SHEETS\.md|[Ii]ssue \d/);
    const expected: Array<[string, string]> = [
      [`fill in ${bound.minutes} min (${bound.ratio} × the bound) as a bound script`, guide],
      [`with ${bound.runtimeDay} min of trigger runtime`, guide],
      [`${sidebarOpen.ratio} × the bound as an add-on with the sidebar open`, guide],
      [`in ${closed.minutes} min as a published add-on`, guide],
      [`one user: ${twoSheets} min`, guide],
      [`rows take ${tenThousand} × the bound`, guide],
      [`all filled in ${bound.minutes} min (${bound.ratio} × the plan's bound`, developers],
      [`with ${bound.runtimeDay} min of trigger runtime`, developers],
      [`${sidebarOpen.ratio} × the bound with the sidebar open, and ${closed.minutes} min`, developers],
      [`two spreadsheets of one user, ${twoSheets} min`, developers],
      [`${tenThousand} × the bound`, developers],
    ];
    for (const [figure, file] of expected) {
      expect({ file, figure, said: flat(file).includes(figure) }).toEqual({ file, figure, said: true });
    }
  });

  test("issue 30's large sheets in docs/developers.md are the last SHEETS.md run", () => {
    /** "X min (Y × the bound; first day R min of trigger runtime, P Properties calls)" of a per-cell check line. */
    const figures = (label: string): string => {
      const line = sheets.split('\n').find((l) => l.startsWith(`- per-cell, ${label}`));
      if (!line) throw new Error(`test/bench/SHEETS.md has no per-cell line "${label}"`);
      const m =
        /all filled in ([\d.]+) min \(([\d.]+) × the bound\), \d+ killed, first day ([\d.]+) min of trigger runtime and ([\d,]+) Properties calls/.exec(
          line,
        );
      if (!m) throw new Error(`the per-cell line "${label}" of test/bench/SHEETS.md did not fill every cell`);
      return `${m[1]} min (${m[2]} × the bound; first day ${m[3]} min of trigger runtime, ${m[4]} Properties calls)`;
    };
    const guide = flat('docs/developers.md');
    const fetches = 'sandbox-basic, 30 side by side, background on, fetches 0.3–0.9 s (';
    for (const [label, before] of [
      [`5000 cells, ${fetches}`, 'every cell in'],
      [`5 sheets × 1000 cells, ${fetches}`, '1,000 such cells in'],
      [`one =DAPA(A2:A5001) range, ${fetches}`, 'range in'],
    ]) {
      const said = `${before} ${figures(label)}`;
      expect({ said, in: guide.includes(said) }).toEqual({ said, in: true });
    }
    const nextDay = /next day (\d+) credits for 50 new rows/.exec(sheets)?.[1];
    expect(nextDay).toBeDefined();
    expect(guide).toContain(`50 new rows dragged below 500 kept ones bill ${nextDay} credits`);
  });

  test("issue 46's users at once in docs/developers.md are the last SHEETS.md run", () => {
    // The 50-user row (test/bench/sheets-many-users.ts) and the headline per-cell row (500 cells, 30 side by side,
    // background on), as the bench wrote them.
    const many =
      /- (\d+) users of one published add-on, each (\d+) cells[^:]*: all filled in [\d.]+ min, 0 rows lost, \d+ errors at the end, 0 billed twice, [^;]*; the script's executions at once ([\d.]+) on average, (\d+) at most \(of 1,000\); one user's, from their edit until their sheet was filled, ([\d.]+) on average, (\d+) at most \(of 30\); [\d.]+ execution-seconds per filled cell; [^;]*; the script's 1,000 carry ([\d,]+) users filling at once/.exec(
        sheets,
      );
    if (!many) throw new Error('test/bench/SHEETS.md has no 50-user line that filled every cell');
    const [, users, rows, scriptAverage, scriptMost, userAverage, userMost, carried] = many;
    // The carry is 1,000 / one user's average, rounded down (the bench divides by the average before it is rounded
    // to the two decimals printed).
    const carry = Number(carried.replace(/,/g, ''));
    expect(carry).toBeGreaterThanOrEqual(Math.floor(1000 / (Number(userAverage) + 0.005)));
    expect(carry).toBeLessThanOrEqual(Math.floor(1000 / (Number(userAverage) - 0.005)));
    const headline = sheets
      .split('\n')
      .find((l) => l.startsWith('- per-cell, 500 cells, sandbox-basic, 30 side by side, background on ('));
    const held = /executions held at once ([\d.]+) \/ (\d+)/.exec(headline ?? '');
    if (!held)
      throw new Error('test/bench/SHEETS.md has no headline per-cell line with executions held at once');
    const said = [
      `${users} users of the add-on each dragging \`=DAPA(A2)\` down ${rows} rows`,
      `held at most ${scriptMost} executions at once (${scriptAverage} on average)`,
      `one filling user holds ${userAverage} on average`,
      `and ${userMost} only during the first seconds of the drag`,
      `carry about ${carried} users filling at once (1,000 / ${userAverage}`,
      `500-row drag holds ${held[1]} on average (${held[2]} at most`,
    ];
    const text = flat('docs/developers.md');
    for (const figure of said)
      expect({ figure, said: text.includes(figure) }).toEqual({ figure, said: true });
  });

  test("the entry plan's figures (per request, per minute, credits, 1,000 domains' time) are the sandbox's entry plan", () => {
    const plan = DEFAULT_CONFIG.keys['sandbox-basic'];
    const credits = (plan.monthlyCredits ?? 0).toLocaleString('en-US');
    const thousand = Math.round(1000 / (plan.urlsPerMinute ?? 1));
    for (const file of [...USER_DOCS, 'docs/developers.md']) {
      const text = flat(file);
      for (const m of text.matchAll(/about \*{0,2}([\d,]+) credits a month/g))
        expect({ file, credits: m[1] }).toEqual({ file, credits });
      for (const m of text.matchAll(/1,000 domains(?: on the entry plan)?:? (?:take )?about (\d+) minutes/g))
        expect({ file, minutes: Number(m[1]) }).toEqual({ file, minutes: thousand });
      for (const m of text.matchAll(/(\d+) URLs (?:a|per) minute, (\d+) per request/g))
        expect({ file, perMinute: Number(m[1]), perRequest: Number(m[2]) }).toEqual({
          file,
          perMinute: plan.urlsPerMinute,
          perRequest: plan.maxUrlsPerRequest,
        });
    }
  });

  test('the e2e duration: no page quotes a total that nothing measures (run.sh prints it)', () => {
    expect(read('test/n8n-e2e/run.sh')).toMatch(/run\.sh took \$\(\(SECONDS \/ 60\)\) min/);
    for (const file of [...READMES, '.github/workflows/ci.yml']) {
      const text = flat(file);
      const e2eClaims = [
        ...text.matchAll(/(test:e2e|e2e)[^.]{0,200}?(~\s?\d+ ?min\w*|[Aa]bout \d+ minutes)/g),
      ]
        .map((m) => m[0])
        .filter((claim) => !/BENCH_PLAN/.test(claim));
      expect({ file, e2eClaims }).toEqual({ file, e2eClaims: [] });
    }
  });
});

describe('scopes', () => {
  const manifest = JSON.parse(read('apps-script/appsscript.json')) as { oauthScopes: string[] };
  const short = manifest.oauthScopes.map((s) => s.replace('https://www.googleapis.com/auth/', '')).sort();

  test("the CHANGELOG's list of the add-on's scopes is the manifest's", () => {
    const lists = [...flat('CHANGELOG.md').matchAll(/scopes ((?:`[\w.]+`(?:, | and )?){2,})/g)].map((m) =>
      [...m[1].matchAll(/`([\w.]+)`/g)].map((n) => n[1]).sort(),
    );
    expect(lists.length).toBeGreaterThan(0);
    for (const list of lists) expect(list).toEqual(short);
  });
});

describe('where things are stored', () => {
  /** `| where | key | what |` rows of docs/developers.md's storage table, keys without their <...> part. */
  function storageRows(): Array<{ where: string; keys: string[] }> {
    const text = read('docs/developers.md');
    const table = text.slice(
      text.indexOf('### Storage keys'),
      text.indexOf('Every stored value goes through'),
    );
    return table
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| where') && !line.startsWith('| ---'))
      .map((line) => {
        const [where, keys] = line
          .split('|')
          .slice(1, 3)
          .map((c) => c.trim());
        return { where, keys: [...keys.matchAll(/`([^`]+)`/g)].map((m) => m[1].replace(/<[^>]*>.*$/, '')) };
      });
  }

  test('the storage table names every key where storage-keys.ts keeps it, and the two caches', () => {
    const rows = storageRows();
    const keysIn = (where: string) => rows.filter((r) => r.where === where).flatMap((r) => r.keys);
    const user = keysIn('user properties');
    for (const key of Object.values(USER_PROPERTY))
      expect({ key, listed: user.includes(key) }).toEqual({ key, listed: true });
    const metadata = keysIn('spreadsheet developer metadata');
    for (const key of Object.values(DOCUMENT_PROPERTY))
      expect({ key, listed: metadata.includes(key) }).toEqual({ key, listed: true });
    // Nothing listed that the code does not keep, and no key said to live in document properties.
    const known = new Set<string>([...Object.values(USER_PROPERTY), ...Object.values(DOCUMENT_PROPERTY)]);
    for (const key of [...user, ...metadata])
      expect({ key, known: known.has(key) }).toEqual({ key, known: true });
    expect(rows.some((r) => /document properties/.test(r.where))).toBe(false);
    for (const cache of ['document cache', 'user cache'])
      expect({ cache, prefix: keysIn(cache).some((k) => k.startsWith(CACHE_PREFIX)) }).toEqual({
        cache,
        prefix: true,
      });
    // A published add-on's script cache is every user's: nothing is kept there (CONCURRENCY.md).
    expect(keysIn('script cache')).toEqual([]);
    expect(keysIn('hidden sheet')).toEqual([STORE_SHEET, VERSIONS_SHEET]);
  });

  test('the privacy policy names every cache that holds fetched metrics', () => {
    const privacy = flat('apps-script/publishing/PRIVACY.md');
    const row = privacy.split('|').find((cell) => /document cache/.test(cell)) ?? '';
    for (const cache of ['document cache', 'user cache']) expect(row).toContain(cache);
    expect(privacy).not.toMatch(/script cache/);
    expect(privacy).not.toMatch(/only in the document cache/);
  });
});

describe('the first hour', () => {
  test('one word for getting a key (sign up), and the paid plan it needs, in every README and the guide', () => {
    for (const file of USER_DOCS) {
      const text = flat(file);
      expect({ file, signIn: /sign in at/i.test(text) }).toEqual({ file, signIn: false });
      expect({ file, signUp: /sign up at/i.test(text) }).toEqual({ file, signUp: true });
      expect({ file, paid: /paid DAPA plan/.test(text) }).toEqual({ file, paid: true });
    }
  });

  test('no document tells a Sheets user to point the add-on at a local http address', () => {
    for (const file of READMES) {
      expect({
        file,
        said: /Custom_? takes any address|\(the sandbox: `http:/.exec(read(file))?.[0],
      }).toEqual({
        file,
        said: undefined,
      });
      expect({ file, said: /Point a Sheets setting/.exec(flat(file))?.[0] }).toEqual({
        file,
        said: undefined,
      });
    }
  });

  test("n8n: the lowest version is the e2e's oldest pin, and the README's install command is the e2e's", () => {
    const pinned = (
      JSON.parse(read('test/n8n-e2e/n8n-install/package.json')) as { dependencies: { n8n: string } }
    ).dependencies.n8n;
    const node = flat('n8n-node/README.md');
    expect(node).toContain(`**n8n ${pinned} or later**`);
    expect(flat('README.md')).toContain(`self-hosted n8n, ${pinned} or later`);
    const next = (
      JSON.parse(read('test/n8n-e2e/n8n-install-next/package.json')) as { dependencies: { n8n: string } }
    ).dependencies.n8n;
    for (const file of [...USER_DOCS, 'docs/developers.md', 'docs/troubleshooting.md'])
      for (const m of flat(file).matchAll(/n8n (\d+\.\d+\.\d+)/g))
        expect({ file, version: m[1], pinned: [pinned, next].includes(m[1]) }).toEqual({
          file,
          version: m[1],
          pinned: true,
        });
    // The install goes into n8n's nodes folder, where n8n loads it as a package (and so links the credential's test),
    // with the script the e2e suite installs the node with.
    for (const file of ['n8n-node/README.md', 'docs/guide.md'])
      expect({ file, said: read(file).includes('node n8n-node/install.mjs ~/.n8n/nodes') }).toEqual({
        file,
        said: true,
      });
    for (const file of READMES)
      expect({ file, custom: /install\.mjs ~\/\.n8n\/custom/.test(read(file)) }).toEqual({
        file,
        custom: false,
      });
    expect(read('test/n8n-e2e/lib/n8n.ts')).toMatch(/'n8n-node', 'install\.mjs'/);
  });
});

describe('the front door', () => {
  test('the README keeps exactly its two commands, the ones CI runs', () => {
    const readme = read('README.md');
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1].trim());
    expect(blocks).toEqual(['npm ci && npm run demo', 'npm test']);
    const ci = read('.github/workflows/ci.yml');
    expect(ci).toContain('npm run demo');
    expect(ci).toMatch(/run: npm test\n/);
    // It points to the guide, the troubleshooting page and the developer document.
    for (const doc of ['docs/guide.md', 'docs/troubleshooting.md', 'docs/developers.md'])
      expect({ doc, linked: readme.includes(`](${doc})`) }).toEqual({ doc, linked: true });
  });
});

describe('Node versions', () => {
  /** Whether version `v` (x.y.z) is in an npm range of the forms the dependencies use (^, >=, <=, <, >, x, ||). */
  function satisfies(v: string, range: string): boolean {
    const parse = (s: string) => s.split('.').map((n) => (n === 'x' || n === undefined ? NaN : Number(n)));
    const [major, minor, patch] = parse(v);
    const cmp = (want: number[]) => {
      for (const [i, have] of [major, minor, patch].entries()) {
        if (Number.isNaN(want[i] ?? NaN)) return 0;
        if (have !== want[i]) return have - want[i];
      }
      return 0;
    };
    return range.split('||').some((alt) =>
      alt
        .trim()
        .replace(/(>=|<=|>|<|\^)\s+/g, '$1')
        .split(/\s+/)
        .every((c) => {
          const m = /^(>=|<=|>|<|\^)?v?([\dx.]+)$/.exec(c);
          if (!m) throw new Error(`cannot read the range "${range}"`);
          const want = parse(m[2]);
          const d = cmp(want);
          if (m[1] === '^') return major === want[0] && d >= 0;
          if (m[1] === '>=') return d >= 0;
          if (m[1] === '<=') return d <= 0;
          if (m[1] === '>') return d > 0;
          if (m[1] === '<') return d < 0;
          return d === 0;
        }),
    );
  }

  const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
  /** The lowest version of each alternative of the root range. */
  const lowest = engines.split('||').map((alt) =>
    /(\d+)(?:\.(\d+))?(?:\.(\d+))?/
      .exec(alt)!
      .slice(1)
      .map((n) => n ?? '0')
      .join('.'),
  );

  test("the root engines is the lint's range, and every dev dependency runs on its lowest versions", () => {
    const eslint = (JSON.parse(read('node_modules/eslint/package.json')) as { engines: { node: string } })
      .engines;
    expect(engines).toBe(eslint.node);
    expect(lowest).toEqual(['20.19.0', '22.13.0', '24.0.0']);
    const dev = Object.keys(
      (JSON.parse(read('package.json')) as { devDependencies: object }).devDependencies,
    );
    for (const name of dev) {
      const range = (JSON.parse(read(`node_modules/${name}/package.json`)) as { engines?: { node?: string } })
        .engines?.node;
      if (!range) continue;
      for (const version of lowest)
        expect({ name, range, version, ok: satisfies(version, range) }).toEqual({
          name,
          range,
          version,
          ok: true,
        });
    }
    // The check can fail: Node 20.0 is below ESLint's range.
    expect(satisfies('20.0.0', eslint.node)).toBe(false);
    expect(satisfies('20.19.0', '>=20.19 <= 24.x')).toBe(true);
    expect(satisfies('25.0.0', '>=20.19 <= 24.x')).toBe(false);
  });

  test('the documents give the Node versions n8n declares, and no "n8n 2.x needs Node 24"', () => {
    const n8n = (dir: string) =>
      (JSON.parse(read(`test/n8n-e2e/${dir}/package.json`)) as { dependencies: { n8n: string } }).dependencies
        .n8n;
    expect([n8n('n8n-install'), n8n('n8n-install-next')]).toEqual(['2.8.4', '2.41.1']);
    for (const file of READMES) {
      expect({ file, said: /n8n 2\.x needs/.exec(flat(file))?.[0] }).toEqual({ file, said: undefined });
    }
    for (const file of ['docs/guide.md', 'n8n-node/README.md'])
      expect({ file, said: flat(file).includes('n8n 2.8.4 runs on Node.js 20.19 to 24') }).toEqual({
        file,
        said: true,
      });
    expect(flat('docs/guide.md')).toContain('Node.js 20.19 or later');
  });
});

describe('no stale names', () => {
  const DOCS = [
    'README.md',
    'CHANGELOG.md',
    'apps-script/README.md',
    'n8n-node/README.md',
    ...readdirSync(join(root, 'docs')).map((f) => `docs/${f}`),
    ...readdirSync(join(root, 'apps-script/publishing'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `apps-script/publishing/${f}`),
  ];
  /** Every file of the repository (not installs, not builds), by path. */
  const FILES = (() => {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(join(root, dir))) {
        if (['node_modules', 'dist', '.git', 'n8n', 'n8n-next', 'node24', 'work', 'out'].includes(name))
          continue;
        const path = dir ? `${dir}/${name}` : name;
        if (statSync(join(root, path)).isDirectory()) walk(path);
        else out.push(path);
      }
    };
    walk('');
    return out;
  })();
  /** What the build, clasp or Google make, which no checkout holds. */
  const MADE = ['Code.js', 'Code.gs', 'Sidebar.html', '.clasp.json', 'appsscript.json', 'RESULTS.md'];
  /** A document the lead's branch adds (the concurrency design, issue 30). */
  const COMING = ['apps-script/CONCURRENCY.md'];
  const exists = (token: string) =>
    MADE.includes(token.split('/').pop() ?? '') ||
    COMING.some((c) => c.endsWith(token)) ||
    FILES.some(
      (f) => f === token || f.endsWith(`/${token}`) || f.endsWith(`/${token.replace(/\.js$/, '.ts')}`),
    );

  test('every file a document names in code or a link is in the repository (the CHANGELOG may name removed ones)', () => {
    const missing: string[] = [];
    for (const doc of DOCS.filter((d) => d !== 'CHANGELOG.md')) {
      const text = read(doc);
      const named = [
        ...[...text.matchAll(/`([\w./-]+\.(?:ts|mjs|js|json|md|yml|html))`/g)].map((m) => m[1]),
        ...[...text.matchAll(/\]\((?!https?:|#|mailto:)([^)#\s]+)/g)].map((m) => m[1]),
      ];
      for (const token of named) {
        const plain = token.replace(/^(\.\.\/)+|^\.\//, '');
        const resolved = join(doc, '..', token).replace(/\\/g, '/');
        if (!exists(plain) && !FILES.includes(resolved) && !statSafe(resolved))
          missing.push(`${doc}: ${token}`);
      }
    }
    expect(missing).toEqual([]);
  });

  test('the Sheets code names, in its comments, only modules that exist', () => {
    const missing: string[] = [];
    for (const file of FILES.filter((f) => f.startsWith('apps-script/src/') && f.endsWith('.ts'))) {
      const comments = (read(file).match(/\/\/.*|\/\*[\s\S]*?\*\//g) ?? []).join('\n');
      for (const m of comments.matchAll(/\b([\w-]+\.ts)\b/g))
        if (!exists(m[1])) missing.push(`${file}: ${m[1]}`);
    }
    expect(missing).toEqual([]);
    expect(exists('step-loop.ts')).toBe(false);
  });

  test('every link between the documents lands on a file and a heading that exist', () => {
    const slugs = (doc: string): string[] => {
      const seen = new Map<string, number>();
      return [
        ...read(doc)
          .replace(/```[\s\S]*?```/g, '')
          .matchAll(/^#{1,6} (.+)$/gm),
      ].map((m) => {
        const base = m[1]
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\s_-]/gu, '')
          .replace(/\s/g, '-');
        const n = seen.get(base) ?? 0;
        seen.set(base, n + 1);
        return n === 0 ? base : `${base}-${n}`;
      });
    };
    const broken: string[] = [];
    for (const doc of DOCS) {
      for (const m of read(doc).matchAll(/\]\((?!https?:|mailto:)([^)\s]*)\)/g)) {
        const [path, anchor] = m[1].split('#');
        const target = path ? join(doc, '..', path).replace(/\\/g, '/') : doc;
        if (COMING.includes(target)) continue;
        if (!statSafe(target)) {
          broken.push(`${doc}: ${m[1]} (no file ${target})`);
          continue;
        }
        if (anchor && target.endsWith('.md') && !slugs(target).includes(anchor))
          broken.push(`${doc}: ${m[1]} (no heading #${anchor} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('a version the CHANGELOG says is not yet published is not said to be published', () => {
    const changelog = read('CHANGELOG.md');
    const sections = changelog.split(/^### /m).slice(1);
    const unpublished = sections.filter((s) => /^[^\n]*not yet published/.test(s));
    expect(unpublished.length).toBeGreaterThan(0);
    for (const section of unpublished) {
      const title = section.split('\n')[0];
      const body = section.replace(/\s+/g, ' ');
      expect({
        title,
        claim: /(?:^|\. )Published (?:from|on|to)\b|\bis (?:now )?published\b/.exec(body)?.[0],
      }).toEqual({
        title,
        claim: undefined,
      });
    }
  });
});

describe('the Sheets bench figures are the code’s', () => {
  test('the measured code is the Sheets shell and the core files it imports, not the n8n node’s sharing run', () => {
    const files = measuredFiles();
    expect(files).toEqual(
      expect.arrayContaining(['apps-script/src/main.ts', 'shared/index.ts', 'shared/run.ts']),
    );
    expect(files).toEqual(expect.arrayContaining(['shared/window.ts', 'shared/redact.ts']));
    expect(files).not.toContain('shared/sharing-run.ts');
    expect(files.every((path) => path.startsWith('apps-script/src/') || path.startsWith('shared/'))).toBe(
      true,
    );
  });

  test('test/bench/SHEETS.md was measured on the code as it is (run npm run bench:sheets after changing it)', () => {
    const sheets = read('test/bench/SHEETS.md');
    const recorded = MEASURED_LINE.exec(sheets)?.[1];
    const current = measuredSourceHash();
    const verdict =
      recorded === undefined
        ? 'SHEETS.md records no hash of the code it measured: regenerate it with `npm run bench:sheets`'
        : recorded === current
          ? 'current'
          : `SHEETS.md was measured on other code (${recorded}) than ${MEASURED_SOURCES.join(' and ')} hold now ` +
            `(${current}): its figures, and the documents that quote them, are stale until \`npm run bench:sheets\` runs again`;
    expect(verdict).toBe('current');
    expect(read('test/bench/sheets-background.ts')).toContain('measuredLine(measured)');
  });
});
