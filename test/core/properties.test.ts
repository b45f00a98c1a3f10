// Property-based tests: whatever the inputs and whatever the server does, nothing is lost or billed twice.
import fc from 'fast-check';
import { keyOfDomain, seededRandomForTests } from './support';
import { metricsFor } from '../sandbox/handler';
import { NO_DATA_RATE, ScriptedApi, type ApiFault } from '../sandbox/scripted';
import { runVirtual } from '../sandbox/virtual';

const pool = [
  'alpha.com',
  'beta.org',
  'gamma.net',
  'delta.io',
  'blog.alpha.com',
  'münchen.de',
  'xn--bcher-kva.example',
];
const spelling = fc.constantFrom(
  (d: string) => d,
  (d: string) => ` HTTPS://www.${d.toUpperCase()}/path?q=1 `,
  (d: string) => `${d}/`,
  (d: string) => `http://${d}:8080`,
);
const value = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...pool), spelling).map(([d, s]) => s(d)) },
  { weight: 1, arbitrary: fc.constantFrom('', '   ', null, undefined, 0, 3.5, true, 'nodot', 'a b.com') },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }) },
);
const fault = fc.constantFrom<ApiFault>(
  '500',
  '502html',
  '403html',
  '429',
  '429ra',
  '429headers',
  'garbage',
  'network',
);
const behaviour = fc.record({
  maxUrls: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  limitMessageWithNumber: fc.boolean(),
  faults: fc.array(fc.option(fault, { nil: undefined }), { maxLength: 8 }),
  skipRate: fc.double({ min: 0, max: 0.6, noNaN: true }),
  spell: fc.constantFrom('same', 'www', 'upper', 'url'),
  seed: fc.integer(),
  rateLimitHeaders: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
  noData: fc.boolean(),
});

describe('whatever the inputs and the server do', () => {
  test('every position ends in exactly one outcome, totals add up, and no domain is billed twice', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 40 }), behaviour, (values, b) => {
        const random = seededRandomForTests(b.seed);
        const api = new ScriptedApi({
          maxUrls: b.maxUrls,
          limitMessageWithNumber: b.limitMessageWithNumber,
          faults: b.faults,
          random,
          rateLimitHeaders: b.rateLimitHeaders,
          noData: b.noData,
          spell: (k) =>
            b.spell === 'www'
              ? `www.${k}`
              : b.spell === 'upper'
                ? k.toUpperCase()
                : b.spell === 'url'
                  ? `https://${k}/`
                  : k,
          skip: () => {
            const r = random();
            if (r >= b.skipRate) return undefined;
            return r < b.skipRate / 2 ? 'lookup_failed' : 'rate_limit_reached';
          },
        });
        const { report } = runVirtual(values, api, { seed: b.seed });
        const t = report.totals;
        expect(report.outcomes).toHaveLength(values.length);
        expect(t.records + t.skips + t.errors).toBe(values.length);
        for (const [, times] of api.billed) expect(times).toBe(1);
        expect(t.billed).toBe([...api.billed.values()].reduce((a, n) => a + n, 0));
        expect(t.requests).toBe(api.requests);
        // a refused network stops at once, and only a 403 page stops it so: nothing is sent after the 403
        const met403 = b.faults.slice(0, api.requests).includes('403html');
        expect(report.fatal?.code === 'network_blocked').toBe(met403);
        if (met403) expect(b.faults[api.requests - 1]).toBe('403html');
        report.outcomes.forEach((o, i) => {
          if (o.kind === 'record') {
            expect(o.key).toBe(keyOfDomain(String(values[i])));
            expect(o.record.site_da).toBe(metricsFor(o.key).site_da);
            // a -1 from the server is "no data": null and flagged, never a number
            const spam = metricsFor(o.key, b.noData ? NO_DATA_RATE : 0).spam_score;
            expect(o.record.spam_score).toBe(spam < 0 ? null : spam);
            expect(o.record.noData).toEqual(spam < 0 ? ['spam_score'] : undefined);
          }
        });
      }),
      { numRuns: 300 },
    );
  });
});
