import { CheckRun, outcomeText, matchRecords, runSync } from '../../shared';
import { metricsFor } from '../sandbox/handler';
import { ScriptedApi } from '../sandbox/scripted';
import { runVirtual, VirtualClock, virtualIo } from '../sandbox/virtual';

describe('a check run', () => {
  test('spellings of one domain cost one billed query and every position gets the record', () => {
    const api = new ScriptedApi();
    const { report } = runVirtual(
      ['example.com', ' HTTPS://www.Example.com/a?b ', 'example.com/', 'other.org'],
      api,
    );
    expect(api.requests).toBe(1);
    expect(api.sent[0]).toEqual(['example.com', 'other.org']);
    expect(report.totals.billed).toBe(2);
    expect(report.outcomes.map((o) => o.kind)).toEqual(['record', 'record', 'record', 'record']);
    const first = report.outcomes[1];
    expect(first.kind === 'record' && first.record.site_da).toBe(metricsFor('example.com').site_da);
  });

  test('blanks, non-text values and obvious non-domains are decided locally and never sent', () => {
    const api = new ScriptedApi();
    const values = [
      '',
      '   ',
      null,
      undefined,
      42,
      true,
      new Date(0),
      ['a.com'],
      'nodot',
      'a'.repeat(3000) + '.com',
      'ok.com',
    ];
    const { report } = runVirtual(values, api);
    expect(api.sent).toEqual([['ok.com']]);
    expect(report.outcomes).toHaveLength(values.length);
    const reasons = report.outcomes.map((o) => (o.kind === 'skip' ? o.reason : o.kind));
    expect(reasons).toEqual([
      'empty_url',
      'empty_url',
      'empty_url',
      'empty_url',
      'invalid_url_format',
      'invalid_url_format',
      'invalid_url_format',
      'invalid_url_format',
      'invalid_url_format',
      'invalid_url_format',
      'record',
    ]);
    const num = report.outcomes[4];
    expect(num.kind === 'skip' && outcomeText(num)).toMatch(/number 42/);
  });

  test('nothing is sent when every input is local', () => {
    const api = new ScriptedApi();
    const { report } = runVirtual(['', 'x'], api);
    expect(api.requests).toBe(0);
    expect(report.totals.requests).toBe(0);
  });

  test('a record spelled in unicode matches the xn-- form that was sent, and both spellings cost one query', () => {
    const api = new ScriptedApi({ spell: (k) => (k === 'xn--mnchen-3ya.de' ? 'MÜNCHEN.de' : k) });
    const { report } = runVirtual(['münchen.de', 'xn--mnchen-3ya.de', 'other.de'], api);
    expect(api.sent).toEqual([['xn--mnchen-3ya.de', 'other.de']]);
    expect(report.outcomes.map((o) => o.kind)).toEqual(['record', 'record', 'record']);
    expect(report.totals.billed).toBe(2);
  });

  test('records are matched by domain, not by order or spelling', () => {
    const api = new ScriptedApi({ reverse: true, spell: (k) => `WWW.${k.toUpperCase()}` });
    const domains = ['a.com', 'b.com', 'c.com', 'd.com'];
    const { report } = runVirtual(domains, api);
    report.outcomes.forEach((o, i) => {
      expect(o.kind).toBe('record');
      if (o.kind === 'record') expect(o.record.site_pa).toBe(metricsFor(domains[i]).site_pa);
    });
  });

  test('a record for the registrable domain of a subdomain that was sent is still matched', () => {
    const { matched, unmatched } = matchRecords(
      ['blog.example.com', 'other.org'],
      [
        { domain: 'example.com', site_da: 1, site_pa: 2, site_mr: 3, spam_score: 4 },
        { domain: 'OTHER.org', site_da: 5, site_pa: 6, site_mr: 7, spam_score: 8 },
      ],
    );
    expect(unmatched).toEqual([]);
    expect(matched.get('blog.example.com')?.site_da).toBe(1);
    expect(matched.get('other.org')?.site_da).toBe(5);
  });

  test('the plan maximum is learned from the number in a 422 Limit Exceeded message and handed back', () => {
    const api = new ScriptedApi({ maxUrls: 30 });
    const domains = Array.from({ length: 70 }, (_, i) => `site${i}.com`);
    const { report } = runVirtual(domains, api);
    expect(report.totals.responses.limitExceeded).toBe(1);
    expect(report.learned.maxUrlsPerRequest).toBe(30);
    expect(api.requests).toBe(1 + Math.ceil(70 / 30));
    expect(report.totals.records).toBe(70);
  });

  test('without a number in the message the batch is halved until it fits', () => {
    const api = new ScriptedApi({ maxUrls: 30, limitMessageWithNumber: false });
    const domains = Array.from({ length: 100 }, (_, i) => `site${i}.com`);
    const { report } = runVirtual(domains, api);
    expect(report.learned.maxUrlsPerRequest).toBe(25);
    expect(report.totals.records).toBe(100);
    expect(report.totals.billed).toBe(100);
  });

  test('a known maximum from an earlier run is used from the first request', () => {
    const api = new ScriptedApi({ maxUrls: 30 });
    const domains = Array.from({ length: 60 }, (_, i) => `site${i}.com`);
    runVirtual(domains, api, { maxUrlsPerRequest: 30 });
    expect(api.requests).toBe(2);
  });

  test('lookup_failed is retried in a later request and never billed twice', () => {
    const api = new ScriptedApi({
      skip: (key, attempt) => (key === 'flaky.com' && attempt < 3 ? 'lookup_failed' : undefined),
    });
    const { report } = runVirtual(['flaky.com', 'fine.com'], api);
    expect(report.outcomes.map((o) => o.kind)).toEqual(['record', 'record']);
    expect(api.sent).toEqual([['flaky.com', 'fine.com'], ['flaky.com'], ['flaky.com']]);
    expect(report.totals.retries).toBe(2);
    expect(report.totals.billed).toBe(2);
  });

  test('lookup_failed that never clears ends as a retryable skip after the allowed retries', () => {
    const api = new ScriptedApi({ skip: () => 'lookup_failed' });
    const { report } = runVirtual(['down.com'], api, { retries: 2 });
    expect(api.requests).toBe(3);
    expect(report.outcomes[0]).toMatchObject({ kind: 'skip', reason: 'lookup_failed', retryable: true });
  });

  test('invalid_url_format from the server is final and not retried', () => {
    const api = new ScriptedApi({ skip: (key) => (key === 'bad.zzzz' ? 'invalid_url_format' : undefined) });
    const { report } = runVirtual(['bad.zzzz'], api);
    expect(api.requests).toBe(1);
    expect(report.outcomes[0]).toMatchObject({
      kind: 'skip',
      reason: 'invalid_url_format',
      retryable: false,
    });
  });

  test('5xx, HTML error pages, garbage and network failures are retried with backoff', () => {
    const api = new ScriptedApi({ faults: ['500', '502html', 'garbage', 'network'] });
    const { report, waits } = runVirtual(['a.com', 'b.com'], api);
    expect(report.totals.records).toBe(2);
    expect(report.totals.responses.transient).toBe(4);
    expect(waits).toHaveLength(4);
    waits.forEach((w, i) => expect(w).toBeLessThanOrEqual(1000 * 2 ** i));
    expect(report.totals.billed).toBe(2);
  });

  test('a 500 that keeps failing ends the run with a distinct, retryable error', () => {
    const api = new ScriptedApi({ faults: ['500', '500', '500', '500', '500', '500'] });
    const { report } = runVirtual(['a.com', 'b.com', ''], api);
    expect(report.fatal?.code).toBe('server_error');
    expect(report.outcomes[0]).toMatchObject({ kind: 'error', code: 'server_error', retryable: true });
    expect(report.outcomes[2]).toMatchObject({ kind: 'skip', blank: true });
  });

  test('429 honours Retry-After in seconds', () => {
    const api = new ScriptedApi({ faults: ['429ra'] });
    const { report, waits } = runVirtual(['a.com'], api);
    expect(waits[0]).toBe(2000);
    expect(report.totals.responses.rateLimited).toBe(1);
    expect(report.totals.records).toBe(1);
  });

  test('a 422 Limit Exceeded counts as a request when the requests-per-minute limit is learned', () => {
    const api = new ScriptedApi({ maxUrls: 2, faults: [undefined, undefined, '429'] });
    const { report } = runVirtual(['a.com', 'b.com', 'c.com', 'd.com'], api);
    expect(report.totals.responses.limitExceeded).toBe(1);
    expect(report.learned.requestsPerMinute).toBe(2);
    expect(report.totals.records).toBe(4);
  });

  test('429 honours Retry-After given as an HTTP date', () => {
    const run = new CheckRun(['a.com'], { baseUrl: 'http://fake', deadline: 1e15 });
    const now = Date.parse('2026-11-21T10:00:00Z');
    const step = run.next(now);
    if (step.type !== 'send') throw new Error('expected a send');
    run.receive(
      step.id,
      { status: 429, headers: { 'retry-after': 'Sat, 21 Nov 2026 10:00:07 GMT' }, body: '' },
      now,
    );
    expect(run.next(now)).toEqual({ type: 'wait', ms: 7000 });
  });

  test('wrong key and expired plan stop at once with distinct, actionable messages that never contain the key', () => {
    for (const [message, code, hint] of [
      ['incorrect API key provided', 'bad_key', /API key/],
      ['you are not premium for this request', 'not_premium', /plan/],
    ] as const) {
      const run = new CheckRun(['a.com', 'b.com'], { baseUrl: 'http://fake', deadline: 1e9 });
      const step = run.next(0);
      if (step.type !== 'send') throw new Error('expected a send');
      expect(JSON.stringify(step.request)).not.toMatch(/Bearer/);
      run.receive(step.id, { status: 401, body: JSON.stringify({ type: 'invalid_request', message }) }, 10);
      expect(run.next(10)).toEqual({ type: 'done' });
      const report = run.report();
      expect(report.fatal?.code).toBe(code);
      expect(report.fatal && outcomeText(report.fatal)).toMatch(hint);
      expect(report.outcomes.every((o) => o.kind === 'error' && o.code === code && !o.retryable)).toBe(true);
    }
  });

  test('422 Validation Error fails fast', () => {
    const run = new CheckRun(['a.com'], { baseUrl: 'http://fake', deadline: 1e9 });
    const step = run.next(0);
    if (step.type !== 'send') throw new Error('expected a send');
    run.receive(
      step.id,
      { status: 422, body: '{"message":"Validation Error","errors":{"urls":["required"]}}' },
      1,
    );
    expect(run.report().fatal?.code).toBe('validation');
  });

  test('the run stops before its deadline and reports the rest as retryable', () => {
    const api = new ScriptedApi({ faults: ['429ra', '429ra', '429ra'] });
    const { report, elapsed } = runVirtual(['a.com', 'b.com'], api, { deadline: 3000 });
    expect(elapsed).toBeLessThanOrEqual(3000);
    expect(report.outcomes.every((o) => o.kind === 'error' && o.code === 'unfinished' && o.retryable)).toBe(
      true,
    );
  });

  test('no request starts when the last answer took longer than the time left', () => {
    const api = new ScriptedApi({ maxUrls: 1 });
    const { report, elapsed } = runVirtual(
      ['a.com', 'b.com', 'c.com'],
      api,
      { deadline: 2500, maxUrlsPerRequest: 1 },
      { latencyMs: 1000 },
    );
    expect(elapsed).toBeLessThanOrEqual(2500);
    expect(report.totals.records).toBe(2);
    expect(report.outcomes[2]).toMatchObject({ kind: 'error', code: 'unfinished' });
  });

  test('cached domains cost nothing and fresh records are handed back for caching', () => {
    const api = new ScriptedApi();
    const run = new CheckRun(['cached.com', 'new.com', 'www.cached.com'], {
      baseUrl: 'http://fake',
      deadline: 1e9,
    });
    run.addCached(
      new Map([['cached.com', { domain: 'cached.com', site_da: 9, site_pa: 9, site_mr: 9, spam_score: 9 }]]),
    );
    let step = run.next(0);
    while (step.type !== 'done') {
      if (step.type === 'send') run.receive(step.id, api.handle(step.request), 1);
      step = run.next(1);
    }
    const report = run.report();
    expect(api.sent).toEqual([['new.com']]);
    expect(report.totals.cached).toBe(1);
    expect(report.fresh.map((f) => f.key)).toEqual(['new.com']);
    expect(report.outcomes[2]).toMatchObject({ kind: 'record', cached: true });
  });

  test('cancel ends every unfinished position as cancelled', () => {
    const run = new CheckRun(['a.com', 'b.com'], { baseUrl: 'http://fake', deadline: 1e9 });
    run.next(0);
    run.cancel();
    expect(run.report().outcomes.every((o) => o.kind === 'error' && o.code === 'cancelled')).toBe(true);
  });

  test('with waiting for rate limits off, a 429 ends the rest as rate_limit_reached with no further request', () => {
    const api = new ScriptedApi({ faults: [undefined, '429ra'] });
    const domains = Array.from({ length: 6 }, (_, i) => `w${i}.com`);
    const { report, waits } = runVirtual(domains, api, { maxUrlsPerRequest: 2, waitForRateLimits: false });
    expect(api.requests).toBe(2);
    expect(waits).toEqual([]);
    expect(report.totals.records).toBe(2);
    expect(report.totals.skippedByReason).toEqual({ rate_limit_reached: 4 });
  });

  test('with waiting for rate limits off, a learned URL limit is not waited for: the rest is skipped', () => {
    let processed = 0;
    const api = new ScriptedApi({ skip: () => (processed++ >= 3 ? 'rate_limit_reached' : undefined) });
    const domains = Array.from({ length: 8 }, (_, i) => `u${i}.com`);
    const { report, waits } = runVirtual(domains, api, { maxUrlsPerRequest: 4, waitForRateLimits: false });
    expect(waits).toEqual([]);
    expect(api.requests).toBe(1);
    expect(report.totals.records).toBe(3);
    expect(report.totals.skippedByReason).toEqual({ rate_limit_reached: 5 });
  });

  test('the sync driver sees a cancel within a long rate-limit wait and ends the rest as cancelled', () => {
    const api = new ScriptedApi({ faults: ['429'], maxUrls: 1 });
    const clock = new VirtualClock();
    const io = virtualIo(clock, api);
    const run = new CheckRun(['a.com', 'b.com'], {
      baseUrl: 'http://fake',
      deadline: 1e9,
      maxUrlsPerRequest: 1,
    });
    run.next(0); // learn nothing: just make the first backoff long
    run.receive(1, { status: 429, headers: { 'retry-after': '60' }, body: '' }, 0);
    const report = runSync(run, { ...io, cancelled: () => clock.now() >= 4000 });
    expect(io.waits).toEqual([2000, 2000]);
    expect(report.outcomes.every((o) => o.kind === 'error' && o.code === 'cancelled')).toBe(true);
  });

  test('records the server returns that cannot be matched are not sent again', () => {
    const api = new ScriptedApi({ spell: (k) => `zz-${k}` });
    const { report } = runVirtual(['a.com', 'b.com'], api);
    expect(api.requests).toBe(1);
    expect(report.outcomes.every((o) => o.kind === 'error' && o.code === 'unmatched')).toBe(true);
  });
});
