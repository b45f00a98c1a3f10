// PropertiesService: script, document and per-user stores with the documented 9 KB value and 500 KB store limits,
// and the 50,000 calls a day counted per user across all three stores (PropertyQuota).
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { DailyQuota } from './daily-quota';
import {
  PROPERTY_CALLS_PER_DAY,
  PROPERTY_QUOTA_MESSAGE,
  PROPERTY_STORE_MAX_BYTES,
  PROPERTY_VALUE_MAX_BYTES,
} from './limits';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * The Properties quota as Google counts it: "Properties read/write: 50,000 / day" (consumer accounts), and "Quotas are
 * per user and reset 24 hours after the first request" (quotas page). One count per user (the execution's user)
 * across the user, document and script stores: a user's window opens with their first call and lasts 24 hours; past
 * 50,000 calls in it a call throws Google's text. For reports the calls are also kept per user and UTC day.
 */
export class PropertyQuota extends DailyQuota {
  constructor(now: () => number, perDay = PROPERTY_CALLS_PER_DAY) {
    super(now, perDay, PROPERTY_QUOTA_MESSAGE);
  }

  /** Calls of `user` (default: everyone) on UTC day `day` (floor(ms / 86,400,000); default: all days). */
  calls(user?: string, day?: number): number {
    return this.total(user, day);
  }
}

/** The data of one property store, kept by the stand-in across executions. */
export class PropertyStore {
  readonly values = new Map<string, string>();
  calls = 0;

  size(): number {
    let total = 0;
    for (const [k, v] of this.values) total += bytes(k) + bytes(v);
    return total;
  }

  snapshot(): Record<string, string> {
    return Object.fromEntries(this.values);
  }
}

export class Properties extends AppsScriptObject {
  readonly kind = 'Properties';

  constructor(
    private readonly store: PropertyStore,
    /** Counts one call against the quota of the execution's user (throws past it). */
    private readonly quota: () => void,
    /** The owner's user properties seen from a custom function run for another editor: reads only. */
    private readonly readOnly = false,
  ) {
    super();
  }

  private _writable(method: string): void {
    if (this.readOnly) throw noPermission(method);
  }

  private _count(): void {
    this.quota();
    this.store.calls += 1;
  }

  private _put(key: unknown, value: unknown, staged: Map<string, string>): void {
    if (key === null || key === undefined) throw new AppsScriptException('Invalid argument: key');
    const k = String(key);
    const v = String(value);
    if (bytes(v) > PROPERTY_VALUE_MAX_BYTES) throw new AppsScriptException('Argument too large: value');
    staged.set(k, v);
  }

  private _commit(staged: Map<string, string>): void {
    let total = 0;
    for (const [k, v] of staged) total += bytes(k) + bytes(v);
    if (total > PROPERTY_STORE_MAX_BYTES) {
      throw new AppsScriptException(
        'You have exceeded the property storage quota. Please remove some properties and try again.',
      );
    }
    this.store.values.clear();
    for (const [k, v] of staged) this.store.values.set(k, v);
  }

  getProperty(key: unknown): string | null {
    this._count();
    return this.store.values.get(String(key)) ?? null;
  }

  getProperties(): Record<string, string> {
    this._count();
    return this.store.snapshot();
  }

  getKeys(): string[] {
    this._count();
    return [...this.store.values.keys()];
  }

  setProperty(key: unknown, value: unknown): this {
    this._count();
    this._writable('setProperty');
    const staged = new Map(this.store.values);
    this._put(key, value, staged);
    this._commit(staged);
    return this;
  }

  setProperties(properties: unknown, deleteAllOthers?: unknown): this {
    this._count();
    this._writable('setProperties');
    if (properties === null || typeof properties !== 'object')
      throw new AppsScriptException('Invalid argument: properties');
    const staged = deleteAllOthers === true ? new Map<string, string>() : new Map(this.store.values);
    for (const [k, v] of Object.entries(properties as Record<string, unknown>)) this._put(k, v, staged);
    this._commit(staged);
    return this;
  }

  deleteProperty(key: unknown): this {
    this._count();
    this._writable('deleteProperty');
    this.store.values.delete(String(key));
    return this;
  }

  deleteAllProperties(): this {
    this._count();
    this._writable('deleteAllProperties');
    this.store.values.clear();
    return this;
  }
}

export class PropertiesService extends AppsScriptObject {
  readonly kind = 'PropertiesService';

  constructor(
    private readonly execution: Execution,
    private readonly stores: {
      script: PropertyStore;
      /** The current document's store; null when the execution has no document. */
      document: PropertyStore | null;
      user: (email: string) => PropertyStore;
    },
    private readonly quota: PropertyQuota,
  ) {
    super();
  }

  private _count = (): void => this.quota.count(this.execution.user);

  private _allowed(what: string): void {
    if (this.execution.authMode === 'NONE') throw noPermission(`PropertiesService.${what}`);
  }

  getScriptProperties(): Properties {
    this._allowed('getScriptProperties');
    return new Properties(this.stores.script, this._count);
  }

  /** Null when there is no current document (Google: "null if the script is not an add-on or bound ..."). */
  getDocumentProperties(): Properties | null {
    this._allowed('getDocumentProperties');
    return this.stores.document ? new Properties(this.stores.document, this._count) : null;
  }

  getUserProperties(): Properties {
    this._allowed('getUserProperties');
    return new Properties(
      this.stores.user(this.execution.user),
      this._count,
      this.execution.userPropertiesReadOnly,
    );
  }
}
