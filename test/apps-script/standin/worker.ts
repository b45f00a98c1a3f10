// The worker side of the stand-in: runs one Apps Script execution at a time in a fresh, bare node:vm realm (no
// Node globals, no setTimeout, fetch, URL, TextEncoder or process) whose service globals are proxies that call the
// main thread synchronously (post a message, then Atomics.wait for the reply), as Apps Script services block.
import crypto from 'node:crypto';
import vm from 'node:vm';
import { type MessagePort, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import {
  type DoneMessage,
  ENUMS,
  type ExecuteMessage,
  FLAG,
  type HandleRef,
  type RpcReply,
  type RpcRequest,
  type Target,
  type WorkerSetup,
} from './protocol';

const setup = workerData as WorkerSetup & { port: MessagePort };
const script = new vm.Script(setup.code, { filename: setup.filename });
const REMOTE_ROOTS: Record<string, string> = {
  SpreadsheetApp: 'SpreadsheetApp',
  PropertiesService: 'PropertiesService',
  CacheService: 'CacheService',
  LockService: 'LockService',
  UrlFetchApp: 'UrlFetchApp',
  HtmlService: 'HtmlService',
  Session: 'Session',
  ScriptApp: 'ScriptApp',
};
const TIME_LIMIT = 'Exceeded maximum execution time';

class Killed extends Error {}

function rpc(request: RpcRequest): RpcReply {
  Atomics.store(setup.flag, 0, FLAG.waiting);
  setup.port.postMessage(request);
  while (Atomics.load(setup.flag, 0) === FLAG.waiting) Atomics.wait(setup.flag, 0, FLAG.waiting);
  if (Atomics.load(setup.flag, 0) === FLAG.killed) throw new Killed(TIME_LIMIT);
  const reply = receiveMessageOnPort(setup.port);
  if (!reply) throw new Error('stand-in: the main thread answered without a message');
  return reply.message as RpcReply;
}

function isHandle(value: unknown): value is HandleRef {
  return !!value && typeof value === 'object' && '$handle' in (value as object);
}

/** Everything one execution needs: its realm, and conversions between host values and realm values. */
class Realm {
  readonly context = vm.createContext({});
  private readonly Array: ArrayConstructor;
  private readonly Object: ObjectConstructor;
  private readonly Date: DateConstructor;
  private readonly errors: Record<string, ErrorConstructor>;
  private readonly refs = new WeakMap<object, { target: Target; kind: string }>();
  killed = false;

  constructor() {
    const get = <T>(name: string) => vm.runInContext(name, this.context) as T;
    this.Array = get('Array');
    this.Object = get('Object');
    this.errors = { Error: get('Error'), TypeError: get('TypeError'), RangeError: get('RangeError') };
    // The realm's clock is the stand-in's (real time plus the shared offset of a virtual clock).
    const now = () => Date.now() + setup.clockOffset[0];
    const makeDate = vm.runInContext(
      `(function (now) {
        var RealDate = Date;
        function StandInDate() {
          var args = Array.prototype.slice.call(arguments);
          if (!new.target) return new RealDate(now()).toString();
          return args.length === 0 ? new RealDate(now()) : new (Function.prototype.bind.apply(RealDate, [null].concat(args)))();
        }
        StandInDate.prototype = RealDate.prototype;
        StandInDate.now = function () { return now(); };
        StandInDate.parse = RealDate.parse;
        StandInDate.UTC = RealDate.UTC;
        Object.defineProperty(RealDate.prototype, 'constructor', { value: StandInDate, writable: true, configurable: true });
        return StandInDate;
      })`,
      this.context,
    ) as (now: () => number) => DateConstructor;
    this.Date = makeDate(now);
    this.install();
  }

  error(name: string, message: string): Error {
    const Ctor = this.errors[name] ?? this.errors.Error;
    const error = new Ctor(message);
    if (!this.errors[name]) error.name = name;
    return error;
  }

  /** A host value (from the main thread) as realm values: arrays, objects, dates of the realm; handles as proxies. */
  toRealm(value: unknown): unknown {
    if (value === null || typeof value !== 'object') return value;
    if (isHandle(value)) return this.remote({ handle: value.$handle }, value.kind);
    if (value instanceof Date) return new this.Date(value.getTime());
    if (Array.isArray(value)) {
      const array = new this.Array();
      for (const item of value) array.push(this.toRealm(item));
      return array;
    }
    const object = new this.Object() as Record<string, unknown>;
    for (const [k, v] of Object.entries(value)) object[k] = this.toRealm(v);
    return object;
  }

  /** A realm value as plain data for the main thread: proxies become handles, functions are dropped. */
  toHost(value: unknown, depth = 0): unknown {
    if (value === null || value === undefined) return value;
    if (typeof value === 'function' || typeof value === 'symbol') return undefined;
    if (typeof value !== 'object') return value;
    const ref = this.refs.get(value);
    if (ref) return 'handle' in ref.target ? { $handle: ref.target.handle, kind: ref.kind } : undefined;
    if (depth > 50) return undefined;
    if (Object.prototype.toString.call(value) === '[object Date]') return new Date((value as Date).getTime());
    if (Array.isArray(value)) return value.map((v) => this.toHost(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const converted = this.toHost(v, depth + 1);
      if (converted !== undefined) out[k] = converted;
    }
    return out;
  }

  private call(target: Target, method: string, args: unknown[]): unknown {
    return this.toRealm(this.ask({ op: 'call', target, method, args: args.map((a) => this.toHost(a)) }));
  }

  /** One blocking request to the main thread; an execution killed meanwhile ends with Apps Script's error. */
  private ask(request: RpcRequest): unknown {
    let reply: RpcReply;
    try {
      reply = rpc(request);
    } catch (error) {
      if (error instanceof Killed) {
        this.killed = true;
        throw this.error('Error', TIME_LIMIT);
      }
      throw error;
    }
    if (!reply.ok) throw this.error(reply.error.name, reply.error.message);
    return reply.value;
  }

  remote(target: Target, kind: string): object {
    const enums = ENUMS[kind] ?? {};
    const proxy = new Proxy(
      {},
      {
        get: (_target, property) => {
          if (typeof property !== 'string' || property === 'then' || property === 'toJSON') return undefined;
          if (Object.prototype.hasOwnProperty.call(enums, property)) return this.toRealm(enums[property]);
          if (property === 'toString') return () => kind;
          return (...args: unknown[]) => this.call(target, property, args);
        },
      },
    );
    this.refs.set(proxy, { target, kind });
    return proxy;
  }

  private log(level: string, parts: unknown[]): void {
    const text = parts
      .map((p) => (typeof p === 'string' ? p : p instanceof Error ? `${p.name}: ${p.message}` : safeJson(p)))
      .join(' ');
    try {
      rpc({ op: 'log', level, text });
    } catch (error) {
      if (error instanceof Killed) {
        this.killed = true;
        throw this.error('Error', TIME_LIMIT);
      }
      throw error;
    }
  }

  private install(): void {
    const g = this.context as Record<string, unknown>;
    g.Date = this.Date;
    for (const name of Object.keys(REMOTE_ROOTS)) g[name] = this.remote({ root: name }, REMOTE_ROOTS[name]);
    const logger = this.toRealm({}) as Record<string, unknown>;
    logger.log = (format: unknown, ...values: unknown[]) => {
      let text = String(format);
      for (const v of values) text = text.replace('%s', String(v));
      this.log('info', [text]);
      return logger;
    };
    g.Logger = logger;
    const consoleObject = this.toRealm({}) as Record<string, unknown>;
    for (const level of ['log', 'info', 'warn', 'error'])
      consoleObject[level] = (...parts: unknown[]) => this.log(level, parts);
    g.console = consoleObject;
    g.Utilities = this.utilities();
  }

  private bytesOf(value: unknown, what: string): Buffer {
    if (typeof value === 'string') return Buffer.from(value, 'utf8');
    if (Array.isArray(value)) return Buffer.from(value.map((b) => Number(b) & 255));
    throw this.error('Exception', `Invalid argument: ${what}`);
  }

  private signed(buffer: Buffer): unknown {
    return this.toRealm([...buffer].map((b) => (b > 127 ? b - 256 : b)));
  }

  private utilities(): unknown {
    const algorithms: Record<string, string> = {
      MD2: 'md2',
      MD5: 'md5',
      SHA_1: 'sha1',
      SHA_256: 'sha256',
      SHA_384: 'sha384',
      SHA_512: 'sha512',
    };
    const u = this.toRealm({
      DigestAlgorithm: Object.fromEntries(Object.keys(algorithms).map((k) => [k, k])),
      Charset: { US_ASCII: 'US_ASCII', UTF_8: 'UTF_8' },
    }) as Record<string, unknown>;
    u.computeDigest = (algorithm: unknown, value: unknown) => {
      const name = algorithms[String(algorithm)];
      if (!name) throw this.error('Exception', 'Invalid argument: algorithm');
      return this.signed(crypto.createHash(name).update(this.bytesOf(value, 'value')).digest());
    };
    u.computeHmacSha256Signature = (value: unknown, key: unknown) =>
      this.signed(
        crypto
          .createHmac('sha256', typeof key === 'string' ? Buffer.from(key, 'utf8') : this.bytesOf(key, 'key'))
          .update(typeof value === 'string' ? Buffer.from(value, 'utf8') : this.bytesOf(value, 'value'))
          .digest(),
      );
    u.base64Encode = (data: unknown) => this.bytesOf(data, 'data').toString('base64');
    u.base64EncodeWebSafe = (data: unknown) =>
      this.bytesOf(data, 'data').toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
    u.base64Decode = (encoded: unknown) => this.signed(Buffer.from(String(encoded), 'base64'));
    u.base64DecodeWebSafe = (encoded: unknown) => this.signed(Buffer.from(String(encoded), 'base64url'));
    u.getUuid = () => crypto.randomUUID();
    u.sleep = (milliseconds: unknown) => {
      const ms = Number(milliseconds);
      if (!Number.isFinite(ms) || ms < 0 || ms > 300_000)
        throw this.error('Exception', 'Invalid argument: milliseconds');
      this.ask({ op: 'sleep', ms });
    };
    return u;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function execute(message: ExecuteMessage): DoneMessage {
  const realm = new Realm();
  const id = message.executionId;
  try {
    script.runInContext(realm.context);
    const fn = (realm.context as Record<string, unknown>)[message.functionName];
    if (typeof fn !== 'function') {
      return {
        type: 'done',
        executionId: id,
        ok: false,
        error: { name: 'Exception', message: `Script function not found: ${message.functionName}` },
      };
    }
    const args = message.args.map((a) => realm.toRealm(a));
    const value = (fn as (...a: unknown[]) => unknown)(...args);
    if (realm.killed) throw new Killed(TIME_LIMIT);
    return { type: 'done', executionId: id, ok: true, value: realm.toHost(value) };
  } catch (error) {
    const e = error as Error;
    const killed = realm.killed || error instanceof Killed;
    return {
      type: 'done',
      executionId: id,
      ok: false,
      error: {
        name: killed ? 'ExecutionKilled' : (e?.name ?? 'Error'),
        message: killed ? TIME_LIMIT : (e?.message ?? String(error)),
        stack: e?.stack,
      },
    };
  }
}

parentPort?.on('message', (message: ExecuteMessage) => {
  parentPort?.postMessage(execute(message));
});
parentPort?.postMessage({ type: 'ready' });
