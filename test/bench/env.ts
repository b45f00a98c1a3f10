// Where a benchmark run happens: the sandbox's request handling on a virtual clock (same process, exact and
// repeatable) or over real HTTP on loopback. Core and baselines see the same interface, so they run the same way.
import { JSON_HEADERS, endpointUrl, type HttpAnswer, type HttpRequest, type SyncIo } from '../../shared';
import { DEFAULT_CONFIG, type FaultConfig, type KeyStats, type SandboxConfig } from '../sandbox/handler';

/** The plan every scenario runs on: 50 URLs per request, 60 requests and 500 URLs per minute. */
export const BENCH_KEY = 'sandbox-premium';

export function benchConfig(faults: FaultConfig): SandboxConfig {
  return { keys: DEFAULT_CONFIG.keys, faults };
}

/** One request as the server saw it, for the time series of the chart. */
export interface Exchange {
  sentAt: number;
  /** Entries in the request's `urls`. */
  sent: number;
  answeredAt: number;
  status: number;
  processed: number;
}

export interface BenchEnv {
  readonly kind: 'virtual' | 'http';
  readonly baseUrl: string;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Sends one request with the bench key added; a transport failure rejects, as `fetch` does. */
  send(request: HttpRequest): Promise<HttpAnswer>;
  /** The synchronous driver's I/O (what Apps Script gives the core); only on the virtual clock. */
  readonly sync?: SyncIo;
  /** The sandbox's counters for the bench key. */
  stats(): KeyStats;
  /** Lets the plan's per-minute windows pass before the next run (10 virtual minutes, or a sandbox reset). */
  later(): void;
  /** Every request so far, in order. */
  readonly exchanges: Exchange[];
  /** Exceptions thrown by the sandbox itself (a harness fault, never to be mistaken for a network failure). */
  readonly harnessErrors: string[];
  close(): Promise<void>;
}

/** A POST of `urls` to the endpoint, shaped as any client would send it (without the key). */
export function postOf(baseUrl: string, urls: unknown[]): HttpRequest {
  return {
    method: 'POST',
    url: endpointUrl(baseUrl),
    headers: { ...JSON_HEADERS },
    body: JSON.stringify({ urls }),
  };
}

/** How many entries a request carries. */
export function sentOf(request: HttpRequest): number {
  const urls = (JSON.parse(request.body) as { urls?: unknown }).urls;
  return Array.isArray(urls) ? urls.length : 0;
}

/** `summary.processed` of an answer (0 when it is not an envelope): what the request billed. */
export function processedOf(answer: HttpAnswer): number {
  try {
    const parsed = JSON.parse(answer.body) as { summary?: { processed?: unknown } } | null;
    const n = parsed?.summary?.processed;
    return typeof n === 'number' ? n : 0;
  } catch {
    return 0;
  }
}

/** What one run cost on the server, as the difference of the sandbox's counters before and after it. */
export interface ServerCost {
  requests: number;
  rateLimited: number;
  billed: number;
  /** Domains billed more than once within the run. */
  billedTwice: number;
  /** Answers that were themselves faults (HTTP 5xx), and `lookup_failed` skips the server drew. */
  failedAnswers: number;
  lookupFailed: number;
}

export function costBetween(before: KeyStats, after: KeyStats): ServerCost {
  const status429 = (s: KeyStats) => s.responsesByStatus['429'] ?? 0;
  const status5xx = (s: KeyStats) =>
    Object.entries(s.responsesByStatus).reduce((sum, [code, n]) => sum + (Number(code) >= 500 ? n : 0), 0);
  let billedTwice = 0;
  for (const [domain, times] of Object.entries(after.billedByDomain)) {
    if (times - (before.billedByDomain[domain] ?? 0) > 1) billedTwice += 1;
  }
  return {
    requests: after.requests - before.requests,
    rateLimited: status429(after) - status429(before),
    billed: after.billed - before.billed,
    billedTwice,
    failedAnswers: status5xx(after) - status5xx(before),
    lookupFailed: after.lookupFailedSkips - before.lookupFailedSkips,
  };
}
