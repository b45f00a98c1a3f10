// The stand-in at the sizes people reach (issue 30), checked with small scripts: other users of the published add-on
// (the script lock busy a given share of the time, items written into the script cache), the cache cap under Google's
// reading and the observed one, the 10-million-cell and 18,278-column ceilings with Sheets' words, the Properties quota
// per user across stores and per day, Sheet.appendRow, and how long each user's executions held each lock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppsScriptStandIn, loadAppsScript, type LoadOptions } from './harness';
import {
  PROPERTY_QUOTA_MESSAGE,
  SHEET_COLUMNS_MESSAGE,
  URL_FETCH_QUOTA_MESSAGE,
  WORKBOOK_CELLS_MESSAGE,
  WORKBOOK_MAX_CELLS,
} from './standin/limits';

// Tens of thousands of service calls take some real seconds on a busy machine: never jest's 5 s default.
jest.setTimeout(180_000);

const SCRIPT = `
function probe(kind, times, everyMs, waitMs) {
  var refused = 0, waited = 0, longest = 0;
  for (var i = 0; i < times; i++) {
    var lock = kind === 'script' ? LockService.getScriptLock()
      : kind === 'document' ? LockService.getDocumentLock() : LockService.getUserLock();
    var t0 = Date.now();
    if (lock.tryLock(waitMs)) {
      var w = Date.now() - t0;
      waited += w;
      if (w > longest) longest = w;
      lock.releaseLock();
    } else refused++;
    Utilities.sleep(everyMs);
  }
  return { refused: refused, waited: waited, longest: longest };
}
function hold(kind, ms) {
  var lock = kind === 'script' ? LockService.getScriptLock()
    : kind === 'document' ? LockService.getDocumentLock() : LockService.getUserLock();
  lock.waitLock(10000);
  Utilities.sleep(ms);
  lock.releaseLock();
}
function putQueue(seconds) { CacheService.getScriptCache().put('queue', 'entry', seconds); }
function putMany(prefix, n, seconds) {
  var values = {};
  for (var i = 0; i < n; i++) values[prefix + i] = 'v' + i;
  CacheService.getDocumentCache().putAll(values, seconds);
}
function putOne(key, seconds) { CacheService.getDocumentCache().put(key, 'x', seconds); }
function propertyCalls(n) {
  var stores = [PropertiesService.getUserProperties(), PropertiesService.getDocumentProperties(),
    PropertiesService.getScriptProperties()];
  for (var i = 0; i < n; i++) stores[i % 3].getProperty('k');
  return n;
}
function insertRows(sheet, n) { SpreadsheetApp.getActive().getSheetByName(sheet).insertRowsAfter(1, n); }
function insertColumns(sheet, n) {
  var s = SpreadsheetApp.getActive().getSheetByName(sheet);
  s.insertColumnsAfter(s.getMaxColumns(), n);
}
function newSheet(name) { SpreadsheetApp.getActive().insertSheet(name); }
function shrink(name) {
  var ss = SpreadsheetApp.getActive();
  var s = ss.getSheetByName(name);
  s.insertRowsBefore(1, 10);
  s.insertColumnsBefore(1, 4);
  s.deleteColumns(2, 20);
  s.deleteRows(5, 900);
  return [s.getMaxRows(), s.getMaxColumns()];
}
function dropSheet(name) {
  var ss = SpreadsheetApp.getActive();
  ss.deleteSheet(ss.getSheetByName(name));
}
function deleteAllRows(name) {
  var s = SpreadsheetApp.getActive().getSheetByName(name);
  s.deleteRows(1, s.getMaxRows());
}
function hide(name) { SpreadsheetApp.getActive().getSheetByName(name).hideSheet(); }
function timed(url) {
  var t0 = Date.now();
  UrlFetchApp.fetch(url);
  var one = Date.now() - t0;
  t0 = Date.now();
  UrlFetchApp.fetchAll([{ url: url }, { url: url }]);
  return [one, Date.now() - t0];
}
function fetchTimes(url, n) {
  for (var i = 0; i < n; i++) UrlFetchApp.fetch(url);
  return n;
}
function work(ms) {
  Utilities.sleep(ms);
}
function everyTenMinutes() {
  ScriptApp.newTrigger('tick').timeBased().after(600000).create();
}
function tick() {
  Utilities.sleep(300000);
  ScriptApp.newTrigger('tick').timeBased().after(60000).create();
}
function append(sheet, values) {
  var s = SpreadsheetApp.getActive().getSheetByName(sheet);
  for (var i = 0; i < values.length; i++) s.appendRow(values[i]);
  return s.getMaxRows();
}
`;

const BUSY = { scriptLockBusy: 0.9, sectionMs: 100, scriptCacheItemsPerMinute: 0 };

let gas: AppsScriptStandIn | undefined;
afterEach(async () => {
  await gas?.close();
  gas = undefined;
});

async function load(options: LoadOptions = {}): Promise<AppsScriptStandIn> {
  gas = await loadAppsScript({ code: SCRIPT, clock: 'virtual', ...options });
  return gas;
}

interface Probe {
  refused: number;
  waited: number;
  longest: number;
}

describe('other users of the published add-on', () => {
  it('hold the script lock the given share of the time: a tryLock(0) is refused about 90 % of the time', async () => {
    const g = await load({ otherUsers: BUSY });
    // 200 probes 71 ms apart (no simple fraction of the others' 111 ms period), each giving the lock back at once.
    const probe = await g.run<Probe>('probe', 'script', 200, 71, 0);
    expect(probe.refused).toBeGreaterThanOrEqual(170);
    expect(probe.refused).toBeLessThanOrEqual(190);
  });

  it('make a tryLock with time to wait really wait, by their section at most', async () => {
    const g = await load({ otherUsers: BUSY });
    const probe = await g.run<Probe>('probe', 'script', 200, 71, 5_000);
    expect(probe.refused).toBe(0);
    // A uniform moment waits 0.9 × 50 ms on average; one of ours queued behind a section waits at most about one.
    expect(probe.waited / 200).toBeGreaterThan(25);
    expect(probe.waited / 200).toBeLessThan(80);
    expect(probe.longest).toBeLessThanOrEqual(150);
  });

  it('do not touch the document lock or the user lock', async () => {
    const g = await load({ otherUsers: BUSY });
    for (const kind of ['document', 'user']) {
      const probe = await g.run<Probe>('probe', kind, 100, 37, 0);
      expect(probe.refused).toBe(0);
    }
  });

  it('leave the script lock free when there are none (the default)', async () => {
    const g = await load();
    const probe = await g.run<Probe>('probe', 'script', 100, 37, 0);
    expect(probe.refused).toBe(0);
  });

  it('wait while one of ours holds the script lock, then take it in turn (first come, first served)', async () => {
    const g = await load({ otherUsers: BUSY });
    await g.run('hold', 'script', 1_000);
    // Their sections that asked during our second are served after it: right after, the lock is theirs.
    const probe = await g.run<Probe>('probe', 'script', 1, 0, 0);
    expect(probe.refused).toBe(1);
  });

  it('write items into the script cache at the given rate; document and user caches are not theirs', async () => {
    const g = await load({ otherUsers: { ...BUSY, scriptLockBusy: 0, scriptCacheItemsPerMinute: 3_000 } });
    g.clock.advance(10_000);
    expect(g.cache.script.keys().length).toBeGreaterThanOrEqual(499);
    expect(g.cache.script.keys().length).toBeLessThanOrEqual(501);
    expect(g.cache.document.keys()).toHaveLength(0);
    expect(g.cache.user(g.owner).keys()).toHaveLength(0);
    // Seven hours later the cache holds its cap, not 1.26 million items, and that costs no real time.
    const t0 = Date.now();
    g.clock.advance(7 * 3_600_000);
    expect(g.cache.script.keys().length).toBeLessThanOrEqual(1_000);
    expect(g.cache.script.othersWritten).toBeGreaterThan(1_250_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });
});

describe('the cache past 1,000 items', () => {
  const others = { scriptLockBusy: 0, sectionMs: 100, scriptCacheItemsPerMinute: 3_000 };

  it("'documented': a 10-minute item is the first to go when others write 6-hour items", async () => {
    const g = await load({ otherUsers: others, cacheEviction: 'documented' });
    g.clock.advance(5_000); // 250 of theirs first
    await g.run('putQueue', 600);
    g.clock.advance(16_000); // 800 more: past 1,000, the 900 farthest from expiration stay
    expect(g.cache.script.keys()).not.toContain('queue');
    expect(g.cache.script.keys().length).toBeLessThanOrEqual(1_000);
  });

  it("'observed' (the default): the oldest-written go first, so the same item is still there", async () => {
    const g = await load({ otherUsers: others });
    g.clock.advance(5_000);
    await g.run('putQueue', 600);
    g.clock.advance(16_000);
    expect(g.cache.script.keys()).toContain('queue');
    g.clock.advance(6_000); // 300 more: the oldest-written 100 go at each step, and now it is its turn
    expect(g.cache.script.keys()).not.toContain('queue');
  });

  it("'documented' keeps the 900 items farthest from expiration, in every cache", async () => {
    const g = await load({ cacheEviction: 'documented' });
    await g.run('putMany', 'long', 600, 21_600);
    await g.run('putMany', 'short', 400, 60);
    await g.run('putOne', 'last', 600);
    const keys = g.cache.document.keys();
    expect(keys).toHaveLength(900);
    expect(keys.filter((k) => k.startsWith('long'))).toHaveLength(600);
    // Of the 401 items due in minutes, the 300 farthest from expiration stay: the 10-minute one first.
    expect(keys).toContain('last');
    expect(g.cache.document.evictions).toBe(101);
  });

  it("'observed' drops the oldest-written 100 when a write finds 1,000", async () => {
    const g = await load();
    await g.run('putMany', 'long', 600, 21_600);
    await g.run('putMany', 'short', 400, 60);
    await g.run('putOne', 'last', 600);
    const keys = g.cache.document.keys();
    expect(keys).toHaveLength(901);
    expect(keys).not.toContain('long0');
    expect(keys).not.toContain('long99');
    expect(keys).toContain('long100');
    expect(keys).toContain('last');
  });
});

describe("a spreadsheet's ceilings: 10 million cells and 18,278 columns", () => {
  it("refuses growth past 10 million cells with Sheets' words, counting every sheet's grid, filled or not", async () => {
    const g = await load();
    expect(g.cellsIn()).toBe(26_000); // Sheet1: 1,000 × 26
    g.sheet.addSheet('Big', 380_000, 26); // 9,880,000 cells, all empty
    expect(g.cellsIn()).toBe(9_906_000);
    await expect(g.run('insertRows', 'Big', 4_000)).rejects.toThrow(WORKBOOK_CELLS_MESSAGE); // + 104,000
    await g.run('insertRows', 'Big', 3_000); // + 78,000: 9,984,000
    await expect(g.run('newSheet', 'More')).rejects.toThrow(WORKBOOK_CELLS_MESSAGE); // + 26,000
    await expect(g.run('insertColumns', 'Sheet1', 17)).rejects.toThrow(WORKBOOK_CELLS_MESSAGE);
    await g.run('insertColumns', 'Sheet1', 16);
    expect(g.cellsIn()).toBe(WORKBOOK_MAX_CELLS);
    expect(() => g.sheet.addSheet('ByHand', 1, 1)).toThrow(WORKBOOK_CELLS_MESSAGE);
  });

  it('refuses a sheet past 18,278 columns', async () => {
    const g = await load();
    g.sheet.addSheet('Wide', 10, 18_000);
    await expect(g.run('insertColumns', 'Wide', 279)).rejects.toThrow(SHEET_COLUMNS_MESSAGE);
    await g.run('insertColumns', 'Wide', 278);
    expect(g.sheetSizes().find((s) => s.name === 'Wide')?.columns).toBe(18_278);
  });

  it('counts hidden sheets, and tells them apart', async () => {
    const g = await load();
    await g.run('newSheet', '_store');
    expect(g.cellsIn()).toBe(52_000);
    expect(g.hiddenCellsIn()).toBe(0);
    await g.run('hide', '_store');
    expect(g.cellsIn()).toBe(52_000);
    expect(g.hiddenCellsIn()).toBe(26_000);
  });
});

describe('giving cells back', () => {
  it('deletes rows, columns and sheets, so that the workbook shrinks', async () => {
    const g = await load();
    await g.run('newSheet', '_store');
    expect(await g.run('shrink', '_store')).toEqual([110, 10]); // 1,010 × 30, less 900 rows and 20 columns
    expect(g.cellsIn()).toBe(26_000 + 1_100);
    await expect(g.run('deleteAllRows', '_store')).rejects.toThrow(
      'Sorry, it is not possible to delete all non-frozen rows.',
    );
    await g.run('dropSheet', '_store');
    expect(g.sheetSizes().map((s) => s.name)).toEqual(['Sheet1']);
    await expect(g.run('dropSheet', 'Sheet1')).rejects.toThrow(/remove all the visible sheets/);
  });
});

describe('Sheet.appendRow', () => {
  it('writes below the last row with content and adds a row when the sheet is full', async () => {
    const g = await load();
    g.sheet.addSheet('Log', 2, 3);
    const maxRows = await g.run<number>('append', 'Log', [
      ['a', 1],
      ['b', 2],
      ['c', 3, true, 'wide'],
    ]);
    expect(maxRows).toBe(3);
    expect(g.sheet.getValues('Log!A1:D3')).toEqual([
      ['a', 1, '', ''],
      ['b', 2, '', ''],
      ['c', 3, true, 'wide'],
    ]);
    expect(g.sheetSizes().find((s) => s.name === 'Log')).toMatchObject({ rows: 3, columns: 4 });
  });

  it('is atomic: two executions appending at once lose no row', async () => {
    const g = await load({ serviceCallMs: 15 });
    g.sheet.addSheet('Log', 1, 2);
    const rows = (who: string) => Array.from({ length: 20 }, (_, i) => [who, i]);
    await Promise.all([
      g.runWith({ user: 'a@example.com' }, 'append', 'Log', rows('a')),
      g.runWith({ user: 'b@example.com' }, 'append', 'Log', rows('b')),
    ]);
    const written = g.sheet.getValues('Log!A1:B40').map((r) => `${r[0]}${r[1]}`);
    expect(new Set(written).size).toBe(40);
    expect(written.filter((w) => w.startsWith('a'))).toHaveLength(20);
  });

  it("counts against the workbook's cells", async () => {
    const g = await load();
    g.sheet.addSheet('Big', 383_614, 26);
    g.sheet.addSheet('Log', 1, 26);
    expect(g.cellsIn()).toBe(9_999_990); // one more row of 26 is past 10 million
    await expect(g.run('append', 'Log', [['a'], ['b']])).rejects.toThrow(WORKBOOK_CELLS_MESSAGE);
    expect(g.sheet.getValues('Log!A1')[0][0]).toBe('a');
  });
});

describe('the Properties quota: 50,000 calls a day per user, across stores', () => {
  it('counts a user across the user, document and script stores, per user and per day', async () => {
    const g = await load();
    await g.run('propertyCalls', 300);
    await g.runWith({ user: 'b@example.com' }, 'propertyCalls', 30);
    const day = Math.floor(g.clock.now() / 86_400_000);
    expect(g.propertiesCalls(g.owner)).toBe(300);
    expect(g.propertiesCalls('b@example.com', day)).toBe(30);
    expect(g.propertiesCalls()).toBe(330);
    expect(g.propertiesCalls(g.owner, day + 1)).toBe(0);
  });

  it("refuses the 50,001st call of a user with Google's text, until 24 hours after the first", async () => {
    const g = await load();
    await g.run('propertyCalls', 49_999);
    await g.run('propertyCalls', 1);
    await expect(g.run('propertyCalls', 1)).rejects.toThrow(PROPERTY_QUOTA_MESSAGE);
    expect(g.propertiesCalls(g.owner)).toBe(50_000);
    // Another user has their own quota.
    await expect(g.runWith({ user: 'b@example.com' }, 'propertyCalls', 3)).resolves.toBe(3);
    g.clock.advance(24 * 3_600_000);
    await expect(g.run('propertyCalls', 3)).resolves.toBe(3);
  });
});

describe("Google's daily quotas per user: URL Fetch, what was spent elsewhere, trigger runtime, both readings", () => {
  let server: http.Server;
  let url = '';
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => server.close());

  it("refuses the 20,001st fetch of a user with Google's text until 24 hours after their first", async () => {
    const g = await load();
    await g.run('fetchTimes', url, 1);
    g.clock.advance(3_600_000);
    g.spendDailyQuota(g.owner, 'urlfetch', 19_998); // their other scripts
    await expect(g.run('fetchTimes', url, 1)).resolves.toBe(1);
    await expect(g.run('fetchTimes', url, 1)).rejects.toThrow(URL_FETCH_QUOTA_MESSAGE);
    expect(g.urlFetchCalls(g.owner)).toBe(2); // this script's own; the 19,998 of the others count in the window only
    expect(g.dailyQuotaOf(g.owner, 'urlfetch').used).toBe(20_000);
    // Another user has their own quota; the owner's comes back 24 hours after the first fetch, not after the last.
    await expect(g.runWith({ user: 'b@example.com' }, 'fetchTimes', url, 2)).resolves.toBe(2);
    g.clock.advance(23 * 3_600_000 - 1_000);
    await expect(g.run('fetchTimes', url, 1)).rejects.toThrow(URL_FETCH_QUOTA_MESSAGE);
    g.clock.advance(1_000);
    await expect(g.run('fetchTimes', url, 1)).resolves.toBe(1);
    expect(g.dailyQuotaOf(g.owner, 'urlfetch')).toMatchObject({ used: 1, limit: 20_000 });
  });

  it('counts Properties calls spent on other sheets in the same window', async () => {
    const g = await load();
    const opened = g.clock.now();
    g.spendDailyQuota(g.owner, 'properties', 49_990);
    await expect(g.run('propertyCalls', 10)).resolves.toBe(10);
    await expect(g.run('propertyCalls', 1)).rejects.toThrow(PROPERTY_QUOTA_MESSAGE);
    const quota = g.dailyQuotaOf(g.owner, 'properties');
    expect(quota.used).toBe(50_000);
    expect(quota.resetsAt).toBe(opened + 86_400_000);
  });

  it("under the other reading ('utc-day') gives the quota back at midnight UTC", async () => {
    const g = await load({ quotaReset: 'utc-day' });
    const midnight = (Math.floor(g.clock.now() / 86_400_000) + 2) * 86_400_000;
    g.clock.advance(midnight - 3_600_000 - g.clock.now()); // 23:00 UTC
    g.spendDailyQuota(g.owner, 'properties', 50_000);
    await expect(g.run('propertyCalls', 1)).rejects.toThrow(PROPERTY_QUOTA_MESSAGE);
    expect(g.dailyQuotaOf(g.owner, 'properties').resetsAt).toBe(midnight);
    g.clock.advance(3_600_000);
    await expect(g.run('propertyCalls', 1)).resolves.toBe(1);
  });

  it.each(['first-request', 'utc-day'] as const)(
    'stops triggers once the trigger runtime is spent, until it comes back (%s)',
    async (quotaReset) => {
      // Five-minute steps against a 30-minute quota, starting at 20:00 UTC.
      const g = await load({ quotaReset, triggerQuotaMs: 30 * 60_000, triggerDelayMs: 0 });
      const midnight = (Math.floor(g.clock.now() / 86_400_000) + 2) * 86_400_000;
      g.clock.advance(midnight - 4 * 3_600_000 - g.clock.now());
      const first = g.clock.now() + 600_000;
      await g.run('everyTenMinutes');
      await g.runTriggers({ until: first + 25 * 3_600_000, stop: () => g.refusedTriggers.length > 0 });
      expect(g.triggerRuntimeMs()).toBeGreaterThanOrEqual(30 * 60_000);
      const refused = g.refusedTriggers[0].at;
      expect(refused).toBeLessThan(first + 3_600_000);
      // The refused trigger is gone; a new one is refused until the quota comes back.
      const expected = quotaReset === 'utc-day' ? midnight : first + 86_400_000;
      const back = g.dailyQuotaOf(g.owner, 'trigger-runtime').resetsAt as number;
      expect(back).toBeGreaterThanOrEqual(expected);
      expect(back).toBeLessThan(expected + 1_000);
      await g.run('everyTenMinutes');
      const before = g.triggerRuntimeMs();
      await g.runTriggers({ until: back - 1_000 });
      expect(g.triggerRuntimeMs()).toBe(before);
      g.clock.advance(back - g.clock.now());
      await g.run('everyTenMinutes');
      await g.runTriggers({ until: back + 700_000 });
      expect(g.triggerRuntimeMs()).toBeGreaterThan(before);
    },
  );
});

describe('how long each user held each lock', () => {
  it("adds up a user's executions per kind of lock", async () => {
    const g = await load();
    await g.run('hold', 'script', 500);
    await g.runWith({ user: 'b@example.com' }, 'hold', 'script', 200);
    await g.run('hold', 'document', 300);
    await g.run('hold', 'user', 100);
    const near = (ms: number, expected: number) => {
      expect(ms).toBeGreaterThanOrEqual(expected);
      expect(ms).toBeLessThan(expected + 100);
    };
    near(g.scriptLockHeldMs(g.owner), 500);
    near(g.scriptLockHeldMs('b@example.com'), 200);
    near(g.scriptLockHeldMs(), 700);
    near(g.documentLockHeldMs(g.owner), 300);
    near(g.userLockHeldMs(g.owner), 100);
    expect(g.userLockHeldMs('b@example.com')).toBe(0);
  });

  it('counts a lock held until the execution ended', async () => {
    const g = await load({
      code: `${SCRIPT}\nfunction keep() { LockService.getScriptLock().waitLock(1000); Utilities.sleep(400); }`,
    });
    await g.run('keep');
    expect(g.scriptLockHeldMs(g.owner)).toBeGreaterThanOrEqual(400);
    expect(g.scriptLockHeldMs(g.owner)).toBeLessThan(500);
  });
});

describe('a network latency drawn per fetch', () => {
  it('takes each draw for a fetch, and the slowest of its requests for a fetchAll', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const draws = [300, 900, 600];
      const g = await load({ virtualLatencyMs: () => draws.shift() ?? 0 });
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const [one, all] = await g.run<number[]>('timed', url);
      expect(one).toBeGreaterThanOrEqual(300);
      expect(one).toBeLessThan(400);
      expect(all).toBeGreaterThanOrEqual(900);
      expect(all).toBeLessThan(1_000);
    } finally {
      server.close();
    }
  });
});
