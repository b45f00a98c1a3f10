// The Sheets shell's storage layer (apps-script/src/storage.ts) on fakes of PropertiesService and LockService:
// validated JSON values, deletes, and the one lock policy.
import {
  BUSY,
  deleteKeys,
  finite,
  isRecord,
  LOCK_WAIT_MS,
  locked,
  readText,
  readValue,
  updateValue,
  writeTexts,
  writeValue,
} from '../../apps-script/src/storage';

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

let user: FakeProperties;
let doc: FakeProperties;
let lock: FakeLock;

beforeEach(() => {
  user = new FakeProperties();
  doc = new FakeProperties();
  lock = new FakeLock();
  Object.assign(globalThis, {
    PropertiesService: { getUserProperties: () => user, getDocumentProperties: () => doc },
    LockService: { getUserLock: () => lock },
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

  it('reads numbers stored as plain text by earlier versions (retention "30")', () => {
    doc.data['dapa.retentionDays'] = '30';
    expect(readValue('document', 'dapa.retentionDays', count)).toBe(30);
    doc.data['dapa.retentionDays'] = 'thirty';
    expect(readValue('document', 'dapa.retentionDays', count)).toBeUndefined();
  });

  it('keeps the user and the document scopes apart, and deletes on undefined', () => {
    writeValue('user', 'k', { id: 'u' });
    writeValue('document', 'k', 5);
    expect(user.data.k).toBe('{"id":"u"}');
    expect(doc.data.k).toBe('5');
    writeValue('user', 'k', undefined);
    expect('k' in user.data).toBe(false);
    expect(doc.data.k).toBe('5');
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

describe('the lock policy', () => {
  it('updates under the user lock, waiting at most LOCK_WAIT_MS, and releases it', () => {
    doc.data.count = '2';
    expect(updateValue('document', 'count', count, (n) => (n ?? 0) + 3)).toBe(5);
    expect(doc.data.count).toBe('5');
    expect(lock.waits).toEqual([LOCK_WAIT_MS]);
    expect(lock.held).toBe(false);
  });

  it('throws a clear message and writes nothing when another execution keeps the lock', () => {
    doc.data.count = '2';
    lock.takenElsewhere = true;
    expect(() => updateValue('document', 'count', count, (n) => (n ?? 0) + 1)).toThrow(BUSY);
    expect(doc.data.count).toBe('2');
  });

  it('releases the lock when the change throws', () => {
    expect(() =>
      locked(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(lock.held).toBe(false);
  });

  it('runs a nested section inside the outer hold without releasing it', () => {
    locked(() => {
      updateValue('user', 'x', count, () => 1);
      expect(lock.held).toBe(true);
    });
    expect(lock.held).toBe(false);
    expect(lock.waits).toEqual([LOCK_WAIT_MS]);
  });
});
