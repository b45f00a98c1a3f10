// `npm run sandbox -- --host <address>` and DAPA_SANDBOX_HOST: the sandbox listens where an n8n in Docker can reach it
// (0.0.0.0), and by default on this computer only (127.0.0.1): what docs/guide.md's Docker route relies on.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { listenHost } from './cli';

const root = path.resolve(__dirname, '../..');

/** This machine's first address that is not loopback, if it has one. */
function outsideAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

/** The status of a key test sent to host:port, or the connection error's code. */
function probe(host: string, port: number): Promise<number | string> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ urls: [''] });
    const req = request(
      {
        host,
        port,
        method: 'POST',
        path: '/api/user/dapa-checker',
        headers: { Authorization: 'Bearer sandbox-basic', 'Content-Type': 'application/json' },
        timeout: 5000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.end(body);
  });
}

/** Starts the CLI and resolves with the port it printed; `stop` ends it. */
async function startCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; port: number; out: () => string; stop: () => Promise<void> }> {
  const child = spawn(path.join(root, 'node_modules/.bin/tsx'), ['test/sandbox/cli.ts', ...args], {
    cwd: root,
    env: { ...process.env, DAPA_SANDBOX_HOST: '', SANDBOX_PORT: '0', ...env },
  });
  let out = '';
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const started = new Promise<RegExpExecArray>((resolve, reject) => {
    const check = (): void => {
      const m = /listening on (http:\/\/(\S+):(\d+))\n[\s\S]*Test endpoints: .*\n/.exec(out);
      if (m) resolve(m);
    };
    child.stdout.on('data', (chunk: Buffer) => ((out += chunk.toString()), check()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    void closed.then(() => reject(new Error(`the CLI ended before listening:\n${out}`)));
  });
  const m = await started;
  return {
    url: m[1],
    port: Number(m[3]),
    out: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      await closed;
    },
  };
}

describe('the sandbox listens where it is told', () => {
  test('--host first, then DAPA_SANDBOX_HOST, else 127.0.0.1; a --host without an address is refused', () => {
    expect(listenHost([], {})).toBe('127.0.0.1');
    expect(listenHost([], { DAPA_SANDBOX_HOST: '0.0.0.0' })).toBe('0.0.0.0');
    expect(listenHost(['--host', '0.0.0.0'], { DAPA_SANDBOX_HOST: '127.0.0.1' })).toBe('0.0.0.0');
    expect(listenHost(['--config', 'x.json', '--host', '::'], {})).toBe('::');
    expect(() => listenHost(['--host'], {})).toThrow(/--host needs an address/);
    expect(() => listenHost(['--host', '--config'], {})).toThrow(/--host needs an address/);
  });

  test('--host 0.0.0.0 answers on every interface and says how a container reaches it', async () => {
    const cli = await startCli(['--host', '0.0.0.0']);
    try {
      expect(cli.url).toBe(`http://0.0.0.0:${cli.port}`);
      expect(cli.out()).toContain(`http://host.docker.internal:${cli.port}`);
      expect(cli.out()).toContain('--add-host=host.docker.internal:host-gateway');
      expect(await probe('127.0.0.1', cli.port)).toBe(422); // the all-skipped envelope: the key works
      const outside = outsideAddress();
      if (outside) expect(await probe(outside, cli.port)).toBe(422);
    } finally {
      await cli.stop();
    }
  }, 30_000);

  test('DAPA_SANDBOX_HOST does the same; without either, only this computer is served', async () => {
    const open = await startCli([], { DAPA_SANDBOX_HOST: '0.0.0.0' });
    try {
      expect(open.url).toBe(`http://0.0.0.0:${open.port}`);
    } finally {
      await open.stop();
    }
    const local = await startCli([]);
    try {
      expect(local.url).toBe(`http://127.0.0.1:${local.port}`);
      expect(local.out()).not.toContain('host.docker.internal');
      expect(await probe('127.0.0.1', local.port)).toBe(422);
      const outside = outsideAddress();
      if (outside) expect(await probe(outside, local.port)).toBe('ECONNREFUSED');
    } finally {
      await local.stop();
    }
  }, 30_000);
});
