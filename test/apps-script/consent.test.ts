// One consent table, from the code: apps-script/src/platform/consent-table.ts holds which feature uses which of Google's
// consent boxes and what happens when one is unticked; the user guide's tables are that data (held equal here), every
// refusal the code can show is in them, and in the stand-in a menu item whose box is unticked says so in DAPA's words
// and asks Google for just that box, never showing Google's raw permission error.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Box, BOXES, SCOPES } from '../../apps-script/src/platform/gas';
import { CONSENT } from '../../apps-script/src/platform/consent-table';
import { permissionNeeded, UI_REFUSED } from '../../apps-script/src/messages';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import type { AppsScriptStandIn } from './harness';
import { SCOPES as GOOGLE } from './standin/scopes';
import { useVirtualSandbox, virtualStandIn } from './support';
import type { VirtualSandbox } from '../sandbox/virtual';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const ORDER: Box[] = ['sheets', 'request', 'ui', 'triggers'];

/** Every markdown table of a page, as rows of trimmed cells (the separator row left out). */
function tablesOf(page: string): string[][][] {
  const tables: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of page.split('\n')) {
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    if (!current) tables.push((current = []));
    const cells = line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
    if (!cells.every((c) => /^-+$/.test(c))) current.push(cells);
  }
  return tables;
}

/** The features × boxes table as the guide shows it, from gas.ts. */
export function featureTable(): string[][] {
  return [
    ['Feature', ...ORDER.map((b) => BOXES[b].label), 'When a box it uses is unticked'],
    ...CONSENT.map((row) => [
      row.feature,
      ...ORDER.map((b) => (row.uses.includes(b) ? '✓' : '')),
      row.unticked,
    ]),
  ];
}

/** The boxes: short name, what Google's screen says, the scope. */
export function boxTable(): string[][] {
  return [
    ['Box', 'What Google\u2019s screen says', 'Scope'],
    ...ORDER.map((b) => [BOXES[b].label, BOXES[b].screen, `\`${SCOPES[b].replace(/^.*\/auth\//, '')}\``]),
  ];
}

describe('the consent table is the code’s', () => {
  test('the user guide shows the features × boxes table and the boxes, as gas.ts has them', () => {
    const tables = tablesOf(read('docs/guide.md'));
    expect(tables).toContainEqual(featureTable());
    expect(tables).toContainEqual(boxTable());
    // The publishing kit's page shows the same table.
    expect(tablesOf(read('apps-script/publishing/SCOPES.md'))).toContainEqual(featureTable());
    // Troubleshooting names the same boxes (what the screen says, the scope).
    expect(tablesOf(read('docs/troubleshooting.md'))).toContainEqual(boxTable());
  });

  test('every box of the manifest is in it, and every refusal the code can show', () => {
    const manifest = JSON.parse(read('apps-script/appsscript.json')) as { oauthScopes: string[] };
    const consentScopes = manifest.oauthScopes.filter((s) => !/spreadsheets\.currentonly|userinfo/.test(s));
    expect([...consentScopes].sort()).toEqual(Object.values(SCOPES).sort());
    const unticked = CONSENT.map((row) => row.unticked).join('\n');
    for (const opening of [
      'Google did not let DAPA reach the DAPA service:', // messages.ts fetchRefused (a formula)
      'Checks from the sidebar need your permission to', // sidebarAccessText
      'Background checks need your permission to', // accessText
      UI_REFUSED.split(':')[0], // a menu item without the sidebar's box
      permissionNeeded('Remove DAPA from this spreadsheet', ['x']).split(':')[0], // allowedFor
      permissionNeeded('Turn off background checks', ['x']).split(':')[0],
    ])
      expect({ opening, inTable: unticked.includes(opening) }).toEqual({ opening, inTable: true });
  });

  test('the guide no longer says formulas need no permission and keep working whatever is unticked', () => {
    const guide = read('docs/guide.md').replace(/\s+/g, ' ');
    expect(guide).not.toContain('Formulas keep working, and the sidebar says which feature waits');
    expect(guide).toContain('users in your own Google Workspace domain');
  });
});

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn;
useVirtualSandbox(DEFAULT_CONFIG, (s) => (sandbox = s));
afterEach(async () => {
  await gas?.close();
});

describe('every menu item is in the consent table', () => {
  it('each item onOpen puts in the menu is named in a row of the table', async () => {
    gas = await virtualStandIn(sandbox, 'sandbox-basic', DEFAULT_CONFIG);
    await gas.run('onOpen');
    const menu = gas.ui.events.find((e) => e.type === 'menu');
    const items = menu && menu.type === 'menu' ? menu.items : [];
    const captions = items.flatMap((i) => ('caption' in i ? [i.caption] : []));
    expect(captions.length).toBeGreaterThanOrEqual(10);
    const features = CONSENT.map((row) => row.feature).join('\n');
    for (const caption of captions)
      expect({ caption, inTable: features.includes(`**${caption}**`) }).toEqual({ caption, inTable: true });
  });
});

describe('a box left unticked, in the stand-in', () => {
  const ALL = [GOOGLE.externalRequest, GOOGLE.spreadsheets, GOOGLE.containerUi, GOOGLE.scriptApp];
  const without = (scope: string) => ALL.filter((s) => s !== scope);

  it.each(['showSidebar', 'promptApiKey', 'checkSelection', 'showHelp'])(
    'without "Display and run third-party web content", %s says so in DAPA’s words and asks for just that box',
    async (item) => {
      gas = await virtualStandIn(sandbox, 'sandbox-basic', DEFAULT_CONFIG, {
        grantedScopes: without(GOOGLE.containerUi),
      });
      const error = (await gas.run(item).catch((e: Error) => e)) as Error;
      expect(error).toBeInstanceOf(Error);
      expect(gas.ui.events).toContainEqual(expect.objectContaining({ type: 'toast', message: UI_REFUSED }));
      expect(gas.authorizationPrompts).toEqual([expect.objectContaining({ scopes: [GOOGLE.containerUi] })]);
      expect(gas.executions.some((e) => /You do not have permission/.test(e.error ?? ''))).toBe(false);
      // Once the box is ticked, the item works.
      gas.grantScopes(gas.user, [GOOGLE.containerUi]);
      if (item === 'promptApiKey') gas.ui.respond({ button: 'CANCEL', text: '' });
      if (item === 'checkSelection') {
        gas.sheet.setValues('A1:A2', [['example.com'], ['example.org']]);
        gas.sheet.select('A1:A2');
      }
      await gas.run(item);
    },
  );

  it.each(['trySampleData', 'refreshDapaFormulas', 'checkFormulasAgain'])(
    'without the spreadsheets box, %s asks Google for it instead of failing with Google’s raw text',
    async (item) => {
      gas = await virtualStandIn(sandbox, 'sandbox-basic', DEFAULT_CONFIG, {
        grantedScopes: without(GOOGLE.spreadsheets),
      });
      await gas.run(item).catch(() => undefined);
      expect(gas.authorizationPrompts).toEqual([expect.objectContaining({ scopes: [GOOGLE.spreadsheets] })]);
      expect(gas.executions.some((e) => /You do not have permission/.test(e.error ?? ''))).toBe(false);
    },
  );

  // Every menu item with the Spreadsheets box unticked: an item that needs it says so in DAPA's words (an alert) and
  // asks Google for it; the others work. Never Google's raw "You do not have permission to call ...".
  const ITEMS: Array<[item: string, needsSheets: string | undefined]> = [
    ['showSidebar', undefined],
    ['promptApiKey', undefined],
    ['trySampleData', 'Try with sample data'],
    ['checkSelection', 'A check from the sidebar or Check selection'],
    ['refreshDapaFormulas', 'Refresh DAPA formulas'],
    ['checkFormulasAgain', 'Check DAPA formulas again'],
    ['startBackground', 'Turn on background checks'],
    ['stopBackground', 'Turn off background checks'],
    ['removeDapa', 'Remove DAPA from this spreadsheet'],
    ['showHelp', undefined],
  ];
  it.each(ITEMS)(
    'without the Spreadsheets box, %s asks for what it needs in DAPA’s words',
    async (item, what) => {
      gas = await virtualStandIn(sandbox, 'sandbox-basic', DEFAULT_CONFIG, {
        grantedScopes: without(GOOGLE.spreadsheets),
      });
      if (item === 'promptApiKey') gas.ui.respond({ button: 'CANCEL', text: '' });
      await gas.run(item).catch(() => undefined);
      expect(gas.executions.filter((e) => /You do not have permission/.test(e.error ?? ''))).toEqual([]);
      const alerts = gas.ui.events
        .filter((e) => e.type === 'alert')
        .map((e) => (e.type === 'alert' ? e.message : ''));
      if (what === undefined) {
        expect(gas.authorizationPrompts).toEqual([]);
        expect(alerts.filter((a) => /needs your permission/.test(a))).toEqual([]);
        return;
      }
      expect(alerts[0]).toBe(permissionNeeded(what, [BOXES.sheets.screen]));
      expect(gas.authorizationPrompts).toEqual([
        expect.objectContaining({ scopes: expect.arrayContaining([GOOGLE.spreadsheets]) }),
      ]);
      expect(gas.authorizationPrompts[0].scopes).not.toContain(GOOGLE.scriptApp); // asks only for what is missing
      if (item === 'removeDapa') expect(alerts).toHaveLength(1); // asked before the confirmation, not after OK
    },
  );
});
