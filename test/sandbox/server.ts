// Sandbox DAPA checker over real HTTP: node:http on loopback around the pure handler, sleeping the simulated
// latency, plus test-only endpoints GET /__sandbox/stats, POST /__sandbox/reset and POST /__sandbox/config.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseSandboxConfig } from './config';
import {
  createSandbox,
  DEFAULT_CONFIG,
  type Sandbox,
  type SandboxConfig,
  type SandboxResponse,
} from './handler';

/** One line's worth of facts about an answered request; never carries the Authorization header. */
export interface RequestLogEntry {
  method: string;
  path: string; // without the query string
  status: number;
  latencyMs: number;
  summary?: { submitted: number; processed: number; skipped: number };
  /** The request's body as sent (URLs only; for traces). */
  body?: string;
  /** What the answer's envelope said, as sent (for traces). */
  answer?: string;
}

export interface StartOptions {
  port?: number;
  host?: string;
  config?: SandboxConfig;
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface RunningSandbox {
  url: string;
  port: number;
  sandbox: Sandbox;
  close(): Promise<void>;
}

function json(status: number, body: unknown, extra: Record<string, string> = {}): SandboxResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', ...extra },
    body: JSON.stringify(body),
    latencyMs: 0,
  };
}

function control(sandbox: Sandbox, method: string, path: string, body: string): SandboxResponse {
  const routes: Record<string, [string, () => SandboxResponse]> = {
    '/__sandbox/stats': ['GET', () => json(200, sandbox.stats())],
    '/__sandbox/reset': [
      'POST',
      () => {
        sandbox.reset();
        return json(200, { ok: true });
      },
    ],
    '/__sandbox/config': [
      'POST',
      () => {
        try {
          sandbox.configure(parseSandboxConfig(JSON.parse(body)));
          return json(200, { ok: true });
        } catch (err) {
          return json(400, { error: (err as Error).message });
        }
      },
    ],
  };
  const route = routes[path];
  if (!route) return json(404, { error: 'Not Found' });
  if (method !== route[0]) return json(405, { error: 'Method Not Allowed' }, { allow: route[0] });
  return route[1]();
}

function summaryOf(res: SandboxResponse): RequestLogEntry['summary'] {
  try {
    const summary = (JSON.parse(res.body) as { summary?: RequestLogEntry['summary'] } | null)?.summary;
    return summary && typeof summary.submitted === 'number' ? summary : undefined;
  } catch {
    return undefined;
  }
}

export async function startSandbox(opts: StartOptions = {}): Promise<RunningSandbox> {
  const sandbox = createSandbox(opts.config ?? DEFAULT_CONFIG);
  const host = opts.host ?? '127.0.0.1';
  const timers = new Set<NodeJS.Timeout>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const fullPath = req.url ?? '/';
      const path = fullPath.split('?')[0];
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      let out: SandboxResponse;
      try {
        out = path.startsWith('/__sandbox/')
          ? control(sandbox, method, path, body)
          : sandbox.handle({ method, path: fullPath, headers, body }, Date.now());
      } catch (err) {
        out = json(500, { error: 'An unexpected error occurred', sandboxBug: String(err) }); // never hang a client
      }
      const send = (): void => {
        res.writeHead(out.status, { ...out.headers, 'content-length': String(Buffer.byteLength(out.body)) });
        res.end(out.body);
        opts.onRequest?.({
          method,
          path,
          status: out.status,
          latencyMs: out.latencyMs,
          summary: summaryOf(out),
          body,
          answer: out.body,
        });
      };
      if (out.latencyMs <= 0) return send();
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, out.latencyMs);
      timers.add(timer);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    sandbox,
    close: () =>
      new Promise<void>((resolve) => {
        timers.forEach(clearTimeout);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
