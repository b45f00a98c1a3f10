// The key stays its owner's: a server that repeats the request's Authorization header in its 401s (the sandbox's
// `echoKey`) never gets the key into a cell, a note, the sidebar, the background's reason, a log line, a cache or a
// property other than the key's own; cache keys are keyed digests, salted per user.
import { createHash } from 'node:crypto';
import { keySpellings, type SandboxConfig } from '../sandbox/handler';
import type { AppsScriptStandIn } from './harness';
import { useVirtualSandbox, virtualStandIn } from './support';
import type { VirtualSandbox } from '../sandbox/virtual';

const EXPIRED = 'lapsed-Secret/Key+0123456789';
const UNKNOWN = 'unknown-Secret-Key-9876543210';
/** A key with the characters servers and libraries escape (percent, HTML, JSON), for issue 45. */
const ESCAPED = `lapsed/Key+"01"&<23>'%41=\\x`;
const ECHO: SandboxConfig = {
  keys: { [EXPIRED]: { expired: true }, [ESCAPED]: { expired: true } },
  faults: { echoKey: true, echoKeySpellings: true },
};
const REMOVED = '[API key removed]';

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn;
useVirtualSandbox(ECHO, (s) => (sandbox = s));
afterEach(async () => {
  await gas?.close();
});

/** Every text the spreadsheet, the stores and the logs hold, apart from the key's own user property. */
function everythingKept(): string[] {
  const texts: string[] = [];
  for (const name of gas.sheet.sheetNames()) {
    const rows = Math.max(1, gas.sheet.lastRow(name));
    const columns = Math.max(1, gas.sheet.maxColumns(name));
    const values = gas.sheet.getValues(`'${name}'!A1:${columnLetter(columns)}${rows}`);
    values.forEach((line, r) =>
      line.forEach((value, c) => {
        texts.push(String(value));
        texts.push(gas.sheet.getNote(`'${name}'!${columnLetter(c + 1)}${r + 1}`));
      }),
    );
  }
  for (const [key, value] of Object.entries(gas.properties.user()))
    if (key !== 'dapa.apiKey') texts.push(key, value);
  for (const [key, value] of Object.entries(gas.properties.document())) texts.push(key, value);
  for (const cache of [gas.cache.document, gas.cache.script, gas.cache.user(gas.user)])
    for (const [key, entry] of cache.entries) texts.push(key, JSON.stringify(entry));
  texts.push(...gas.logs.map((l) => l.text));
  return texts;
}

function columnLetter(n: number): string {
  let out = '';
  for (let k = n; k > 0; k = Math.floor((k - 1) / 26)) out = String.fromCharCode(65 + ((k - 1) % 26)) + out;
  return out;
}

/** Whether a text holds the key in any spelling a server may send back. */
const holdsKey = (text: string, key: string) =>
  [key, key.replace(/\//g, '\\/'), encodeURIComponent(key), ...keySpellings(`Bearer ${key}`)].some((form) =>
    text.includes(form),
  );

describe('a server that repeats the key in its errors', () => {
  it.each([
    ['a lapsed plan', EXPIRED, /plan has expired/],
    ['a wrong key', UNKNOWN, /was rejected/],
    ['a key with characters servers escape, repeated in every spelling', ESCAPED, /plan has expired/],
  ])(
    '%s: the cell, the key test, the sidebar and background checks show its words without the key',
    async (_, key, what) => {
      gas = await virtualStandIn(sandbox, key, ECHO);
      gas.sheet.setValues('A2:A3', [['example.com'], ['example.org']]);
      const error = (await gas
        .runCustomFunction('=DAPA(A2:A3)', { cell: 'B2' })
        .catch((e: Error) => e)) as Error;
      expect(error.message).toMatch(what);
      // The server's own words stay (the user may need them), with the key taken out.
      expect(error.message).toContain(`request header Authorization: Bearer ${REMOVED}`);
      // Every spelling the server added (lower-case percent, +, HTML, JSON escapes, base64 of the header) went too.
      // (The base64 keeps what "Bearer " and the edges decide: a character or two, no stretch of the key.)
      expect(error.message).toContain(`as sent: ${new Array(5).fill(REMOVED).join(' ')} QmVhcmVyI`);
      expect(error.message).toMatch(/ QmVhcmVyI[A-Za-z0-9+/]?\[API key removed\][A-Za-z0-9+/]{0,2}=*\)/);
      expect(holdsKey(error.message, key)).toBe(false);

      const test = await gas.run<{ ok: boolean; message: string }>('testKey');
      expect(test.ok).toBe(false);
      expect(holdsKey(test.message, key)).toBe(false);

      gas.sheet.addSheet('Job');
      gas.sheet.setValues('Job!A1:A3', [['URL'], ['example.com'], ['example.net']]);
      gas.sheet.activate('Job');
      await gas.run('startJob', { source: 'column', column: 'A', headerRow: true });
      const job = await gas.run<{ status: string; message: string }>('continueJob');
      expect(job.status).toBe('error');
      expect(job.message).toContain(REMOVED);
      expect(holdsKey(job.message, key)).toBe(false);

      await gas.run('startBackground');
      await gas.edit('C2', '=DAPA(A2:A3)');
      await gas.runTriggers({ until: gas.clock.now() + 3_600_000 });
      const background = await gas.run<{ stopped?: string }>('getBackground');
      expect(background.stopped ?? '').not.toBe('');
      expect(holdsKey(background.stopped ?? '', key)).toBe(false);

      // The server did send it: what the add-on keeps and shows does not hold it anywhere.
      expect(sandbox.sandbox.stats()).toBeDefined();
      const leaks = everythingKept().filter((text) => holdsKey(text, key));
      expect(leaks).toEqual([]);
    },
  );
});

describe('cache keys', () => {
  it('are keyed digests with a per-user random salt: never the bare SHA-256 of the key', async () => {
    gas = await virtualStandIn(sandbox, EXPIRED, ECHO);
    gas.sheet.setValues('A2', [['example.com']]);
    await gas.runCustomFunction('=DAPA(A2)', { cell: 'B2' }).catch(() => undefined);
    const salt = gas.properties.user()['dapa.digestSalt'];
    expect(salt).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    const bare = (text: string) => createHash('sha256').update(text).digest('base64url');
    const kept = everythingKept().join('\n');
    for (const digest of [bare(EXPIRED), bare(`credits\n${EXPIRED}`)])
      expect({ digest, found: kept.includes(digest.replace(/=+$/, '')) }).toEqual({ digest, found: false });
  });
});

describe('saving a key in a bound copy that others can edit', () => {
  it('warns in the menu and the sidebar that its editors can read the key; alone, or as an add-on, it does not', async () => {
    gas = await virtualStandIn(sandbox, EXPIRED, ECHO);
    // Alone: no warning.
    gas.ui.respond({ button: 'OK', text: 'sandbox-premium' });
    await gas.run('promptApiKey');
    expect(gas.ui.events.at(-1)).toMatchObject({ type: 'alert' });
    expect(JSON.stringify(gas.ui.events.at(-1))).not.toMatch(/can read the key/);
    expect(
      await gas.run<{ sharedKeyWarning?: string }>('saveSettings', { apiKey: 'k-0123456789' }),
    ).not.toHaveProperty('sharedKeyWarning');
    // Shared with two editors.
    gas.shareWith('editor-1@example.com');
    gas.shareWith('editor-2@example.com');
    gas.ui.respond({ button: 'OK', text: 'sandbox-premium' });
    await gas.run('promptApiKey');
    expect(gas.ui.events.at(-1)).toMatchObject({
      type: 'alert',
      message: expect.stringContaining(
        'Anyone who can edit this spreadsheet (2 other people) can read the key',
      ),
    });
    const saved = await gas.run<{ sharedKeyWarning?: string }>('saveSettings', { apiKey: 'k-0123456789' });
    expect(saved.sharedKeyWarning).toMatch(/use the DAPA add-on/);
    // Saving only the server, or removing the key, is no reason to warn.
    expect(await gas.run('saveSettings', { environment: 'production' })).not.toHaveProperty(
      'sharedKeyWarning',
    );
    expect(await gas.run('saveSettings', { apiKey: '' })).not.toHaveProperty('sharedKeyWarning');
  });

  it("as an add-on, where the key lives in each person's own account, does not warn", async () => {
    gas = await virtualStandIn(sandbox, EXPIRED, ECHO, { installAs: 'addon' });
    gas.shareWith('editor-1@example.com');
    expect(await gas.run('saveSettings', { apiKey: 'k-0123456789' })).not.toHaveProperty('sharedKeyWarning');
  });
});

// Issue 45: the owner learns whenever others can reach the key of a bound copy, not only when saving it: as the
// sidebar opens (getSettings), and in the notices of the menu items that change what formulas spend; with the
// Spreadsheets box unticked DAPA says it could not check, and how to let it.
describe('sharing told when it happens', () => {
  const GOOGLE_AUTH = 'https://www.googleapis.com/auth/';
  const ALL = ['script.external_request', 'spreadsheets', 'script.container.ui', 'script.scriptapp'].map(
    (s) => GOOGLE_AUTH + s,
  );
  type Told = { sharedKeyWarning?: string };
  const toasts = () => gas.ui.events.flatMap((e) => (e.type === 'toast' ? [e.message] : []));

  it('a copy shared after the key was saved: the sidebar and the menu say so from then on', async () => {
    gas = await virtualStandIn(sandbox, EXPIRED, ECHO);
    expect(await gas.run<Told>('getSettings')).not.toHaveProperty('sharedKeyWarning');
    await gas.run('refreshDapaFormulas');
    expect(toasts().join('\n')).not.toMatch(/can read the key/);

    gas.shareWith('editor-1@example.com'); // shared later, without touching the key
    const told = await gas.run<Told>('getSettings');
    expect(told.sharedKeyWarning).toContain(
      'Anyone who can edit this spreadsheet (1 other person) can read the key',
    );
    expect(told.sharedKeyWarning).toContain('They can also spend your credits');
    expect(told.sharedKeyWarning).toContain('Google does not tell a formula who did');
    expect(told.sharedKeyWarning).toContain('"Anyone with the link"');
    await gas.run('refreshDapaFormulas');
    expect(toasts().at(-1)).toContain('(1 other person) can read the key');
  });

  it('no key saved, or an add-on: nothing to tell', async () => {
    gas = await virtualStandIn(sandbox, EXPIRED, ECHO);
    gas.shareWith('editor-1@example.com');
    await gas.run('saveSettings', { apiKey: '' });
    expect(await gas.run<Told>('getSettings')).not.toHaveProperty('sharedKeyWarning');
    await gas.close();
    gas = await virtualStandIn(sandbox, EXPIRED, ECHO, { installAs: 'addon' });
    gas.shareWith('editor-1@example.com');
    expect(await gas.run<Told>('getSettings')).not.toHaveProperty('sharedKeyWarning');
  });

  it('with the Spreadsheets box unticked it says it could not check, and how to let it', async () => {
    gas = await virtualStandIn(sandbox, EXPIRED, ECHO, {
      grantedScopes: ALL.filter((s) => !s.endsWith('/spreadsheets')),
    });
    const told = await gas.run<Told>('getSettings');
    expect(told.sharedKeyWarning).toMatch(/^DAPA could not check who can edit this spreadsheet/);
    expect(told.sharedKeyWarning).toContain('Refresh DAPA formulas and tick that box');
    // Saving a key from the menu says it too, after the key test.
    gas.ui.respond({ button: 'OK', text: 'sandbox-premium' });
    await gas.run('promptApiKey');
    expect(gas.ui.events.at(-1)).toMatchObject({
      type: 'alert',
      message: expect.stringContaining('DAPA could not check who can edit this spreadsheet'),
    });
  });
});
