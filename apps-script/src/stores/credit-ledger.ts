// The user's monthly credits: the budget they set (none by default) and what the service billed this calendar month
// (UTC), counted from every check's report whatever the surface. A check first holds the credits it may spend (what
// the budget leaves after what was billed and what other running checks hold), then settles the hold with what it
// was billed, both under the shared lock and read again there: two executions at once never spend past the budget
// together, and no count is lost. The ledger lives in the user's properties. A custom function may not be allowed to
// write them (Google: "Spreadsheet editors can't set user properties in a custom function"; whether the owner's own
// recalculation may is not said), so where the write is refused its holds and counts go to the document's cache, which
// custom functions may write ("Cache: Works"), and the next execution in that spreadsheet that can write folds them
// into the ledger. The ledger is the user's (user lock); the lists are the spreadsheet's (document lock, taken inside).
import { now } from '../platform/gas';
import { keepEntry, readEntry } from './caches';
import { keyedDigest } from './key-digest';
import { dropFormulaSettings } from './settings';
import { finite, isRecord, locked, readText, readValue, writeTexts } from './storage';
import { CACHE_SECONDS, USER_PROPERTY } from './storage-keys';

/** Credits a running check holds: `n` at most, until `until` (then counted as spent if it never settled). */
interface Hold {
  id: string;
  n: number;
  until: number;
}

/** The ledger in the user's properties; a cache list (what formulas refused the write left) has its shape too. */
interface Ledger {
  /** Names this user's pending list in the script cache (a random id, made by the first execution that writes). */
  id?: string;
  month: string;
  used: number;
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
    dropFormulaSettings();
    return undefined;
  }
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 10_000_000)
    throw new Error(
      `The monthly credit budget is a whole number of credits (0 to 10,000,000), not "${String(value).slice(0, 20)}".`,
    );
  writeTexts('user', { [USER_PROPERTY.creditBudget]: String(n) });
  dropFormulaSettings();
  return n;
}

/** A ledger as this month sees it (another month's count starts again at 0). */
function thisMonth(ledger: Ledger | undefined, at: number): Ledger {
  const month = monthOf(at);
  if (!ledger) return { month, used: 0, holds: [] };
  return ledger.month === month ? ledger : { ...ledger, month, used: 0 };
}

function readLedger(at: number): Ledger {
  return thisMonth(readValue('user', USER_PROPERTY.credits, parseLedger), at);
}

/** The script cache keys of this user's pending lists: the ledger's id, and the key's (before an id existed). */
function pendingKeys(ledger: Ledger, apiKey: string): string[] {
  const byKey = cacheKey(apiKey);
  return ledger.id ? [cacheKey(ledger.id), byKey] : [byKey];
}

function cacheKey(of: string): string {
  return 'dapa.credits.' + keyedDigest('credits', of);
}

/** Where formulas refused the ledger's write leave their lists: the document's cache (none outside a document). */
const NO_LISTS = 'The credits could not be counted here (no document to note them in).';

function readPending(key: string, at: number): Ledger {
  let raw: unknown;
  try {
    raw = JSON.parse(readEntry(key) ?? ''); // the document's cache (caches.ts)
  } catch {
    // nothing pending, or unreadable
  }
  return thisMonth(parseLedger(raw), at);
}

/** What holds take of this month's credits (all they hold: an ended one's billing is unknown, and at most that). */
function heldOf(holds: readonly Hold[]): number {
  return holds.reduce((sum, h) => sum + h.n, 0);
}

/** Billed this month and held, in the ledger and the cache lists. */
function usedIn(books: readonly Ledger[]): number {
  return books.reduce((n, b) => n + b.used + heldOf(b.holds), 0);
}

function viewOf(books: readonly Ledger[], at: number): CreditView {
  const used = usedIn(books);
  const budget = creditBudget();
  const view: CreditView = { month: monthOf(at), used };
  return budget === undefined ? view : { ...view, budget, left: Math.max(0, budget - used) };
}

/**
 * Changes the ledger under the lock: in the user's properties when this execution may write them, else (a custom
 * function refused the write) in this user's list in the document's cache. With `lists`, the ledger first takes in what
 * the cache lists billed and counts holds that outlived their execution as spent (their billing is unknown, and at
 * most what they held); live holds stay where they are. `edit` gets the book it may change and the credits taken
 * elsewhere; `drop` is a hold that ends wherever it is. Settling reads no list: its hold is where its hold was written.
 */
function change(
  apiKey: string,
  edit: (book: Ledger, elsewhere: number) => void,
  drop?: string,
  withLists = true,
): void {
  locked('user', () => locked('document', () => changeHeld(apiKey, edit, drop, withLists)));
}

/** `change` with its locks held (the user's, then the document's: every section that takes both takes them so). */
function changeHeld(
  apiKey: string,
  edit: (book: Ledger, elsewhere: number) => void,
  drop: string | undefined,
  withLists: boolean,
): void {
  const at = now();
  const ledger = readLedger(at);
  const before = JSON.stringify(ledger);
  const listsOf = (of: Ledger) => pendingKeys(of, apiKey).map((key) => ({ key, list: readPending(key, at) }));
  const lists = withLists ? listsOf(ledger).filter(({ list }) => list.used > 0 || list.holds.length > 0) : [];
  const live = (b: Ledger) => {
    ledger.used += heldOf(b.holds.filter((h) => h.until < at));
    b.holds = b.holds.filter((h) => h.until >= at && h.id !== drop);
  };
  try {
    ledger.id ??= Utilities.getUuid();
    for (const { list } of lists) {
      ledger.used += list.used;
      list.used = 0;
      live(list);
    }
    live(ledger);
    edit(ledger, usedIn(lists.map(({ list }) => list)));
    if (JSON.stringify(ledger) !== before)
      writeTexts('user', { [USER_PROPERTY.credits]: JSON.stringify(ledger) });
    for (const { key, list } of lists)
      keepEntry(key, list.holds.length > 0 ? JSON.stringify(list) : undefined, CACHE_SECONDS);
  } catch {
    const stored = readLedger(at);
    const [first, ...others] = listsOf(stored);
    for (const b of [first.list, ...others.map((o) => o.list), stored])
      b.holds = b.holds.filter((h) => h.id !== drop);
    edit(first.list, usedIn([stored, ...others.map((o) => o.list)]));
    keepEntry(first.key, JSON.stringify(first.list), CACHE_SECONDS, NO_LISTS);
  }
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
  return viewOf([ledger, ...(apiKey ? pendingKeys(ledger, apiKey).map((k) => readPending(k, at)) : [])], at);
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
  change(apiKey, (book) => (book.used += billed), spend.hold?.id, false);
}
