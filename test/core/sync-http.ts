// Blocking HTTP for Node tests of the synchronous driver: each request runs in a child Node process
// (the way UrlFetchApp blocks an Apps Script execution).
import { spawnSync } from 'node:child_process';
import type { HttpAnswer, HttpRequest } from '../../shared';

const CHILD = `
let input = '';
process.stdin.on('data', (c) => (input += c)).on('end', async () => {
  const r = JSON.parse(input);
  try {
    const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body });
    const headers = {};
    res.headers.forEach((v, k) => (headers[k] = v));
    process.stdout.write(JSON.stringify({ status: res.status, headers, body: await res.text() }));
  } catch (e) {
    process.stdout.write(JSON.stringify({ networkError: String(e && e.message) }));
  }
});`;

export function fetchSync(request: HttpRequest): HttpAnswer {
  const child = spawnSync(process.execPath, ['-e', CHILD], {
    input: JSON.stringify(request),
    encoding: 'utf8',
  });
  const out = JSON.parse(child.stdout) as HttpAnswer & { networkError?: string };
  if (out.networkError) throw new Error(out.networkError);
  return out;
}
