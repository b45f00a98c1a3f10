// The Sheets shell's storage layer (apps-script/src/storage.ts) on fakes of PropertiesService, LockService and a
// spreadsheet's developer metadata: validated JSON values, deletes, the spreadsheet's values (metadata, read from
// DocumentProperties when an earlier version left them there), the output columns' marks and the removal of every
// developer metadata entry of DAPA's (and of no one else's), and the lock policy (the document lock for a spreadsheet's state, the user lock for a user's; never the script lock).
import { freshSession } from '../../apps-script/src/stores/session';
import {
  BUSY,
  deleteKeys,
  finite,
  forgetAllMetadata,
  isRecord,
  LOCK_ORDER,
  LOCK_WAIT_MS,
  locked,
  markColumn,
  readColumnMarks,
  readText,
  readValue,
  updateValue,
  userKeys,
  writeTexts,
  writeValue,
} from '../../apps-script/src/stores/storage';

class FakeProperties {
  constructor(readonly data: Record<string, string> = {}) {}
  getProperty(key: string): string | null {
    return key in this.data ? this.data[key] : null;
  }
  setProperties(values: Record<string, string>): void {
    Object.assign(this.data, values);
  }
  deleteProperty(key: string): void {
    delete this.data[key];
  }
  getKeys(): string[] {
    return Object.keys(this.data);
  }
  getProperties(): Record<string, string> {
    this.reads += 1;
    return { ...this.data };
  }
  reads = 0;
}

class FakeLock {
  held = false;
  /** Another execution holds it: tryLock fails. */
  takenElsewhere = false;
  waits: number[] = [];
  tryLock(ms: number): boolean {
    this.waits.push(ms);
    if (this.takenElsewhere) return false;
    this.held = true;
    return true;
  }
  hasLock(): boolean {
    return this.held;
  }
  releaseLock(): void {
    this.held = false;
  }
}

/** A spreadsheet's developer metadata, as Spreadsheet.getDeveloperMetadata() lists it. */
class FakeSpreadsheet {
  readonly metadata: Array<{ key: string; value: string }> = [];
  getId(): string {
    return 'sheet-1';
  }
  getDeveloperMetadata() {
    return this.metadata.map((entry) => ({
      getKey: () => entry.key,
      getValue: () => entry.value,
      setValue: (value: string) => {
        entry.value = value;
      },
      remove: () => {
        this.metadata.splice(this.metadata.indexOf(entry), 1);
      },
    }));
  }
  addDeveloperMetadata(key: string, value: string): void {
    this.metadata.push({ key, value });
  }
  value(key: string): string | undefined {
    return this.metadata.find((m) => m.key === key)?.value;
  }
}

let user: FakeProperties;
let doc: FakeProperties;
let lock: FakeLock;
let userLock: FakeLock;
let documentLockHere: boolean;
let sheet: FakeSpreadsheet;

beforeEach(() => {
  freshSession(); // a new execution: nothing remembered of the last one
  user = new FakeProperties();
  doc = new FakeProperties();
  lock = new FakeLock();
  userLock = new FakeLock();
  documentLockHere = true;
  sheet = new FakeSpreadsheet();
  Object.assign(globalThis, {
    PropertiesService: { getUserProperties: () => user, getDocumentProperties: () => doc },
    // The document lock guards the spreadsheet's state, the user lock the user's; the script lock (every user of a
    // published add-on, in every spreadsheet) is never taken.
    LockService: {
      getDocumentLock: () => (documentLockHere ? lock : null),
      getUserLock: () => userLock,
      getScriptLock: () => {
        throw new Error('the script lock is never taken');
      },
    },
    SpreadsheetApp: { getActiveSpreadsheet: () => sheet },
  });
});

const count = (raw: unknown) => finite(raw);
const job = (raw: unknown) =>
  isRecord(raw) && typeof raw.id === 'string' ? (raw as { id: string }) : undefined;

describe('stored values', () => {
  it('reads JSON through its parse: missing, damaged or invalid values read as absent', () => {
    user.data.good = '{"id":"a","n":1}';
    user.data.damaged = '{"id":';
    user.data.wrongShape = '{"id":7}';
    user.data.array = '[1,2]';
    expect(readValue('user', 'good', job)).toEqual({ id: 'a', n: 1 });
    expect(readValue('user', 'missing', job)).toBeUndefined();
    expect(readValue('user', 'damaged', job)).toBeUndefined();
    expect(readValue('user', 'wrongShape', job)).toBeUndefined();
    expect(readValue('user', 'array', job)).toBeUndefined();
  });

  it('reads numbers stored as plain text by earlier versions (retention "30" in DocumentProperties)', () => {
    doc.data['dapa.retentionDays'] = '30';
    expect(readValue('document', 'dapa.retentionDays', count)).toBe(30);
    doc.data['dapa.retentionDays'] = 'thirty';
    expect(readValue('document', 'dapa.retentionDays', count)).toBeUndefined();
  });

  it("keeps the spreadsheet's values in its developer metadata, which wins over an earlier version's", () => {
    doc.data['dapa.retentionDays'] = '30';
    writeValue('document', 'dapa.retentionDays', 7);
    expect(sheet.value('dapa.retentionDays')).toBe('7');
    expect('dapa.retentionDays' in doc.data).toBe(false); // moved, not copied
    expect(readValue('document', 'dapa.retentionDays', count)).toBe(7);
    writeValue('document', 'dapa.retentionDays', 9);
    expect(sheet.metadata.filter((m) => m.key === 'dapa.retentionDays')).toEqual([
      { key: 'dapa.retentionDays', value: '9' },
    ]);
  });

  it('asks DocumentProperties no more once it holds nothing of an earlier version (the spreadsheet is marked)', () => {
    let asked = 0;
    for (const method of ['getProperty', 'getKeys', 'deleteProperty'] as const) {
      const call = doc[method].bind(doc) as (...args: unknown[]) => unknown;
      (doc as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => (
        (asked += 1),
        call(...args)
      );
    }
    expect(readValue('document', 'dapa.schedule', count)).toBeUndefined();
    writeValue('document', 'dapa.retentionDays', 7);
    const once = asked;
    expect(once).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      expect(readValue('document', 'dapa.schedule', count)).toBeUndefined();
      writeValue('document', 'dapa.retentionDays', 8 + i);
      expect(readValue('document', 'dapa.retentionDays', count)).toBe(8 + i);
    }
    expect(asked).toBe(once);
    expect(deleteKeys('document', 'dapa.')).toBeUndefined();
    expect(sheet.value('dapa.retentionDays')).toBeUndefined();
  });

  it("lists the user's keys afresh, except under the user lock it holds since it read them", () => {
    user.data['dapa.bg.a'] = '{}';
    readText('user', 'dapa.bg.a');
    let reads = user.reads;
    user.data['dapa.bg.b'] = '{}'; // another execution's, without this one's lock
    expect(userKeys()).toEqual(['dapa.bg.a', 'dapa.bg.b']);
    expect(user.reads).toBe(reads + 1);
    locked('user', () => {
      readText('user', 'dapa.bg.a'); // read again under the lock
      reads = user.reads;
      expect(userKeys()).toEqual(['dapa.bg.a', 'dapa.bg.b']);
      expect(user.reads).toBe(reads);
    });
    readText('user', 'dapa.bg.a');
    reads = user.reads;
    userKeys();
    expect(user.reads).toBe(reads + 1); // the lock is given back: a listing reads again
  });

  it('keeps the user and the document scopes apart, and deletes on undefined', () => {
    writeValue('user', 'dapa.k', { id: 'u' });
    writeValue('document', 'dapa.k', 5);
    expect(user.data['dapa.k']).toBe('{"id":"u"}');
    expect(sheet.value('dapa.k')).toBe('5');
    writeValue('user', 'dapa.k', undefined);
    expect('dapa.k' in user.data).toBe(false);
    expect(sheet.value('dapa.k')).toBe('5');
    writeValue('document', 'dapa.k', undefined);
    expect(sheet.value('dapa.k')).toBeUndefined();
  });

  it('writes texts at once and deletes the undefined ones; deletes keys by prefix', () => {
    user.data['dapa.apiKey'] = 'old';
    writeTexts('user', { 'dapa.environment': 'custom', 'dapa.apiKey': undefined });
    expect(user.data).toEqual({ 'dapa.environment': 'custom' });
    expect(readText('user', 'dapa.apiKey')).toBeUndefined();
    user.data['dapa.plan.a'] = '{}';
    user.data['dapa.plan.b'] = '{}';
    deleteKeys('user', 'dapa.plan.');
    expect(Object.keys(user.data)).toEqual(['dapa.environment']);
  });
});

describe("the user's properties", () => {
  it('are read in one call for many keys, and read again under the user lock before a change', () => {
    user.data['dapa.apiKey'] = 'k';
    user.data['dapa.environment'] = 'production';
    user.data['dapa.creditBudget'] = '100';
    expect(readText('user', 'dapa.apiKey')).toBe('k');
    expect(readText('user', 'dapa.environment')).toBe('production');
    expect(readText('user', 'dapa.creditBudget')).toBe('100');
    expect(user.reads).toBe(1);
    user.data['dapa.creditBudget'] = '50'; // another execution changed it
    expect(updateValue('user', 'dapa.creditBudget', count, (n) => (n ?? 0) + 1)).toBe(51);
    expect(user.reads).toBe(2);
    expect(readText('user', 'dapa.creditBudget')).toBe('51');
  });
});

describe('the lock policy', () => {
  it('takes the user lock first, then the document lock; the user lock inside the document lock throws', () => {
    expect(locked('user', () => locked('document', () => [userLock.held, lock.held]))).toEqual([true, true]);
    expect(() => locked('document', () => locked('user', () => 'never'))).toThrow(LOCK_ORDER);
    expect([userLock.held, lock.held]).toEqual([false, false]);
    // Without a document lock (an execution in a spreadsheet opened by id) 'document' is the user lock, and nesting
    // is fine.
    freshSession();
    documentLockHere = false;
    expect(locked('document', () => locked('user', () => userLock.held))).toBe(true);
  });

  it("updates a spreadsheet's value under the document lock, waiting at most LOCK_WAIT_MS, and releases it", () => {
    sheet.addDeveloperMetadata('count', '2');
    expect(updateValue('document', 'count', count, (n) => (n ?? 0) + 3)).toBe(5);
    expect(sheet.value('count')).toBe('5');
    expect(lock.waits).toEqual([LOCK_WAIT_MS]);
    expect(lock.held).toBe(false);
    expect(userLock.waits).toEqual([]);
  });

  it("updates a user's value under the user lock, not the document's", () => {
    expect(updateValue('user', 'n', count, () => 7)).toBe(7);
    expect(userLock.waits).toEqual([LOCK_WAIT_MS]);
    expect(lock.waits).toEqual([]);
  });

  it('takes the user lock for a spreadsheet without a document lock (a dispatcher in a spreadsheet opened by id)', () => {
    documentLockHere = false;
    sheet.addDeveloperMetadata('count', '1');
    expect(updateValue('document', 'count', count, (n) => (n ?? 0) + 1)).toBe(2);
    expect(userLock.waits).toEqual([LOCK_WAIT_MS]);
    expect(lock.waits).toEqual([]);
  });

  it('throws a clear message and writes nothing when another execution keeps the lock', () => {
    sheet.addDeveloperMetadata('count', '2');
    lock.takenElsewhere = true;
    expect(() => updateValue('document', 'count', count, (n) => (n ?? 0) + 1)).toThrow(BUSY);
    expect(sheet.value('count')).toBe('2');
  });

  it('releases the lock when the change throws', () => {
    expect(() =>
      locked('document', () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(lock.held).toBe(false);
  });

  it('runs a nested section inside the outer hold without releasing it', () => {
    locked('document', () => {
      updateValue('document', 'x', count, () => 1);
      expect(lock.held).toBe(true);
    });
    expect(lock.held).toBe(false);
    expect(lock.waits).toEqual([LOCK_WAIT_MS]);
  });
});

/** Developer metadata entries on a fake spreadsheet: on it (no column) or on a whole column of its one sheet. */
interface Entry {
  key: string;
  value: string;
  visibility: string;
  column?: number;
}

/** A spreadsheet with one sheet, whose whole columns ('I:I') carry metadata, and a finder over all of it. */
function marksSpreadsheet(entries: Entry[]) {
  const handle = (e: Entry) => ({
    getKey: () => e.key,
    getValue: () => e.value,
    remove: () => entries.splice(entries.indexOf(e), 1),
  });
  const columnOf = (a1: string) => [...a1.split(':')[0]].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0);
  const grid = {
    getRange: (a1: string) => ({
      getDeveloperMetadata: () => entries.filter((e) => e.column === columnOf(a1)).map(handle),
      addDeveloperMetadata: (key: string, value: string, visibility: string) =>
        entries.push({ key, value, visibility, column: columnOf(a1) }),
    }),
  };
  const spreadsheet = { createDeveloperMetadataFinder: () => ({ find: () => entries.map(handle) }) };
  return {
    sheet: grid as unknown as GoogleAppsScript.Spreadsheet.Sheet,
    spreadsheet: spreadsheet as unknown as GoogleAppsScript.Spreadsheet.Spreadsheet,
  };
}

describe('developer metadata, all of it kept here', () => {
  beforeEach(() => {
    Object.assign(globalThis.SpreadsheetApp, { DeveloperMetadataVisibility: { PROJECT: 'PROJECT' } });
  });

  it("marks a whole column in place of its earlier mark, visible to this project only, and leaves others' entries", () => {
    const entries: Entry[] = [{ key: 'my.tag', value: 'kept', visibility: 'DOCUMENT', column: 9 }];
    const { sheet } = marksSpreadsheet(entries);
    markColumn(sheet, 9, '0 2 10');
    markColumn(sheet, 9, '0 2 40');
    markColumn(sheet, 28, '1 2 40'); // AB
    expect(entries).toEqual([
      { key: 'my.tag', value: 'kept', visibility: 'DOCUMENT', column: 9 },
      { key: 'dapa-output', value: '0 2 40', visibility: 'PROJECT', column: 9 },
      { key: 'dapa-output', value: '1 2 40', visibility: 'PROJECT', column: 28 },
    ]);
    expect(readColumnMarks(sheet, 9)).toEqual(['0 2 40']);
    expect(readColumnMarks(sheet, 28)).toEqual(['1 2 40']);
    expect(readColumnMarks(sheet, 10)).toEqual([]);
  });

  it("the removal forgets every 'dapa.' and 'dapa-' entry (marks included) and earlier versions' properties, nothing else", () => {
    const entries: Entry[] = [
      { key: 'dapa.retentionDays', value: '10', visibility: 'PROJECT' },
      { key: 'dapa', value: 'mine', visibility: 'DOCUMENT' },
      { key: 'dapaNotes', value: 'mine', visibility: 'DOCUMENT' },
      { key: 'dapa_output', value: 'mine', visibility: 'DOCUMENT', column: 10 },
    ];
    const { sheet, spreadsheet } = marksSpreadsheet(entries);
    markColumn(sheet, 9, '0 1 5');
    markColumn(sheet, 10, '1 1 5');
    doc.data['dapa.schedule'] = '{}';
    doc.data['their.setting'] = 'x';
    expect(forgetAllMetadata(spreadsheet)).toBe(4); // the retention, two marks, one legacy property
    expect(entries.map((e) => e.key)).toEqual(['dapa', 'dapaNotes', 'dapa_output']);
    expect(doc.data).toEqual({ 'their.setting': 'x' });
  });
});
