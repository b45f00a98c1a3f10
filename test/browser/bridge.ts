// Serves the built Sidebar.html on 127.0.0.1 with a google.script.run shim injected, and answers the shim's
// calls by running the named server function in the Apps Script stand-in (the way HtmlService would).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Whatever runs the add-on's server functions: the Apps Script stand-in in the real test. */
export type RunServerFunction = (name: string, args: unknown[]) => unknown;

export interface ServerCall {
  name: string;
  args: unknown[];
  ok: boolean;
  /** What the page received: the JSON value or the error message. */
  answer: string;
}

export interface SidebarServer {
  url: string;
  /** Every server function call the page made, in order. */
  calls: ServerCall[];
  close(): Promise<void>;
}

const RUN_PATH = '/__script/run';

/**
 * Browser-side google.script.run: `withSuccessHandler(f).withFailureHandler(g).name(...args)` POSTs
 * {name, args} to the bridge and calls f(value) or g(Error), asynchronously, like Apps Script does.
 */
const SHIM = `<script>
(function () {
  function runner(onSuccess, onFailure) {
    return new Proxy({}, {
      get: function (_target, name) {
        if (name === 'withSuccessHandler') return function (f) { return runner(f, onFailure); };
        if (name === 'withFailureHandler') return function (f) { return runner(onSuccess, f); };
        if (name === 'withUserObject') return function () { return runner(onSuccess, onFailure); };
        if (typeof name !== 'string' || name === 'then') return undefined;
        return function () {
          var args = Array.prototype.slice.call(arguments);
          fetch('${RUN_PATH}', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ name: name, args: args })
          })
            .then(function (response) { return response.json(); })
            .then(function (answer) {
              if (answer.ok) { if (onSuccess) onSuccess(answer.value); }
              else if (onFailure) onFailure(new Error(answer.error));
            }, function () {
              if (onFailure) onFailure(new Error('NetworkError: Connection failure due to HTTP 0'));
            });
        };
      }
    });
  }
  window.google = { script: { run: runner(null, null), host: { close: function () {} } } };
})();
</script>`;

/** No network beyond this origin, inline script and style only: a page that loads anything else is broken. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'self'";

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

/** The call log never holds an API key, even a test one. */
function redactKey(arg: unknown): unknown {
  if (arg && typeof arg === 'object' && 'apiKey' in arg) {
    const { apiKey, ...rest } = arg as { apiKey: unknown };
    return { ...rest, apiKey: apiKey === '' ? '' : '<redacted>' };
  }
  return arg;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function serveSidebar(
  html: string,
  runServerFunction: RunServerFunction,
): Promise<SidebarServer> {
  if (!html.includes('<head>')) throw new Error('Sidebar.html has no <head> to inject the shim into');
  const page = html.replace('<head>', `<head>${SHIM}`);
  const calls: ServerCall[] = [];

  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'GET' && path === '/') {
      response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': CONTENT_SECURITY_POLICY,
      });
      response.end(page);
      return;
    }
    if (request.method === 'POST' && path === RUN_PATH) {
      void readBody(request).then(async (body) => {
        let name = '?';
        let args: unknown[] = [];
        let answer: { ok: true; value: unknown } | { ok: false; error: string };
        try {
          const call = JSON.parse(body) as { name: string; args: unknown[] };
          name = call.name;
          args = call.args;
          // Apps Script passes arguments and answers through serialization: mimic it with JSON.
          const value = await runServerFunction(name, JSON.parse(JSON.stringify(args)) as unknown[]);
          answer = { ok: true, value: value === undefined ? null : JSON.parse(JSON.stringify(value)) };
        } catch (error) {
          answer = { ok: false, error: messageOf(error) };
        }
        calls.push({
          name,
          args: args.map(redactKey),
          ok: answer.ok,
          answer: answer.ok ? JSON.stringify(answer.value) : answer.error,
        });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer));
      });
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('not found');
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
