// One menu name, from one constant (MENU_NAME in apps-script/src/messages.ts): Google names the add-on's sub-menu of
// Extensions after the listing's name, and a bound script's after its project's name ("If the script is running as an
// add-on, the sub-menu name matches the add-on's name in the web store; if the script is bound to the document
// directly, the sub-menu name matches the script's name": Ui.createAddonMenu). So the project `npm run push` creates,
// the listing, the consent screen, every menu path a text names and every document say the same name.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MENU_NAME } from '../../apps-script/src/messages';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return filesUnder(path, keep);
    return keep(path) ? [path] : [];
  });
}

/**
 * The add-on menu names a text gives: in paths such as "Extensions → DAPA → Set API key", and where a path ends at the
 * menu ("**Extensions → DAPA**"). Google's own menus under Extensions (Apps Script, Add-ons) are not the add-on's.
 */
export function menuNamesIn(text: string): string[] {
  const raw = text.replace(/\s+/g, ' ').replace(/<\/?strong>/g, '**');
  const plain = raw.replace(/\*\*|`/g, '');
  const names = [
    ...[...plain.matchAll(/Extensions (→|›|>) ([^→›>.,;:|()[\]]{1,40}?) \1/g)].map((m) => m[2]),
    ...[...raw.matchAll(/Extensions (?:→|›|>) ([^*`→›>]{1,40}?)(?:\*\*|`)/g)].map((m) => m[1]),
  ];
  return names
    .map((name) => name.replace(/\*\*|`/g, '').trim())
    .filter((name) => !['Apps Script', 'Add-ons'].includes(name));
}

const TEXTS = [
  'README.md',
  'CHANGELOG.md',
  'apps-script/README.md',
  'n8n-node/README.md',
  'apps-script/sidebar/index.html',
  ...filesUnder('docs', (f) => f.endsWith('.md')),
  ...filesUnder('apps-script/publishing', (f) => f.endsWith('.md')),
  ...filesUnder('apps-script/src', (f) => f.endsWith('.ts')),
  ...filesUnder('apps-script/sidebar', (f) => f.endsWith('.ts')),
];

describe('one menu name', () => {
  test('the menu is the add-on menu, named by Google, and MENU_NAME is a name a listing can carry', () => {
    const menu = read('apps-script/src/sidebar/menu.ts');
    expect(menu).toContain('.createAddonMenu()');
    expect(menu).not.toMatch(/\.createMenu\(/);
    expect(MENU_NAME.length).toBeGreaterThan(0);
    expect(MENU_NAME.length).toBeLessThanOrEqual(50);
    expect(MENU_NAME).not.toMatch(/google|sheets|workspace/i);
  });

  test('the project npm run push creates carries it (clasp create --title)', () => {
    const push = join(root, 'apps-script/push.mjs');
    expect(execFileSync(process.execPath, [push, '--title'], { encoding: 'utf8' }).trim()).toBe(MENU_NAME);
    for (const args of [
      ['--bind', 'https://docs.google.com/spreadsheets/d/1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789/edit#gid=0'],
      ['--standalone'],
    ]) {
      const out = execFileSync(process.execPath, [push, '--dry-run', ...args], {
        encoding: 'utf8',
        env: { ...process.env, DAPA_PUSH_PROJECT_FILE: join(root, 'apps-script/.clasp.json.none') },
      });
      expect(out).toContain(`clasp create --type standalone --title ${MENU_NAME} --rootDir dist`);
      if (args[0] === '--bind') expect(out).toContain('--parentId 1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789');
    }
  });

  test('the listing and the consent screen carry it', () => {
    const listing = read('apps-script/publishing/LISTING.md');
    const name = /^## Application name\n\n(.+)$/m.exec(listing)?.[1].trim();
    expect(name).toBe(MENU_NAME);
    expect(read('apps-script/publishing/PUBLISHING.md')).toContain(`app name **${MENU_NAME}**`);
  });

  test('every menu path in every text and document names it', () => {
    const wrong = TEXTS.flatMap((file) =>
      menuNamesIn(read(file))
        .filter((name) => name !== MENU_NAME && !name.includes('${MENU_NAME}'))
        .map((name) => `${file}: Extensions → ${name}`),
    );
    expect(wrong).toEqual([]);
    // The paths are there to check: the guide, the troubleshooting page and the messages name the menu.
    for (const file of ['docs/guide.md', 'docs/troubleshooting.md', 'apps-script/publishing/REVIEWERS.md'])
      expect({ file, paths: menuNamesIn(read(file)).length > 3 }).toEqual({ file, paths: true });
    expect(read('apps-script/src/messages.ts')).toMatch(/`Extensions → \$\{MENU_NAME\} → /);
    // Google's unverified-app screen names the project too.
    for (const file of ['docs/guide.md', 'docs/troubleshooting.md'])
      expect({ file, said: read(file).includes(`**Go to ${MENU_NAME} (unsafe)**`) }).toEqual({
        file,
        said: true,
      });
  });

  test('the check catches another name', () => {
    expect(
      menuNamesIn('**Extensions → DAPA Checker → Open sidebar**; Extensions › Apps Script › Triggers'),
    ).toEqual(['DAPA Checker']);
    expect(menuNamesIn('Extensions → `DAPA` → **Set API key**')).toEqual(['DAPA']);
  });
});
