// The sandbox API behind a gate, for tests that need an execution's request to stay in flight until the test says:
// each request is held until `answer()` (the sandbox's own answer) or `refuse()` (an answer the test writes).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox, DEFAULT_CONFIG, type Sandbox } from '../sandbox/handler';

interface Held {
  /** The URLs the request carries. */
  urls: string[];
  answer(): void;
  refuse(status: number, body: string): void;
}

export interface HeldService {
  url: string;
  sandbox: Sandbox;
  /** Resolves with the next request the service receives (in order). */
  next(): Promise<Held>;
  close(): Promise<void>;
}

export async function startHeldService(): Promise<HeldService> {
  const sandbox = createSandbox(DEFAULT_CONFIG);
  const arrived: Held[] = [];
  const waiting: Array<(held: Held) => void> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers[name] = value;
      const send = (status: number, text: string, extra: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...extra }).end(text);
      let urls: string[];
      try {
        urls = (JSON.parse(body) as { urls: string[] }).urls;
      } catch {
        urls = [];
      }
      const held: Held = {
        urls,
        answer: () => {
          const out = sandbox.handle(
            { method: req.method ?? 'POST', path: req.url ?? '/', headers, body },
            Date.now(),
          );
          send(out.status, out.body, out.headers);
        },
        refuse: (status, text) => send(status, text),
      };
      const taker = waiting.shift();
      if (taker) taker(held);
      else arrived.push(held);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sandbox,
    next: () => {
      const first = arrived.shift();
      return first ? Promise.resolve(first) : new Promise<Held>((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
