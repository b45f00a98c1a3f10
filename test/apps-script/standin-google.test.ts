// The stand-in's stricter reading of Google's documentation, checked with small scripts: install modes and the
// Editor add-on trigger rules (with Google's texts), varying trigger lateness, "Sheets keeps a custom function's
// result for identical arguments", recalculation from cells on other sheets and named ranges, a non-owner editor's
// read-only user properties in a custom function, and an open sidebar calling the server on a timer.
import { AppsScriptError, type AppsScriptStandIn, loadAppsScript, type LoadOptions } from './harness';
import {
  ADD_ON_RECURRENCE_MESSAGE,
  ADD_ON_TOO_MANY_CLOCK_MESSAGE,
  ADD_ON_TOO_MANY_EDIT_MESSAGE,
} from './standin/limits';

const SCRIPT = `
function source() { return ScriptApp.getInstallationSource(); }
function isAddOn() { return ScriptApp.getInstallationSource() !== ScriptApp.InstallationSource.NONE; }
function after(ms) { return ScriptApp.newTrigger('tick').timeBased().after(ms).create().getUniqueId(); }
function hourly() { return ScriptApp.newTrigger('tick').timeBased().everyHours(1).create().getUniqueId(); }
function everyMinute() { return ScriptApp.newTrigger('tick').timeBased().everyMinutes(1).create().getUniqueId(); }
function onEditTrigger() {
  return ScriptApp.newTrigger('edited').forSpreadsheet(SpreadsheetApp.getActive()).onEdit().create().getUniqueId();
}
function clearAll() {
  ScriptApp.getProjectTriggers().forEach(function (t) { ScriptApp.deleteTrigger(t); });
}
function tick() {
  var props = PropertiesService.getScriptProperties();
  props.setProperty('ticks', String(Number(props.getProperty('ticks') || 0) + 1));
  var at = props.getProperty('at');
  props.setProperty('at', (at ? at + ',' : '') + String(Date.now()));
}
function edited() {}
function bump() {
  var cell = SpreadsheetApp.getActive().getSheetByName('_store').getRange('A1');
  cell.setValue(Number(cell.getValue() || 0) + 1);
}
function nameIt() {
  var ss = SpreadsheetApp.getActive();
  ss.setNamedRange('VERSION', ss.getSheetByName('_store').getRange('B1'));
}
function bumpNamed() {
  var cell = SpreadsheetApp.getActive().getRangeByName('VERSION');
  cell.setValue(Number(cell.getValue() || 0) + 1);
}
function rewrite(a1) {
  var range = SpreadsheetApp.getActive().getRange(a1);
  var formula = range.getFormula();
  range.clearContent();
  range.setFormula(formula);
}
function setSame(a1) {
  var range = SpreadsheetApp.getActive().getRange(a1);
  range.setFormula(range.getFormula());
}
/** @customfunction */
function COUNTED(x) {
  var props = PropertiesService.getDocumentProperties();
  var n = Number(props.getProperty('runs') || 0) + 1;
  props.setProperty('runs', String(n));
  return 'run ' + n;
}
/** @customfunction */
function SAVE(x) {
  var user = PropertiesService.getUserProperties();
  var key = user.getProperty('key');
  try {
    user.setProperty('seen', String(x));
    return 'saved with ' + key;
  } catch (e) {
    return 'read ' + key + '; ' + e.message;
  }
}
function saveKey(k) { PropertiesService.getUserProperties().setProperty('key', k); }
function poll() {
  var props = PropertiesService.getUserProperties();
  props.setProperty('polls', String(Number(props.getProperty('polls') || 0) + 1));
  Utilities.sleep(2000);
}
function slowPoll() { Utilities.sleep(299000); Utilities.sleep(299000); }
function drive() {
  var props = PropertiesService.getUserProperties();
  var n = Number(props.getProperty('drives') || 0) + 1;
  props.setProperty('drives', String(n));
  return { driveAt: n < 3 ? Date.now() + 45000 : undefined };
}
function userTriggers() { return ScriptApp.getUserTriggers(SpreadsheetApp.getActive()).length; }
`;

let gas: AppsScriptStandIn;
afterEach(async () => {
  await gas?.close();
});

const load = (options: LoadOptions = {}) => loadAppsScript({ code: SCRIPT, clock: 'virtual', ...options });
const HOUR = 3_600_000;

describe('install modes: ScriptApp.getInstallationSource()', () => {
  it('is NONE for a bound script and WEB_STORE_ADD_ON / APPS_MARKETPLACE_DOMAIN_ADD_ON for an add-on', async () => {
    gas = await load();
    expect(await gas.run('source')).toBe('NONE');
    expect(await gas.run('isAddOn')).toBe(false);
    await gas.close();
    gas = await load({ installAs: 'addon' });
    expect(await gas.run('source')).toBe('WEB_STORE_ADD_ON');
    expect(await gas.run('isAddOn')).toBe(true);
    await gas.close();
    gas = await load({ installAs: 'domain-addon' });
    expect(await gas.run('source')).toBe('APPS_MARKETPLACE_DOMAIN_ADD_ON');
  });
});

describe('Editor add-on trigger rules', () => {
  it("refuses a second time-driven trigger with Google's text; a bound script may have both", async () => {
    gas = await load({ installAs: 'addon' });
    await gas.run('hourly');
    await expect(gas.run('after', 2 * HOUR)).rejects.toThrow(ADD_ON_TOO_MANY_CLOCK_MESSAGE);
    expect(gas.triggers).toHaveLength(1);
    expect(gas.refusedTriggerCreations).toEqual([
      expect.objectContaining({ handler: 'tick', kind: 'CLOCK', message: ADD_ON_TOO_MANY_CLOCK_MESSAGE }),
    ]);
    expect(gas.maxClockTriggers).toBe(1);
    // A fired one-off still counts until deleted.
    await gas.run('clearAll');
    await gas.run('after', 2 * HOUR);
    await gas.runTriggers({ until: gas.clock.now() + 3 * HOUR });
    expect(gas.properties.script().ticks).toBe('1');
    await expect(gas.run('after', 2 * HOUR)).rejects.toThrow(ADD_ON_TOO_MANY_CLOCK_MESSAGE);
    await gas.close();

    gas = await load();
    await gas.run('hourly');
    await gas.run('after', 60_000);
    await gas.run('everyMinute');
    expect(gas.triggers).toHaveLength(3);
    expect(gas.maxClockTriggers).toBe(3);
    expect(gas.refusedTriggerCreations).toEqual([]);
  });

  it('refuses a second edit trigger for the same user, not for another user', async () => {
    gas = await load({ installAs: 'addon' });
    await gas.run('onEditTrigger');
    await expect(gas.run('onEditTrigger')).rejects.toThrow(ADD_ON_TOO_MANY_EDIT_MESSAGE);
    await gas.asUser('editor@example.com').run('onEditTrigger');
    expect(gas.triggers.map((t) => t.user).sort()).toEqual(['editor@example.com', 'owner@example.com']);
  });

  it('refuses a recurrence under an hour', async () => {
    gas = await load({ installAs: 'addon' });
    await expect(gas.run('everyMinute')).rejects.toThrow(ADD_ON_RECURRENCE_MESSAGE);
    expect(gas.triggers).toEqual([]);
    await gas.run('hourly');
    expect(gas.triggers).toHaveLength(1);
  });

  it('reads an undocumented one-off after() under an hour both ways', async () => {
    gas = await load({ installAs: 'addon' });
    await expect(gas.run('after', 60_000)).rejects.toThrow(ADD_ON_RECURRENCE_MESSAGE);
    await gas.run('after', HOUR);
    await gas.close();
    gas = await load({ installAs: 'addon', addOnShortAfter: 'allowed' });
    await gas.run('after', 60_000);
    await gas.runTriggers({ until: gas.clock.now() + 10 * 60_000 });
    expect(gas.properties.script().ticks).toBe('1');
  });

  it('stops firing while the add-on is disabled', async () => {
    gas = await load({ installAs: 'addon', triggerDelayMs: 0 });
    await gas.run('hourly');
    gas.setAddOnEnabled(false);
    await gas.runTriggers({ until: gas.clock.now() + 2.5 * HOUR });
    expect(gas.properties.script().ticks).toBeUndefined();
    expect(gas.skippedTriggers).toHaveLength(2);
    gas.setAddOnEnabled(true);
    await gas.runTriggers({ until: gas.clock.now() + HOUR });
    expect(gas.properties.script().ticks).toBe('1');
  });
});

describe('trigger lateness', () => {
  async function latenesses(options: LoadOptions): Promise<number[]> {
    gas = await load(options);
    const t0 = gas.clock.now();
    await gas.run('hourly');
    await gas.runTriggers({ until: t0 + 20 * HOUR + 30 * 60_000 });
    const at = (gas.properties.script().at ?? '').split(',').map(Number);
    await gas.close();
    return at.map((t, i) => t - (t0 + (i + 1) * HOUR));
  }

  it('varies between 0 and 60 s by default, the same for the same seed', async () => {
    const late = await latenesses({});
    expect(late).toHaveLength(20);
    // The firing's own processing adds a few ms of real time.
    expect(Math.min(...late)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...late)).toBeLessThan(61_000);
    expect(Math.max(...late) - Math.min(...late)).toBeGreaterThan(30_000);
    const again = await latenesses({});
    again.forEach((ms, i) => expect(Math.abs(ms - late[i])).toBeLessThan(1_000));
    const other = await latenesses({ triggerLatenessSeed: 2 });
    expect(other.some((ms, i) => Math.abs(ms - late[i]) > 5_000)).toBe(true);
  });

  it('can still be fixed', async () => {
    const late = await latenesses({ triggerDelayMs: 30_000 });
    late.forEach((ms) => expect(ms).toBeGreaterThanOrEqual(30_000));
    late.forEach((ms) => expect(ms).toBeLessThan(31_000));
  });
});

describe('formula recalculation', () => {
  async function sheetWith(options: LoadOptions): Promise<void> {
    gas = await load(options);
    gas.sheet.addSheet('_store');
    gas.sheet.setValues('A1', [['x']]);
    await gas.edit('B1', '=COUNTED(A1)');
    expect(gas.sheet.getValues('B1')).toEqual([['run 1']]);
  }

  it('recalculates a formula written again with the same text by default', async () => {
    await sheetWith({});
    await gas.run('rewrite', 'B1');
    expect(gas.sheet.getValues('B1')).toEqual([['run 2']]);
    await gas.run('setSame', 'B1');
    expect(gas.sheet.getValues('B1')).toEqual([['run 3']]);
    expect(gas.keptResults).toBe(0);
  });

  it('keeps the result of an identical formula with identical arguments when switched on', async () => {
    await sheetWith({ keepsIdenticalResults: true });
    await gas.run('rewrite', 'B1');
    await gas.run('setSame', 'B1');
    expect(gas.sheet.getValues('B1')).toEqual([['run 1']]);
    expect(gas.keptResults).toBe(2);
    // A changed argument, or changed text, recalculates.
    await gas.edit('A1', 'y');
    expect(gas.sheet.getValues('B1')).toEqual([['run 2']]);
    await gas.edit('B1', '=COUNTED(A1, 1)');
    expect(gas.sheet.getValues('B1')).toEqual([['run 3']]);
  });

  it.each([false, true])(
    'recalculates a formula when a cell it reads on a hidden sheet changes (keepsIdenticalResults %s)',
    async (keeps) => {
      await sheetWith({ keepsIdenticalResults: keeps });
      await gas.edit('C1', "=COUNTED(A1, '_store'!A1)");
      expect(gas.sheet.getValues('C1')).toEqual([['run 2']]);
      await gas.run('bump');
      expect(gas.sheet.getValues('C1')).toEqual([['run 3']]);
      await gas.run('bump');
      expect(gas.sheet.getValues('C1')).toEqual([['run 4']]);
      // B1 does not read the store: it stays.
      expect(gas.sheet.getValues('B1')).toEqual([['run 1']]);
    },
  );

  it.each([false, true])(
    'recalculates a formula when a named range it reads changes (keepsIdenticalResults %s)',
    async (keeps) => {
      await sheetWith({ keepsIdenticalResults: keeps });
      await gas.run('nameIt');
      await gas.edit('C1', '=COUNTED(A1, VERSION)');
      expect(gas.sheet.getValues('C1')).toEqual([['run 2']]);
      await gas.run('bumpNamed');
      expect(gas.sheet.getValues('C1')).toEqual([['run 3']]);
    },
  );
});

describe('formula shapes', () => {
  it("evaluates omitted arguments and an absolute reference on a hidden store sheet ('_dapa_results'!$F$3)", async () => {
    gas = await load();
    gas.sheet.addSheet('_dapa_results');
    gas.sheet.setValues('A1', [['x']]);
    await gas.edit('B1', "=COUNTED(A1,,,'_dapa_results'!$F$3)");
    expect(gas.sheet.getValues('B1')).toEqual([['run 1']]);
    gas.sheet.setValues('_dapa_results!F3', [[1]]);
    await gas.recalculate();
    expect(gas.sheet.getValues('B1')).toEqual([['run 2']]);
    gas.sheet.setValues('_dapa_results!F4', [[1]]);
    await gas.recalculate();
    expect(gas.sheet.getValues('B1')).toEqual([['run 2']]);
  });
});

describe('ScriptApp.getUserTriggers', () => {
  it("lists the current user's triggers in the spreadsheet", async () => {
    gas = await load();
    await gas.run('hourly');
    await gas.asUser('editor@example.com').run('hourly');
    expect(await gas.run('userTriggers')).toBe(1);
  });
});

describe('a non-owner editor', () => {
  it("reads the owner's user properties in a custom function and may not set them", async () => {
    gas = await load();
    await gas.run('saveKey', 'owner-key');
    gas.sheet.setValues('A1', [['x']]);
    await gas.edit('B1', '=SAVE(A1)');
    expect(gas.sheet.getValues('B1')).toEqual([['saved with owner-key']]);
    expect(gas.properties.user().seen).toBe('x');

    gas.asUser('editor@example.com');
    await gas.run('saveKey', 'editor-key');
    await gas.edit('A1', 'y');
    expect(gas.sheet.getValues('B1')).toEqual([
      ['read owner-key; You do not have permission to call setProperty'],
    ]);
    expect(gas.properties.user().seen).toBe('x');
    expect(gas.properties.user('editor@example.com')).toEqual({ key: 'editor-key' });
  });
});

describe('an open sidebar', () => {
  it('calls the server every N seconds while open, each call its own execution, and stops when closed', async () => {
    gas = await load();
    const t0 = gas.clock.now();
    gas.openSidebar({ call: 'poll', everyMs: 10_000 });
    await gas.runTriggers({ until: t0 + 60_000 });
    // Calls at 0, 12, 24, 36, 48 s (2 s each, then 10 s apart).
    expect(gas.properties.user().polls).toBe('5');
    expect(gas.sidebarCalls.every((c) => c.ok && c.name === 'poll')).toBe(true);
    expect(gas.executions.filter((e) => e.functionName === 'poll' && e.kind === 'server')).toHaveLength(5);
    expect(gas.triggerRuntimeMs()).toBe(0);
    gas.closeSidebar();
    await gas.runTriggers({ until: t0 + 120_000 });
    expect(gas.properties.user().polls).toBe('5');
  });

  it('calls again when the answer says (next), else everyMs later', async () => {
    gas = await load();
    const t0 = gas.clock.now();
    gas.openSidebar({
      call: 'drive',
      everyMs: 300_000,
      next: (answer) => (answer as { driveAt?: number }).driveAt,
    });
    await gas.runTriggers({ until: t0 + 200_000 });
    // 0, 45, 90 s; the third answer names no time: the next call is 300 s later.
    expect(gas.sidebarCalls.map((c) => Math.round((c.at - t0) / 1000))).toEqual([0, 45, 90]);
  });

  it('interleaves with triggers, and a call is stopped at 6 minutes', async () => {
    gas = await load({ triggerDelayMs: 0 });
    const t0 = gas.clock.now();
    await gas.run('after', 30_000);
    gas.openSidebar({ call: 'poll', everyMs: 20_000 });
    await gas.runTriggers({ until: t0 + 50_000 });
    const tickAt = Number(gas.properties.script().at) - t0;
    expect(tickAt).toBeGreaterThanOrEqual(30_000);
    expect(tickAt).toBeLessThan(31_000);
    expect(gas.properties.user().polls).toBe('3'); // 0, 22, 44 s
    gas.closeSidebar();
    gas.openSidebar({ call: 'slowPoll', everyMs: 5_000 });
    await gas.runSidebarCall();
    expect(gas.sidebarCalls.at(-1)).toEqual(
      expect.objectContaining({ ok: false, error: 'Exceeded maximum execution time' }),
    );
  });
});

describe('errors keep their shape', () => {
  it('a refused creation is an Apps Script exception the script can catch', async () => {
    gas = await load({ installAs: 'addon' });
    const error = await gas.run('everyMinute').catch((e: AppsScriptError) => e);
    expect(error).toBeInstanceOf(AppsScriptError);
  });
});
