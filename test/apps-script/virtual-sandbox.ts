// The sandbox API answered on the stand-in's clock: the same pure handler as test/sandbox (handle(req, now)), over
// real HTTP on loopback, but `now` is the stand-in's (virtual) time and the simulated latency moves that clock
// instead of being slept, so hours of rate-limited background work run in seconds and the plan's window is exact.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox, DEFAULT_CONFIG, type Sandbox, type SandboxConfig } from '../sandbox/handler';
import type { Clock } from './standin/clock';

export interface VirtualSandbox {
  url: string;
  sandbox: Sandbox;
  /** The clock the answers are given on (set it to the stand-in's once the stand-in exists). */
  useClock(clock: Clock): void;
  close(): Promise<void>;
}

export async function startVirtualSandbox(config: SandboxConfig = DEFAULT_CONFIG): Promise<VirtualSandbox> {
  const sandbox = createSandbox(config);
  let clock: Clock | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const now = clock ? clock.now() : Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const out = sandbox.handle({ method: req.method ?? 'GET', path: req.url ?? '/', headers, body }, now);
      if (clock && out.latencyMs > 0) clock.advance(out.latencyMs);
      res.writeHead(out.status, { ...out.headers, 'content-length': String(Buffer.byteLength(out.body)) });
      res.end(out.body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    sandbox,
    useClock: (c) => {
      clock = c;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
