// The stored job's retryable rows (apps-script/src/job-store.ts) on a fake PropertiesService: a bitmap that
// round-trips, is dropped when empty, and is kept in parts when longer than a property value may be.
import { changeJob, loadRetryRows } from '../../apps-script/src/stores/background-store';
import { freshSession } from '../../apps-script/src/stores/session';
import { fakeLock, fakeProperties } from './fake-services';

/** Stores the rows through the job store's one write path (under the user lock). */
function storeRetryRows(id: string, rows: ReadonlySet<number>): void {
  changeJob(id, (_, writes) => writes.retryRows(rows));
}

let user: Record<string, string>;

beforeEach(() => {
  freshSession();
  user = {};
  const lock = fakeLock();
  const props = fakeProperties(user);
  Object.assign(globalThis, {
    PropertiesService: { getUserProperties: () => props },
    LockService: { getUserLock: () => lock, getDocumentLock: () => null },
    SpreadsheetApp: { getActiveSpreadsheet: () => null },
  });
});

describe('the rows a job marks retryable', () => {
  it('round-trips any set of rows', () => {
    const rows = new Set([0, 1, 4, 5, 9, 31, 32, 999]);
    storeRetryRows('sheet1', rows);
    expect(loadRetryRows('sheet1')).toEqual(rows);
    expect(loadRetryRows('other')).toEqual(new Set());
  });

  it('removes the key when no row is marked, and reads a damaged value as none', () => {
    storeRetryRows('sheet1', new Set([3]));
    storeRetryRows('sheet1', new Set());
    expect(Object.keys(user)).toEqual([]);
    user['dapa.retry.sheet1'] = '"not base 32!"';
    expect(loadRetryRows('sheet1')).toEqual(new Set());
  });

  it('keeps 100,000 rows of marks in parts under the 9 KB a value, and drops the parts when it shrinks', () => {
    const rows = new Set(Array.from({ length: 50_000 }, (_, i) => i * 2));
    storeRetryRows('big', rows);
    expect(Object.keys(user).length).toBeGreaterThan(2);
    expect(loadRetryRows('big')).toEqual(rows);
    storeRetryRows('big', new Set([7]));
    expect(Object.keys(user)).toEqual(['dapa.retry.big']);
    expect(loadRetryRows('big')).toEqual(new Set([7]));
  });
});
