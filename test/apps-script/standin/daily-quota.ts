// Google's daily per-user quotas (Properties calls, URL fetches, trigger runtime) as one counter: a user's window
// opens with their first use and lasts 24 hours (or, the other reading, the UTC day); past the limit a use is refused.
import { AppsScriptException } from './errors';
import { QUOTA_WINDOW_MS } from './limits';

const DAY_MS = 86_400_000;

/**
 * When a user's daily quota comes back. Google's quotas page: "Quotas are per user and reset 24 hours after the first
 * request" (`'first-request'`, the default). Users also report a quota that comes back at a fixed time of day; the
 * stand-in models that reading as the UTC day (`'utc-day'`), so a product can be tried under both.
 */
export type QuotaReset = 'first-request' | 'utc-day';

/** The daily quotas the stand-in counts per user. */
export type DailyService = 'properties' | 'urlfetch' | 'trigger-runtime';

export class DailyQuota {
  private readonly windows = new Map<string, { start: number; used: number }>();
  private readonly byDay = new Map<string, Map<number, number>>();

  constructor(
    private readonly now: () => number,
    /** Uses allowed in one window (calls, or ms of runtime). */
    public limit: number,
    /** Google's text for a refused use. */
    private readonly message: string,
    public reset: QuotaReset = 'first-request',
  ) {}

  /** The user's current window (a new one once the last has run out). */
  private window(user: string): { start: number; used: number } {
    const now = this.now();
    let window = this.windows.get(user);
    const over =
      window &&
      (this.reset === 'first-request'
        ? now >= window.start + QUOTA_WINDOW_MS
        : Math.floor(now / DAY_MS) !== Math.floor(window.start / DAY_MS));
    if (!window || over) this.windows.set(user, (window = { start: now, used: 0 }));
    return window;
  }

  /** Throws Google's text when `user` has used the whole window; opens the window otherwise (a first request). */
  check(user: string): void {
    const window = this.window(user);
    if (window.used < this.limit) return;
    if ((this.refusedFrom.get(user) ?? -Infinity) < window.start) this.refusedFrom.set(user, this.now());
    throw new AppsScriptException(this.message);
  }

  /** When Google first refused a use of `user`'s current window (an observer's figure: Google does not say). */
  firstRefusedAt(user: string): number | undefined {
    const at = this.refusedFrom.get(user);
    const window = this.windows.get(user);
    return at !== undefined && window && at >= window.start ? at : undefined;
  }

  /** Whether `user` may start one more use now (opens their window, as a first request does). */
  allows(user: string): boolean {
    return this.window(user).used < this.limit;
  }

  /** Adds `amount` to the user's window (and, unless `report` is false, to the per-day report), without refusing. */
  add(user: string, amount = 1, report = true): void {
    this.window(user).used += amount;
    if (!report) return;
    let days = this.byDay.get(user);
    if (!days) this.byDay.set(user, (days = new Map()));
    const day = Math.floor(this.now() / DAY_MS);
    days.set(day, (days.get(day) ?? 0) + amount);
  }

  private readonly refusedFrom = new Map<string, number>();

  /** One use of `user`; throws past the quota (a refused use is not counted). */
  count(user: string): void {
    this.check(user);
    this.add(user);
  }

  /** What `user` has used in their current window. */
  used(user: string): number {
    const window = this.windows.get(user);
    return window ? this.window(user).used : 0;
  }

  /** When the user's current window ends (ms), or undefined when none is open. */
  resetsAt(user: string): number | undefined {
    const window = this.windows.get(user);
    if (!window) return undefined;
    return this.reset === 'first-request'
      ? window.start + QUOTA_WINDOW_MS
      : (Math.floor(window.start / DAY_MS) + 1) * DAY_MS;
  }

  /** Uses of `user` (default: everyone) on UTC day `day` (floor(ms / 86,400,000); default: all days). */
  total(user?: string, day?: number): number {
    let total = 0;
    for (const [who, days] of this.byDay) {
      if (user !== undefined && who !== user) continue;
      for (const [d, n] of days) if (day === undefined || d === day) total += n;
    }
    return total;
  }
}
