// The stand-in as Google publishes an Editor add-on (issue 19), checked with small scripts: several spreadsheets,
// the document each execution runs in (none in an add-on's time-driven trigger), openById and its scope, declared
// and granted scopes (granular consent, requireScopes), developer metadata, and executions that overlap during
// another's sleep, fetch or lock wait, with locks that exclude across users and one document lock per document.
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AppsScriptStandIn,
  DEFAULT_SPREADSHEET_ID,
  DIST_DIR,
  loadAppsScript,
  type LoadOptions,
  SCOPES,
} from './harness';
import { ADD_ON_TOO_MANY_CLOCK_MESSAGE, documentMissingMessage } from './standin/limits';
import { AUTHORIZATION_REQUIRED_MESSAGE, missingScopeMessage } from './standin/scopes';

const SCRIPT = `
function log(line) {
  var props = PropertiesService.getScriptProperties();
  var all = JSON.parse(props.getProperty('log') || '[]');
  all.push(line);
  props.setProperty('log', JSON.stringify(all));
}
function context() {
  var ss = SpreadsheetApp.getActiveSpreadsheet();
  var ui = 'ok';
  try { SpreadsheetApp.getUi(); } catch (e) { ui = e.message; }
  return {
    spreadsheet: ss ? ss.getId() : null,
    documentProperties: PropertiesService.getDocumentProperties() === null ? null : 'store',
    documentCache: CacheService.getDocumentCache() === null ? null : 'cache',
    documentLock: LockService.getDocumentLock() === null ? null : 'lock',
    ui: ui,
  };
}
function recordContext() { PropertiesService.getScriptProperties().setProperty('context', JSON.stringify(context())); }
function hourly() { return ScriptApp.newTrigger('recordContext').timeBased().everyHours(1).create().getUniqueId(); }
function watchEdits() {
  return ScriptApp.newTrigger('edited').forSpreadsheet(SpreadsheetApp.getActive()).onEdit().create().getUniqueId();
}
function edited(e) { log('edit in ' + SpreadsheetApp.getActiveSpreadsheet().getId() + ' ' + e.a1); }
function setDocProp(k, v) { PropertiesService.getDocumentProperties().setProperty(k, v); }
function open(id) {
  var ss = SpreadsheetApp.openById(id);
  ss.getSheets()[0].getRange('C3').setValue('written by id');
  return { id: ss.getId(), name: ss.getName(), url: ss.getUrl(), a1: ss.getSheets()[0].getRange('A1').getValue() };
}
function openByUrl(url) { return SpreadsheetApp.openByUrl(url).getId(); }
function openThenContext(id) { SpreadsheetApp.openById(id); recordContext(); }
function openFromClock() { ScriptApp.newTrigger('openThenContextOfStored').timeBased().everyHours(1).create(); }
function openThenContextOfStored() {
  openThenContext(PropertiesService.getScriptProperties().getProperty('target'));
}
function setTarget(id) { PropertiesService.getScriptProperties().setProperty('target', id); }
function fetchIt(url) { return UrlFetchApp.fetch(url).getContentText(); }
function triggers() { return ScriptApp.getProjectTriggers().length; }
function showUi() { SpreadsheetApp.getUi(); return 'shown'; }
function authInfo(scopes) {
  var info = scopes ? ScriptApp.getAuthorizationInfo(ScriptApp.AuthMode.FULL, scopes)
                    : ScriptApp.getAuthorizationInfo(ScriptApp.AuthMode.FULL);
  return { status: info.getAuthorizationStatus(), url: info.getAuthorizationUrl(), scopes: info.getAuthorizedScopes(),
           required: info.getAuthorizationStatus() === ScriptApp.AuthorizationStatus.REQUIRED };
}
function needTriggers() {
  try {
    ScriptApp.requireScopes(ScriptApp.AuthMode.FULL, ['${SCOPES.scriptApp}']);
  } catch (e) {
    log('caught ' + e.message);
  }
  log('went on');
  return 'granted';
}
function needAll() { ScriptApp.requireAllScopes(ScriptApp.AuthMode.FULL); return 'all granted'; }
function meta() {
  var ss = SpreadsheetApp.getActive();
  ss.addDeveloperMetadata('settings', '{"a":1}');
  ss.addDeveloperMetadata('tag');
  ss.addDeveloperMetadata('hidden', 'x', SpreadsheetApp.DeveloperMetadataVisibility.PROJECT);
  var found = ss.createDeveloperMetadataFinder().withKey('settings').find();
  found[0].setValue('{"a":2}');
  ss.createDeveloperMetadataFinder().withKey('tag').find()[0].remove();
  return ss.getDeveloperMetadata().map(function (m) {
    return [m.getId(), m.getKey(), m.getValue(), m.getVisibility()];
  });
}
function bigMeta(n) { SpreadsheetApp.getActive().addDeveloperMetadata('big', new Array(n + 1).join('x')); }
/** @customfunction */
function SETTINGS() {
  var ss = SpreadsheetApp.getActiveSpreadsheet();
  var found = ss.createDeveloperMetadataFinder().withKey('settings').find();
  var read = found.length ? found[0].getValue() : 'none';
  try { found[0].setValue('changed'); return read + '; wrote'; } catch (e) { return read + '; ' + e.message; }
}
/** @customfunction */
function ECHO(x) { return x + ' in ' + SpreadsheetApp.getActiveSpreadsheet().getName(); }
/** @customfunction */
function FETCHED(url) { return UrlFetchApp.fetch(url).getContentText(); }
/** @customfunction */
function OPENS(id) { try { return SpreadsheetApp.openById(id).getName(); } catch (e) { return e.message; } }
function slowStep(name) {
  log(name + ' start ' + Date.now());
  Utilities.sleep(60000);
  log(name + ' end ' + Date.now());
}
function slowFetch(name, url) {
  log(name + ' start ' + Date.now());
  UrlFetchApp.fetch(url);
  log(name + ' end ' + Date.now());
}
function hourlySlow() { ScriptApp.newTrigger('slowTrigger').timeBased().everyHours(1).create(); }
function slowTrigger() { slowStep('T'); }
function quick(name) { log(name + ' at ' + Date.now()); return Date.now(); }
function holdDocLock(name, ms) {
  var lock = LockService.getDocumentLock();
  lock.waitLock(300000);
  log(name + ' locked ' + Date.now());
  Utilities.sleep(ms);
  log(name + ' unlocks ' + Date.now());
  lock.releaseLock();
}
function tryDocLock(name) { log(name + ' tryLock ' + LockService.getDocumentLock().tryLock(0)); }
function holdUserLock(name, ms) {
  var lock = LockService.getUserLock();
  lock.waitLock(300000);
  log(name + ' user-locked ' + Date.now());
  Utilities.sleep(ms);
  lock.releaseLock();
}
`;

let gas: AppsScriptStandIn;
afterEach(async () => {
  await gas?.close();
});

const ALL = Object.values(SCOPES);
const load = (options: LoadOptions = {}) =>
  loadAppsScript({ code: SCRIPT, clock: 'virtual', oauthScopes: ALL, triggerDelayMs: 0, ...options });
const HOUR = 3_600_000;
const logOf = () => JSON.parse(gas.properties.script().log ?? '[]') as string[];
const contextOf = () => JSON.parse(gas.properties.script().context ?? 'null') as Record<string, unknown>;

describe('several spreadsheets', () => {
  it('keeps each spreadsheet its own cells, document properties and formulas; a change recalculates only its own', async () => {
    gas = await load();
    const second = gas.addSpreadsheet('Second');
    expect(gas.spreadsheetIds).toEqual([DEFAULT_SPREADSHEET_ID, second]);
    gas.sheet.setValues('A1', [['first']]);
    await gas.edit('B1', '=ECHO(A1)');
    await gas.run('setDocProp', 'where', 'default');
    gas.useSpreadsheet(second);
    expect(gas.spreadsheetId).toBe(second);
    expect(gas.sheet.getValues('A1')).toEqual([['']]);
    gas.sheet.setValues('A1', [['second']]);
    await gas.edit('B1', '=ECHO(A1)');
    await gas.run('setDocProp', 'where', 'second');
    expect(gas.sheet.getValues('B1')).toEqual([['second in Second']]);
    expect(gas.properties.document()).toEqual({ where: 'second' });
    expect(gas.properties.document(DEFAULT_SPREADSHEET_ID)).toEqual({ where: 'default' });

    const runsIn = (id: string) =>
      gas.executions.filter((e) => e.functionName === 'ECHO' && e.spreadsheetId === id).length;
    const before = { first: runsIn(DEFAULT_SPREADSHEET_ID), second: runsIn(second) };
    await gas.edit('A1', 'changed');
    expect(gas.sheet.getValues('B1')).toEqual([['changed in Second']]);
    expect(runsIn(second)).toBe(before.second + 1);
    expect(runsIn(DEFAULT_SPREADSHEET_ID)).toBe(before.first);
    gas.useSpreadsheet(DEFAULT_SPREADSHEET_ID);
    expect(gas.sheet.getValues('B1')).toEqual([['first in DAPA stand-in']]);
  });
});

describe('the document each execution runs in', () => {
  it('an edit trigger fires only for edits in the spreadsheet it was created for, and runs in it', async () => {
    gas = await load({ installAs: 'addon' });
    const second = gas.addSpreadsheet('Second');
    gas.useSpreadsheet(second);
    await gas.run('watchEdits');
    await gas.edit('A1', 'x');
    gas.useSpreadsheet(DEFAULT_SPREADSHEET_ID);
    await gas.edit('A1', 'y');
    expect(logOf()).toEqual([`edit in ${second} A1`]);
    // One edit trigger per user per document: another document may have its own.
    await gas.run('watchEdits');
    expect(gas.triggers.filter((t) => t.kind === 'ON_EDIT')).toHaveLength(2);
  });

  it("a bound script's time-driven trigger runs in the bound spreadsheet", async () => {
    gas = await load();
    gas.useSpreadsheet(gas.addSpreadsheet());
    await gas.run('hourly');
    await gas.runTriggers({ until: gas.clock.now() + HOUR });
    expect(contextOf()).toEqual({
      spreadsheet: DEFAULT_SPREADSHEET_ID,
      documentProperties: 'store',
      documentCache: 'cache',
      documentLock: 'lock',
      ui: 'Cannot call SpreadsheetApp.getUi() from this context.',
    });
  });

  it("an add-on's time-driven trigger has no document: active spreadsheet, document stores and lock are null", async () => {
    gas = await load({ installAs: 'addon' });
    expect(await gas.run('context')).toEqual({
      spreadsheet: DEFAULT_SPREADSHEET_ID,
      documentProperties: 'store',
      documentCache: 'cache',
      documentLock: 'lock',
      ui: 'ok',
    });
    await gas.run('hourly');
    await gas.runTriggers({ until: gas.clock.now() + HOUR });
    expect(contextOf()).toEqual({
      spreadsheet: null,
      documentProperties: null,
      documentCache: null,
      documentLock: null,
      ui: 'Cannot call SpreadsheetApp.getUi() from this context.',
    });
    expect(gas.executions.find((e) => e.kind === 'trigger')?.spreadsheetId).toBeNull();
  });
});

describe('SpreadsheetApp.openById / openByUrl', () => {
  it('needs the full spreadsheets scope in the manifest: with spreadsheets.currentonly it throws Google’s error', async () => {
    gas = await load({ oauthScopes: ALL.filter((s) => s !== SCOPES.spreadsheets) });
    const other = gas.addSpreadsheet('Other');
    await expect(gas.run('open', other)).rejects.toThrow(
      'You do not have permission to call SpreadsheetApp.openById. Required permissions: https://www.googleapis.com/auth/spreadsheets',
    );
    // The current document still works with currentonly.
    expect(await gas.run('context')).toMatchObject({ spreadsheet: DEFAULT_SPREADSHEET_ID });
  });

  it('needs it granted too, and then opens the spreadsheet like the active one', async () => {
    gas = await load();
    const other = gas.addSpreadsheet('Other');
    gas.useSpreadsheet(other);
    gas.sheet.setValues('A1', [['hello']]);
    gas.useSpreadsheet(DEFAULT_SPREADSHEET_ID);
    gas.revokeScopes('owner@example.com', [SCOPES.spreadsheets]);
    await expect(gas.run('open', other)).rejects.toThrow(
      missingScopeMessage('SpreadsheetApp.openById', [SCOPES.spreadsheets]),
    );
    gas.grantScopes('owner@example.com', [SCOPES.spreadsheets]);
    expect(await gas.run('open', other)).toEqual({
      id: other,
      name: 'Other',
      url: `https://docs.google.com/spreadsheets/d/${other}/edit`,
      a1: 'hello',
    });
    gas.useSpreadsheet(other);
    expect(gas.sheet.getValues('C3')).toEqual([['written by id']]);
    expect(await gas.run('openByUrl', `https://docs.google.com/spreadsheets/d/${other}/edit#gid=0`)).toBe(
      other,
    );
  });

  it("fails with Google's text for an unknown or deleted spreadsheet and for a user whose access was revoked", async () => {
    gas = await load();
    const other = gas.addSpreadsheet();
    await expect(gas.run('open', '1NoSuchSpreadsheet')).rejects.toThrow(
      documentMissingMessage('1NoSuchSpreadsheet'),
    );
    gas.revokeAccess(other, 'editor@example.com');
    await expect(gas.asUser('editor@example.com').run('open', other)).rejects.toThrow(
      documentMissingMessage(other),
    );
    await expect(gas.asUser('owner@example.com').run('open', other)).resolves.toMatchObject({ id: other });
    gas.deleteSpreadsheet(other);
    await expect(gas.run('open', other)).rejects.toThrow(documentMissingMessage(other));
  });

  it('does not make the opened spreadsheet the current document (an add-on clock trigger still has none)', async () => {
    gas = await load({ installAs: 'addon' });
    const other = gas.addSpreadsheet();
    await gas.run('setTarget', other);
    await gas.run('openFromClock');
    await gas.runTriggers({ until: gas.clock.now() + HOUR });
    expect(gas.executions.filter((e) => e.kind === 'trigger').map((e) => e.status)).toEqual(['ok']);
    expect(contextOf()).toMatchObject({ spreadsheet: null, documentProperties: null, documentLock: null });
  });

  it('is refused to custom functions', async () => {
    gas = await load();
    const other = gas.addSpreadsheet('Other');
    expect(await gas.runCustomFunction(`=OPENS("${other}")`)).toEqual([
      ['You do not have permission to call SpreadsheetApp.openById'],
    ]);
  });
});

/** A local HTTP server answering "pong" (for UrlFetchApp). */
async function pongServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.end('pong'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('scopes: declared by the manifest, granted per user', () => {
  let pong: Awaited<ReturnType<typeof pongServer>>;
  beforeAll(async () => {
    pong = await pongServer();
  });
  afterAll(async () => {
    await pong.close();
  });

  it('reads the declared scopes from the manifest and grants them all by default', async () => {
    gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual' });
    const manifest = JSON.parse(fs.readFileSync(path.join(DIST_DIR, 'appsscript.json'), 'utf8')) as {
      oauthScopes: string[];
    };
    expect(gas.declaredScopes).toEqual(manifest.oauthScopes);
    expect(gas.declaredScopes).toContain(SCOPES.spreadsheets);
    expect(gas.grantedScopes('anyone@example.com')).toEqual(gas.declaredScopes);
  });

  it("throws Google's permission error for each service whose scope the user did not grant", async () => {
    gas = await load({ grantedScopes: [SCOPES.spreadsheetsCurrentOnly] });
    await expect(gas.run('fetchIt', pong.url)).rejects.toThrow(
      missingScopeMessage('UrlFetchApp.fetch', [SCOPES.externalRequest]),
    );
    await expect(gas.run('triggers')).rejects.toThrow(
      missingScopeMessage('ScriptApp.getProjectTriggers', [SCOPES.scriptApp]),
    );
    await expect(gas.run('hourly')).rejects.toThrow(
      missingScopeMessage('ScriptApp.newTrigger', [SCOPES.scriptApp]),
    );
    await expect(gas.run('showUi')).rejects.toThrow(
      missingScopeMessage('SpreadsheetApp.getUi', [SCOPES.containerUi]),
    );
    expect(await gas.run('context')).toMatchObject({ spreadsheet: DEFAULT_SPREADSHEET_ID });
    gas.revokeScopes('owner@example.com', [SCOPES.spreadsheetsCurrentOnly]);
    await expect(gas.run('context')).rejects.toThrow(
      missingScopeMessage('SpreadsheetApp.getActiveSpreadsheet', [SCOPES.spreadsheetsCurrentOnly]),
    );
    // Another user granted everything.
    gas.grantScopes('editor@example.com', ALL);
    expect(await gas.asUser('editor@example.com').run('fetchIt', pong.url)).toBe('pong');
    // A custom function runs without the user's authorization and may fetch.
    gas.asUser('owner@example.com');
    expect(await gas.runCustomFunction(`=FETCHED("${pong.url}")`)).toEqual([['pong']]);
  });

  it('getAuthorizationInfo tells what is missing; requireScopes ends the execution with a prompt until granted', async () => {
    gas = await load({ grantedScopes: [SCOPES.spreadsheetsCurrentOnly, SCOPES.externalRequest] });
    const info = await gas.run<{ status: string; url: string | null; scopes: string[]; required: boolean }>(
      'authInfo',
    );
    expect(info.status).toBe('REQUIRED');
    expect(info.required).toBe(true);
    expect(info.url).toMatch(/^https:\/\//);
    expect(info.scopes.sort()).toEqual([SCOPES.externalRequest, SCOPES.spreadsheetsCurrentOnly].sort());
    expect(await gas.run('authInfo', [SCOPES.externalRequest])).toEqual({
      status: 'NOT_REQUIRED',
      url: null,
      scopes: [SCOPES.externalRequest],
      required: false,
    });

    await expect(gas.run('needTriggers')).rejects.toThrow(AUTHORIZATION_REQUIRED_MESSAGE);
    expect(logOf()).toEqual([]); // ended: neither the catch nor the rest ran
    expect(gas.authorizationPrompts).toEqual([
      expect.objectContaining({
        user: 'owner@example.com',
        scopes: [SCOPES.scriptApp],
        kind: 'server',
        functionName: 'needTriggers',
        spreadsheetId: DEFAULT_SPREADSHEET_ID,
      }),
    ]);
    gas.grantScopes('owner@example.com', [SCOPES.scriptApp]);
    expect(await gas.run('needTriggers')).toBe('granted');
    expect(logOf()).toEqual(['went on']);
    await expect(gas.run('needAll')).rejects.toThrow(AUTHORIZATION_REQUIRED_MESSAGE);
    expect(gas.authorizationPrompts[1].scopes.sort()).toEqual(
      [SCOPES.containerUi, SCOPES.spreadsheets].sort(),
    );
  });
});

describe('developer metadata', () => {
  it('adds, finds, changes and removes metadata on the spreadsheet it was added to', async () => {
    gas = await load();
    const other = gas.addSpreadsheet();
    expect(await gas.run('meta')).toEqual([
      [1, 'settings', '{"a":2}', 'DOCUMENT'],
      [3, 'hidden', 'x', 'PROJECT'],
    ]);
    expect(gas.developerMetadata().map((m) => m.key)).toEqual(['settings', 'hidden']);
    expect(gas.developerMetadata(other)).toEqual([]);
  });

  it('enforces the 30,000-character limit and lets custom functions read, not write', async () => {
    gas = await load();
    await gas.run('bigMeta', 29_997);
    await expect(gas.run('bigMeta', 10)).rejects.toThrow(/at most 30000 characters/);
    gas.useSpreadsheet(gas.addSpreadsheet());
    await gas.run('meta');
    expect(await gas.runCustomFunction('=SETTINGS()')).toEqual([
      ['{"a":2}; You do not have permission to call setValue'],
    ]);
  });
});

describe('executions that run at the same time', () => {
  it("runs another user's call during a trigger's Utilities.sleep, on the virtual clock", async () => {
    gas = await load({ installAs: 'addon' });
    const t0 = gas.clock.now();
    await gas.run('log', 'begin');
    const [, at] = await Promise.all([
      gas.runWith({ user: 'a@example.com' }, 'slowStep', 'A'),
      gas.runWith({ user: 'b@example.com', at: t0 + 10_000 }, 'quick', 'B'),
    ]);
    const lines = logOf().slice(1);
    expect(lines.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['A start', 'B at', 'A end']);
    expect((at as number) - t0).toBeGreaterThanOrEqual(10_000);
    // The virtual clock still carries the real time the machine takes (a few ms, more under load).
    expect((at as number) - t0).toBeLessThan(13_000);
    expect(gas.clock.now() - t0).toBeLessThan(65_000);
  });

  it('runs a call during a trigger step that is waiting for the network', async () => {
    const pong = await pongServer();
    try {
      gas = await load({ installAs: 'addon', virtualLatencyMs: 30_000 });
      const t0 = gas.clock.now();
      await Promise.all([
        gas.runWith({ user: 'a@example.com' }, 'slowFetch', 'A', pong.url),
        gas.runWith({ user: 'b@example.com', at: t0 + 5_000 }, 'quick', 'B'),
      ]);
      expect(logOf().map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['A start', 'B at', 'A end']);
      expect(gas.clock.now() - t0).toBeLessThan(34_000);
    } finally {
      await pong.close();
    }
  });

  it('runs beside runTriggers: a sidebar call of another user while the trigger step sleeps', async () => {
    gas = await load({ installAs: 'addon' });
    await gas.run('hourlySlow');
    const due = gas.triggers[0].dueAt as number;
    await Promise.all([
      gas.runTriggers({ until: due + 1000 }),
      gas.runWith({ user: 'b@example.com', at: due + 30_000 }, 'quick', 'B'),
    ]);
    expect(logOf().map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['T start', 'B at', 'T end']);
  });

  it('lets a document lock exclude other users in that document only; a user lock excludes only that user', async () => {
    gas = await load();
    const other = gas.addSpreadsheet();
    const t0 = gas.clock.now();
    await Promise.all([
      gas.runWith({ user: 'a@example.com' }, 'holdDocLock', 'A', 60_000),
      gas.runWith({ user: 'b@example.com', at: t0 + 1000 }, 'tryDocLock', 'B-same-doc'),
      gas.runWith(
        { user: 'c@example.com', at: t0 + 2000, spreadsheetId: other },
        'tryDocLock',
        'C-other-doc',
      ),
      gas.runWith({ user: 'd@example.com', at: t0 + 3000 }, 'holdDocLock', 'D', 0),
    ]);
    const lines = logOf().map((l) => l.replace(/ \d+$/, ''));
    expect(lines).toEqual([
      'A locked',
      'B-same-doc tryLock false',
      'C-other-doc tryLock true',
      'A unlocks',
      'D locked',
      'D unlocks',
    ]);
    const lockedAt = (name: string) =>
      Number(
        logOf()
          .find((l) => l.startsWith(`${name} locked`))
          ?.split(' ')[2],
      );
    expect(lockedAt('D') - lockedAt('A')).toBeGreaterThanOrEqual(60_000);

    await gas.run('log', '---');
    const t1 = gas.clock.now();
    await Promise.all([
      gas.runWith({ user: 'a@example.com' }, 'holdUserLock', 'A1', 30_000),
      gas.runWith({ user: 'b@example.com', at: t1 + 1000 }, 'holdUserLock', 'B1', 0),
      gas.runWith({ user: 'a@example.com', at: t1 + 2000 }, 'holdUserLock', 'A2', 0),
    ]);
    const after = logOf().slice(logOf().indexOf('---') + 1);
    const at = (name: string) => Number(after.find((l) => l.startsWith(name))?.split(' ')[2]) - t1;
    expect(at('B1')).toBeLessThan(5_000);
    expect(at('A2')).toBeGreaterThanOrEqual(30_000);
  });

  it('repeats: the same overlapping runs give the same order, at the same stand-in times', async () => {
    const once = async () => {
      gas = await load({ installAs: 'addon' });
      const t0 = gas.clock.now();
      await Promise.all([
        gas.runWith({ user: 'a@example.com' }, 'slowStep', 'A'),
        gas.runWith({ user: 'b@example.com', at: t0 + 20_000 }, 'slowStep', 'B'),
        gas.runWith({ user: 'c@example.com', at: t0 + 20_000 }, 'quick', 'C'),
      ]);
      const lines = logOf().map((l) => {
        const [name, what, time] = l.split(' ');
        return { line: `${name} ${what}`, s: (Number(time) - t0) / 1000 };
      });
      await gas.close();
      return lines;
    };
    const expected = [
      ['A start', 0],
      ['B start', 20],
      ['C at', 20],
      ['A end', 60],
      ['B end', 80],
    ] as const;
    for (const run of [await once(), await once()]) {
      expect(run.map((r) => r.line)).toEqual(expected.map(([line]) => line));
      // Stand-in seconds, give or take the real time the machine takes (the virtual clock carries it).
      run.forEach((r, i) => {
        expect(r.s).toBeGreaterThanOrEqual(expected[i][1]);
        expect(r.s).toBeLessThan(expected[i][1] + 3);
      });
    }
  });
});

describe('the add-on one-trigger rule across documents', () => {
  it("'user' (default): one time-driven trigger per user across all documents; edit triggers per document", async () => {
    gas = await load({ installAs: 'addon' });
    await gas.run('hourly');
    gas.useSpreadsheet(gas.addSpreadsheet());
    await expect(gas.run('hourly')).rejects.toThrow(ADD_ON_TOO_MANY_CLOCK_MESSAGE);
    await gas.run('watchEdits');
    gas.useSpreadsheet(DEFAULT_SPREADSHEET_ID);
    await gas.run('watchEdits');
    expect(gas.triggers.map((t) => t.kind).sort()).toEqual(['CLOCK', 'ON_EDIT', 'ON_EDIT']);
  });

  it("'document': one time-driven trigger per user per document", async () => {
    gas = await load({ installAs: 'addon', addOnClockTriggersPer: 'document' });
    await gas.run('hourly');
    gas.useSpreadsheet(gas.addSpreadsheet());
    await gas.run('hourly');
    await expect(gas.run('hourly')).rejects.toThrow(ADD_ON_TOO_MANY_CLOCK_MESSAGE);
    expect(gas.maxClockTriggers).toBe(2);
  });
});
