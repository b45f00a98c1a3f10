// The shared store the node's "Share Across Workers" uses, as real processes: Debian's redis-server and webdis
// (apt-get when missing), each on 127.0.0.1 and a free port chosen at run time, webdis with the README's own
// webdis.json (its addresses put in); readiness is waited for, and `stop()` ends exactly the process that was started.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { REPO_ROOT, freePort, tail } from './n8n';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Installs the Debian packages whose commands are missing (the suite runs as root in CI). */
export function ensureDebian(commands: Record<string, string>): void {
  const missing = Object.entries(commands).filter(
    ([command]) => spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0,
  );
  if (missing.length === 0) return;
  const packages = missing.map(([, pkg]) => pkg).join(' ');
  console.log(`missing ${missing.map(([c]) => c).join(', ')}: apt-get install -y ${packages}`);
  spawnSync(
    'sh',
    ['-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages}`],
    { stdio: 'inherit' },
  );
}

export interface Started {
  port: number;
  pid: number;
  stop: () => Promise<void>;
}

/** Ends one started child (SIGTERM, SIGKILL after 10 s) and waits for it. */
function stopper(child: ChildProcess, exited: Promise<void>): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
}

/**
 * Redis on the loopback address and a free port, no persistence; `extra` adds settings (the README's `dapa-redis`:
 * `--maxmemory 256mb --maxmemory-policy allkeys-lru`).
 */
export async function startRedis(extra: string[] = []): Promise<Started> {
  ensureDebian({ 'redis-server': 'redis-server' });
  const port = await freePort();
  const args = ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', ...extra];
  const child = spawn('redis-server', [...args, '--protected-mode', 'yes'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  for (let i = 0; i < 200 && !/Ready to accept connections/.test(out); i++) await sleep(100);
  if (!/Ready to accept connections/.test(out))
    throw new Error(`redis-server did not start: ${tail(out, 10)}`);
  return { port, pid: child.pid ?? 0, stop: stopper(child, exited) };
}

/** One Redis command through redis-cli (the tests' own view of the store); its output, trimmed. */
export function redisCli(port: number, args: string[]): string {
  const result = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** Every key matching a pattern (SCAN, not KEYS). */
export function redisKeys(port: number, pattern: string): string[] {
  const out = redisCli(port, ['--scan', '--pattern', pattern]);
  return out === '' ? [] : out.split('\n');
}

/** The bound of DAPA's own Redis, as decided for the README's Compose file (`dapa-redis`). */
export const DAPA_REDIS_ARGS = ['--maxmemory', '256mb', '--maxmemory-policy', 'allkeys-lru'];

/**
 * The `--maxmemory` and `--maxmemory-policy` of the `dapa-redis` service in n8n-node/README.md's Compose file (its
 * `command`, as a list or a string), or why they could not be read.
 */
export function readmeDapaRedisArgs(): string[] | Error {
  const readme = readFileSync(path.join(REPO_ROOT, 'n8n-node', 'README.md'), 'utf8');
  const service = /\n {2}dapa-redis:\n((?: {4}.*\n)+)/.exec(readme)?.[1];
  if (!service) return new Error('the Compose file of n8n-node/README.md has no dapa-redis service');
  const command = /command:\s*(.+)/.exec(service)?.[1] ?? '';
  const words = command.startsWith('[')
    ? (JSON.parse(command.replace(/'/g, '"')) as string[])
    : command.replace(/^["']|["']$/g, '').split(/\s+/);
  const args: string[] = [];
  for (const flag of ['--maxmemory', '--maxmemory-policy']) {
    const at = words.indexOf(flag);
    if (at < 0) return new Error(`the dapa-redis service of n8n-node/README.md sets no ${flag} (${command})`);
    args.push(flag, words[at + 1]);
  }
  return args;
}

/** The webdis.json that n8n-node/README.md ("Scaling out") gives users, parsed out of the README. */
export function readmeWebdisConfig(): Record<string, unknown> & { acl: Array<Record<string, unknown>> } {
  const readme = readFileSync(path.join(REPO_ROOT, 'n8n-node', 'README.md'), 'utf8');
  const block = /The file webdis\.json[\s\S]*?```json\n([\s\S]*?)\n```/.exec(readme)?.[1];
  if (!block) throw new Error('n8n-node/README.md has no webdis.json block after "The file webdis.json"');
  const config = JSON.parse(block) as Record<string, unknown> & { acl?: Array<Record<string, unknown>> };
  return { ...config, acl: config.acl ?? [] };
}

/** The ACL of the README's webdis.json: the commands it enables, and the `user:password` it asks for. */
export function readmeWebdisAcl(): { acl: unknown[]; commands: string[]; auth?: string } {
  const { acl } = readmeWebdisConfig();
  const commands = acl.flatMap((entry) => (Array.isArray(entry.enabled) ? entry.enabled.map(String) : []));
  const auth = acl.map((entry) => entry.http_basic_auth).find((a) => typeof a === 'string') as
    string | undefined;
  return { acl, commands, auth };
}

export interface WebdisOptions {
  redisPort: number;
  /** Where its config and log go (`<name>.json`, `<name>.log`). */
  dir: string;
  name: string;
  /** HTTP Basic auth `user:password` instead of the README's example one. */
  basicAuth?: string;
}

export interface RunningWebdis extends Started {
  url: string;
}

/** A GET to webdis; any HTTP answer (403 included) means it listens. */
function probe(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = http.get(url, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode));
    });
    request.on('error', () => resolve(undefined));
    request.setTimeout(2000, () => request.destroy());
  });
}

/**
 * webdis (not daemonized) in front of the Redis on `redisPort`, with the README's own webdis.json: only the Redis
 * address, webdis's address and log, and (when given) the user and password are put in for the test's.
 */
export async function startWebdis(opts: WebdisOptions): Promise<RunningWebdis> {
  ensureDebian({ webdis: 'webdis' });
  const port = await freePort();
  const readme = readmeWebdisConfig();
  const acl = readme.acl.map((entry) =>
    opts.basicAuth && 'http_basic_auth' in entry ? { ...entry, http_basic_auth: opts.basicAuth } : entry,
  );
  const config = {
    ...readme,
    redis_host: '127.0.0.1',
    redis_port: opts.redisPort,
    http_host: '127.0.0.1',
    http_port: port,
    daemonize: false,
    acl,
    logfile: path.join(opts.dir, `${opts.name}.log`),
  };
  mkdirSync(opts.dir, { recursive: true });
  const file = path.join(opts.dir, `${opts.name}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  const child = spawn('webdis', [file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = createWriteStream(path.join(opts.dir, `${opts.name}.out`));
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break;
    if ((await probe(`${url}/PING.json`)) !== undefined)
      return { url, port, pid: child.pid ?? 0, stop: stopper(child, exited) };
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`webdis did not answer on ${url} (exit ${child.exitCode}); config ${file}`);
}
