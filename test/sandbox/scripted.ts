// Scripted answers over the sandbox, for the core's unit and property tests: the sandbox (handler.ts, the spec)
// validates, enforces the per-request maximum, bills and gives the metrics; the script adds what a test needs that
// the spec's server does not do by itself at a chosen moment: a fault on the n-th request, a skip for a chosen
// domain and attempt, records spelled or ordered oddly, and X-RateLimit-* headers counting down per request.
import { keyOfDomain, type HttpAnswer, type HttpRequest } from '../../shared';
import { createSandbox, API_PATH, MESSAGES, type SkipReason } from './handler';

export type ApiFault = '500' | '502html' | '403html' | '429' | '429ra' | '429headers' | 'garbage' | 'network';

export interface Script {
  maxUrls?: number; // 422 Limit Exceeded above it (the sandbox's plan)
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
  /** Spam scores of -1 for the sandbox's NO_DATA_RATE share of domains. */
  noData?: boolean;
}

/** The share of domains without a spam score under `noData` (the sandbox's noDataRate). */
export const NO_DATA_RATE = 1 / 3;

const KEY = 'scripted';

const SKIP_MESSAGES: Record<SkipReason, string> = {
  lookup_failed: MESSAGES.lookupFailed,
  rate_limit_reached: MESSAGES.rateLimit,
  invalid_url_format: MESSAGES.invalid,
  empty_url: MESSAGES.empty,
};

interface Envelope {
  status: number;
  message: string;
  data: Array<{ domain: string }>;
  summary: { submitted: number; processed: number; skipped: number };
  skipped: Array<{ index: number; url: string; reason: string; message: string }>;
}

export class ScriptedApi {
  readonly sent: string[][] = [];
  private readonly attempts = new Map<string, number>();
  private readonly sandbox;
  private requestNo = 0;

  constructor(private readonly script: Script = {}) {
    this.sandbox = createSandbox({
      keys: { [KEY]: script.maxUrls === undefined ? {} : { maxUrlsPerRequest: script.maxUrls } },
      faults: {
        limitMessageWithNumber: script.limitMessageWithNumber,
        noDataRate: script.noData ? NO_DATA_RATE : undefined,
      },
    });
  }

  get requests(): number {
    return this.requestNo;
  }

  /** Times each domain was billed (the sandbox's count). */
  get billed(): Map<string, number> {
    return new Map(Object.entries(this.sandbox.stats()[KEY].billedByDomain));
  }

  handle(request: HttpRequest, now = 0): HttpAnswer {
    const fault = this.script.faults?.[this.requestNo];
    this.requestNo += 1;
    const urls = (JSON.parse(request.body) as { urls: string[] }).urls;
    this.sent.push(urls);
    if (fault === 'network') throw new Error('socket hang up');
    const limit = this.script.rateLimitHeaders;
    const throttle: Record<string, string> =
      limit === undefined
        ? {}
        : {
            'X-RateLimit-Limit': String(limit),
            'X-RateLimit-Remaining': String(Math.max(0, limit - this.requestNo)),
          };
    const scripted = fault && faultAnswer(fault, throttle);
    if (scripted) return scripted;
    const max = this.script.maxUrls;
    // Over the maximum, the sandbox refuses the request as it is, before any domain is looked at.
    if (max !== undefined && urls.length > max) {
      const { status, headers, body } = this.ask(urls, now);
      return { status, headers, body };
    }
    const skips = new Map<number, SkipReason>();
    urls.forEach((url, index) => {
      const key = keyOfDomain(String(url));
      const attempt = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, attempt);
      const reason = this.script.skip?.(key, attempt);
      if (reason) skips.set(index, reason);
    });
    const kept = urls.map((_u, index) => index).filter((index) => !skips.has(index));
    const answer = JSON.parse(
      this.ask(
        kept.map((index) => urls[index]),
        now,
      ).body,
    ) as Envelope;
    const skipped = [
      ...answer.skipped.map((s) => ({ ...s, index: kept[s.index] })),
      ...[...skips].map(([index, reason]) => ({
        index,
        url: urls[index],
        reason,
        message: SKIP_MESSAGES[reason],
      })),
    ].sort((a, b) => a.index - b.index);
    const data = answer.data.map((record) => {
      const spell = this.script.spell;
      return spell ? { ...record, domain: spell(keyOfDomain(record.domain)) } : record;
    });
    if (this.script.reverse) data.reverse();
    const random = this.script.random;
    if (random) data.sort(() => random() - 0.5);
    const status = data.length > 0 ? 200 : 422;
    return {
      status,
      headers: throttle,
      body: JSON.stringify({
        status,
        message: status === 200 ? MESSAGES.success : MESSAGES.allSkipped,
        data,
        summary: { submitted: urls.length, processed: data.length, skipped: skipped.length },
        skipped,
      }),
    };
  }

  private ask(urls: unknown[], now: number) {
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    return this.sandbox.handle(
      { method: 'POST', path: API_PATH, headers, body: JSON.stringify({ urls }) },
      now,
    );
  }
}

/** A fault's answer (undefined: the request goes to the sandbox). */
function faultAnswer(fault: ApiFault, throttle: Record<string, string>): HttpAnswer | undefined {
  switch (fault) {
    case '500':
      return { status: 500, body: '{"error":"An unexpected error occurred"}' };
    case '502html':
      return {
        status: 502,
        headers: { 'content-type': 'text/html' },
        body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
      };
    case '403html':
      return {
        status: 403,
        headers: { 'content-type': 'text/html' },
        body: '<html><h1>403 Forbidden</h1></html>',
      };
    case '429':
      return { status: 429, headers: throttle, body: '' };
    case '429headers':
      return {
        status: 429,
        headers: { ...throttle, 'X-RateLimit-Remaining': '0', 'Retry-After': '1', 'X-RateLimit-Reset': '1' },
        body: '{"error":"Too Many Requests"}',
      };
    case '429ra':
      return { status: 429, headers: { 'Retry-After': '2' }, body: '{"error":"Too Many Requests"}' };
    case 'garbage':
      return { status: 200, body: '<!doctype html><p>maintenance</p>' };
    default:
      return undefined;
  }
}
