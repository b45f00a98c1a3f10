// CacheService: script, document and per-user caches with the documented limits (key ≤ 250 characters, value
// ≤ 100 KB, expiration ≤ 21,600 s, default 600 s) and the 1,000-item cap under two readings of what goes past it
// (`cacheEviction`), and the other users of a published add-on writing into its script cache (`otherUsers`).
import type { SharedClock } from '../../sandbox/virtual';
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import {
  CACHE_DEFAULT_EXPIRATION_S,
  CACHE_KEEP_ON_EVICTION,
  CACHE_KEY_MAX_CHARS,
  CACHE_MAX_EXPIRATION_S,
  CACHE_MAX_ITEMS,
  CACHE_VALUE_MAX_BYTES,
} from './limits';

interface Entry {
  value: string;
  expiresAt: number;
}

/**
 * What a cache does when it is full. 'observed' (the stand-in's earlier model, what users report): the oldest-written
 * ~10 % go when a write finds 1,000 items. 'documented' (Cache reference): "If more than 1,000 items are written, the
 * cache stores the 900 items farthest from expiration."
 */
export type CacheEviction = 'observed' | 'documented';

/** Rules every cache of a stand-in shares (set once by the options). */
export interface CacheRules {
  eviction: CacheEviction;
}

/** Other users' writes into a cache: one item every `everyMs` from `start`, each kept `itemMs`. */
interface OtherWriters {
  everyMs: number;
  itemMs: number;
  start: number;
  /** Index of the next write not applied yet. */
  next: number;
}

/**
 * Past this many other users' writes due at once, the earlier ones are skipped (counted, not applied): whichever
 * reading applies, the last 2,000 writes alone already push out every item the skipped ones would have (the writes'
 * expirations only grow), so the cache ends the same and a seven-hour jump costs no real time.
 */
const OTHERS_REPLAYED = 2 * CACHE_MAX_ITEMS;

/** The data of one cache, kept across executions. */
export class CacheStore {
  readonly entries = new Map<string, Entry>();
  /** Items the cap pushed out. */
  evictions = 0;
  /** Items the script wrote (each key of a putAll is one), other users' writes not counted. */
  written = 0;
  /** Items other users of the script wrote into this cache (`otherUsers`). */
  othersWritten = 0;
  private others?: OtherWriters;

  constructor(
    private readonly clock: SharedClock,
    private readonly rules: CacheRules = { eviction: 'observed' },
  ) {}

  /**
   * Other users of a published add-on write `perMinute` items a minute into this cache from now on, each for
   * `itemSeconds` (Google: the script cache is "common to all users of the script"). Applied lazily, in order and
   * each at its own time, whenever the cache is used: no execution runs for them.
   */
  writtenByOthers(perMinute: number, itemSeconds: number): void {
    if (!(perMinute > 0)) {
      this.others = undefined;
      return;
    }
    const everyMs = 60_000 / perMinute;
    this.others = { everyMs, itemMs: itemSeconds * 1000, start: this.clock.now() + everyMs, next: 0 };
  }

  /** Applies the other users' writes due by now. */
  private catchUp(): void {
    const o = this.others;
    if (!o) return;
    const now = this.clock.now();
    const due = Math.floor((now - o.start) / o.everyMs) + 1;
    if (due <= o.next) return;
    if (due - o.next > OTHERS_REPLAYED) {
      this.othersWritten += due - OTHERS_REPLAYED - o.next;
      o.next = due - OTHERS_REPLAYED;
    }
    for (; o.next < due; o.next++) {
      const at = o.start + o.next * o.everyMs;
      this.write(`other-user-item-${o.next}`, 'x', at + o.itemMs, at);
      this.othersWritten += 1;
    }
  }

  live(key: string): string | null {
    this.catchUp();
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return null;
    }
    return entry.value;
  }

  set(key: string, value: string, seconds: number): void {
    this.catchUp();
    this.written += 1;
    const now = this.clock.now();
    this.write(key, value, now + seconds * 1000, now);
  }

  remove(key: string): void {
    this.catchUp();
    this.entries.delete(key);
  }

  private dropExpired(at: number): void {
    for (const [k, entry] of this.entries) if (entry.expiresAt <= at) this.entries.delete(k);
  }

  /** One write at time `at`, with the cap applied as the eviction reading says. */
  private write(key: string, value: string, expiresAt: number, at: number): void {
    this.entries.delete(key);
    if (this.rules.eviction === 'observed') {
      if (this.entries.size >= CACHE_MAX_ITEMS) this.dropExpired(at);
      if (this.entries.size >= CACHE_MAX_ITEMS) {
        const drop = Math.ceil(CACHE_MAX_ITEMS / 10);
        for (const k of [...this.entries.keys()].slice(0, drop)) this.entries.delete(k);
        this.evictions += drop;
      }
      this.entries.set(key, { value, expiresAt });
      return;
    }
    this.entries.set(key, { value, expiresAt });
    if (this.entries.size <= CACHE_MAX_ITEMS) return;
    this.dropExpired(at);
    if (this.entries.size <= CACHE_MAX_ITEMS) return;
    // The 900 farthest from expiration stay; on a tie the later-written one.
    const ranked = [...this.entries].reverse().sort((a, b) => b[1].expiresAt - a[1].expiresAt);
    for (const [k] of ranked.slice(CACHE_KEEP_ON_EVICTION)) this.entries.delete(k);
    this.evictions += ranked.length - CACHE_KEEP_ON_EVICTION;
  }

  /** Live keys (expired ones are dropped), for tests. */
  keys(): string[] {
    this.catchUp();
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
    this.store.remove(checkKey(key));
  }

  removeAll(keys: unknown): void {
    if (!Array.isArray(keys)) throw new AppsScriptException('Invalid argument: keys');
    for (const key of keys) this.store.remove(checkKey(key));
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
    return new Cache(this.stores.user(this.execution.userCacheOf ?? this.execution.user));
  }
}
