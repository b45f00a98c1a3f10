// Sandbox DAPA checker: pure request handling for every rule of the API spec (auth, validation, limits, skips, faults).
// No timers, no clock, no I/O: the caller passes `now` and gets back the response plus the latency to simulate.
import { seededRandom } from '../../shared/random';

export interface SandboxRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: string;
}

/** Header names are lowercase (`content-type`, `retry-after`, `allow`). */
export interface SandboxResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  latencyMs: number;
}

export interface PlanConfig {
  maxUrlsPerRequest?: number;
  requestsPerMinute?: number;
  urlsPerMinute?: number;
  expired?: boolean;
  /** Credits (processed URLs) a 30-day period allows; once spent, every request is answered like an expired plan. */
  monthlyCredits?: number;
}

export interface FaultConfig {
  lookupFailedRate?: number; // 0..1 share of valid URLs skipped as lookup_failed
  serverErrorRate?: number; // 0..1 share of requests answered 500 (JSON {"error":"An unexpected error occurred"})
  html502Rate?: number; // 0..1 share of requests answered 502 with an HTML page (a proxy), content-type text/html
  latencyMs?: [number, number]; // latency range; returned as latencyMs (the HTTP server sleeps it)
  seed?: number; // PRNG seed; same seed + same request sequence => same answers
  retryAfter?: 'seconds' | 'date' | 'none'; // how 429 advertises Retry-After (default 'seconds')
  limitMessageWithNumber?: boolean; // 422 Limit Exceeded message includes the maximum (default true)
  shuffleData?: boolean; // return data records in a shuffled order (default false)
  domainSpelling?: 'host' | 'www' | 'upper' | 'mixed'; // how the record's `domain` is spelled (default 'host')
  numericStrings?: boolean; // send metrics as numeric strings (default false)
  rateLimitHeaders?: boolean; // Laravel's X-RateLimit-Limit/-Remaining on answers of keys with a request limit, X-RateLimit-Reset on 429
  blockNetwork?: boolean; // answer every request 403 with nginx's HTML page, as the real service does to some datacenters
  echoKey?: boolean; // a 401's message repeats the request's Authorization header, as a careless server may do
  echoKeySpellings?: boolean; // with echoKey: the key also in the spellings servers and libraries give it (keySpellings)
  noDataRate?: number; // 0..1 share of domains (chosen by hash, so always the same ones) whose spam_score is -1 ("no data")
}

/**
 * The Authorization value's key in the spellings a server or a library may give it (issue 45), each written here from
 * its standard: percent-encoded in lower case, form-encoded, HTML references (named and decimal), JSON's `\"` and
 * `\/` escapes, JSON's `\uXXXX` for every character, and the base64 of the whole Authorization value.
 */
export function keySpellings(authorization: string): string[] {
  const key = authorization.replace(/^Bearer\s+/i, '');
  const hex4 = (n: number) => n.toString(16).padStart(4, '0');
  return [
    encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    new URLSearchParams({ k: key }).toString().slice(2),
    key.replace(
      /[&<>"']/g,
      (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? `&#${c.charCodeAt(0)};`,
    ),
    JSON.stringify(key).slice(1, -1).replace(/\//g, '\\/'),
    Array.from({ length: key.length }, (_, i) => `\\u${hex4(key.charCodeAt(i))}`).join(''),
    btoa(authorization),
  ];
}

export interface SandboxConfig {
  keys: Record<string, PlanConfig>;
  faults?: FaultConfig;
}

export interface KeyStats {
  requests: number;
  responsesByStatus: Record<string, number>;
  billed: number; // sum of summary.processed
  urlsSubmitted: number;
  billedByDomain: Record<string, number>; // normalized domain -> times billed
  rateLimitSkips: number;
  lookupFailedSkips: number;
  /** 422 "Limit Exceeded" answers (more valid URLs than the plan's per-request maximum). */
  limitExceeded: number;
  /** Requests with valid URLs every one of which was refused as `rate_limit_reached` (the minute was spent). */
  allRateLimited: number;
}

/** Per API key; plus '(missing)', '(unknown)' (keys are never echoed) and '(unrouted)' for 404/405. */
export type SandboxStats = Record<string, KeyStats>;

export interface Sandbox {
  handle(req: SandboxRequest, now: number): SandboxResponse;
  stats(): SandboxStats;
  /** Clears rate windows and stats and re-seeds the PRNG. */
  reset(): void;
  /** Replaces the whole config, then resets. */
  configure(config: SandboxConfig): void;
}

export type SkipReason = 'invalid_url_format' | 'empty_url' | 'lookup_failed' | 'rate_limit_reached';

export const API_PATH = '/api/user/dapa-checker';
const WINDOW_MS = 60_000;

export const DEFAULT_CONFIG: SandboxConfig = {
  keys: {
    'sandbox-premium': { maxUrlsPerRequest: 50, requestsPerMinute: 60, urlsPerMinute: 500 },
    'sandbox-rpm': { maxUrlsPerRequest: 50, requestsPerMinute: 10 },
    'sandbox-upm': { maxUrlsPerRequest: 50, urlsPerMinute: 100 },
    'sandbox-expired': { expired: true },
    // The real service's entry plan ("Basic"): 5 URLs per request, 60 URLs per minute, about 10,000 credits a month.
    'sandbox-basic': {
      maxUrlsPerRequest: 5,
      requestsPerMinute: 60,
      urlsPerMinute: 60,
      monthlyCredits: 10_000,
    },
  },
};

/** A credits period of the sandbox's plans (the monthly counter starts again after it). */
export const CREDIT_PERIOD_MS = 30 * 24 * 3_600_000;

export const MESSAGES = {
  success: 'Domains processed successfully',
  allSkipped: 'No valid URL was provided. Check the skipped list for details.',
  notText: 'The URL must be a text value.',
  empty: 'The URL is empty.',
  invalid: 'Please provide a valid URL with a domain extension (for example example.com).',
  lookupFailed: 'No data could be fetched for this URL this time. Please try again later.',
  rateLimit: 'The per-minute URL limit of your plan was reached. Please try again later.',
} as const;

const HTML_403 =
  '<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n' +
  '<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

const HTML_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n' +
  '<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

// ---- URL checks and metrics ---------------------------------------------------------------------------

const LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]*[\\p{L}\\p{N}])?';
const HOST_RE = new RegExp(`^(?:${LABEL}\\.)+(?:\\p{L}{2,}|xn--[a-z0-9-]+)$`, 'u');
// optional scheme, host, optional port, then optional path / query / fragment
const URL_RE = /^(?:https?:\/\/)?([^/?#:\s]+)(?::\d{1,5})?(?:[/?#][\s\S]*)?$/i;

export type EntryCheck =
  { ok: true; host: string; domain: string } | { ok: false; reason: SkipReason; message: string };

/** The per-entry rules: non-text, empty after trim, or not a domain with a valid extension. */
export function checkEntry(entry: unknown): EntryCheck {
  if (typeof entry !== 'string')
    return { ok: false, reason: 'invalid_url_format', message: MESSAGES.notText };
  const text = entry.trim();
  if (text === '') return { ok: false, reason: 'empty_url', message: MESSAGES.empty };
  const host = URL_RE.exec(text)?.[1]?.toLowerCase();
  const domain = host?.replace(/^www\./, '');
  if (!host || !domain || !HOST_RE.test(domain)) {
    return { ok: false, reason: 'invalid_url_format', message: MESSAGES.invalid };
  }
  return { ok: true, host, domain };
}

/** Lowercase host without scheme, port, path or leading `www.` (the key used for metrics and billing). */
export function normalizeDomain(input: string): string {
  const checked = checkEntry(input);
  return checked.ok ? checked.domain : input.trim().toLowerCase();
}

function hash32(text: string, salt: number): number {
  let h = (0x811c9dc5 ^ Math.imul(salt, 0x9e3779b9)) >>> 0; // FNV-1a, then a murmur3 finalizer
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Deterministic metrics per normalized domain: DA, PA and spam 0..100 (integers), MR 0..10 with one decimal; a
 * spam score of -1 ("no data", as the real service sends it) for the `noDataRate` share of domains.
 */
export function metricsFor(
  domain: string,
  noDataRate = 0,
): {
  site_da: number;
  site_pa: number;
  site_mr: number;
  spam_score: number;
} {
  const key = normalizeDomain(domain);
  return {
    site_da: hash32(key, 1) % 101,
    site_pa: hash32(key, 2) % 101,
    site_mr: (hash32(key, 3) % 101) / 10,
    spam_score: hasNoSpamData(key, noDataRate) ? -1 : hash32(key, 4) % 101,
  };
}

/** Whether the sandbox has no spam data for a domain at this rate (the same domains whatever the run). */
export function hasNoSpamData(domain: string, noDataRate: number): boolean {
  return noDataRate > 0 && hash32(normalizeDomain(domain), 5) % 10_000 < noDataRate * 10_000;
}

// ---- the sandbox --------------------------------------------------------------------------------------

/** The counters of a key before its first request. */
export function emptyStats(): KeyStats {
  return {
    requests: 0,
    responsesByStatus: {},
    billed: 0,
    urlsSubmitted: 0,
    billedByDomain: {},
    rateLimitSkips: 0,
    lookupFailedSkips: 0,
    limitExceeded: 0,
    allRateLimited: 0,
  };
}

function header(req: SandboxRequest, name: string): string | undefined {
  const found = Object.keys(req.headers).find((k) => k.toLowerCase() === name);
  return found === undefined ? undefined : req.headers[found];
}

function parseUrls(body: string): unknown[] | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const urls = (parsed as { urls?: unknown }).urls;
    return Array.isArray(urls) ? urls : undefined;
  } catch {
    return undefined;
  }
}

export function createSandbox(initial: SandboxConfig = DEFAULT_CONFIG): Sandbox {
  let config: SandboxConfig = JSON.parse(JSON.stringify(initial));
  let random = seededRandom(1);
  let requestTimes = new Map<string, number[]>(); // per key: times of requests that passed auth (and not 429'd)
  let urlTimes = new Map<string, number[]>(); // per key: one time per processed URL
  let credits = new Map<string, { since: number; used: number }>(); // per key: the current period's credits
  let stats: SandboxStats = {};

  function reset(): void {
    random = seededRandom(config.faults?.seed ?? 1);
    requestTimes = new Map();
    urlTimes = new Map();
    credits = new Map();
    stats = {};
    for (const key of Object.keys(config.keys)) stats[key] = emptyStats();
  }

  const statsFor = (label: string): KeyStats => (stats[label] ??= emptyStats());
  const roll = (rate: number | undefined): boolean => rate !== undefined && rate > 0 && random() < rate;

  function recent(map: Map<string, number[]>, key: string, now: number): number[] {
    const times = (map.get(key) ?? []).filter((t) => t > now - WINDOW_MS);
    map.set(key, times);
    return times;
  }

  function retryAfterHeader(times: number[], now: number): Record<string, string> {
    const waitMs = Math.max(1000, Math.min(...times) + WINDOW_MS - now);
    switch (config.faults?.retryAfter ?? 'seconds') {
      case 'seconds':
        return { 'retry-after': String(Math.ceil(waitMs / 1000)) };
      case 'date':
        return { 'retry-after': new Date(Math.ceil((now + waitMs) / 1000) * 1000).toUTCString() };
      default:
        return {};
    }
  }

  function spell(host: string, domain: string): string {
    const mode = config.faults?.domainSpelling ?? 'host';
    const pick =
      mode === 'mixed' ? (['host', 'bare', 'www', 'upper'] as const)[Math.floor(random() * 4)] : mode;
    if (pick === 'www') return `www.${domain}`;
    if (pick === 'upper') return host.toUpperCase();
    if (pick === 'bare') return domain;
    return host;
  }

  function handle(req: SandboxRequest, now: number): SandboxResponse {
    const faults = config.faults ?? {};
    const [lo, hi] = faults.latencyMs ?? [0, 0];
    const latencyMs = hi > lo ? lo + Math.floor(random() * (hi - lo + 1)) : Math.max(0, lo);

    let label = '(unrouted)';
    let throttle: Record<string, string> = {}; // Laravel's X-RateLimit-* headers, once the key's window is known
    const reply = (status: number, body: unknown, extra: Record<string, string> = {}): SandboxResponse => {
      const s = statsFor(label);
      s.requests++;
      s.responsesByStatus[status] = (s.responsesByStatus[status] ?? 0) + 1;
      return {
        status,
        headers: { 'content-type': 'application/json', ...throttle, ...extra },
        body: JSON.stringify(body),
        latencyMs,
      };
    };

    // nginx in front of the application refuses some networks before anything else happens
    if (faults.blockNetwork) {
      label = '(blocked)';
      return { ...reply(403, null), headers: { 'content-type': 'text/html' }, body: HTML_403 };
    }

    // routing
    if (req.path.split('?')[0] !== API_PATH) return reply(404, { error: 'Not Found' });
    if (req.method.toUpperCase() !== 'POST')
      return reply(405, { error: 'Method Not Allowed' }, { allow: 'POST' });

    // authentication, before anything else
    const key = /^Bearer\s+(\S+)\s*$/i.exec(header(req, 'authorization') ?? '')?.[1];
    /** With `echoKey`, what a 401's message adds: the request's Authorization header, repeated as it came. */
    const echoed = () =>
      faults.echoKey
        ? ` (request header Authorization: ${header(req, 'authorization') ?? 'none'}` +
          (faults.echoKeySpellings
            ? `; as sent: ${keySpellings(header(req, 'authorization') ?? '').join(' ')}`
            : '') +
          ')'
        : '';
    const plan =
      key !== undefined && Object.prototype.hasOwnProperty.call(config.keys, key)
        ? config.keys[key]
        : undefined;
    if (!key || !plan) {
      label = key ? '(unknown)' : '(missing)';
      return reply(401, { type: 'invalid_request', message: `incorrect API key provided${echoed()}` });
    }
    label = key;
    const period = credits.get(key) ?? { since: now, used: 0 };
    if (now - period.since >= CREDIT_PERIOD_MS) Object.assign(period, { since: now, used: 0 });
    credits.set(key, period);
    if (plan.expired || (plan.monthlyCredits !== undefined && period.used >= plan.monthlyCredits))
      return reply(401, {
        type: 'invalid_request',
        message: `you are not premium for this request${echoed()}`,
      });

    // requests per minute: sliding window; a 429'd request is not counted
    const times = recent(requestTimes, key, now);
    const rpm = plan.requestsPerMinute;
    if (rpm !== undefined && times.length >= rpm) {
      const wait = retryAfterHeader(times, now);
      if (faults.rateLimitHeaders) {
        const resetMs = Math.max(1000, Math.min(...times) + WINDOW_MS - now);
        throttle = {
          'x-ratelimit-limit': String(rpm),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil((now + resetMs) / 1000)),
        };
      }
      return reply(429, { error: 'Too Many Requests' }, wait);
    }
    times.push(now);
    if (faults.rateLimitHeaders && rpm !== undefined)
      throttle = { 'x-ratelimit-limit': String(rpm), 'x-ratelimit-remaining': String(rpm - times.length) };

    // whole-request faults, decided before processing; they bill nothing
    if (roll(faults.serverErrorRate)) return reply(500, { error: 'An unexpected error occurred' });
    if (roll(faults.html502Rate)) {
      return { ...reply(502, null), headers: { 'content-type': 'text/html' }, body: HTML_502 };
    }

    // validation of the body
    const urls = parseUrls(req.body);
    if (!urls) {
      return reply(422, {
        message: 'Validation Error',
        errors: { urls: ['The urls field is required and must be an array.'] },
      });
    }
    const s = statsFor(key);
    s.urlsSubmitted += urls.length;

    // per-entry checks; the per-request maximum counts valid entries only
    const checks = urls.map(checkEntry);
    const validCount = checks.filter((c) => c.ok).length;
    if (plan.maxUrlsPerRequest !== undefined && validCount > plan.maxUrlsPerRequest) {
      const message =
        faults.limitMessageWithNumber === false
          ? 'Limit Exceeded: too many URLs in one request for your plan.'
          : `Limit Exceeded: at most ${plan.maxUrlsPerRequest} URLs per request are allowed on your plan.`;
      s.limitExceeded++;
      return reply(422, { error: 'Limit Exceeded', message });
    }

    // URLs per minute, lookup faults, then records
    const processedTimes = recent(urlTimes, key, now);
    const data: Record<string, string | number>[] = [];
    const skipped: { index: number; url: string; reason: SkipReason; message: string }[] = [];
    for (const [index, check] of checks.entries()) {
      const url = typeof urls[index] === 'string' ? (urls[index] as string) : '';
      if (!check.ok) {
        skipped.push({ index, url, reason: check.reason, message: check.message });
      } else if (plan.urlsPerMinute !== undefined && processedTimes.length >= plan.urlsPerMinute) {
        // the window cannot free up within one request, so every following valid URL lands here too
        s.rateLimitSkips++;
        skipped.push({ index, url, reason: 'rate_limit_reached', message: MESSAGES.rateLimit });
      } else if (roll(faults.lookupFailedRate)) {
        s.lookupFailedSkips++;
        skipped.push({ index, url, reason: 'lookup_failed', message: MESSAGES.lookupFailed });
      } else {
        processedTimes.push(now);
        period.used++;
        s.billed++;
        s.billedByDomain[check.domain] = (s.billedByDomain[check.domain] ?? 0) + 1;
        const metrics = metricsFor(check.domain, faults.noDataRate);
        const wire = (n: number): string | number => (faults.numericStrings ? String(n) : n);
        data.push({
          domain: spell(check.host, check.domain),
          site_da: wire(metrics.site_da),
          site_pa: wire(metrics.site_pa),
          site_mr: wire(metrics.site_mr),
          spam_score: wire(metrics.spam_score),
        });
      }
    }
    const refused = skipped.filter((entry) => entry.reason === 'rate_limit_reached').length;
    if (validCount > 0 && refused === validCount) s.allRateLimited++;
    if (faults.shuffleData) {
      for (let i = data.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [data[i], data[j]] = [data[j], data[i]];
      }
    }

    const status = data.length > 0 ? 200 : 422;
    return reply(status, {
      status,
      message: status === 200 ? MESSAGES.success : MESSAGES.allSkipped,
      data,
      summary: { submitted: urls.length, processed: data.length, skipped: skipped.length },
      skipped,
    });
  }

  reset();
  return {
    handle,
    stats: () => JSON.parse(JSON.stringify(stats)),
    reset,
    configure(next: SandboxConfig) {
      config = JSON.parse(JSON.stringify(next));
      reset();
    },
  };
}
