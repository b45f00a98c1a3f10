// CacheService: script, document and per-user caches with the documented limits (key ≤ 250 characters, value
// ≤ 100 KB, expiration ≤ 21,600 s, default 600 s) and the observed ~1,000-item cap (oldest 10% evicted when full).
import type { SharedClock } from '../../sandbox/virtual';
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import {
  CACHE_DEFAULT_EXPIRATION_S,
  CACHE_KEY_MAX_CHARS,
  CACHE_MAX_EXPIRATION_S,
  CACHE_MAX_ITEMS,
  CACHE_VALUE_MAX_BYTES,
} from './limits';

interface Entry {
  value: string;
  expiresAt: number;
}

/** The data of one cache, kept across executions. */
export class CacheStore {
  readonly entries = new Map<string, Entry>();
  evictions = 0;

  constructor(private readonly clock: SharedClock) {}

  live(key: string): string | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return null;
    }
    return entry.value;
  }

  set(key: string, value: string, seconds: number): void {
    this.entries.delete(key);
    if (this.entries.size >= CACHE_MAX_ITEMS) {
      for (const k of this.entries.keys()) if (this.live(k) === null) this.entries.delete(k);
    }
    if (this.entries.size >= CACHE_MAX_ITEMS) {
      const drop = Math.ceil(CACHE_MAX_ITEMS / 10);
      for (const k of [...this.entries.keys()].slice(0, drop)) this.entries.delete(k);
      this.evictions += drop;
    }
    this.entries.set(key, { value, expiresAt: this.clock.now() + seconds * 1000 });
  }

  /** Live keys (expired ones are dropped), for tests. */
  keys(): string[] {
    return [...this.entries.keys()].filter((k) => this.live(k) !== null);
  }
}

function checkKey(key: unknown): string {
  if (key === null || key === undefined) throw new AppsScriptException('Invalid argument: key');
  const k = String(key);
  if (k.length > CACHE_KEY_MAX_CHARS) throw new AppsScriptException('Argument too large: key');
  return k;
}

function checkValue(value: unknown): string {
  if (value === null || value === undefined) throw new AppsScriptException('Invalid argument: value');
  const v = String(value);
  if (Buffer.byteLength(v, 'utf8') > CACHE_VALUE_MAX_BYTES)
    throw new AppsScriptException('Argument too large: value');
  return v;
}

function checkExpiration(seconds: unknown): number {
  if (seconds === undefined || seconds === null) return CACHE_DEFAULT_EXPIRATION_S;
  const s = Number(seconds);
  if (!Number.isFinite(s) || s < 1 || s > CACHE_MAX_EXPIRATION_S) {
    throw new AppsScriptException(
      `Invalid argument: expirationInSeconds must be 1 to ${CACHE_MAX_EXPIRATION_S} (got ${String(seconds)})`,
    );
  }
  return Math.floor(s);
}

export class Cache extends AppsScriptObject {
  readonly kind = 'Cache';

  constructor(private readonly store: CacheStore) {
    super();
  }

  get(key: unknown): string | null {
    return this.store.live(checkKey(key));
  }

  getAll(keys: unknown): Record<string, string> {
    if (!Array.isArray(keys)) throw new AppsScriptException('Invalid argument: keys');
    const found: Record<string, string> = {};
    for (const key of keys) {
      const k = checkKey(key);
      const value = this.store.live(k);
      if (value !== null) found[k] = value;
    }
    return found;
  }

  put(key: unknown, value: unknown, expirationInSeconds?: unknown): void {
    this.store.set(checkKey(key), checkValue(value), checkExpiration(expirationInSeconds));
  }

  putAll(values: unknown, expirationInSeconds?: unknown): void {
    if (values === null || typeof values !== 'object')
      throw new AppsScriptException('Invalid argument: values');
    const seconds = checkExpiration(expirationInSeconds);
    const checked = Object.entries(values as Record<string, unknown>).map(
      ([k, v]) => [checkKey(k), checkValue(v)] as const,
    );
    for (const [k, v] of checked) this.store.set(k, v, seconds);
  }

  remove(key: unknown): void {
    this.store.entries.delete(checkKey(key));
  }

  removeAll(keys: unknown): void {
    if (!Array.isArray(keys)) throw new AppsScriptException('Invalid argument: keys');
    for (const key of keys) this.store.entries.delete(checkKey(key));
  }
}

export class CacheService extends AppsScriptObject {
  readonly kind = 'CacheService';

  constructor(
    private readonly execution: Execution,
    private readonly stores: {
      script: CacheStore;
      /** The current document's cache; null when the execution has no document. */
      document: CacheStore | null;
      user: (email: string) => CacheStore;
    },
  ) {
    super();
  }

  private _allowed(what: string): void {
    if (this.execution.authMode === 'NONE') throw noPermission(`CacheService.${what}`);
  }

  getScriptCache(): Cache {
    this._allowed('getScriptCache');
    return new Cache(this.stores.script);
  }

  /** Null outside the context of a containing document (Google's reference). */
  getDocumentCache(): Cache | null {
    this._allowed('getDocumentCache');
    return this.stores.document ? new Cache(this.stores.document) : null;
  }

  getUserCache(): Cache {
    this._allowed('getUserCache');
    return new Cache(this.stores.user(this.execution.user));
  }
}
