// PostgreSQL for the queue-mode clusters (Debian's postgresql, apt-get when missing): a throwaway cluster in a temporary
// folder, on 127.0.0.1 and a free port, run as the `postgres` user, trust auth, no fsync. n8n wants PostgreSQL for queue
// mode: with one SQLite file shared by a main and 5 workers, 40 executions at once failed with SQLITE_BUSY.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, tail } from './n8n';
import { ensureDebian, type Started } from './sharedStore';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = (() => {
    try {
      return readdirSync(root).sort((a, b) => Number(b) - Number(a));
    } catch {
      return [];
    }
  })();
  if (versions.length === 0) throw new Error(`PostgreSQL is not installed under ${root}`);
  return path.join(root, versions[0], 'bin');
}

function ids(): { uid: number; gid: number } {
  const id = (flag: string) =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

export interface RunningPostgres extends Started {
  /** Creates a database and gives the n8n settings that use it. */
  database: (name: string) => Record<string, string>;
}

export async function startPostgres(): Promise<RunningPostgres> {
  if (spawnSync('sh', ['-c', 'ls /usr/lib/postgresql/*/bin/initdb']).status !== 0)
    ensureDebian({ 'no-such-command-postgresql': 'postgresql' });
  const bin = binDir();
  const { uid, gid } = ids();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dapa-e2e-pg-'));
  chownSync(dir, uid, gid);
  const data = path.join(dir, 'data');
  const init = spawnSync(
    path.join(bin, 'initdb'),
    ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'],
    {
      uid,
      gid,
      encoding: 'utf8',
    },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${tail(init.stdout + init.stderr, 10)}`);
  const port = await freePort();
  const settings = ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=300'];
  const child = spawn(path.join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, ...settings], {
    uid,
    gid,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  for (let i = 0; i < 300 && !/ready to accept connections/.test(out); i++) await sleep(100);
  if (!/ready to accept connections/.test(out)) {
    child.kill('SIGKILL');
    throw new Error(`postgres did not start: ${tail(out, 10)}`);
  }
  return {
    port,
    pid: child.pid ?? 0,
    database: (name: string) => {
      const made = spawnSync(
        path.join(bin, 'createdb'),
        ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name],
        {
          encoding: 'utf8',
        },
      );
      if (made.status !== 0) throw new Error(`createdb ${name}: ${made.stderr}`);
      return {
        DB_TYPE: 'postgresdb',
        DB_POSTGRESDB_HOST: '127.0.0.1',
        DB_POSTGRESDB_PORT: String(port),
        DB_POSTGRESDB_DATABASE: name,
        DB_POSTGRESDB_USER: 'postgres',
        DB_POSTGRESDB_PASSWORD: '',
      };
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT'); // PostgreSQL's fast shutdown
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
