// The hidden store sheet (stores/store-sheet.ts and the modules on it) on a fake spreadsheet that counts its calls:
// results appended in batches with no lock, read once and kept right after the execution's own appends; the sheet
// made once at 1 × 4 even when two executions make it at once; a compaction that runs only as the step lease's holder
// (no document lock needed) and loses no row another execution appends between its read and its deletions; the legacy version columns given back;
// the step lease and a due refresh claimed through the log.
type Compaction = typeof import('../../apps-script/src/stores/results');
type ResultStore = typeof import('../../apps-script/src/stores/results');
type StepLease = typeof import('../../apps-script/src/stores/store-sheet');
type ScheduleStore = typeof import('../../apps-script/src/stores/background-store');
type StorageModule = typeof import('../../apps-script/src/stores/storage');

/** The modules as one execution loads them (module-level memos start empty in each). */
interface Execution {
  compaction: Compaction;
  results: ResultStore;
  lease: StepLease;
  schedule: ScheduleStore;
  storage: StorageModule;
}

/** A new execution: the store modules loaded afresh. */
function execution(): Execution {
  jest.resetModules();
  return {
    compaction: jest.requireActual('../../apps-script/src/stores/results'),
    results: jest.requireActual('../../apps-script/src/stores/results'),
    lease: jest.requireActual('../../apps-script/src/stores/store-sheet'),
    schedule: jest.requireActual('../../apps-script/src/stores/background-store'),
    storage: jest.requireActual('../../apps-script/src/stores/storage'),
  };
}

const DAY = 86_400_000;

class FakeLock {
  held = false;
  taken = 0;
  tryLock(): boolean {
    this.taken += 1;
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

/** Calls by method name, across the fake's sheets and ranges. */
let calls: Record<string, number>;
const count = (method: string) => (calls[method] = (calls[method] ?? 0) + 1);

class FakeSheet {
  rows: unknown[][] = [];
  hidden = false;
  /** Runs before each deleteRows (another execution's work between the compaction's read and its deletions). */
  beforeDelete?: () => void;
  beforeRename?: () => void;
  constructor(
    readonly book: FakeSpreadsheet,
    public name: string,
    public maxRows = 1000,
    public maxColumns = 26,
  ) {}
  getName() {
    return this.name;
  }
  getLastRow() {
    count('getLastRow');
    for (let r = this.rows.length; r > 0; r--) if (this.rows[r - 1]?.some((v) => v !== '')) return r;
    return 0;
  }
  getMaxRows() {
    return this.maxRows;
  }
  getMaxColumns() {
    return this.maxColumns;
  }
  getRange(row: number, column: number, rows = 1, columns = 1) {
    if (row + rows - 1 > this.maxRows || column + columns - 1 > this.maxColumns)
      throw new Error('The coordinates of the range are outside the dimensions of the sheet.');
    return {
      getValues: () => {
        count('getValues');
        return Array.from({ length: rows }, (_, r) =>
          Array.from({ length: columns }, (_, c) => this.rows[row - 1 + r]?.[column - 1 + c] ?? ''),
        );
      },
      setValues: (values: unknown[][]) => {
        count('setValues');
        values.forEach((line, r) =>
          line.forEach((v, c) => ((this.rows[row - 1 + r] ??= [])[column - 1 + c] = v)),
        );
      },
    };
  }
  appendRow(values: unknown[]) {
    count('appendRow');
    const at = this.getLastRow();
    if (at + 1 > this.maxRows) this.maxRows = at + 1;
    this.rows[at] = [...values];
  }
  deleteRows(row: number, n: number) {
    count('deleteRows');
    this.beforeDelete?.();
    this.rows.splice(row - 1, n);
    this.maxRows -= n;
  }
  deleteColumns(column: number, n: number) {
    count('deleteColumns');
    for (const line of this.rows) line?.splice(column - 1, n);
    this.maxColumns -= n;
  }
  hideSheet() {
    this.hidden = true;
  }
  setName(name: string) {
    this.beforeRename?.();
    if (this.book.sheets.some((s) => s !== this && s.name === name))
      throw new Error(`A sheet with the name "${name}" already exists. Please enter another name.`);
    this.name = name;
  }
  activate() {}
}

class FakeSpreadsheet {
  sheets: FakeSheet[] = [new FakeSheet(this, 'Sheet1')];
  metadata: Array<{ key: string; value: string }> = [];
  /** Runs once on the next sheet made (another execution at work while this one makes its sheet). */
  onInsert?: (sheet: FakeSheet) => void;
  getId() {
    return 'fake-1';
  }
  getSheetByName(name: string) {
    return this.sheets.find((s) => s.name === name) ?? null;
  }
  getSheets() {
    return [...this.sheets];
  }
  getActiveSheet() {
    return this.sheets[0];
  }
  insertSheet(name: string) {
    count('insertSheet');
    if (this.getSheetByName(name)) throw new Error(`A sheet with the name "${name}" already exists.`);
    const sheet = new FakeSheet(this, name);
    this.sheets.push(sheet);
    const hook = this.onInsert;
    this.onInsert = undefined;
    hook?.(sheet);
    return sheet;
  }
  deleteSheet(sheet: FakeSheet) {
    this.sheets = this.sheets.filter((s) => s !== sheet);
  }
  getDeveloperMetadata() {
    return this.metadata.map((entry) => ({
      getKey: () => entry.key,
      getValue: () => entry.value,
      setValue: (value: string) => (entry.value = value),
      remove: () => this.metadata.splice(this.metadata.indexOf(entry), 1),
    }));
  }
  addDeveloperMetadata(key: string, value: string) {
    this.metadata.push({ key, value });
  }
  store(): FakeSheet | undefined {
    return this.sheets.find((s) => s.name === '_dapa_results');
  }
}

let book: FakeSpreadsheet;
let documentLock: FakeLock;
let userLock: FakeLock;
let withDocumentLock: boolean;
let clock: number;
let x: Execution;

beforeEach(() => {
  book = new FakeSpreadsheet();
  documentLock = new FakeLock();
  userLock = new FakeLock();
  withDocumentLock = false;
  calls = {};
  clock = 100 * DAY;
  jest.spyOn(Date, 'now').mockImplementation(() => clock);
  x = execution();
  Object.assign(globalThis, {
    SpreadsheetApp: { getActiveSpreadsheet: () => book },
    PropertiesService: { getDocumentProperties: () => null, getUserProperties: () => null },
    LockService: {
      getDocumentLock: () => (withDocumentLock ? documentLock : null),
      getUserLock: () => userLock,
      getScriptLock: () => {
        throw new Error('the script lock is never taken');
      },
    },
    Utilities: {
      DigestAlgorithm: { SHA_256: 'sha256' },
      Charset: { UTF_8: 'utf8' },
      computeDigest: (_: unknown, text: string) => [...Buffer.from(text)],
      base64EncodeWebSafe: (bytes: number[]) => Buffer.from(bytes).toString('base64url'),
    },
  });
});

afterEach(() => jest.restoreAllMocks());

const BASE = 'https://api.example.com';
const record = (domain: string, da = 1) => ({ domain, site_da: da, site_pa: 2, site_mr: 3, spam_score: 4 });
const results = (n: number, prefix = 'd', da = 1) =>
  Array.from({ length: n }, (_, i) => ({
    key: `${prefix}${i}.com`,
    record: record(`${prefix}${i}.com`, da),
  }));

describe('results appended in batches, no lock', () => {
  it('5,000 results: a dozen appendRow calls into a 1 × 4 sheet made once (header, hidden), no lock taken', () => {
    x.results.storeRecords(BASE, results(5_000));
    const store = book.store() as FakeSheet;
    expect(calls.appendRow).toBeLessThanOrEqual(15);
    expect(calls.insertSheet).toBe(1);
    expect([store.hidden, store.maxColumns, store.maxRows]).toEqual([true, 4, 1 + calls.appendRow]);
    expect(store.rows[0]).toEqual(['domain', 'service', 'record', 'checked at (ms)']);
    expect(book.sheets.map((s) => s.name)).toEqual(['Sheet1', '_dapa_results']);
    expect([documentLock.taken, userLock.taken]).toEqual([0, 0]);
    // Another execution reads them all in one getValues.
    calls = {};
    const found = execution().results.readStoredRecords(BASE, ['d0.com', 'd4999.com', 'nope.com']);
    expect([...found.keys()]).toEqual(['d0.com', 'd4999.com']);
    expect(calls.getValues).toBe(1);
  });

  it('what the execution appends is read right after, without reading the sheet again; the newest wins', () => {
    x.results.storeRecords(BASE, results(3, 'a', 10), clock - 1_000);
    expect(x.results.readStoredRecords(BASE, ['a0.com']).get('a0.com')?.site_da).toBe(10);
    const reads = calls.getValues;
    x.results.storeRecords(BASE, results(2, 'a', 20));
    expect(x.results.readStoredRecords(BASE, ['a0.com', 'a2.com'])).toEqual(
      new Map([
        ['a0.com', record('a0.com', 20)],
        ['a2.com', record('a2.com', 10)],
      ]),
    );
    expect(calls.getValues).toBe(reads);
    // Results of another service never mix.
    expect(x.results.readStoredRecords('https://other.example.com', ['a0.com']).size).toBe(0);
  });

  it('reads the rows earlier versions wrote (one result a row), beside batches', () => {
    const store = new FakeSheet(book, '_dapa_results', 3, 30);
    store.rows = [
      ['domain', 'service', 'record', 'checked at (ms)', '', 'v1.1', 'v2.3'],
      ['old.com', x.results.serviceId(BASE), JSON.stringify(record('old.com', 5)), clock - DAY],
    ];
    book.sheets.push(store);
    x.results.storeRecords(BASE, results(1, 'new'));
    expect([...execution().results.readStoredRecords(BASE, ['old.com', 'new0.com']).keys()]).toEqual([
      'old.com',
      'new0.com',
    ]);
    expect(store.rows[2][0]).toBe('*'); // appended below the earlier rows, not over them
  });

  it('two executions make the sheet at once: one sheet, no sheet left half-made, both rows kept', () => {
    book.onInsert = () => {
      // Another execution makes and fills its own store while this one sizes its new sheet.
      const theirs = new FakeSheet(book, '_dapa_results', 1, 4);
      theirs.rows = [['domain', 'service', 'record', 'checked at (ms)']];
      book.sheets.push(theirs);
      theirs.appendRow([
        '*',
        x.results.serviceId(BASE),
        JSON.stringify({ k: ['x.com'], r: [record('x.com')] }),
        clock,
      ]);
    };
    x.results.storeRecords(BASE, results(1, 'mine'));
    expect(book.sheets.map((s) => s.name)).toEqual(['Sheet1', '_dapa_results']);
    const store = book.store() as FakeSheet;
    expect(store.rows.map((r) => r[0])).toEqual(['domain', '*', '*']);
    expect([store.maxRows, store.maxColumns]).toEqual([3, 4]);
  });
});

describe('upkeep: compaction by whoever holds the step lease, with or without the document lock', () => {
  /** A store of `n` pairs: an expired row, then a live one (so the dead rows are n runs of one row). */
  function fragmented(n: number): FakeSheet {
    const store = new FakeSheet(book, '_dapa_results', 1 + 2 * n, 4);
    const service = x.results.serviceId(BASE);
    store.rows = [['domain', 'service', 'record', 'checked at (ms)']];
    for (let i = 0; i < n; i++) {
      store.rows.push(['*', service, JSON.stringify({ k: [`old${i}.com`], r: [record(`old${i}.com`)] }), 1]);
      store.rows.push([
        '*',
        service,
        JSON.stringify({ k: [`live${i}.com`], r: [record(`live${i}.com`)] }),
        clock,
      ]);
    }
    book.sheets.push(store);
    return store;
  }

  /** The step lease, as a background step takes it (a claim row appended to the log). */
  const lease = () => x.lease.takeStepLease(clock + 300_000) as string;
  /** The result rows' first domain each (claim rows left out). */
  const resultKeys = (store: FakeSheet) =>
    store.rows
      .slice(1)
      .filter((r) => !String(r[1]).startsWith('claim:'))
      .map((r) => (JSON.parse(String(r[2])) as { k: string[] }).k[0]);

  it('without the step lease it deletes nothing', () => {
    const store = fragmented(10);
    expect(x.compaction.compactStore(book as never, 'not-the-holder')).toBeUndefined();
    expect(store.rows.length).toBe(21);
    expect(calls.deleteRows).toBeUndefined();
    // Another execution's lease: an upkeep of the menu or the sidebar leaves the log to it.
    const theirs = lease();
    expect(execution().compaction.upkeep(book as never)).toBeUndefined();
    expect(calls.deleteRows).toBeUndefined();
    expect(theirs).toMatch(/^h/);
  });

  it("deletes the dead runs bottom-up with no document lock (the dispatcher's), and a row appended meanwhile is kept", () => {
    const store = fragmented(10);
    const service = x.results.serviceId(BASE);
    const holder = lease();
    let appended = 0;
    store.beforeDelete = () => {
      // Another user's execution (no lock) appends between the compaction's read and each of its deletions.
      const key = `meanwhile${appended++}.com`;
      store.appendRow(['*', service, JSON.stringify({ k: [key], r: [record(key)] }), clock]);
    };
    expect(x.compaction.compactStore(book as never, holder)).toEqual({ rows: 10, columns: 0 });
    expect(calls.deleteRows).toBe(10);
    expect(documentLock.taken).toBe(0);
    store.beforeDelete = undefined;
    expect(resultKeys(store)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `live${i}.com`),
      ...Array.from({ length: 10 }, (_, i) => `meanwhile${i}.com`),
    ]);
    expect(store.rows[0][0]).toBe('domain');
  });

  it('storing never compacts, however much of the log is dead: the upkeep is its own step', () => {
    withDocumentLock = true;
    const store = fragmented(12);
    x.results.storeRecords(BASE, results(1, 'fresh'));
    expect(store.rows.length).toBe(1 + 24 + 1);
    expect(calls.deleteRows).toBeUndefined();
    // The upkeep (a step holding the lease, here the menu's own) does it.
    expect(execution().compaction.upkeep(book as never)).toEqual({ rows: 12, columns: 0 });
  });

  it('keeps nothing older than the retention, even when too few rows are dead to be worth a compaction otherwise', () => {
    const store = fragmented(1);
    for (let i = 0; i < 20; i++)
      store.rows.push([
        '*',
        x.results.serviceId(BASE),
        JSON.stringify({ k: [`more${i}.com`], r: [record(`more${i}.com`)] }),
        clock,
      ]);
    // One expired row among 22: not a quarter dead, yet past the 30 days the privacy policy states.
    const holder = lease();
    expect(x.compaction.upkeep(book as never, { lease: holder })).toEqual({ rows: 1, columns: 0 });
    expect(resultKeys(store)).not.toContain('old0.com');
    expect(
      store.rows.slice(1).every((r) => String(r[1]).startsWith('claim:') || Number(r[3]) === clock),
    ).toBe(true);
    // Weighed once an execution: a second upkeep in the same one does nothing more.
    expect(x.compaction.upkeep(book as never, { lease: holder })).toBeUndefined();
  });

  it('deletes for 2 seconds at most, and the next compaction goes on from there', () => {
    const store = fragmented(10);
    const holder = lease();
    store.beforeDelete = () => (clock += 600); // each deletion takes 0.6 s
    expect(x.compaction.compactStore(book as never, holder)).toEqual({ rows: 4, columns: 0 });
    // The bottom runs went first; the rows above them are untouched.
    expect(store.rows.length).toBe(22 - 4);
    expect(x.compaction.compactStore(book as never, holder)).toEqual({ rows: 4, columns: 0 });
    expect(execution().compaction.compactStore(book as never, holder)).toEqual({ rows: 2, columns: 0 });
    expect(store.rows.length).toBe(12);
  });

  it('gives the legacy version columns back when told no formula reads them, as the lease holder only', () => {
    const store = fragmented(1);
    store.maxColumns = 2_285;
    store.rows[0].push('', 'v1.1', 'v2.2');
    expect(x.compaction.compactStore(book as never, 'not-the-holder', true)).toBeUndefined();
    expect(store.maxColumns).toBe(2_285);
    expect(x.compaction.upkeep(book as never, { legacyFree: true })?.columns).toBe(2_281);
    expect([store.maxColumns, store.rows[0]]).toEqual([
      4,
      ['domain', 'service', 'record', 'checked at (ms)'],
    ]);
  });
});

describe('claims on the log', () => {
  it('the step lease: one holder at a time, given back, runs out by itself; no lock taken', () => {
    const first = x.lease.takeStepLease(clock + 300_000);
    expect(first).toMatch(/^h/);
    clock += 1_000;
    expect(x.lease.takeStepLease(clock + 300_000)).toBeUndefined();
    x.lease.returnStepLease('someone else');
    expect(x.lease.takeStepLease(clock + 300_000)).toBeUndefined();
    x.lease.returnStepLease(first as string);
    const second = x.lease.takeStepLease(clock + 300_000);
    expect(second).toBeDefined();
    clock += 300_001; // its holder was stopped by Google: the lease runs out
    expect(x.lease.takeStepLease(clock + 300_000)).toBeDefined();
    expect([documentLock.taken, userLock.taken]).toEqual([0, 0]);
  });

  it('a due refresh: claimed once, the schedule moved on; a claim another execution appended first wins', () => {
    x.storage.writeValue('document', 'dapa.schedule', {
      every: 'daily',
      target: 'formulas',
      nextAt: clock - 10,
    });
    // Another user's dispatcher claimed this refresh a moment ago (its row is above ours).
    book.sheets.push(new FakeSheet(book, '_dapa_results', 2, 4));
    (book.store() as FakeSheet).rows = [
      ['domain', 'service', 'record', 'checked at (ms)'],
      [clock - 5, `claim:schedule:${clock - 10}`, 'hother', clock + 600_000],
    ];
    expect(x.schedule.claimDueSchedule(clock)).toBeUndefined();
    expect(x.schedule.readSchedule()?.nextAt).toBe(clock - 10); // only the winner moves it
    clock += 700_000; // the winner never moved it (stopped): its claim ran out
    const due = x.schedule.claimDueSchedule(clock);
    expect(due?.nextAt).toBe(clock - 700_010);
    expect(x.schedule.readSchedule()?.nextAt).toBe(clock - 700_010 + DAY);
    expect(x.schedule.claimDueSchedule(clock)).toBeUndefined();
  });
});
