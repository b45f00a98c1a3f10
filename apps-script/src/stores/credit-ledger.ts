// The user's monthly credits: the budget they set (none by default) and what the service billed this calendar month
// (UTC), counted from every check's report whatever the surface. A check first holds the credits it may spend (what
// the budget leaves after what was billed and what other running checks hold), then settles the hold with what it
// was billed, both under the shared lock and read again there: two executions at once never spend past the budget
// together, and no count is lost. The ledger lives in the user's properties. A custom function may not be allowed to
// write them (Google: "Spreadsheet editors can't set user properties in a custom function"; whether the owner's own
// recalculation may is not said), so where the write is refused its holds and counts go to the script cache, which
// custom functions may write ("Cache: Works"), and the next execution that can write folds them into the ledger.
import { now, scriptCache, sha256 } from '../platform/gas';
import { finite, isRecord, locked, readText, readValue, writeTexts, writeValue } from './storage';
import { CACHE_SECONDS, USER_PROPERTY } from './storage-keys';

/** Credits a running check holds: `n` at most, until `until` (then counted as spent if it never settled). */
interface Hold {
  id: string;
  n: number;
  until: number;
}

/** The ledger in the user's properties. */
interface Ledger {
  /** Names this user's pending list in the script cache (a random id, made by the first execution that writes). */
  id?: string;
  month: string;
  used: number;
  holds: Hold[];
}

/** What formulas that could not write the ledger left for it in the script cache: billed per month, holds. */
interface Pending {
  billed: Record<string, number>;
  holds: Hold[];
}

/** What a check holds, and the credits it may spend (undefined: no budget is set). */
export interface Spend {
  hold?: Hold;
  budget?: number;
}

export interface CreditView {
  budget?: number;
  month: string;
  /** Billed this month, with what running or ended checks still hold. */
  used: number;
  /** What the budget leaves now (undefined: no budget). */
  left?: number;
}

/** "2026-11": the calendar month (UTC) of a time. */
export function monthOf(at: number): string {
  const d = new Date(at);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** When the month after the one of `at` starts (UTC). */
export function nextMonthAt(at: number): number {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

const isHold = (h: unknown): h is Hold =>
  isRecord(h) && typeof h.id === 'string' && finite(h.n) !== undefined && finite(h.until) !== undefined;

function parseLedger(raw: unknown): Ledger | undefined {
  if (!isRecord(raw) || typeof raw.month !== 'string') return undefined;
  return {
    id: typeof raw.id === 'string' ? raw.id : undefined,
    month: raw.month,
    used: finite(raw.used) ?? 0,
    holds: Array.isArray(raw.holds) ? raw.holds.filter(isHold) : [],
  };
}

function parsePending(text: string | null): Pending {
  try {
    const raw: unknown = JSON.parse(text ?? '');
    if (isRecord(raw) && isRecord(raw.billed) && Array.isArray(raw.holds)) {
      const billed: Record<string, number> = {};
      for (const [m, n] of Object.entries(raw.billed)) if (finite(n) !== undefined) billed[m] = n as number;
      return { billed, holds: raw.holds.filter(isHold) };
    }
  } catch {
    // nothing pending, or unreadable
  }
  return { billed: {}, holds: [] };
}

/** The budget the user set (credits a calendar month), or undefined. */
export function creditBudget(): number | undefined {
  const text = readText('user', USER_PROPERTY.creditBudget);
  const n = Number(text);
  return text !== undefined && text !== '' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** Sets the monthly budget (null or '' removes it); throws a specific error on a bad value. */
export function setCreditBudget(value: unknown): number | undefined {
  if (value === null || value === undefined || value === '') {
    writeTexts('user', { [USER_PROPERTY.creditBudget]: undefined });
    return undefined;
  }
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 10_000_000)
    throw new Error(
      `The monthly credit budget is a whole number of credits (0 to 10,000,000), not "${String(value).slice(0, 20)}".`,
    );
  writeTexts('user', { [USER_PROPERTY.creditBudget]: String(n) });
  return n;
}

function readLedger(at: number): Ledger {
  const ledger = readValue('user', USER_PROPERTY.credits, parseLedger);
  const month = monthOf(at);
  if (!ledger) return { month, used: 0, holds: [] };
  if (ledger.month !== month) return { ...ledger, month, used: 0 };
  return ledger;
}

/** The script cache keys of this user's pending lists: the ledger's id, and the key's (before an id existed). */
function pendingKeys(ledger: Ledger, apiKey: string): string[] {
  const byKey = 'dapa.credits.' + sha256('credits\n' + apiKey);
  return ledger.id ? ['dapa.credits.' + sha256('credits\n' + ledger.id), byKey] : [byKey];
}

function readPending(key: string): Pending {
  try {
    return parsePending(scriptCache().get(key));
  } catch {
    return { billed: {}, holds: [] };
  }
}

/** What holds take of this month's credits (all they hold: an ended one's billing is unknown, and at most that). */
function heldOf(holds: readonly Hold[]): number {
  return holds.reduce((sum, h) => sum + h.n, 0);
}

function viewOf(ledger: Ledger, pending: readonly Pending[], at: number): CreditView {
  const month = monthOf(at);
  let used = ledger.used + heldOf(ledger.holds);
  for (const p of pending) used += (p.billed[month] ?? 0) + heldOf(p.holds);
  const budget = creditBudget();
  return budget === undefined ? { month, used } : { budget, month, used, left: Math.max(0, budget - used) };
}

/**
 * Moves what formulas billed (kept in the cache) into the ledger, and counts holds that outlived their execution as
 * spent (their billing is unknown, and at most what they held). Live holds stay where they are. Under the lock;
 * returns each cache list's live holds, to write back once the caller has written the ledger.
 */
function fold(ledger: Ledger, apiKey: string, at: number): Map<string, Hold[]> {
  const live = new Map<string, Hold[]>();
  const settle = (holds: Hold[]) => {
    ledger.used += heldOf(holds.filter((h) => h.until < at));
    return holds.filter((h) => h.until >= at);
  };
  for (const key of pendingKeys(ledger, apiKey)) {
    const pending = readPending(key);
    if (Object.keys(pending.billed).length === 0 && pending.holds.length === 0) continue;
    ledger.used += pending.billed[ledger.month] ?? 0;
    live.set(key, settle(pending.holds));
  }
  ledger.holds = settle(ledger.holds);
  return live;
}

/** What a change edits: this month's billed count and the holds, in the ledger or in a cache list. */
interface Book {
  used: number;
  holds: Hold[];
}

/**
 * Changes the ledger under the lock: in the user's properties when this execution may write them (the ledger is
 * folded first), else (a custom function refused the write) in this user's pending list in the script cache.
 * `edit` gets the book it may change and the credits taken elsewhere (held or billed in the other place); `drop` is
 * a hold that ends wherever it is.
 */
function change(apiKey: string, edit: (book: Book, elsewhere: number) => void, drop?: string): void {
  locked(() => {
    const at = now();
    const ledger = readLedger(at);
    const before = JSON.stringify(ledger);
    const keep = (holds: Hold[]) => holds.filter((h) => h.id !== drop);
    try {
      ledger.id ??= Utilities.getUuid();
      const live = fold(ledger, apiKey, at);
      ledger.holds = keep(ledger.holds);
      const lists = [...live].map(([key, holds]) => [key, keep(holds)] as const);
      edit(
        ledger,
        lists.reduce((n, [, holds]) => n + heldOf(holds), 0),
      );
      if (JSON.stringify(ledger) !== before) writeValue('user', USER_PROPERTY.credits, ledger);
      for (const [key, holds] of lists)
        if (holds.length > 0) scriptCache().put(key, JSON.stringify({ billed: {}, holds }), CACHE_SECONDS);
        else scriptCache().remove(key);
    } catch {
      const stored = readLedger(at);
      const [key, ...others] = pendingKeys(stored, apiKey);
      const pending = readPending(key);
      const book = { used: pending.billed[stored.month] ?? 0, holds: keep(pending.holds) };
      const other = viewOf({ ...stored, holds: keep(stored.holds) }, others.map(readPending), at).used;
      edit(book, other);
      pending.holds = book.holds;
      pending.billed[stored.month] = book.used;
      scriptCache().put(key, JSON.stringify(pending), CACHE_SECONDS);
    }
  });
}

/** The budget, what was used this month and what is left (folding what formulas left, when this execution can). */
export function creditView(apiKey: string | undefined, foldFirst = false): CreditView {
  const at = now();
  if (foldFirst && apiKey) {
    try {
      change(apiKey, () => undefined);
    } catch {
      // the view below reads the cache too
    }
  }
  const ledger = readLedger(at);
  return viewOf(ledger, apiKey ? pendingKeys(ledger, apiKey).map(readPending) : [], at);
}

/**
 * Holds the credits a check may spend: `want` (the most it can be billed), capped by what the budget leaves. With no
 * budget set nothing is held. `until`: when the check is over by (then an unsettled hold counts as spent).
 */
export function holdCredits(apiKey: string, want: number, until: number): Spend {
  const budget = creditBudget();
  if (budget === undefined) return {};
  const hold: Hold = { id: Utilities.getUuid(), n: 0, until };
  change(apiKey, (book, elsewhere) => {
    hold.n = Math.max(0, Math.min(want, budget - book.used - heldOf(book.holds) - elsewhere));
    book.holds.push(hold);
  });
  return { hold, budget: hold.n };
}

/** Settles a check: its hold ends and what it was billed counts for this month. */
export function settleCredits(apiKey: string, spend: Spend, billed: number): void {
  if (!spend.hold && billed <= 0) return;
  change(apiKey, (book) => (book.used += billed), spend.hold?.id);
}
