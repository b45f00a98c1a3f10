// The wire format: one zod schema per shape the spec describes, parsed at the edge. `classify` turns any HTTP
// answer (JSON, HTML from a proxy, nothing at all) into one plain `Answer` the check run can act on.
import * as z from 'zod/mini';

// A number, or (the spec does not promise types) a numeric string; `num` reads either, anything else is null.
const numeric = z.union([z.number(), z.string()]);
const metric = z.optional(z.nullable(numeric));

/** A domain record (spec 2.1). Numbers may arrive as numeric strings; a missing metric becomes null. */
export const DomainRecordSchema = z.object({
  domain: z.string(),
  site_da: metric,
  site_pa: metric,
  site_mr: metric,
  spam_score: metric,
});

/** A skipped entry (spec 2.3). */
export const SkippedEntrySchema = z.object({
  index: z.optional(numeric),
  url: z.optional(z.string()),
  reason: z.string(),
  message: z.optional(z.string()),
});

/** The response envelope (spec 2.5). Elements are checked one by one so that one odd record loses nothing else. */
export const EnvelopeSchema = z.object({
  status: z.optional(numeric),
  message: z.optional(z.string()),
  data: z.array(z.unknown()),
  summary: z.optional(
    z.object({
      submitted: z.optional(numeric),
      processed: z.optional(numeric),
      skipped: z.optional(numeric),
    }),
  ),
  skipped: z.optional(z.array(z.unknown())),
});

/** The generic error body and the authentication body (spec 7); both optional, since most are "not shown". */
const ErrorBodySchema = z.object({
  error: z.optional(z.unknown()),
  message: z.optional(z.unknown()),
  type: z.optional(z.unknown()),
});

export const METRICS = ['site_da', 'site_pa', 'site_mr', 'spam_score'] as const;
export type Metric = (typeof METRICS)[number];

export interface DomainRecord {
  domain: string;
  site_da: number | null;
  site_pa: number | null;
  site_mr: number | null;
  spam_score: number | null;
  /** Metrics the service marked "no data" (it sends a negative value, such as a spam score of -1); they are null. */
  noData?: Metric[];
}
export interface SkippedEntry {
  index?: number;
  url?: string;
  reason: string;
  message: string;
}

/** What came back, whatever its form. */
export type Answer =
  | {
      kind: 'envelope';
      records: DomainRecord[];
      malformedRecords: number;
      skipped: SkippedEntry[];
      processed: number;
    }
  | { kind: 'bad_key'; message: string }
  | { kind: 'not_premium'; message: string }
  | { kind: 'blocked'; status: number; message: string }
  | { kind: 'validation'; message: string }
  | { kind: 'limit_exceeded'; maximum?: number; message: string }
  | { kind: 'rate_limited'; retryAfterMs?: number }
  | { kind: 'not_found'; status: number }
  | { kind: 'transient'; status: number; what: string; retryAfterMs?: number };

/** What the server says of its request-rate limit (Laravel's throttle headers); absent fields were not sent. */
export interface ServerRate {
  /** `X-RateLimit-Limit`: requests allowed per window. */
  limit?: number;
  /** `X-RateLimit-Remaining`: requests left in the current window. */
  remaining?: number;
  /** `X-RateLimit-Reset` (epoch seconds, or seconds from now) or else `Retry-After`: when the window frees. */
  resetAt?: number;
}

export interface HttpAnswer {
  status: number;
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  body: string;
}

function num(value: number | string | null | undefined): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  return typeof value === 'string' && /^\s*-?\d+(?:\.\d+)?\s*$/.test(value) ? Number(value) : null;
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function header(headers: HttpAnswer['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const k of Object.keys(headers)) {
    if (k.toLowerCase() === wanted) {
      const v = headers[k];
      return Array.isArray(v) ? v[0] : v;
    }
  }
  return undefined;
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** The text of an error body: `message`, else `error`, else a short cut of the raw body. */
function errorText(json: unknown, body: string): string {
  const parsed = ErrorBodySchema.safeParse(json);
  if (parsed.success) {
    const { message, error } = parsed.data;
    const parts = [error, message].filter((p): p is string => typeof p === 'string' && p.trim() !== '');
    if (parts.length > 0) return parts.join(': ');
  }
  return body
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
}

function parseEnvelope(json: unknown): Answer | undefined {
  const env = EnvelopeSchema.safeParse(json);
  if (!env.success) return undefined;
  const records: DomainRecord[] = [];
  let malformedRecords = 0;
  for (const item of env.data.data) {
    const r = DomainRecordSchema.safeParse(item);
    if (!r.success) {
      malformedRecords += 1;
      continue;
    }
    const record: DomainRecord = {
      domain: r.data.domain,
      site_da: null,
      site_pa: null,
      site_mr: null,
      spam_score: null,
    };
    const noData: Metric[] = [];
    for (const metric of METRICS) {
      const value = num(r.data[metric]);
      if (value !== null && value < 0) noData.push(metric);
      else record[metric] = value;
    }
    if (noData.length > 0) record.noData = noData;
    records.push(record);
  }
  const skipped: SkippedEntry[] = [];
  for (const item of env.data.skipped ?? []) {
    const s = SkippedEntrySchema.safeParse(item);
    if (s.success)
      skipped.push({
        index: num(s.data.index) ?? undefined,
        url: s.data.url,
        reason: s.data.reason,
        message: s.data.message ?? '',
      });
  }
  const processed = num(env.data.summary?.processed);
  return {
    kind: 'envelope',
    records,
    malformedRecords,
    skipped,
    processed:
      typeof processed === 'number' && processed >= env.data.data.length ? processed : env.data.data.length,
  };
}

/** The maximum a Limit Exceeded message names: the largest number in it below what was sent. */
function maximumIn(text: string, sent: number): number | undefined {
  const numbers = (text.match(/\d+/g) ?? []).map(Number).filter((n) => n >= 1 && n < sent);
  return numbers.length > 0 ? Math.max(...numbers) : undefined;
}

/** The server's throttle headers, when it sends them; undefined when it sends none. */
export function readServerRate(answer: HttpAnswer, now: number): ServerRate | undefined {
  const count = (name: string): number | undefined => {
    const text = header(answer.headers, name)?.trim();
    return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
  };
  const limit = count('x-ratelimit-limit');
  const remaining = count('x-ratelimit-remaining');
  const reset = count('x-ratelimit-reset');
  // Laravel sends the reset as a Unix timestamp; a small number can only be seconds from now.
  const resetAt =
    reset !== undefined
      ? reset > 1e9
        ? reset * 1000
        : now + reset * 1000
      : remaining === 0
        ? retryAt(answer, now)
        : undefined;
  if (limit === undefined && remaining === undefined && resetAt === undefined) return undefined;
  return { limit, remaining, resetAt };
}

function retryAt(answer: HttpAnswer, now: number): number | undefined {
  const ms = parseRetryAfter(header(answer.headers, 'retry-after'), now);
  return ms === undefined ? undefined : now + ms;
}

/** Classifies one HTTP answer; `sent` is how many URLs the request carried. Never throws. */
export function classify(answer: HttpAnswer, sent: number, now: number): Answer {
  const { status, body } = answer;
  const json = parseJson(body);
  if (status === 401 || status === 403) {
    const text = errorText(json, body);
    // A 403 is the spec's auth answer only when it has the spec's JSON shape; otherwise (an nginx page above
    // all) the service refused this network, whatever the key.
    const authShape =
      ErrorBodySchema.safeParse(json).success && /invalid_request|api key|premium/i.test(body);
    if (status === 403 && !authShape) return { kind: 'blocked', status, message: text };
    if (/premium|plan|expired|subscri/i.test(text)) return { kind: 'not_premium', message: text };
    return { kind: 'bad_key', message: text };
  }
  if (status === 429)
    return {
      kind: 'rate_limited',
      retryAfterMs: parseRetryAfter(header(answer.headers, 'retry-after'), now),
    };
  if ((status >= 200 && status < 300) || status === 422) {
    const envelope = json === undefined ? undefined : parseEnvelope(json);
    if (envelope) return envelope;
  }
  if (status === 422 || status === 413) {
    const text = errorText(json, body);
    if (/validat/i.test(text) && !/limit|exceed|maximum/i.test(text))
      return { kind: 'validation', message: text };
    // A 422 that is not the envelope, while the request was a well-formed array, can only be the plan maximum.
    return { kind: 'limit_exceeded', maximum: maximumIn(text, sent), message: text };
  }
  if (status === 400) return { kind: 'validation', message: errorText(json, body) };
  if (status === 404 || status === 405) return { kind: 'not_found', status };
  if (status >= 200 && status < 300)
    return { kind: 'transient', status, what: 'an answer that is not the DAPA envelope' };
  return {
    kind: 'transient',
    status,
    what: status >= 500 ? `HTTP ${status} from the server` : `HTTP ${status}`,
    retryAfterMs: parseRetryAfter(header(answer.headers, 'retry-after'), now),
  };
}
