// How answers are read: whatever the server or a proxy sends, it becomes one plain Answer, and the key probe
// tells a working key from a wrong one and from an expired plan.
import fc from 'fast-check';
import {
  classify,
  parseRetryAfter,
  readKeyProbe,
  keyProbeRequest,
  toEntry,
  baseUrlFor,
  endpointUrl,
} from '../../shared';

describe('reading answers', () => {
  test('numbers sent as numeric strings are read as numbers, and a malformed record loses nothing else', () => {
    const body = JSON.stringify({
      status: 200,
      data: [
        { domain: 'a.com', site_da: '41', site_pa: 30, site_mr: '5.5', spam_score: 2 },
        { nodomain: true },
      ],
      summary: { submitted: 2, processed: 2, skipped: 0 },
      skipped: [],
    });
    const a = classify({ status: 200, body }, 2, 0);
    expect(a).toMatchObject({ kind: 'envelope', processed: 2, malformedRecords: 1 });
    if (a.kind === 'envelope')
      expect(a.records[0]).toEqual({
        domain: 'a.com',
        site_da: 41,
        site_pa: 30,
        site_mr: 5.5,
        spam_score: 2,
      });
  });

  test('a metric that is not a number becomes empty, and the record (already billed) is kept', () => {
    const body = JSON.stringify({
      data: [{ domain: 'a.com', site_da: 'n/a', site_pa: null, site_mr: '1e9x', spam_score: ' 7 ' }],
    });
    const a = classify({ status: 200, body }, 1, 0);
    expect(a).toMatchObject({ kind: 'envelope', processed: 1, malformedRecords: 0 });
    if (a.kind === 'envelope')
      expect(a.records[0]).toEqual({
        domain: 'a.com',
        site_da: null,
        site_pa: null,
        site_mr: null,
        spam_score: 7,
      });
  });

  test('the all-skipped 422 is an envelope, not an error', () => {
    const body = JSON.stringify({
      status: 422,
      message: 'No valid URL was provided',
      data: [],
      summary: { submitted: 1, processed: 0, skipped: 1 },
      skipped: [{ index: 0, url: '', reason: 'empty_url', message: 'empty' }],
    });
    expect(classify({ status: 422, body }, 1, 0)).toMatchObject({
      kind: 'envelope',
      processed: 0,
      skipped: [{ reason: 'empty_url' }],
    });
  });

  test('422 Limit Exceeded yields the maximum it names, below what was sent', () => {
    expect(
      classify({ status: 422, body: '{"error":"Limit Exceeded: max 25 URLs, you sent 100"}' }, 100, 0),
    ).toEqual({ kind: 'limit_exceeded', maximum: 25, message: 'Limit Exceeded: max 25 URLs, you sent 100' });
    expect(classify({ status: 422, body: '<html>Limit Exceeded</html>' }, 100, 0)).toMatchObject({
      kind: 'limit_exceeded',
      maximum: undefined,
    });
  });

  test('422 Validation Error is told apart from Limit Exceeded', () => {
    expect(classify({ status: 422, body: '{"message":"Validation Error"}' }, 3, 0).kind).toBe('validation');
  });

  test('the two 401s are told apart by their messages', () => {
    expect(
      classify(
        { status: 401, body: '{"type":"invalid_request","message":"incorrect API key provided"}' },
        1,
        0,
      ).kind,
    ).toBe('bad_key');
    expect(
      classify(
        { status: 401, body: '{"type":"invalid_request","message":"you are not premium for this request"}' },
        1,
        0,
      ).kind,
    ).toBe('not_premium');
  });

  test('an HTML error page from a proxy and a 200 that is not JSON are transient', () => {
    expect(classify({ status: 502, body: '<html><h1>Bad Gateway</h1></html>' }, 1, 0)).toMatchObject({
      kind: 'transient',
      status: 502,
    });
    expect(classify({ status: 200, body: '<html>maintenance</html>' }, 1, 0)).toMatchObject({
      kind: 'transient',
      status: 200,
    });
  });

  test('Retry-After is read as seconds or as an HTTP date, and ignored when unreadable', () => {
    expect(parseRetryAfter('30', 0)).toBe(30_000);
    expect(
      parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')),
    ).toBe(10_000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    expect(classify({ status: 429, headers: { 'Retry-After': '3' }, body: '' }, 1, 0)).toEqual({
      kind: 'rate_limited',
      retryAfterMs: 3000,
    });
  });
});

describe('the key test', () => {
  test('sends one empty entry, which bills nothing', () => {
    const request = keyProbeRequest('http://127.0.0.1:8787/');
    expect(request.url).toBe('http://127.0.0.1:8787/api/user/dapa-checker');
    expect(JSON.parse(request.body)).toEqual({ urls: [''] });
  });

  test('tells a working key, a wrong key and an expired plan apart', () => {
    const allSkipped = JSON.stringify({
      status: 422,
      data: [],
      summary: { submitted: 1, processed: 0, skipped: 1 },
      skipped: [{ index: 0, url: '', reason: 'empty_url', message: '' }],
    });
    expect(readKeyProbe({ status: 422, body: allSkipped }).ok).toBe(true);
    expect(readKeyProbe({ status: 401, body: '{"message":"incorrect API key provided"}' })).toMatchObject({
      ok: false,
      code: 'bad_key',
    });
    expect(
      readKeyProbe({ status: 401, body: '{"message":"you are not premium for this request"}' }),
    ).toMatchObject({ ok: false, code: 'not_premium' });
  });
});

describe('base addresses and inputs', () => {
  test('a custom base URL must be http(s) and a pasted endpoint path is tolerated', () => {
    expect(() => baseUrlFor('custom', 'ftp://x')).toThrow(/http:\/\/ or https:\/\//);
    expect(endpointUrl('http://h:1/api/user/dapa-checker/')).toBe('http://h:1/api/user/dapa-checker');
  });

  test('an internationalized domain and its xn-- spelling are one key, sent in the xn-- form', () => {
    expect(toEntry('Bücher.DE')).toEqual({ kind: 'candidate', key: 'xn--bcher-kva.de' });
    expect(toEntry('https://www.xn--bcher-kva.de/x')).toEqual({ kind: 'candidate', key: 'xn--bcher-kva.de' });
    expect(toEntry('пример.рф')).toEqual({ kind: 'candidate', key: 'xn--e1afmkfd.xn--p1ai' });
    expect(toEntry('例え.テスト')).toEqual({ kind: 'candidate', key: 'xn--r8jz45g.xn--zckzah' });
  });

  test('subdomains keep their own keys; only www. is folded', () => {
    expect(toEntry('https://user:pw@www.Blog.Example.com:8080/x#y')).toEqual({
      kind: 'candidate',
      key: 'blog.example.com',
    });
    expect(toEntry('www.com')).toEqual({ kind: 'candidate', key: 'www.com' });
    expect(toEntry('1.2.3.4')).toMatchObject({ kind: 'rejected', reason: 'invalid_url_format' });
  });

  test('a plain lowercase host is read as the whole normalization reads it (its quick path changes no answer)', () => {
    // Upper case never takes the quick path, and the normalization lowercases: both spellings must give one answer.
    const whole = (text: string) => toEntry(` ${text.toUpperCase()} `);
    const brief = (e: ReturnType<typeof toEntry>) =>
      e.kind === 'candidate' ? e.key : e.kind === 'rejected' ? `rejected ${e.problem}` : e.kind;
    const label = fc.oneof(
      fc.stringMatching(/^[a-z0-9_-]{0,8}$/),
      fc.stringMatching(/^[a-z0-9]{60,66}$/),
      fc.constantFrom('www', 'xn--', 'xn--a', 'xn--a-', 'xn--bcher-kva', '-a', 'a-', '_', 'co', 'c', '9z'),
    );
    const host = fc
      .tuple(fc.array(label, { minLength: 1, maxLength: 5 }), fc.constantFrom('', '.', '/x', ':80'))
      .map(([labels, tail]) => labels.join('.') + tail);
    fc.assert(
      fc.property(host, (text) => {
        expect(brief(toEntry(text))).toBe(brief(whole(text)));
      }),
      { numRuns: 3000, seed: 34 },
    );
    const long = `${'a'.repeat(60)}.`.repeat(4) + 'com'; // 247 characters; 259 with two labels more
    expect(brief(toEntry(long))).toBe(long);
    expect(brief(toEntry(`bbbbbbb.${long}.com`))).toBe('rejected host_too_long');
    expect(brief(toEntry('a.xn--'))).toBe(brief(whole('a.xn--')));
  });
});
