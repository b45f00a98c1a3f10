// UrlFetchApp: real HTTP from the main thread while the execution's worker blocks, so the call is synchronous for
// the script, as in Apps Script. Honours muteHttpExceptions, followRedirects, contentType, headers and payload,
// the documented limits (URL length, header count, response size, 20,000 calls a day) and, when the stand-in is told
// to (a versioned deployment), the manifest's urlFetchWhitelist as Google applies it (allowlist.ts).
import http from 'node:http';
import https from 'node:https';
import { allowlistRefusal } from './allowlist';
import { AppsScriptException, noPermission } from './errors';
import { AppsScriptObject, type Execution } from './execution';
import { SCOPES, type ScopeTable } from './scopes';
import {
  URL_FETCH_MAX_HEADERS,
  URL_FETCH_RESPONSE_MAX_BYTES,
  URL_FETCH_TIMEOUT_MS,
  URL_FETCH_URL_MAX_CHARS,
} from './limits';

/** One fetch, as tests may inspect it (the Authorization header is kept, so tests can check where the key went). */
export interface FetchRecord {
  executionId: number;
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  payload: string;
  status?: number;
  error?: string;
  ms: number;
}

export interface FetchContext {
  log: FetchRecord[];
  /** The URL Fetch quota: counts one call of the execution's user, or throws Google's text past it. */
  count(execution: Execution): void;
  /**
   * Extra stand-in milliseconds a fetch takes (virtual network latency), besides the real time it took: `requests`
   * sent side by side (fetchAll) take as long as the slowest.
   */
  extraLatencyMs: (requests: number) => number;
  now(): number;
  scopes: ScopeTable;
  /** The URL prefixes fetches are allowed to (urlFetchWhitelist); undefined: not enforced (a test deployment). */
  allowlist?: readonly string[];
  /**
   * Runs the network I/O of one fetch (or one fetchAll) as a wait of the execution: on a virtual clock other
   * executions run meanwhile, and the stand-in time it took plus `extraMs` passes for this one.
   */
  during<T>(execution: Execution, io: () => Promise<T>, extraMs: number): Promise<T>;
}

interface RawResponse {
  status: number;
  headers: Array<[string, string]>;
  body: Buffer;
}

export class HTTPResponse extends AppsScriptObject {
  readonly kind = 'HTTPResponse';

  constructor(private readonly raw: RawResponse) {
    super();
  }

  getResponseCode(): number {
    return this.raw.status;
  }

  getContentText(charset?: unknown): string {
    const encoding =
      typeof charset === 'string' && /^(iso-8859-1|latin1)$/i.test(charset) ? 'latin1' : 'utf8';
    return this.raw.body.toString(encoding);
  }

  getContent(): number[] {
    return [...this.raw.body].map((b) => (b > 127 ? b - 256 : b));
  }

  getAllHeaders(): Record<string, string | string[]> {
    const all: Record<string, string | string[]> = {};
    for (const [name, value] of this.raw.headers) {
      const existing = all[name];
      if (existing === undefined) all[name] = value;
      else all[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
    }
    return all;
  }

  getHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of this.raw.headers) headers[name] = value;
    return headers;
  }
}

function toBuffer(payload: unknown): Buffer {
  if (payload === undefined || payload === null) return Buffer.alloc(0);
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (Array.isArray(payload)) return Buffer.from(payload.map((b) => Number(b) & 255));
  if (typeof payload === 'object') {
    const form = Object.entries(payload as Record<string, unknown>)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join('&');
    return Buffer.from(form, 'utf8');
  }
  return Buffer.from(String(payload), 'utf8');
}

/**
 * The stand-in's network: Apps Script fetches from Google's servers, which never reach this machine. A local
 * sandbox stands for a server on the internet: an `https://` address on a loopback host (127.0.0.1, localhost,
 * [::1]) reaches the local server behind it over plain HTTP. Certificates are not modelled.
 */
function wireProtocol(url: URL): 'http:' | 'https:' {
  if (url.protocol === 'https:' && /^(127\.0\.0\.1|localhost|\[::1\])$/i.test(url.hostname)) return 'http:';
  return url.protocol === 'https:' ? 'https:' : 'http:';
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
): Promise<RawResponse> {
  const protocol = wireProtocol(url);
  const client = protocol === 'https:' ? https : http;
  const target = protocol === url.protocol ? url : new URL(url.href.replace(/^https:/i, 'http:'));
  return new Promise((resolve, reject) => {
    const request = client.request(
      target,
      { method, headers: { ...headers, 'content-length': String(body.length) } },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > URL_FETCH_RESPONSE_MAX_BYTES) {
            request.destroy(new Error('response too large'));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          const pairs: Array<[string, string]> = [];
          for (let i = 0; i + 1 < response.rawHeaders.length; i += 2)
            pairs.push([response.rawHeaders[i], response.rawHeaders[i + 1]]);
          resolve({ status: response.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks) });
        });
        response.on('error', reject);
      },
    );
    request.setTimeout(timeoutMs, () =>
      request.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })),
    );
    request.on('error', reject);
    request.end(body);
  });
}

export class UrlFetchApp extends AppsScriptObject {
  readonly kind = 'UrlFetchApp';

  constructor(
    private readonly execution: Execution,
    private readonly context: FetchContext,
  ) {
    super();
  }

  async fetch(urlArg: unknown, params?: unknown): Promise<HTTPResponse> {
    this._allowed('UrlFetchApp.fetch');
    const response = await this.context.during(
      this.execution,
      () => this._fetch(urlArg, params),
      this.context.extraLatencyMs(1),
    );
    if (this.execution.remainingMs() < 0) this.execution.kill('Exceeded maximum execution time');
    return response;
  }

  /** Requests sent side by side (objects with `url` and fetch's params): the network time is paid once. */
  async fetchAll(requests: unknown): Promise<HTTPResponse[]> {
    this._allowed('UrlFetchApp.fetchAll');
    if (!Array.isArray(requests)) throw new AppsScriptException('Invalid argument: requests');
    const answers = await this.context.during(
      this.execution,
      () => Promise.all(requests.map((r) => this._fetch((r as { url?: unknown })?.url, r))),
      this.context.extraLatencyMs(requests.length),
    );
    if (this.execution.remainingMs() < 0) this.execution.kill('Exceeded maximum execution time');
    return answers;
  }

  private _allowed(what: string): void {
    if (this.execution.authMode === 'NONE') throw noPermission(what);
    this.context.scopes.require(this.execution, what, [SCOPES.externalRequest], true);
  }

  async _fetch(urlArg: unknown, params: unknown): Promise<HTTPResponse> {
    this.context.count(this.execution);
    const urlText = String(urlArg);
    if (urlText.length > URL_FETCH_URL_MAX_CHARS)
      throw new AppsScriptException('Limit Exceeded: URL Fetch URL Length.');
    let url: URL;
    try {
      url = new URL(urlText);
    } catch {
      throw new AppsScriptException(`Invalid argument: ${urlText}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new AppsScriptException(`Invalid argument: ${urlText}`);
    const refused = allowlistRefusal(urlText, this.context.allowlist);
    if (refused) throw new AppsScriptException(refused);
    const options = (params ?? {}) as Record<string, unknown>;
    let method = String(options.method ?? 'get').toUpperCase();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((options.headers ?? {}) as Record<string, unknown>))
      headers[k] = String(v);
    if (Object.keys(headers).length > URL_FETCH_MAX_HEADERS)
      throw new AppsScriptException('Limit Exceeded: URL Fetch headers.');
    let body = toBuffer(options.payload);
    if (body.length > 0 || options.contentType !== undefined) {
      headers['Content-Type'] = String(options.contentType ?? 'application/x-www-form-urlencoded');
    }
    const record: FetchRecord = {
      executionId: this.execution.id,
      method,
      url: urlText,
      requestHeaders: { ...headers },
      payload: body.toString('utf8'),
      ms: 0,
    };
    this.context.log.push(record);
    const started = this.context.now();
    let response: RawResponse;
    try {
      for (let redirects = 0; ; redirects++) {
        const remaining = this.execution.remainingMs();
        if (remaining <= 0) this.execution.kill('Exceeded maximum execution time');
        const timeout = Math.min(URL_FETCH_TIMEOUT_MS, remaining);
        response = await send(url, method, headers, body, timeout).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ETIMEDOUT' && this.execution.remainingMs() <= 0) {
            this.execution.kill('Exceeded maximum execution time');
          }
          throw error;
        });
        const location = response.headers.find(([k]) => k.toLowerCase() === 'location')?.[1];
        if (
          options.followRedirects === false ||
          !location ||
          response.status < 300 ||
          response.status > 399 ||
          redirects >= 5
        )
          break;
        url = new URL(location, url);
        if (response.status === 301 || response.status === 302 || response.status === 303) {
          method = 'GET';
          body = Buffer.alloc(0);
        }
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const message =
        code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? `DNS error: ${urlText}`
          : code === 'ETIMEDOUT'
            ? `Timeout: ${urlText}`
            : `Address unavailable: ${urlText}`;
      record.error = message;
      record.ms = this.context.now() - started;
      if ((error as Error).name === 'ExecutionKilled') throw error;
      throw new AppsScriptException(message);
    }
    record.status = response.status;
    record.ms = this.context.now() - started;
    if (response.status >= 400 && options.muteHttpExceptions !== true) {
      const text = response.body.toString('utf8').slice(0, 300);
      throw new AppsScriptException(
        `Request failed for ${urlText} returned code ${response.status}. Truncated server response: ${text} (use muteHttpExceptions option to examine full response)`,
      );
    }
    return new HTTPResponse(response);
  }
}
