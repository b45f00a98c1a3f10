// The Apps Script stand-in itself: the limits it enforces and the behaviours of Apps Script it reproduces, checked
// with small scripts so that the suites above can trust it.
import { startSandbox } from '../sandbox/server';
import { type AppsScriptStandIn, loadAppsScript } from './harness';

const SCRIPT = `
/** @customfunction */
function SLOW() { Utilities.sleep(20000); Utilities.sleep(20000); return 1; }
/** @customfunction */
function SPIN() { console.log('spinning'); for (;;) {} }
/** @customfunction */
function WRITE() { SpreadsheetApp.getActiveSheet().getRange('Z1').setValue(1); return 1; }
/** @customfunction */
function UI() { SpreadsheetApp.getUi(); return 1; }
/** @customfunction */
function WHO() { return Session.getActiveUser().getEmail() === '' ? 'nobody' : 'someone'; }
/** @customfunction */
function GRID() { return [[1, 2], [3, 4]]; }
function stubborn() { for (;;) { try { Utilities.sleep(100000); } catch (e) {} } }
function globals() {
  return ['setTimeout', 'setInterval', 'fetch', 'URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'atob', 'btoa',
    'process', 'require', 'Buffer', 'module', 'structuredClone'].filter(function (n) { return typeof globalThis[n] !== 'undefined'; });
}
function now() { return Date.now(); }
function plain(n) { return n * 2; }
function private_(n) { return n * 2; }
function cacheTry(what) {
  var cache = CacheService.getScriptCache();
  try {
    if (what === 'longKey') cache.put(new Array(252).join('k'), 'v');
    if (what === 'bigValue') cache.put('k', new Array(100 * 1024 + 2).join('v'));
    if (what === 'longLife') cache.put('k', 'v', 21601);
    if (what === 'ok') { cache.putAll({ a: '1', b: '2' }, 21600); return JSON.stringify(cache.getAll(['a', 'b', 'c'])); }
    if (what === 'default') { cache.put('d', 'v'); return 'stored'; }
    if (what === 'read') return String(cache.get('d'));
    return 'no error';
  } catch (e) { return e.name + ': ' + e.message; }
}
function propertyTry(what) {
  var props = PropertiesService.getScriptProperties();
  try {
    if (what === 'bigValue') props.setProperty('k', new Array(9 * 1024 + 2).join('v'));
    if (what === 'quota') { for (var i = 0; i < 60; i++) props.setProperty('k' + i, new Array(9000).join('v')); }
    return 'no error';
  } catch (e) { return e.message; }
}
function userProps() { return PropertiesService.getUserProperties().getKeys(); }
function counter(useLock) {
  var lock = LockService.getScriptLock();
  if (useLock) lock.waitLock(20000);
  var props = PropertiesService.getScriptProperties();
  var n = Number(props.getProperty('n') || 0);
  Utilities.sleep(150);
  props.setProperty('n', String(n + 1));
  if (useLock) lock.releaseLock();
  return n + 1;
}
function typed() {
  SpreadsheetApp.getActiveSheet().getRange('A1:F1').setValues([['=1+1', "'=1+1", '+cmd', '12', 'TRUE', "'-3"]]);
}
function fetchStatus(url, mute) {
  try {
    return UrlFetchApp.fetch(url, { method: 'post', payload: '{}', contentType: 'application/json', muteHttpExceptions: mute }).getResponseCode();
  } catch (e) { return e.message; }
}
function digest() {
  return Utilities.base64EncodeWebSafe(Utilities.computeDigest(Utilities.DigestAlgorithm.SHA_256, 'abc', Utilities.Charset.UTF_8));
}
`;

describe('the Apps Script stand-in', () => {
  let gas: AppsScriptStandIn;
  afterEach(async () => {
    await gas.close();
  });

  it('stops a custom function at 30 seconds: the cell shows #ERROR! "Exceeded maximum execution time"', async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    await expect(gas.runCustomFunction('=SLOW()', { cell: 'A1' })).rejects.toThrow(
      'Exceeded maximum execution time',
    );
    expect(gas.sheet.getDisplayValues('A1')).toEqual([['#ERROR!']]);
    expect(gas.executions[0]).toMatchObject({ functionName: 'SLOW', status: 'killed' });
    // the virtual clock is real time plus an offset, so a millisecond or two of real time may show
    expect(gas.executions[0].elapsedMs).toBeGreaterThanOrEqual(30_000);
    expect(gas.executions[0].elapsedMs).toBeLessThan(30_100);
  });

  it('stops a busy loop at its limit too', async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    const result = gas.runCustomFunction('=SPIN()', { cell: 'A1' });
    // Time passes beyond the limit once the loop runs (it says so first): a wait on the script, not on real time.
    let settled = false;
    void result.then(
      () => (settled = true),
      () => (settled = true),
    );
    const spinning = () => gas.logs.some((line) => line.text.includes('spinning'));
    while (!spinning() && !settled) await new Promise((r) => setImmediate(r));
    expect(spinning()).toBe(true);
    gas.clock.advance(31_000);
    await expect(result).rejects.toThrow('Exceeded maximum execution time');
  });

  it('ends an execution at 6 minutes even when its code catches the error', async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    await expect(gas.run('stubborn')).rejects.toThrow('Exceeded maximum execution time');
    expect(gas.executions[0]).toMatchObject({ status: 'killed' });
    expect(gas.executions[0].elapsedMs).toBeGreaterThanOrEqual(360_000);
    expect(gas.executions[0].elapsedMs).toBeLessThan(360_100);
  });

  it("gives the script a realm without Node's globals, and a clock that follows the stand-in's", async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    expect(await gas.run('globals')).toEqual([]);
    const before = await gas.run<number>('now');
    gas.clock.advance(86_400_000);
    expect((await gas.run<number>('now')) - before).toBeGreaterThanOrEqual(86_400_000);
    expect(await gas.run('digest')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0=');
  });

  it('enforces the cache limits: 250-character keys, 100 KB values, 6-hour expiration, 10-minute default', async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    expect(await gas.run('cacheTry', 'longKey')).toBe('Exception: Argument too large: key');
    expect(await gas.run('cacheTry', 'bigValue')).toBe('Exception: Argument too large: value');
    expect(await gas.run('cacheTry', 'longLife')).toMatch(
      /^Exception: Invalid argument: expirationInSeconds/,
    );
    expect(await gas.run('cacheTry', 'ok')).toBe('{"a":"1","b":"2"}');
    expect(await gas.run('cacheTry', 'default')).toBe('stored');
    gas.clock.advance(599_000);
    expect(await gas.run('cacheTry', 'read')).toBe('v');
    gas.clock.advance(2_000);
    expect(await gas.run('cacheTry', 'read')).toBe('null');
  });

  it('enforces the property limits: 9 KB a value, 500 KB a store', async () => {
    gas = await loadAppsScript({ code: SCRIPT });
    expect(await gas.run('propertyTry', 'bigValue')).toBe('Argument too large: value');
    expect(await gas.run('propertyTry', 'quota')).toBe(
      'You have exceeded the property storage quota. Please remove some properties and try again.',
    );
  });

  it('keeps custom functions read-only, without UI, and anonymous', async () => {
    gas = await loadAppsScript({ code: SCRIPT });
    await expect(gas.runCustomFunction('=WRITE()', { cell: 'A1' })).rejects.toThrow(
      'You do not have permission to call setValue',
    );
    expect(gas.sheet.getValues('Z1')).toEqual([['']]);
    await expect(gas.runCustomFunction('=UI()', { cell: 'A2' })).rejects.toThrow(
      'Cannot call SpreadsheetApp.getUi() from this context.',
    );
    expect(await gas.runCustomFunction('=WHO()', { cell: 'A3' })).toEqual([['nobody']]);
  });

  it('refuses properties in AuthMode.NONE', async () => {
    gas = await loadAppsScript({ code: SCRIPT });
    await expect(gas.runWithAuthMode('NONE', 'userProps')).rejects.toThrow(
      'You do not have permission to call PropertiesService.getUserProperties',
    );
    expect(await gas.run('userProps')).toEqual([]);
  });

  it('runs executions side by side, and LockService really excludes them', async () => {
    gas = await loadAppsScript({ code: SCRIPT });
    await Promise.all([1, 2, 3, 4].map(() => gas.run('counter', false)));
    const unlocked = Number(gas.properties.script().n);
    expect(unlocked).toBeLessThan(4); // lost updates: the four ran at the same time
    await Promise.all([1, 2, 3, 4].map(() => gas.run('counter', true)));
    expect(Number(gas.properties.script().n)).toBe(unlocked + 4);
  });

  it('reads written values as Sheets does: "=" makes a formula, a leading apostrophe keeps text', async () => {
    gas = await loadAppsScript({ code: SCRIPT });
    await gas.run('typed');
    expect(gas.sheet.getFormulas('A1:F1')).toEqual([['=1+1', '', '=+cmd', '', '', '']]);
    expect(gas.sheet.getValues('B1:F1')).toEqual([['=1+1', '#NAME?', 12, true, '-3']]);
  });

  it('runs any top-level function of the script from a cell (Google: @customfunction only lists it), never a private one', async () => {
    gas = await loadAppsScript({ code: SCRIPT });
    await gas.edit('A1', '=plain(21)');
    await gas.edit('A2', '=private_(21)');
    expect(gas.sheet.getValues('A1:A2')).toEqual([[42], ['#NAME?']]);
  });

  it('spills an array result, and shows #REF! when it would overwrite data', async () => {
    gas = await loadAppsScript({ code: SCRIPT });
    expect(await gas.runCustomFunction('=GRID()', { cell: 'B2' })).toEqual([
      [1, 2],
      [3, 4],
    ]);
    gas.sheet.setValues('C3', [['mine']]);
    await gas.recalculate();
    expect(gas.sheet.getDisplayValues('B2')).toEqual([['#REF!']]);
    expect(gas.sheet.getNote('B2')).toBe(
      'Array result was not expanded because it would overwrite data in C3.',
    );
  });

  it('fetches over real HTTP and throws on an HTTP error unless muteHttpExceptions is set', async () => {
    const sandbox = await startSandbox({ port: 0 });
    try {
      gas = await loadAppsScript({ code: SCRIPT });
      const url = `${sandbox.url}/api/user/dapa-checker`;
      expect(await gas.run('fetchStatus', url, true)).toBe(401);
      expect(await gas.run('fetchStatus', url, false)).toMatch(
        new RegExp(
          `^Request failed for ${url} returned code 401\\. Truncated server response: .*incorrect API key provided`,
        ),
      );
      expect(await gas.run('fetchStatus', 'http://127.0.0.1:9/x', true)).toBe(
        'Address unavailable: http://127.0.0.1:9/x',
      );
    } finally {
      await sandbox.close();
    }
  });
});
