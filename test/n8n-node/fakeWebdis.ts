// A stand-in for webdis in front of Redis, for unit tests (the end-to-end tests run the real ones): an HTTP server on
// a free loopback port speaking webdis's URL protocol (`/SET/key/value/NX/PX/30000.json`, arguments URL-encoded,
// JSON replies such as {"SET":[true,"OK"]} and {"GET":null}) over an in-memory Redis of the commands the node uses,
// with expiries on the server's clock. It can ask for HTTP Basic auth and refuse commands; like the real webdis (checked
// in realStore.test.ts) it answers a missing or wrong user or password with 403, the answer of a disabled command.
// Tests on virtual time use the in-memory Redis without a server (`memoryRedis`, `memoryWebdis`).
import type { INode } from 'n8n-workflow';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

type Value = string | string[];

/** The node a store (RedisShare) is opened for in tests: its name is what the store's errors name. */
export const STORE_TEST_NODE = {
  id: '1',
  name: 'DAPA Checker',
  type: 'dapaChecker',
  typeVersion: 1,
  position: [0, 0],
} as INode;

/** The Signing Secret of the DAPA Shared State API credential in tests. */
export const STORE_TEST_SECRET = 'a-test-signing-secret';

export interface FakeWebdisOptions {
  /** `user:password` the server asks for. */
  auth?: string;
  /** Commands answered 403, as webdis's ACL does for disabled ones. */
  disabled?: string[];
}

export interface FakeWebdis {
  url: string;
  /** Commands received, in order, as [COMMAND, ...args]. */
  commands: string[][];
  /** The stored value of a key (undefined when absent or expired). */
  get(key: string): Value | undefined;
  /** Stores a value directly, with an expiry in ms. */
  set(key: string, value: string, px?: number): void;
  keys(): string[];
  options: FakeWebdisOptions;
  close(): Promise<void>;
}

/** The in-memory Redis behind the stand-in: the commands the node uses, with expiries on `Date.now()`. */
export interface MemoryRedis {
  /** Runs one command ([COMMAND, ...args]) and gives its reply as webdis writes it in JSON. */
  run(args: string[]): unknown;
  get(key: string): Value | undefined;
  set(key: string, value: string, px?: number): void;
  keys(): string[];
}

type Run = (args: string[]) => unknown;

/**
 * The node's Lua scripts (n8n-node/nodes/DapaChecker/sharing/scripts.ts) as the same steps over the stand-in's own
 * commands, by the name on their first line; realStore.test.ts runs the real scripts on the real Redis.
 */
const SCRIPTS: Record<string, (run: Run, argv: string[]) => unknown> = {
  claim: (run, [p, owner, beat, claimMs, ignore, ...domains]) => {
    run(['SET', `${p}:o:${owner}`, '1', 'PX', beat]);
    return domains.map((d) => {
      const answer = ignore === '0' ? run(['GET', `${p}:r:${d}`]) : null;
      if (typeof answer === 'string') return answer;
      const holder = run(['GET', `${p}:c:${d}`]);
      if (typeof holder === 'string' && holder !== owner && run(['GET', `${p}:o:${holder}`]) !== null)
        return 0;
      run(['SET', `${p}:c:${d}`, owner, 'PX', claimMs]);
      return 1;
    });
  },
  publish: (run, [p, owner, ms, ...pairs]) => {
    for (let i = 0; i < pairs.length; i += 2) {
      run(['SET', `${p}:r:${pairs[i]}`, pairs[i + 1], 'PX', ms]);
      if (run(['GET', `${p}:c:${pairs[i]}`]) === owner) run(['DEL', `${p}:c:${pairs[i]}`]);
    }
    return 1;
  },
  release: (run, [p, owner, end, ...pairs]) => {
    let n = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      const c = `${p}:c:${pairs[i]}`;
      if (run(['GET', c]) !== owner) continue;
      if (pairs[i + 1] === '') run(['DEL', c]);
      else run(['SET', c, pairs[i + 1], 'KEEPTTL']);
      n += 1;
    }
    if (end === '1') run(['DEL', `${p}:o:${owner}`]);
    return n;
  },
  window: (run, [p]) => {
    const sends = run(['LRANGE', `${p}:sends`, '0', '-1']) as string[];
    return [sends.length, ...sends, ...(run(['LRANGE', `${p}:plans`, '0', '-1']) as string[])];
  },
  reserve: (run, [p, entry, ms]) => {
    run(['RPUSH', `${p}:flight`, entry]);
    run(['PEXPIRE', `${p}:flight`, ms]);
    return run(['LRANGE', `${p}:flight`, '0', '-1']);
  },
  flush: (run, [p, kept, ms, n, ...rest]) => {
    const sends = rest.slice(0, Number(n));
    if (sends.length > 0) {
      run(['RPUSH', `${p}:sends`, ...sends]);
      run(['LTRIM', `${p}:sends`, `-${kept}`, '-1']);
      run(['PEXPIRE', `${p}:sends`, ms]);
    }
    for (const entry of rest.slice(Number(n))) run(['LREM', `${p}:flight`, '1', entry]);
    return 1;
  },
  plan: (run, [p, lesson, kept, ms]) => {
    run(['RPUSH', `${p}:plans`, lesson]);
    run(['LTRIM', `${p}:plans`, `-${kept}`, '-1']);
    run(['PEXPIRE', `${p}:plans`, ms]);
    return 1;
  },
};

export function memoryRedis(): MemoryRedis {
  const data = new Map<string, { value: Value; until: number }>();
  const live = (key: string) => {
    const entry = data.get(key);
    if (entry && entry.until <= Date.now()) data.delete(key);
    return data.get(key);
  };
  const list = (key: string): string[] => {
    const value = live(key)?.value;
    return Array.isArray(value) ? value : [];
  };
  const run = (args: string[]): unknown => {
    const [command, ...rest] = args;
    switch (command) {
      case 'PING':
        return [true, 'PONG'];
      case 'SET': {
        const [key, value, ...flags] = rest;
        const upper = flags.map((f) => f.toUpperCase());
        if (upper.includes('NX') && live(key)) return null;
        const px = upper.indexOf('PX');
        const kept = upper.includes('KEEPTTL') ? live(key)?.until : undefined;
        const until = px >= 0 ? Date.now() + Number(flags[px + 1]) : (kept ?? Infinity);
        data.set(key, { value, until });
        return [true, 'OK'];
      }
      case 'GET': {
        const value = live(rest[0])?.value;
        return typeof value === 'string' ? value : null;
      }
      case 'MGET':
        return rest.map((key) => {
          const value = live(key)?.value;
          return typeof value === 'string' ? value : null;
        });
      case 'DEL':
        return rest.filter((key) => live(key) !== undefined && data.delete(key)).length;
      case 'PEXPIRE': {
        const entry = live(rest[0]);
        if (!entry) return 0;
        entry.until = Date.now() + Number(rest[1]);
        return 1;
      }
      case 'RPUSH': {
        const entry = live(rest[0]);
        const items = [...list(rest[0]), ...rest.slice(1)];
        data.set(rest[0], { value: items, until: entry?.until ?? Infinity });
        return items.length;
      }
      case 'LRANGE': {
        const items = list(rest[0]);
        const at = (i: number) => (i < 0 ? items.length + i : i);
        return items.slice(Math.max(0, at(Number(rest[1]))), at(Number(rest[2])) + 1);
      }
      case 'LTRIM': {
        const entry = live(rest[0]);
        if (!entry) return [true, 'OK'];
        const items = list(rest[0]);
        const at = (i: number) => (i < 0 ? items.length + i : i);
        entry.value = items.slice(Math.max(0, at(Number(rest[1]))), at(Number(rest[2])) + 1);
        return [true, 'OK'];
      }
      case 'LREM': {
        const items = list(rest[0]);
        const at = items.indexOf(rest[2]);
        if (at < 0) return 0;
        items.splice(at, 1);
        return 1;
      }
      case 'EVAL': {
        // The credential Test's own script deletes its key: answered as a DEL would be.
        if (rest[0] === "return redis.call('del', ARGV[1])") return run(['DEL', rest[2]]);
        const script = SCRIPTS[/^-- dapa:([a-z]+)/.exec(rest[0])?.[1] ?? ''];
        return script ? script(run, rest.slice(2 + Number(rest[1]))) : [false, 'ERR unknown script'];
      }
      default:
        return [false, `ERR unknown command '${command}'`];
    }
  };
  return {
    run,
    get: (key) => live(key)?.value,
    set: (key, value, px) => data.set(key, { value, until: px ? Date.now() + px : Infinity }),
    keys: () => [...data.keys()].filter((key) => live(key) !== undefined),
  };
}

/**
 * webdis's URL protocol over `redis` with no server: a command URL (`<base>/SET/key/value.json`) is run after `trip()`
 * ms (on whatever timers are in force: jest's fake ones keep it virtual) and answered after another `trip()`.
 */
export function memoryWebdis(
  redis: MemoryRedis,
  base: string,
  trip: () => number,
): (url: string) => Promise<{ status: number; body: string }> {
  const after = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  return async (url) => {
    const parts = url
      .slice(base.length + 1)
      .replace(/\.json$/, '')
      .split('/');
    const args = parts.map((p) => decodeURIComponent(p));
    args[0] = args[0].toUpperCase();
    await after(trip());
    const body = JSON.stringify({ [args[0]]: redis.run(args) });
    await after(trip());
    return { status: 200, body };
  };
}

export async function startFakeWebdis(options: FakeWebdisOptions = {}): Promise<FakeWebdis> {
  const redis = memoryRedis();
  const commands: string[][] = [];
  const server = http.createServer((req, res) => {
    const parts = (req.url ?? '/').split('?')[0].split('/').slice(1);
    if (parts.length > 0) parts[parts.length - 1] = parts[parts.length - 1].replace(/\.json$/, '');
    const args = parts.map((p) => decodeURIComponent(p));
    args[0] = (args[0] ?? '').toUpperCase();
    const expected = fake.options.auth
      ? `Basic ${Buffer.from(fake.options.auth).toString('base64')}`
      : undefined;
    if (expected && req.headers.authorization !== expected) {
      res.writeHead(403).end('');
      return;
    }
    if ((fake.options.disabled ?? []).includes(args[0])) {
      res.writeHead(403).end('');
      return;
    }
    commands.push(args);
    const body = JSON.stringify({ [args[0]]: redis.run(args) });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeWebdis = {
    url: `http://127.0.0.1:${port}`,
    commands,
    options,
    get: redis.get,
    set: redis.set,
    keys: redis.keys,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
