// The saved-credit marks (apps-script/src/stores/results.ts) on fakes of PropertiesService, LockService and a
// spreadsheet: the counts a range's kept results add, and each store row's mark parsed once a call, however many of
// the row's results the range reuses.
import * as placeDigits from '../../apps-script/src/stores/storage';
import { type Kept, noteSaved, savedCredits } from '../../apps-script/src/stores/results';
import { freshSession } from '../../apps-script/src/stores/session';
import { fakeLock, fakeProperties } from './fake-services';

const DAY = 86_400_000;
const SIZE = 240;
const KEY = 'dapa.saved.sheet-1';
/** When the test file's store rows were checked: a day ago, past the 6-hour cache. */
const DAY_AGO = Date.now() - DAY;

let user: Record<string, string>;

beforeEach(() => {
  freshSession();
  user = {};
  const lock = fakeLock();
  const props = fakeProperties;
  const sheet = {
    getId: () => 'sheet-1',
    getDeveloperMetadata: () => [],
    addDeveloperMetadata: () => undefined,
  };
  Object.assign(globalThis, {
    PropertiesService: { getUserProperties: () => props(user), getDocumentProperties: () => props({}) },
    LockService: { getUserLock: () => lock, getDocumentLock: () => lock },
    CacheService: { getDocumentCache: () => null, getUserCache: () => null },
    SpreadsheetApp: { getActiveSpreadsheet: () => sheet },
  });
});

afterEach(() => {
  jest.restoreAllMocks();
});

/** The kept results at `places` of a store row of SIZE checked a day ago (past the 6-hour cache). */
function hits(places: readonly number[], rowAt = DAY_AGO): Kept[] {
  const batch = `${rowAt.toString(36)}.row`;
  return places.map((pos) => ({
    record: {} as Kept['record'],
    at: rowAt,
    row: 1,
    batch,
    pos,
    size: SIZE,
  }));
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** A new execution (nothing remembered of the last one) that counts `kept`. */
function execution(kept: readonly Kept[]): number {
  freshSession();
  return noteSaved(kept);
}

describe('the saved-credit marks', () => {
  it('count each reused result once, across calls and rows, and a full row as its size', () => {
    expect(execution(hits(range(0, 100)))).toBe(100);
    expect(execution(hits(range(50, 150)))).toBe(50); // half counted already
    expect(execution(hits(range(0, 150)))).toBe(0);
    expect(JSON.parse(user[KEY]).rows).toEqual({
      [hits([0])[0].batch]: expect.stringMatching(/^[0-9a-v]+$/),
    });
    expect(execution(hits(range(0, SIZE)))).toBe(SIZE - 150);
    expect(Object.values(JSON.parse(user[KEY]).rows)).toEqual([`*${SIZE}`]); // every result of the row
    const other = hits([3, 4, 5], DAY_AGO - DAY);
    expect(execution([...other, ...hits([7])])).toBe(3);
    freshSession();
    expect(savedCredits()).toBe(SIZE + 3);
  });

  it('leave out what the cache still holds', () => {
    expect(execution(hits(range(0, 10), Date.now() - 60_000))).toBe(0);
    expect(user[KEY]).toBeUndefined();
  });

  it("parse a row's mark once a call, however many of its results a range reuses", () => {
    expect(execution(hits(range(0, 10)))).toBe(10); // the row's mark is a bitmap now
    const parsed = jest.spyOn(placeDigits, 'placesIn');
    expect(execution(hits(range(0, SIZE - 1)))).toBe(SIZE - 11);
    // Read before the lock to see whether anything is new, and again under it: twice, not once a result.
    expect(parsed).toHaveBeenCalledTimes(2);
    freshSession();
    expect(savedCredits()).toBe(SIZE - 1);
  });
});
