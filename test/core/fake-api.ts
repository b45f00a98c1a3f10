// A scriptable, adversarial stand-in for the API used by the core's unit and property tests: it answers in
// random order, spells domains differently, injects faults, enforces a maximum, and counts what it billed.
import { keyOfDomain } from '../../shared';
import type { HttpAnswer, HttpRequest } from '../../shared';

export type ApiFault = '500' | '502html' | '403html' | '429' | '429ra' | '429headers' | 'garbage' | 'network';

export interface FakeBehaviour {
  maxUrls?: number; // 422 Limit Exceeded above it
  limitMessageWithNumber?: boolean;
  faults?: Array<ApiFault | undefined>; // one per request, in order, then none
  skip?: (
    key: string,
    attempt: number,
  ) => 'lookup_failed' | 'rate_limit_reached' | 'invalid_url_format' | undefined;
  spell?: (key: string) => string;
  reverse?: boolean;
  random?: () => number;
  /** Laravel's X-RateLimit-* headers on every answer, counting down from this limit (never below 0). */
  rateLimitHeaders?: number;
  /** Spam scores of -1 for some domains (see metricsOf). */
  noData?: boolean;
}

/** Metrics per key; with `noData`, every third domain's spam score is the service's -1 ("no data"). */
export function metricsOf(key: string, noData = false) {
  let h = 0;
  for (const ch of key) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return {
    site_da: h % 100,
    site_pa: (h >>> 7) % 100,
    site_mr: ((h >>> 3) % 100) / 10,
    spam_score: noData && h % 3 === 0 ? -1 : (h >>> 11) % 100,
  };
}

export class FakeApi {
  readonly billed = new Map<string, number>();
  readonly sent: string[][] = [];
  private readonly attempts = new Map<string, number>();
  private requestNo = 0;

  constructor(private readonly behaviour: FakeBehaviour = {}) {}

  get requests(): number {
    return this.requestNo;
  }

  handle(request: HttpRequest): HttpAnswer {
    const fault = this.behaviour.faults?.[this.requestNo];
    this.requestNo += 1;
    const urls = (JSON.parse(request.body) as { urls: unknown[] }).urls;
    this.sent.push(urls as string[]);
    if (fault === 'network') throw new Error('socket hang up');
    if (fault === '500') return { status: 500, body: '{"error":"An unexpected error occurred"}' };
    if (fault === '502html')
      return {
        status: 502,
        headers: { 'content-type': 'text/html' },
        body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
      };
    const limit = this.behaviour.rateLimitHeaders;
    const throttle: Record<string, string> =
      limit === undefined
        ? {}
        : {
            'X-RateLimit-Limit': String(limit),
            'X-RateLimit-Remaining': String(Math.max(0, limit - this.requestNo)),
          };
    if (fault === '403html')
      return {
        status: 403,
        headers: { 'content-type': 'text/html' },
        body: '<html><h1>403 Forbidden</h1></html>',
      };
    if (fault === '429') return { status: 429, headers: throttle, body: '' };
    if (fault === '429headers')
      return {
        status: 429,
        headers: { ...throttle, 'X-RateLimit-Remaining': '0', 'Retry-After': '1', 'X-RateLimit-Reset': '1' },
        body: '{"error":"Too Many Requests"}',
      };
    if (fault === '429ra')
      return { status: 429, headers: { 'Retry-After': '2' }, body: '{"error":"Too Many Requests"}' };
    if (fault === 'garbage') return { status: 200, body: '<!doctype html><p>maintenance</p>' };
    const max = this.behaviour.maxUrls;
    if (max !== undefined && urls.length > max) {
      const msg =
        this.behaviour.limitMessageWithNumber === false
          ? 'Limit Exceeded'
          : `Limit Exceeded: at most ${max} URLs per request`;
      return { status: 422, body: JSON.stringify({ error: msg }) };
    }
    const data: object[] = [];
    const skipped: object[] = [];
    urls.forEach((url, index) => {
      const key = keyOfDomain(String(url));
      const attempt = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, attempt);
      const reason = this.behaviour.skip?.(key, attempt);
      if (reason) {
        skipped.push({ index, url, reason, message: `skipped: ${reason}` });
        return;
      }
      this.billed.set(key, (this.billed.get(key) ?? 0) + 1);
      data.push({
        domain: this.behaviour.spell ? this.behaviour.spell(key) : key,
        ...metricsOf(key, this.behaviour.noData),
      });
    });
    if (this.behaviour.reverse) data.reverse();
    if (this.behaviour.random) {
      const r = this.behaviour.random;
      data.sort(() => r() - 0.5);
    }
    const status = data.length > 0 ? 200 : 422;
    return {
      status,
      headers: throttle,
      body: JSON.stringify({
        status,
        message: status === 200 ? 'ok' : 'No valid URL was provided',
        data,
        summary: { submitted: urls.length, processed: data.length, skipped: skipped.length },
        skipped,
      }),
    };
  }
}
