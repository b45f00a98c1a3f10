// Pacing learned from the server: after a 429 or a `rate_limit_reached`, the run keeps its own sliding 60-second
// windows of accepted requests and processed URLs and sends only what the learned limits leave room for.
// Times are those of the answers (never earlier than the server counted), so a server window has always expired
// when ours has. When the server states its request limit (X-RateLimit-* headers), its word replaces the guess.
import type { ServerRate } from './wire';

export const WINDOW_MS = 60_000;

export interface Pace {
  requestsPerMinute?: number;
  urlsPerMinute?: number;
}

export class Pacer {
  private readonly requests: number[] = [];
  private readonly urls: Array<{ t: number; n: number }> = [];
  /** The server's last word on its request window: requests left, and when it frees if none are. */
  private server?: { remaining: number; freeAt: number };

  constructor(public readonly limits: Pace = {}) {}

  /** A request was accepted (not 429) and processed `n` URLs. */
  accepted(now: number, processed: number): void {
    this.requests.push(now);
    if (processed > 0) this.urls.push({ t: now, n: processed });
    this.forget(now - 10 * WINDOW_MS);
  }

  /**
   * A 429: the accepted requests in the last minute are what the plan allows. With a `Retry-After`, that guess
   * holds only if the server's window frees when ours would (within `slack`); a window that frees much sooner is
   * not a per-minute limit of this run's requests (a shorter window, or other clients), so nothing is learned.
   * Returns the estimate, or 0.
   */
  learnRequestLimit(now: number, retryAt?: number, slack = 5000): number {
    if (this.server !== undefined) return 0; // the server states its limit: nothing to guess
    const recent = this.requests.filter((t) => t > now - WINDOW_MS);
    const seen = recent.length;
    if (seen === 0) return 0;
    if (retryAt !== undefined && Math.abs(recent[0] + WINDOW_MS - retryAt) > slack) return 0;
    this.limits.requestsPerMinute = Math.min(seen, this.limits.requestsPerMinute ?? Infinity);
    return seen;
  }

  /** The server's throttle headers: its limit replaces any guess, and its remaining count gates the next send. */
  heard(now: number, rate: ServerRate): void {
    if (rate.limit !== undefined && rate.limit > 0) this.limits.requestsPerMinute = rate.limit;
    if (rate.remaining === undefined) return;
    const ours = this.requests.filter((t) => t > now - WINDOW_MS);
    const limit = this.limits.requestsPerMinute;
    // With no reset time: our own sliding window frees it when all the window's requests are ours; otherwise
    // (another client shares the key) a whole window from now is the latest it can free.
    const freeAt =
      rate.resetAt ??
      (limit !== undefined && ours.length >= limit
        ? ours[ours.length - limit] + WINDOW_MS + 1
        : now + WINDOW_MS);
    this.server = { remaining: rate.remaining, freeAt };
  }

  /** A `rate_limit_reached` skip: the URLs processed in the last minute are what the plan allows. */
  learnUrlLimit(now: number): number {
    const seen = this.urlsInWindow(now);
    if (seen > 0) this.limits.urlsPerMinute = Math.min(seen, this.limits.urlsPerMinute ?? Infinity);
    return seen;
  }

  /** When the next request may go, and how many URLs it may carry (at most `wanted`). */
  plan(now: number, wanted: number): { at: number; urls: number } {
    let at = now;
    let urls = wanted;
    const rpm = this.limits.requestsPerMinute;
    if (this.server !== undefined) {
      // The server's count is exact (it includes other clients of the key): it alone decides.
      if (this.server.remaining <= 0) at = Math.max(at, this.server.freeAt);
    } else if (rpm !== undefined) {
      const recent = this.requests.filter((t) => t > now - WINDOW_MS);
      if (recent.length >= rpm) at = Math.max(at, recent[recent.length - rpm] + WINDOW_MS + 1);
    }
    const upm = this.limits.urlsPerMinute;
    if (upm !== undefined) {
      // Slide the window forward from `at` until at least one URL fits, then send what fits (up to `wanted`).
      const recent = this.urls.filter((u) => u.t > at - WINDOW_MS);
      let used = recent.reduce((sum, u) => sum + u.n, 0);
      let i = 0;
      while (used >= upm && i < recent.length) {
        used -= recent[i].n;
        at = Math.max(at, recent[i].t + WINDOW_MS + 1);
        i += 1;
      }
      urls = Math.max(1, Math.min(wanted, upm - used));
    }
    return { at, urls };
  }

  private urlsInWindow(now: number): number {
    return this.urls.filter((u) => u.t > now - WINDOW_MS).reduce((sum, u) => sum + u.n, 0);
  }

  private forget(before: number): void {
    while (this.requests.length > 0 && this.requests[0] < before) this.requests.shift();
    while (this.urls.length > 0 && this.urls[0].t < before) this.urls.shift();
  }
}
