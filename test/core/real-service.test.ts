// The core against what is known of the real service: its address, 403 pages from its nginx, the server's own
// rate-limit headers and Retry-After, "no data" metrics of -1, and the entry plan's monthly credits.
import {
  BASE_URLS,
  baseUrlFor,
  classify,
  outcomeText,
  readKeyProbe,
  readServerRate,
  roomIn,
} from '../../shared';
import { createSandbox, DEFAULT_CONFIG, hasNoSpamData, metricsFor } from '../sandbox/handler';
import { ScriptedApi } from '../sandbox/scripted';
import { runOnVirtualSandbox, runVirtual } from '../sandbox/virtual';

const domains = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}.example.com`);
const NGINX_403 =
  '<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n</body></html>';

describe('the production address', () => {
  test('is the real service, and staging is only an address the user types', () => {
    expect(BASE_URLS).toEqual({ production: 'https://www.dapachecker.org' });
    expect(baseUrlFor('production')).toBe('https://www.dapachecker.org');
    expect(() => baseUrlFor('staging', '')).toThrow(/staging base URL must start with http/);
    expect(baseUrlFor('staging', ' https://staging.example.net/ ')).toBe('https://staging.example.net');
  });
});

describe('a refused network is not a wrong key', () => {
  test('an nginx 403 page stops the run as network_blocked after one request, with what to do', () => {
    const api = new ScriptedApi();
    let requests = 0;
    const blocked = {
      handle: () => (requests++, { status: 403, headers: { 'content-type': 'text/html' }, body: NGINX_403 }),
    };
    const { report } = runVirtual(['a.com', 'b.com', ''], blocked);
    expect(requests).toBe(1);
    expect(report.fatal?.code).toBe('network_blocked');
    expect(report.fatal && outcomeText(report.fatal)).toMatch(/refused requests from this server's network/);
    expect(report.fatal && outcomeText(report.fatal)).toMatch(/not your API key/);
    expect(report.fatal && outcomeText(report.fatal)).toMatch(/self-hosted n8n/);
    expect(report.fatal && outcomeText(report.fatal)).not.toMatch(/Incorrect API key/);
    expect(report.outcomes[0]).toMatchObject({ kind: 'error', code: 'network_blocked', retryable: false });
    expect(report.outcomes[2]).toMatchObject({ kind: 'skip', blank: true });
    expect(api.requests).toBe(0);
  });

  test('a 401 keeps the two spec messages; a 403 in the spec JSON shape is read by its message', () => {
    const auth = (status: number, message: string) =>
      classify({ status, body: JSON.stringify({ type: 'invalid_request', message }) }, 1, 0).kind;
    expect(auth(401, 'incorrect API key provided')).toBe('bad_key');
    expect(auth(401, 'you are not premium for this request')).toBe('not_premium');
    expect(auth(403, 'incorrect API key provided')).toBe('bad_key');
    expect(classify({ status: 403, body: NGINX_403 }, 1, 0).kind).toBe('blocked');
    expect(classify({ status: 403, body: '' }, 1, 0).kind).toBe('blocked');
  });

  test('the key test says the network is refused, not the key', () => {
    const result = readKeyProbe({ status: 403, body: NGINX_403 });
    expect(result).toMatchObject({ ok: false, code: 'network_blocked' });
    expect(result.message).toMatch(/not your API key/);
  });

  test('the sandbox blocks like the real nginx when asked to', () => {
    const sandbox = createSandbox({ ...DEFAULT_CONFIG, faults: { blockNetwork: true } });
    const { report, stats } = runOnVirtualSandbox(sandbox, 'sandbox-basic', ['a.com']);
    expect(report.fatal?.code).toBe('network_blocked');
    expect(report.totals.requests).toBe(1);
    expect(sandbox.stats()['(blocked)'].responsesByStatus).toEqual({ 403: 1 });
    expect(stats.billed).toBe(0);
  });
});

describe("the server's word beats the core's guess", () => {
  test('a 429 with Retry-After: 2 inside a 25-second run is retried after 2 s and the run finishes', () => {
    // Before: the pacer inferred "1 request per minute" from the 429 and ended 7 of 8 batches as unfinished.
    const api = new ScriptedApi({ maxUrls: 5, faults: [undefined, '429ra'] });
    const values = domains(40, 'ra');
    const { report, waits, elapsed } = runVirtual(values, api, { maxUrlsPerRequest: 5, deadline: 25_000 });
    expect(waits).toEqual([2000]);
    expect(report.totals.records).toBe(40);
    expect(report.totals.errorsByCode).toEqual({});
    expect(elapsed).toBeLessThan(5000);
  });

  test('a Retry-After that agrees with a one-minute window still teaches the request limit', () => {
    const sandbox = createSandbox({
      keys: { rpm: { maxUrlsPerRequest: 5, requestsPerMinute: 10 } },
      faults: { retryAfter: 'seconds' },
    });
    const values = domains(100, 'w');
    const { report, elapsed } = runOnVirtualSandbox(sandbox, 'rpm', values, { maxUrlsPerRequest: 5 });
    expect(report.totals.records).toBe(100);
    expect(report.learned.requestsPerMinute).toBe(10);
    expect(report.totals.responses.rateLimited).toBeLessThanOrEqual(1);
    // 20 requests at 10 a minute: the 20th can go one minute after the 11th.
    expect(elapsed).toBeLessThan(125_000);
  });

  test('X-RateLimit headers pace the run before any 429; without them a 429 is needed to learn', () => {
    const plan = { keys: { rpm: { maxUrlsPerRequest: 5, requestsPerMinute: 10 } } };
    const values = domains(100, 'h');
    const withHeaders = runOnVirtualSandbox(
      createSandbox({ ...plan, faults: { rateLimitHeaders: true } }),
      'rpm',
      values,
      { maxUrlsPerRequest: 5 },
    );
    expect(withHeaders.report.totals.records).toBe(100);
    expect(withHeaders.report.totals.responses.rateLimited).toBe(0);
    expect(withHeaders.stats.responsesByStatus['429']).toBeUndefined();
    expect(withHeaders.report.learned.requestsPerMinute).toBe(10);
    const without = runOnVirtualSandbox(createSandbox(plan), 'rpm', values, { maxUrlsPerRequest: 5 });
    expect(without.report.totals.responses.rateLimited).toBeGreaterThan(0);
  });

  test("X-RateLimit-Remaining counts another client's requests on the same key: still no 429", () => {
    const sandbox = createSandbox({
      keys: { rpm: { maxUrlsPerRequest: 5, requestsPerMinute: 10 } },
      faults: { rateLimitHeaders: true },
    });
    const other = runOnVirtualSandbox(sandbox, 'rpm', domains(35, 'o'), { maxUrlsPerRequest: 5 });
    expect(other.report.totals.requests).toBe(7);
    const values = domains(40, 'm');
    const mine = runOnVirtualSandbox(sandbox, 'rpm', values, { maxUrlsPerRequest: 5 }, other.end);
    expect(mine.report.totals.records).toBe(40);
    expect(mine.report.totals.responses.rateLimited).toBe(0);
    expect(mine.stats.responsesByStatus['429']).toBeUndefined();
  });

  test('the headers are read as Laravel sends them (reset as a Unix time, or Retry-After when spent)', () => {
    const now = 1_700_000_000_000;
    expect(
      readServerRate(
        {
          status: 429,
          headers: {
            'X-RateLimit-Limit': '60',
            'X-RateLimit-Remaining': '0',
            'X-RateLimit-Reset': '1700000042',
          },
          body: '',
        },
        now,
      ),
    ).toEqual({ limit: 60, remaining: 0, resetAt: 1_700_000_042_000 });
    expect(
      readServerRate(
        { status: 429, headers: { 'x-ratelimit-remaining': '0', 'retry-after': '7' }, body: '' },
        now,
      ),
    ).toEqual({ limit: undefined, remaining: 0, resetAt: now + 7000 });
    expect(
      readServerRate({ status: 200, headers: { 'content-type': 'application/json' }, body: '' }, now),
    ).toBe(undefined);
  });
});

describe('no data is not a number', () => {
  test('a spam score of -1 is null with a no-data flag, and the row is still a result', () => {
    const body = JSON.stringify({
      status: 200,
      data: [
        { domain: 'a.com', site_da: 10, site_pa: 20, site_mr: 3.5, spam_score: -1 },
        { domain: 'b.com', site_da: '-1', site_pa: 5, site_mr: 0, spam_score: 0 },
      ],
      summary: { submitted: 2, processed: 2, skipped: 0 },
      skipped: [],
    });
    const answer = classify({ status: 200, body }, 2, 0);
    expect(answer.kind === 'envelope' && answer.records).toEqual([
      { domain: 'a.com', site_da: 10, site_pa: 20, site_mr: 3.5, spam_score: null, noData: ['spam_score'] },
      { domain: 'b.com', site_da: null, site_pa: 5, site_mr: 0, spam_score: 0, noData: ['site_da'] },
    ]);
  });

  test("the sandbox's no-data domains come back as records with a null spam score", () => {
    const sandbox = createSandbox({ ...DEFAULT_CONFIG, faults: { noDataRate: 0.3 } });
    const values = domains(20, 'n');
    const { report } = runOnVirtualSandbox(sandbox, 'sandbox-premium', values);
    expect(report.totals.records).toBe(20);
    const flagged = values.filter((v) => hasNoSpamData(v, 0.3));
    expect(flagged.length).toBeGreaterThan(0);
    report.outcomes.forEach((o, i) => {
      if (o.kind !== 'record') throw new Error(`row ${i} is ${o.kind}`);
      const expected = metricsFor(values[i], 0.3);
      if (hasNoSpamData(values[i], 0.3)) {
        expect(expected.spam_score).toBe(-1);
        expect(o.record).toMatchObject({
          spam_score: null,
          noData: ['spam_score'],
          site_da: expected.site_da,
        });
      } else expect(o.record).toMatchObject({ ...expected });
    });
  });
});

describe('the entry plan in the sandbox', () => {
  test('sandbox-basic takes 5 URLs a request and 60 a minute: 120 domains take two minutes, each billed once', () => {
    const sandbox = createSandbox();
    const values = domains(120, 'b');
    const { report, elapsed, stats } = runOnVirtualSandbox(sandbox, 'sandbox-basic', values);
    expect(report.totals.records).toBe(120);
    expect(report.learned).toMatchObject({ maxUrlsPerRequest: 5, urlsPerMinute: 60 });
    expect(Object.values(stats.billedByDomain).every((n) => n === 1)).toBe(true);
    expect(elapsed).toBeGreaterThan(60_000);
    expect(elapsed).toBeLessThan(1.1 * 120_000);
  });

  test("once the month's credits are spent, it answers like an expired plan", () => {
    const sandbox = createSandbox({ keys: { tiny: { maxUrlsPerRequest: 5, monthlyCredits: 12 } } });
    const values = domains(20, 'c');
    const { report, stats } = runOnVirtualSandbox(sandbox, 'tiny', values, { maxUrlsPerRequest: 5 });
    expect(stats.billed).toBe(15); // the third request began with 2 credits left and was processed whole
    expect(report.fatal?.code).toBe('not_premium');
    expect(report.fatal && outcomeText(report.fatal)).toMatch(/monthly credits/);
    expect(report.totals.records).toBe(15);
    expect(report.totals.errorsByCode).toEqual({ not_premium: 5 });
  });
});

describe('a run that may not wait says when it can go on', () => {
  test('with waiting off on the entry plan, the rest ends rate_limit_reached and its window says when the minute frees', () => {
    const sandbox = createSandbox();
    const values = domains(100, 'r');
    const first = runOnVirtualSandbox(sandbox, 'sandbox-basic', values, {
      waitForRateLimits: false,
      maxUrlsPerRequest: 5,
      pace: { urlsPerMinute: 60 },
    });
    expect(first.report.totals.records).toBe(60);
    expect(first.report.totals.skippedByReason).toEqual({ rate_limit_reached: 40 });
    const resumeAt = roomIn(first.report.window, first.end).freeAt;
    expect(resumeAt).toBeGreaterThan(60_000);
    expect(resumeAt).toBeLessThan(62_000);
    // Started at resumeAt, the rest goes through with no wasted request.
    const rest = values.filter((_, i) => first.report.outcomes[i].kind !== 'record');
    const second = runOnVirtualSandbox(
      sandbox,
      'sandbox-basic',
      rest,
      { waitForRateLimits: false, maxUrlsPerRequest: 5 },
      resumeAt,
    );
    expect(second.report.totals.records).toBe(40);
    expect(second.stats.rateLimitSkips).toBe(0);
    expect(second.report.totals.skippedByReason).toEqual({});
  });

  test('a 429 with Retry-After, when waiting is off, resumes when the server said', () => {
    const api = new ScriptedApi({ maxUrls: 5, faults: [undefined, '429ra'] });
    const { report, elapsed } = runVirtual(domains(20, 'q'), api, {
      maxUrlsPerRequest: 5,
      waitForRateLimits: false,
    });
    expect(report.totals.records).toBe(5);
    expect(roomIn(report.window, elapsed).freeAt).toBe(elapsed + 2000);
  });

  test('a deadline that comes before the plan frees: the window says when; after a wrong key, nothing waits', () => {
    const sandbox = createSandbox();
    const { report, end } = runOnVirtualSandbox(sandbox, 'sandbox-basic', domains(100, 'd'), {
      deadline: 30_000,
      maxUrlsPerRequest: 5,
      pace: { urlsPerMinute: 60 },
    });
    expect(report.totals.errorsByCode).toEqual({ unfinished: 40 });
    expect(roomIn(report.window, end).freeAt).toBeGreaterThan(60_000);
    const wrong = runOnVirtualSandbox(createSandbox(), 'nope', ['a.com']);
    expect(roomIn(wrong.report.window, wrong.end).freeAt).toBe(wrong.end);
  });
});

describe('a minute shared with sends from before the run', () => {
  test('does not lower a known URL limit: the run waits for the earlier sends to leave the window', () => {
    const sandbox = createSandbox();
    // A formula spent 30 of the minute's 60 URLs just before this run.
    const earlier = runOnVirtualSandbox(sandbox, 'sandbox-basic', domains(30, 'f'), { maxUrlsPerRequest: 5 });
    expect(earlier.stats.billed).toBe(30);
    const values = domains(100, 'g');
    const run = runOnVirtualSandbox(
      sandbox,
      'sandbox-basic',
      values,
      { maxUrlsPerRequest: 5, pace: { urlsPerMinute: 60 } },
      earlier.end + 5000,
    );
    expect(run.report.totals.records).toBe(100);
    // Before: the run saw only its own 30 URLs in the window and learned (and handed back) 30 a minute.
    expect(run.report.learned.urlsPerMinute).toBe(60);
    expect(Object.values(run.stats.billedByDomain).every((n) => n === 1)).toBe(true);
    // 130 URLs at 60 a minute from the formula's start: the last can go in the third minute.
    expect(run.end - earlier.end).toBeLessThan(2 * 60_000 + 10_000);
  });

  test('a first run with nothing known still learns from what it saw', () => {
    const { report } = runOnVirtualSandbox(createSandbox(), 'sandbox-basic', domains(70, 'h'));
    expect(report.learned).toMatchObject({ maxUrlsPerRequest: 5, urlsPerMinute: 60 });
    expect(report.totals.records).toBe(70);
  });
});
