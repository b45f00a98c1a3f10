// Tests of the sandbox DAPA checker: every spec rule over real HTTP (startSandbox on an ephemeral port),
// then determinism, the in-process handler on a virtual clock, the example config and the CLI.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseSandboxConfig } from './config';
import {
  API_PATH,
  DEFAULT_CONFIG,
  MESSAGES,
  createSandbox,
  metricsFor,
  type FaultConfig,
  type SandboxConfig,
  type SandboxRequest,
  type SandboxStats,
} from './handler';
import { startSandbox, type RunningSandbox } from './server';

interface Envelope {
  status: number;
  message: string;
  data: { domain: string; site_da: unknown; site_pa: unknown; site_mr: unknown; spam_score: unknown }[];
  summary: { submitted: number; processed: number; skipped: number };
  skipped: { index: number; url: string; reason: string; message: string }[];
}

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
});
afterAll(() => sb.close());
beforeEach(() => sb.sandbox.configure(DEFAULT_CONFIG));

async function call(
  opts: { method?: string; path?: string; key?: string | null; auth?: string; body?: string },
  base = sb.url,
): Promise<Reply> {
  const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json' };
  const key = opts.key === undefined ? 'sandbox-premium' : opts.key;
  if (opts.auth !== undefined) headers.authorization = opts.auth;
  else if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(base + (opts.path ?? API_PATH), {
    method: opts.method ?? 'POST',
    headers,
    body: opts.method === 'GET' ? undefined : opts.body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const check = (urls: unknown, key: string | null = 'sandbox-premium', base = sb.url): Promise<Reply> =>
  call({ key, body: JSON.stringify({ urls }) }, base);

const withFaults = (faults: FaultConfig, keys = DEFAULT_CONFIG.keys): void =>
  sb.sandbox.configure({ keys, faults });

const domains = (n: number, prefix = 'site'): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}.com`);

function expectInvariant(env: Envelope): void {
  expect(env.summary.processed).toBe(env.data.length);
  expect(env.summary.skipped).toBe(env.skipped.length);
  expect(env.summary.processed + env.summary.skipped).toBe(env.summary.submitted);
}

describe('routing', () => {
  test('an unknown path answers 404 JSON', async () => {
    const r = await call({ path: '/api/user/other', body: '{}' });
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.json).toEqual({ error: 'Not Found' });
  });

  test('GET on the endpoint answers 405 JSON with Allow: POST', async () => {
    const r = await call({ method: 'GET' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(r.json).toEqual({ error: 'Method Not Allowed' });
  });
});

describe('authentication (spec 5)', () => {
  const incorrect = { type: 'invalid_request', message: 'incorrect API key provided' };

  test('a request without Authorization answers 401 incorrect API key provided', async () => {
    const r = await check(['example.com'], null);
    expect(r.status).toBe(401);
    expect(r.json).toEqual(incorrect);
  });

  test('an unknown key answers 401 incorrect API key provided', async () => {
    const r = await check(['example.com'], 'not-a-key');
    expect(r.status).toBe(401);
    expect(r.json).toEqual(incorrect);
  });

  test('a key without the Bearer scheme answers 401', async () => {
    const r = await call({ auth: 'sandbox-premium', body: '{"urls":["example.com"]}' });
    expect(r.status).toBe(401);
    expect(r.json).toEqual(incorrect);
  });

  test('an expired plan answers 401 you are not premium for this request', async () => {
    const r = await check(['example.com'], 'sandbox-expired');
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ type: 'invalid_request', message: 'you are not premium for this request' });
  });

  test('auth is checked before the body: bad key with an invalid body answers 401, not 422', async () => {
    const r = await call({ key: 'nope', body: 'not json' });
    expect(r.status).toBe(401);
  });

  test('stats never echo an unknown key', async () => {
    await check(['example.com'], 'secret-looking-key');
    const stats = await (await fetch(`${sb.url}/__sandbox/stats`)).text();
    expect(stats).not.toContain('secret-looking-key');
    expect(JSON.parse(stats)['(unknown)'].responsesByStatus).toEqual({ '401': 1 });
  });
});

describe('request validation (spec 4.1 rule 4)', () => {
  const validationError = {
    message: 'Validation Error',
    errors: { urls: ['The urls field is required and must be an array.'] },
  };

  test.each([
    ['the body is not JSON', 'urls=example.com'],
    ['urls is missing', '{"domains":["example.com"]}'],
    ['urls is a string', '{"urls":"example.com"}'],
    ['urls is an object', '{"urls":{"0":"example.com"}}'],
    ['the body is a JSON array', '["example.com"]'],
  ])('answers 422 Validation Error when %s', async (_name, body) => {
    const r = await call({ body });
    expect(r.status).toBe(422);
    expect(r.json).toEqual(validationError);
    expect(sb.sandbox.stats()['sandbox-premium'].billed).toBe(0);
  });
});

describe('successful check (spec 2, 4.1 rule 5)', () => {
  test('answers 200 with the envelope and one record per valid URL, metrics as metricsFor', async () => {
    const r = await check(['example.com', 'moz.com']);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.json).toEqual({
      status: 200,
      message: 'Domains processed successfully',
      data: [
        { domain: 'example.com', ...metricsFor('example.com') },
        { domain: 'moz.com', ...metricsFor('moz.com') },
      ],
      summary: { submitted: 2, processed: 2, skipped: 0 },
      skipped: [],
    });
  });

  test('metrics are deterministic per normalized domain and have the spec types', () => {
    expect(metricsFor('example.com')).toEqual({ site_da: 33, site_pa: 56, site_mr: 0.9, spam_score: 10 });
    expect(metricsFor('https://WWW.Example.com/path')).toEqual(metricsFor('example.com'));
    for (const d of domains(300)) {
      const m = metricsFor(d);
      for (const v of [m.site_da, m.site_pa, m.spam_score]) {
        expect(Number.isInteger(v)).toBe(true);
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(100);
      }
      expect(Math.round(m.site_mr * 10) / 10).toBe(m.site_mr);
      expect(String(m.site_mr)).toMatch(/^\d+(\.\d)?$/);
    }
    const distinct = new Set(domains(300).map((d) => metricsFor(d).site_da));
    expect(distinct.size).toBeGreaterThan(50);
  });

  test('the record domain is the lowercased host as sent, without scheme, port or path', async () => {
    const r = await check(['https://WWW.Example.com:8080/a/b?q=1#top', ' Moz.COM ']);
    expect(r.json.data.map((d: { domain: string }) => d.domain)).toEqual(['www.example.com', 'moz.com']);
    expect(r.json.data[0]).toMatchObject(metricsFor('example.com'));
  });
});

describe('per-entry skips (spec 2.3, 2.4, 4.1 rules 1-3)', () => {
  test('a non-text entry is skipped as invalid_url_format with url "" and a message about text', async () => {
    const r = await check([42, 'example.com', null, { url: 'moz.com' }, ['moz.com'], true]);
    expect(r.status).toBe(200);
    expect(r.json.skipped).toEqual(
      [0, 2, 3, 4, 5].map((index) => ({
        index,
        url: '',
        reason: 'invalid_url_format',
        message: MESSAGES.notText,
      })),
    );
    expect(r.json.skipped[0].message).toMatch(/text/);
  });

  test('empty and space-only entries are skipped as empty_url with the url as sent', async () => {
    const r = await check(['', '   ', '\t', 'example.com']);
    expect(r.json.skipped).toEqual([
      { index: 0, url: '', reason: 'empty_url', message: MESSAGES.empty },
      { index: 1, url: '   ', reason: 'empty_url', message: MESSAGES.empty },
      { index: 2, url: '\t', reason: 'empty_url', message: MESSAGES.empty },
    ]);
    expect(r.json.summary).toEqual({ submitted: 4, processed: 1, skipped: 3 });
  });

  test.each([
    'not a domain',
    'example',
    'localhost',
    'example.c',
    'example.123',
    'ftp://example.com',
    '192.168.0.1',
    'exa mple.com',
    'exa_mple.com',
    '-example.com',
    'example..com',
    'http://',
    'www.com',
  ])('"%s" is skipped as invalid_url_format asking for a domain extension', async (url) => {
    const r = await check([url, 'example.com']);
    expect(r.status).toBe(200);
    expect(r.json.skipped).toEqual([
      { index: 0, url, reason: 'invalid_url_format', message: MESSAGES.invalid },
    ]);
    expect(r.json.skipped[0].message).toMatch(/valid URL with a domain extension/);
  });

  test.each([
    ['example.com', 'example.com'],
    ['  example.org  ', 'example.org'],
    ['http://example.net', 'example.net'],
    ['https://www.Example.com/path?q=1#frag', 'www.example.com'],
    ['http://sub.example.co.uk:8080/a', 'sub.example.co.uk'],
    ['my-site.io/', 'my-site.io'],
    ['münchen.de', 'münchen.de'],
    ['xn--mnchen-3ya.de', 'xn--mnchen-3ya.de'],
    ['пример.рф', 'пример.рф'],
    ['example.xn--p1ai', 'example.xn--p1ai'],
  ])('"%s" is valid and processed', async (url, domain) => {
    const r = await check([url]);
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual([{ domain, ...metricsFor(domain) }]);
  });

  test('skipped entries carry their zero-based index and processed + skipped = submitted', async () => {
    const urls = ['a.com', 7, '', 'b.com', 'bad', '  ', 'c.org', 'x'];
    const r = await check(urls);
    const env = r.json as Envelope;
    expectInvariant(env);
    expect(env.summary).toEqual({ submitted: 8, processed: 3, skipped: 5 });
    expect(env.skipped.map((s) => [s.index, s.url, s.reason])).toEqual([
      [1, '', 'invalid_url_format'],
      [2, '', 'empty_url'],
      [4, 'bad', 'invalid_url_format'],
      [5, '  ', 'empty_url'],
      [7, 'x', 'invalid_url_format'],
    ]);
    expect(sb.sandbox.stats()['sandbox-premium'].billed).toBe(3);
  });

  test('when every URL is skipped the answer is HTTP 422 with status 422, data [] and the skipped list', async () => {
    const r = await check(['', 'bad', 5]);
    expect(r.status).toBe(422);
    expect(r.json).toEqual({
      status: 422,
      message: 'No valid URL was provided. Check the skipped list for details.',
      data: [],
      summary: { submitted: 3, processed: 0, skipped: 3 },
      skipped: [
        { index: 0, url: '', reason: 'empty_url', message: MESSAGES.empty },
        { index: 1, url: 'bad', reason: 'invalid_url_format', message: MESSAGES.invalid },
        { index: 2, url: '', reason: 'invalid_url_format', message: MESSAGES.notText },
      ],
    });
    expect(sb.sandbox.stats()['sandbox-premium'].billed).toBe(0);
  });

  test('an empty urls array is answered as all-skipped (422 envelope, submitted 0)', async () => {
    const r = await check([]);
    expect(r.status).toBe(422);
    expect(r.json.summary).toEqual({ submitted: 0, processed: 0, skipped: 0 });
  });
});

describe('maximum URLs per request (spec 4.1 rule 7, 8)', () => {
  test('51 valid URLs on a 50-URL plan answer 422 Limit Exceeded with the maximum in the message', async () => {
    const r = await check(domains(51));
    expect(r.status).toBe(422);
    expect(r.json).toEqual({
      error: 'Limit Exceeded',
      message: 'Limit Exceeded: at most 50 URLs per request are allowed on your plan.',
    });
  });

  test('a Limit Exceeded request bills nothing', async () => {
    await check(domains(60));
    const s = sb.sandbox.stats()['sandbox-premium'];
    expect(s.billed).toBe(0);
    expect(s.billedByDomain).toEqual({});
  });

  test('only valid URLs count toward the maximum: 50 valid + 10 invalid are processed', async () => {
    const urls = [...domains(50), ...Array.from({ length: 10 }, () => 'bad'), '', 3];
    const r = await check(urls);
    expect(r.status).toBe(200);
    expect(r.json.summary).toEqual({ submitted: 62, processed: 50, skipped: 12 });
  });

  test('limitMessageWithNumber false leaves the number out of the message', async () => {
    withFaults({ limitMessageWithNumber: false });
    const r = await check(domains(51));
    expect(r.status).toBe(422);
    expect(r.json.error).toBe('Limit Exceeded');
    expect(r.json.message).toMatch(/^Limit Exceeded/);
    expect(r.json.message).not.toMatch(/\d/);
  });

  test('a Limit Exceeded request counts toward the requests-per-minute window', async () => {
    withFaults({}, { tiny: { maxUrlsPerRequest: 1, requestsPerMinute: 2 } });
    expect((await check(domains(2), 'tiny')).status).toBe(422);
    expect((await check(domains(2), 'tiny')).status).toBe(422);
    expect((await check(['example.com'], 'tiny')).status).toBe(429);
  });
});

describe('requests per minute (spec 7, 8)', () => {
  test('the 11th request in a minute on a 10/min plan answers 429 Too Many Requests with Retry-After seconds', async () => {
    for (let i = 0; i < 10; i++) expect((await check(['example.com'], 'sandbox-rpm')).status).toBe(200);
    const r = await check(['example.com'], 'sandbox-rpm');
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ error: 'Too Many Requests' });
    const seconds = Number(r.headers.get('retry-after'));
    expect(Number.isInteger(seconds)).toBe(true);
    expect(seconds).toBeGreaterThanOrEqual(55);
    expect(seconds).toBeLessThanOrEqual(60);
    const s = sb.sandbox.stats()['sandbox-rpm'];
    expect(s.responsesByStatus).toEqual({ '200': 10, '429': 1 });
    expect(s.billed).toBe(10);
  });

  test('retryAfter "date" advertises an HTTP date about a minute ahead', async () => {
    withFaults({ retryAfter: 'date' }, { k: { requestsPerMinute: 1 } });
    await check(['example.com'], 'k');
    const r = await check(['example.com'], 'k');
    expect(r.status).toBe(429);
    const header = r.headers.get('retry-after') ?? '';
    expect(header).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    const ahead = Date.parse(header) - Date.now();
    expect(ahead).toBeGreaterThan(55_000);
    expect(ahead).toBeLessThanOrEqual(61_000);
  });

  test('retryAfter "none" sends 429 without Retry-After', async () => {
    withFaults({ retryAfter: 'none' }, { k: { requestsPerMinute: 1 } });
    await check(['example.com'], 'k');
    const r = await check(['example.com'], 'k');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBeNull();
  });

  test('a key without a request limit is unlimited', async () => {
    for (let i = 0; i < 30; i++) expect((await check(['example.com'], 'sandbox-upm')).status).toBe(200);
  });
});

describe('URLs per minute (spec 2.4, 8)', () => {
  test('the URL that would pass the limit and every following valid one are skipped as rate_limit_reached', async () => {
    expect((await check(domains(50, 'a'), 'sandbox-upm')).json.summary.processed).toBe(50);
    expect((await check(domains(40, 'b'), 'sandbox-upm')).json.summary.processed).toBe(40);
    const urls = ['c1.com', 'bad', ...domains(9, 'd'), 'e1.com', '', 'e2.com', 'e3.com'];
    const r = await check(urls, 'sandbox-upm');
    expect(r.status).toBe(200);
    const env = r.json as Envelope;
    expectInvariant(env);
    expect(env.data.map((d) => d.domain)).toEqual(['c1.com', ...domains(9, 'd')]);
    expect(env.skipped).toEqual([
      { index: 1, url: 'bad', reason: 'invalid_url_format', message: MESSAGES.invalid },
      { index: 11, url: 'e1.com', reason: 'rate_limit_reached', message: MESSAGES.rateLimit },
      { index: 12, url: '', reason: 'empty_url', message: MESSAGES.empty },
      { index: 13, url: 'e2.com', reason: 'rate_limit_reached', message: MESSAGES.rateLimit },
      { index: 14, url: 'e3.com', reason: 'rate_limit_reached', message: MESSAGES.rateLimit },
    ]);
    expect(env.skipped[1].message).toMatch(/try again later/i);
    const s = sb.sandbox.stats()['sandbox-upm'];
    expect(s.billed).toBe(100);
    expect(s.rateLimitSkips).toBe(3);
  });

  test('a request whose URLs all hit the URL limit answers the 422 all-skipped envelope', async () => {
    await check(domains(50, 'a'), 'sandbox-upm');
    await check(domains(50, 'b'), 'sandbox-upm');
    const r = await check(['example.com', 'moz.com'], 'sandbox-upm');
    expect(r.status).toBe(422);
    expect(r.json.status).toBe(422);
    expect(r.json.skipped.map((s: { reason: string }) => s.reason)).toEqual([
      'rate_limit_reached',
      'rate_limit_reached',
    ]);
  });

  test('stats count the requests whose valid URLs were all refused, and the Limit Exceeded answers', async () => {
    withFaults({}, { k: { maxUrlsPerRequest: 5, urlsPerMinute: 6 } });
    expect((await check(domains(6, 'a'), 'k')).json.error).toBe('Limit Exceeded');
    expect((await check(domains(5, 'b'), 'k')).status).toBe(200);
    expect((await check(domains(3, 'c'), 'k')).json.summary.processed).toBe(1); // partly refused: not counted
    expect((await check(['bad', ...domains(2, 'd')], 'k')).status).toBe(422); // all valid ones refused
    expect((await check(['bad'], 'k')).status).toBe(422); // no valid URL: not counted
    const s = sb.sandbox.stats().k;
    expect([s.limitExceeded, s.allRateLimited, s.rateLimitSkips]).toEqual([1, 1, 4]);
  });
});

describe('lookup_failed (spec 2.4)', () => {
  test('lookupFailedRate 1 skips every valid URL as lookup_failed and bills nothing', async () => {
    withFaults({ lookupFailedRate: 1 });
    const r = await check(['example.com', 'bad', 'moz.com']);
    expect(r.status).toBe(422);
    expect(r.json.skipped).toEqual([
      { index: 0, url: 'example.com', reason: 'lookup_failed', message: MESSAGES.lookupFailed },
      { index: 1, url: 'bad', reason: 'invalid_url_format', message: MESSAGES.invalid },
      { index: 2, url: 'moz.com', reason: 'lookup_failed', message: MESSAGES.lookupFailed },
    ]);
    const s = sb.sandbox.stats()['sandbox-premium'];
    expect(s.billed).toBe(0);
    expect(s.lookupFailedSkips).toBe(2);
  });

  test('a partial lookupFailedRate skips some URLs, and stats agree with the answers', async () => {
    withFaults({ lookupFailedRate: 0.3, seed: 7 });
    const r = await check(domains(50));
    const env = r.json as Envelope;
    expectInvariant(env);
    const failed = env.skipped.filter((s) => s.reason === 'lookup_failed').length;
    expect(failed).toBeGreaterThan(5);
    expect(failed).toBeLessThan(30);
    const s = sb.sandbox.stats()['sandbox-premium'];
    expect(s.lookupFailedSkips).toBe(failed);
    expect(s.billed).toBe(50 - failed);
  });
});

describe('billing (spec 1, 4.1 rule 8)', () => {
  test('duplicates within one request are each processed and billed, visible in billedByDomain', async () => {
    const r = await check(['example.com', 'EXAMPLE.com', 'https://www.example.com/x', 'moz.com']);
    expect(r.json.summary.processed).toBe(4);
    const s = sb.sandbox.stats()['sandbox-premium'];
    expect(s.billedByDomain).toEqual({ 'example.com': 3, 'moz.com': 1 });
    expect(s.billed).toBe(4);
    expect(s.urlsSubmitted).toBe(4);
  });
});

describe('fault injection', () => {
  test('serverErrorRate 1 answers 500 {"error":"An unexpected error occurred"} and bills nothing', async () => {
    withFaults({ serverErrorRate: 1 });
    const r = await check(['example.com']);
    expect(r.status).toBe(500);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.json).toEqual({ error: 'An unexpected error occurred' });
    expect(sb.sandbox.stats()['sandbox-premium'].billed).toBe(0);
  });

  test('html502Rate 1 answers 502 with an HTML page and bills nothing', async () => {
    withFaults({ html502Rate: 1 });
    const r = await check(['example.com']);
    expect(r.status).toBe(502);
    expect(r.headers.get('content-type')).toBe('text/html');
    expect(r.text).toMatch(/^<html>[\s\S]*502 Bad Gateway/);
    expect(r.json).toBeUndefined();
    expect(sb.sandbox.stats()['sandbox-premium'].billed).toBe(0);
  });

  test('auth still comes first when faults are on', async () => {
    withFaults({ serverErrorRate: 1, html502Rate: 1 });
    expect((await check(['example.com'], null)).status).toBe(401);
  });

  test('latencyMs delays the HTTP answer by the configured time', async () => {
    withFaults({ latencyMs: [150, 150] });
    const started = Date.now();
    const r = await check(['example.com']);
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  test.each([
    ['host', ['www.example.com', 'example.com', 'sub.example.com']],
    ['www', ['www.example.com', 'www.example.com', 'www.sub.example.com']],
    ['upper', ['WWW.EXAMPLE.COM', 'EXAMPLE.COM', 'SUB.EXAMPLE.COM']],
  ] as const)('domainSpelling "%s" spells the record domain that way', async (domainSpelling, expected) => {
    withFaults({ domainSpelling });
    const r = await check(['https://WWW.example.com/a', 'Example.com', 'http://sub.example.com']);
    expect(r.json.data.map((d: { domain: string }) => d.domain)).toEqual(expected);
  });

  test('domainSpelling "mixed" varies the spelling but keeps the same normalized domain', async () => {
    withFaults({ domainSpelling: 'mixed', seed: 3 });
    const r = await check(Array.from({ length: 20 }, () => 'www.Example.com'));
    const spellings = new Set(r.json.data.map((d: { domain: string }) => d.domain));
    expect(spellings.size).toBeGreaterThan(1);
    for (const s of spellings) expect(['www.example.com', 'example.com', 'WWW.EXAMPLE.COM']).toContain(s);
  });

  test('numericStrings sends every metric as a numeric string', async () => {
    withFaults({ numericStrings: true });
    const r = await check(['example.com']);
    const m = metricsFor('example.com');
    expect(r.json.data[0]).toEqual({
      domain: 'example.com',
      site_da: String(m.site_da),
      site_pa: String(m.site_pa),
      site_mr: String(m.site_mr),
      spam_score: String(m.spam_score),
    });
  });

  test('shuffleData returns the same records in another order', async () => {
    withFaults({ shuffleData: true, seed: 11 });
    const sent = domains(20);
    const got = (await check(sent)).json.data.map((d: { domain: string }) => d.domain);
    expect(got).not.toEqual(sent);
    expect([...got].sort()).toEqual([...sent].sort());
  });
});

describe('test endpoints', () => {
  test('GET /__sandbox/stats reports per-key counters', async () => {
    await check(['example.com', 'bad']);
    const stats = (await (await fetch(`${sb.url}/__sandbox/stats`)).json()) as SandboxStats;
    expect(stats['sandbox-premium']).toEqual({
      requests: 1,
      responsesByStatus: { '200': 1 },
      billed: 1,
      urlsSubmitted: 2,
      billedByDomain: { 'example.com': 1 },
      rateLimitSkips: 0,
      lookupFailedSkips: 0,
      limitExceeded: 0,
      allRateLimited: 0,
    });
  });

  test('POST /__sandbox/reset clears counters and rate windows', async () => {
    withFaults({}, { k: { requestsPerMinute: 1 } });
    await check(['example.com'], 'k');
    expect((await check(['example.com'], 'k')).status).toBe(429);
    const reset = await fetch(`${sb.url}/__sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(sb.sandbox.stats().k.requests).toBe(0);
    expect((await check(['example.com'], 'k')).status).toBe(200);
  });

  test('POST /__sandbox/config replaces the config; a misspelled fault is refused with 400', async () => {
    const ok = await fetch(`${sb.url}/__sandbox/config`, {
      method: 'POST',
      body: JSON.stringify({ keys: { fresh: { maxUrlsPerRequest: 1 } }, faults: { serverErrorRate: 0 } }),
    });
    expect(ok.status).toBe(200);
    expect((await check(['example.com'], 'fresh')).status).toBe(200);
    expect((await check(['example.com'], 'sandbox-premium')).status).toBe(401);
    const bad = await fetch(`${sb.url}/__sandbox/config`, {
      method: 'POST',
      body: JSON.stringify({ faults: { serverErorRate: 1 } }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/serverErorRate/);
  });

  test('an unknown /__sandbox/ path answers 404 JSON', async () => {
    const r = await call({ method: 'GET', path: '/__sandbox/nothing' });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: 'Not Found' });
  });
});

describe('determinism', () => {
  const noisy: SandboxConfig = {
    keys: { k: { maxUrlsPerRequest: 10, requestsPerMinute: 1000, urlsPerMinute: 10_000 } },
    faults: {
      seed: 5,
      lookupFailedRate: 0.2,
      serverErrorRate: 0.1,
      html502Rate: 0.1,
      latencyMs: [0, 3],
      shuffleData: true,
      domainSpelling: 'mixed',
    },
  };
  const sequence = Array.from({ length: 15 }, (_, i) => domains(8, `r${i}-`));

  test('two servers with the same seed give identical answers to the same request sequence', async () => {
    const [a, b] = await Promise.all([startSandbox({ config: noisy }), startSandbox({ config: noisy })]);
    try {
      const answers = async (s: RunningSandbox): Promise<string[]> => {
        const out: string[] = [];
        for (const urls of sequence) {
          const r = await check(urls, 'k', s.url);
          out.push(`${r.status} ${r.text}`);
        }
        return out;
      };
      const [first, second] = [await answers(a), await answers(b)];
      expect(first).toEqual(second);
      expect(new Set(first.map((x) => x.slice(0, 3))).size).toBeGreaterThan(1); // faults really happened
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('in process: same seed gives the same answers and latencies, another seed does not', () => {
    const run = (seed: number): string[] => {
      const s = createSandbox({ ...noisy, faults: { ...noisy.faults, seed } });
      return sequence.map((urls, i) => {
        const r = s.handle(post('k', urls), i * 1000);
        return `${r.status} ${r.latencyMs} ${r.body}`;
      });
    };
    expect(run(5)).toEqual(run(5));
    expect(run(6)).not.toEqual(run(5));
  });

  test('reset() re-seeds, so the sequence repeats', () => {
    const s = createSandbox(noisy);
    const once = sequence.map((urls) => s.handle(post('k', urls), 0).body);
    s.reset();
    expect(sequence.map((urls) => s.handle(post('k', urls), 0).body)).toEqual(once);
  });
});

function post(key: string, urls: unknown): SandboxRequest {
  return {
    method: 'POST',
    path: API_PATH,
    headers: { Authorization: `Bearer ${key}` },
    body: JSON.stringify({ urls }),
  };
}

describe('in-process handle on a virtual clock', () => {
  test('the request window slides: the 11th request waits for the first to leave the 60 s window', () => {
    const s = createSandbox();
    for (let i = 0; i < 10; i++) expect(s.handle(post('sandbox-rpm', ['a.com']), i * 1000).status).toBe(200);
    const limited = s.handle(post('sandbox-rpm', ['a.com']), 9_500);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('51'); // first slot frees at 60 000
    expect(s.handle(post('sandbox-rpm', ['a.com']), 59_999).headers['retry-after']).toBe('1');
    expect(s.handle(post('sandbox-rpm', ['a.com']), 60_000).status).toBe(200);
    expect(s.handle(post('sandbox-rpm', ['a.com']), 60_500).status).toBe(429); // t=1000 still inside
    expect(s.handle(post('sandbox-rpm', ['a.com']), 61_000).status).toBe(200);
  });

  test('429 answers do not count in the request window', () => {
    const s = createSandbox();
    for (let i = 0; i < 10; i++) s.handle(post('sandbox-rpm', ['a.com']), 0);
    for (let t = 1_000; t < 60_000; t += 1_000)
      expect(s.handle(post('sandbox-rpm', ['a.com']), t).status).toBe(429);
    for (let i = 0; i < 10; i++) expect(s.handle(post('sandbox-rpm', ['a.com']), 60_000).status).toBe(200);
    expect(s.handle(post('sandbox-rpm', ['a.com']), 60_000).status).toBe(429);
  });

  test('the URL window slides: URLs processed 60 s ago free room again', () => {
    const s = createSandbox();
    expect(JSON.parse(s.handle(post('sandbox-upm', domains(50, 'a')), 0).body).summary.processed).toBe(50);
    expect(JSON.parse(s.handle(post('sandbox-upm', domains(50, 'b')), 10_000).body).summary.processed).toBe(
      50,
    );
    const full = JSON.parse(s.handle(post('sandbox-upm', ['c.com']), 59_000).body);
    expect(full.skipped[0].reason).toBe('rate_limit_reached');
    const half = JSON.parse(s.handle(post('sandbox-upm', domains(60, 'd').slice(0, 50)), 60_000).body);
    expect(half.summary).toEqual({ submitted: 50, processed: 50, skipped: 0 });
    expect(JSON.parse(s.handle(post('sandbox-upm', ['e.com']), 60_001).body).summary.processed).toBe(0);
    expect(s.stats()['sandbox-upm'].billed).toBe(150);
  });

  test('latency is returned, not slept: handle answers at once with latencyMs in the range', () => {
    const s = createSandbox({ keys: DEFAULT_CONFIG.keys, faults: { latencyMs: [200, 400], seed: 1 } });
    const started = Date.now();
    const latencies = Array.from(
      { length: 50 },
      () => s.handle(post('sandbox-premium', ['a.com']), 0).latencyMs,
    );
    // Fifty answers in less time than the shortest one latency: none of them was slept.
    expect(Date.now() - started).toBeLessThan(Math.min(...latencies));
    expect(Math.min(...latencies)).toBeGreaterThanOrEqual(200);
    expect(Math.max(...latencies)).toBeLessThanOrEqual(400);
    expect(new Set(latencies).size).toBeGreaterThan(10);
  });

  test('header names are matched case-insensitively', () => {
    const s = createSandbox();
    const req = {
      ...post('sandbox-premium', ['a.com']),
      headers: { AUTHORIZATION: 'bearer sandbox-premium' },
    };
    expect(s.handle(req, 0).status).toBe(200);
  });
});

describe('example config and CLI', () => {
  const root = path.resolve(__dirname, '../..');

  test('faults.example.json parses, keeps the built-in keys and injects faults', () => {
    const file = JSON.parse(readFileSync(path.join(__dirname, 'faults.example.json'), 'utf8'));
    const config = parseSandboxConfig(file, true);
    expect(Object.keys(config.keys)).toEqual(expect.arrayContaining(['sandbox-premium', 'sandbox-small']));
    const s = createSandbox(config);
    const statuses = Array.from(
      { length: 200 },
      (_, i) => s.handle(post('sandbox-premium', ['a.com']), i * 1500).status,
    );
    expect(new Set(statuses)).toEqual(new Set([200, 422, 500, 502])); // 422: the single URL hit lookup_failed
  });

  test('npm run sandbox logs one line per request with the counts and never the Authorization value', async () => {
    const child = spawn(path.join(root, 'node_modules/.bin/tsx'), ['test/sandbox/cli.ts'], {
      cwd: root,
      env: { ...process.env, SANDBOX_PORT: '0' },
    });
    // Every wait below is on the output itself: checked as each chunk arrives, failed when the process ends first.
    let out = '';
    let ended = false;
    const waiting = new Set<() => void>();
    const collect = (chunk: Buffer): void => {
      out += chunk.toString();
      for (const recheck of [...waiting]) recheck();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const closed = new Promise<void>((resolve) =>
      child.on('close', () => {
        ended = true;
        for (const recheck of [...waiting]) recheck();
        resolve();
      }),
    );
    const waitFor = (re: RegExp): Promise<RegExpMatchArray> =>
      new Promise((resolve, reject) => {
        const recheck = (): void => {
          const m = re.exec(out);
          if (!m && !ended) return;
          waiting.delete(recheck);
          if (m) resolve(m);
          else reject(new Error(`the CLI ended without ${re} in its output:\n${out}`));
        };
        waiting.add(recheck);
        recheck();
      });
    try {
      const url = (await waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1];
      // The key list comes after the "listening on" line, maybe in a later chunk: wait for the startup text's
      // last line, never read early.
      await waitFor(/Test endpoints: .*\n/);
      for (const key of Object.keys(DEFAULT_CONFIG.keys))
        expect(out).toMatch(new RegExp(`^  ${key} +\\S`, 'm'));
      const r = await check(['example.com', 'bad'], 'sandbox-premium', url);
      expect(r.status).toBe(200);
      await waitFor(/POST \/api\/user\/dapa-checker 200 submitted=2 processed=1 skipped=1/);
      await check(['example.com'], 'a-secret-value-123', url);
      await waitFor(/ 401 /);
    } finally {
      child.kill('SIGTERM');
      await closed;
    }
    // All the output is in once the process closed: the key appears nowhere in it.
    expect(out).not.toContain('a-secret-value-123');
    expect(out).not.toContain('Bearer sandbox-premium');
  }, 20_000);
});

describe('the real service, played by the sandbox', () => {
  test('sandbox-basic is the entry plan: 5 valid URLs per request, 60 URLs a minute', () => {
    const s = createSandbox();
    expect(s.handle(post('sandbox-basic', domains(6, 'six')), 0).status).toBe(422);
    for (let i = 0; i < 12; i++)
      expect(s.handle(post('sandbox-basic', domains(5, `b${i}-`)), i * 100).status).toBe(200);
    const over = JSON.parse(s.handle(post('sandbox-basic', domains(5, 'late')), 1300).body) as Envelope;
    expect(over.skipped.map((e) => e.reason)).toEqual(Array(5).fill('rate_limit_reached'));
    expect(s.handle(post('sandbox-basic', domains(5, 'next')), 60_001).status).toBe(200);
    expect(s.stats()['sandbox-basic'].billed).toBe(65);
  });

  test('a spent monthly credit answers like an expired plan until the next period', () => {
    const s = createSandbox({ keys: { k: { maxUrlsPerRequest: 5, monthlyCredits: 7 } } });
    expect(s.handle(post('k', domains(5, 'a')), 0).status).toBe(200);
    expect(s.handle(post('k', domains(5, 'b')), 1).status).toBe(200); // began with 2 left: processed whole
    const spent = s.handle(post('k', domains(1, 'c')), 2);
    expect(spent.status).toBe(401);
    expect(JSON.parse(spent.body)).toEqual({
      type: 'invalid_request',
      message: 'you are not premium for this request',
    });
    expect(s.handle(post('k', domains(1, 'd')), 30 * 24 * 3_600_000).status).toBe(200);
  });

  test('rateLimitHeaders: X-RateLimit-Limit/-Remaining on each answer, -Reset and Retry-After on a 429', () => {
    const s = createSandbox({ keys: { k: { requestsPerMinute: 2 } }, faults: { rateLimitHeaders: true } });
    const first = s.handle(post('k', ['a.com']), 1_000_000);
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
    expect(s.handle(post('k', ['a.com']), 1_010_000).headers['x-ratelimit-remaining']).toBe('0');
    const limited = s.handle(post('k', ['a.com']), 1_020_000);
    expect(limited.status).toBe(429);
    expect(limited.headers).toMatchObject({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.ceil(1_060_000 / 1000)),
      'retry-after': '40',
    });
    // Without the option, and for keys without a request limit, no such header is sent.
    expect(
      createSandbox().handle(post('sandbox-rpm', ['a.com']), 0).headers['x-ratelimit-limit'],
    ).toBeUndefined();
    const unthrottled = createSandbox({ ...DEFAULT_CONFIG, faults: { rateLimitHeaders: true } });
    expect(
      unthrottled.handle(post('sandbox-upm', ['a.com']), 0).headers['x-ratelimit-limit'],
    ).toBeUndefined();
  });

  test('blockNetwork answers every request with nginx 403 HTML before auth, billing nothing', async () => {
    withFaults({ blockNetwork: true });
    for (const key of ['sandbox-premium', 'wrong-key', null]) {
      const r = await check(['example.com'], key);
      expect(r.status).toBe(403);
      expect(r.headers.get('content-type')).toBe('text/html');
      expect(r.text).toMatch(/<title>403 Forbidden<\/title>[\s\S]*nginx/);
    }
    expect(sb.sandbox.stats()['(blocked)'].requests).toBe(3);
    expect(sb.sandbox.stats()['sandbox-premium'].billed).toBe(0);
  });

  test('noDataRate: the same share of domains always has a spam score of -1, other metrics intact', () => {
    const s = createSandbox({ ...DEFAULT_CONFIG, faults: { noDataRate: 0.25 } });
    const urls = domains(40, 'nd');
    const env = JSON.parse(s.handle(post('sandbox-premium', urls), 0).body) as Envelope;
    const noData = env.data.filter((r) => r.spam_score === -1);
    expect(noData.length).toBeGreaterThan(3);
    expect(noData.length).toBeLessThan(20);
    for (const r of env.data) {
      const plain = metricsFor(r.domain);
      expect(r).toMatchObject({ site_da: plain.site_da, site_pa: plain.site_pa, site_mr: plain.site_mr });
      expect(r.spam_score).toBe(metricsFor(r.domain, 0.25).spam_score);
    }
    const again = JSON.parse(
      createSandbox({ ...DEFAULT_CONFIG, faults: { noDataRate: 0.25 } }).handle(
        post('sandbox-premium', urls),
        0,
      ).body,
    ) as Envelope;
    expect(again.data.filter((r) => r.spam_score === -1).map((r) => r.domain)).toEqual(
      noData.map((r) => r.domain),
    );
  });
});
