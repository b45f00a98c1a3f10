// What the user set and what their plan allows, in one module: the settings (the API key, never returned), how long
// results are kept, the salted digest that names the key in stores, the plan's window, and the monthly credits.
// Over 300 lines: the settings, the window and the credits are read together by every check, under one lock order.
import {
  BASE_URLS,
  baseUrlFor,
  type Environment,
  mergeWindows,
  restoreWindow,
  type WindowSnapshot,
} from '../../../shared';
import type { Settings, SettingsChange } from '../../sidebar/contract';
import { NO_KEY } from '../messages';
import {
  deleteKeys,
  finite,
  isRecord,
  keepEntry,
  locked,
  readEntry,
  readText,
  readValue,
  updateValue,
  writeTexts,
  writeValue,
} from './storage';
import {
  currentSpreadsheet,
  digestOf,
  idOrUndefined,
  type InstallMode,
  installMode,
  knownInstallMode,
  rememberedDigest,
  retentionTier,
} from './session';
import { CACHE_SECONDS, DOCUMENT_PROPERTY, USER_PROPERTY } from './storage-keys';
import { hmacSha256, newSalt, now } from '../platform/gas';

// ─── settings ──────────────────────────────────────────────────────────────────────────────────────────────────────
// The user's settings: API key (UserProperties, never returned, only a masked hint), environment and base URL.
const ENVIRONMENTS: readonly Environment[] = ['production', 'staging', 'custom'];

/**
 * Apps Script fetches from Google's servers, and a versioned deployment only from the https prefixes of its
 * manifest's urlFetchWhitelist (Google: "Each prefix must use https://, not http://"), so a Staging or Custom
 * address is https or nothing: a local or http address could never be reached.
 */
export function httpsOnlyMessage(environment: Environment): string {
  return (
    `The ${environment} address must start with https:// (for example https://api.your-proxy.com). Apps Script ` +
    "runs on Google's servers: an http:// or local address such as 127.0.0.1 can never be reached from there. " +
    'The published add-on reaches only https://www.dapachecker.org; a copy you install yourself reaches another ' +
    'https server once its address is added to urlFetchWhitelist in appsscript.json.'
  );
}

/** The Staging or Custom address as typed, checked: https, no spaces; the endpoint path may be pasted with it. */
function typedBaseUrl(environment: Environment, typed: string): string {
  const url = typed.trim();
  if (/\s/.test(url)) throw new Error(`The ${environment} base URL cannot contain spaces.`);
  if (!/^https:\/\/[^\s/]+/i.test(url)) throw new Error(httpsOnlyMessage(environment));
  return baseUrlFor(environment, url);
}

const MAX_KEY_LENGTH = 512;

/** "••••••1234" for a key of 8 characters or more; a shorter key shows no character at all. */
export function maskKey(key: string): string {
  if (key === '') return '';
  return key.length >= 8 ? '••••••' + key.slice(-4) : '••••••';
}

function storedEnvironment(): Environment {
  const value = readText('user', USER_PROPERTY.environment);
  return ENVIRONMENTS.includes(value as Environment) ? (value as Environment) : 'production';
}

/** The base URL every request of this user goes to. */
export function currentBaseUrl(): string {
  const environment = storedEnvironment();
  if (environment === 'production') return BASE_URLS.production;
  try {
    return baseUrlFor(environment, readText('user', USER_PROPERTY.customBaseUrl) ?? '');
  } catch {
    return BASE_URLS.production;
  }
}

/**
 * The owner's settings as this spreadsheet's =DAPA cells last read them (the base URL, whether a key and a credit
 * budget are set; never the key itself), kept in the document cache (storage.ts; shared by everyone in the spreadsheet,
 * whose custom functions all read the owner's settings; CacheService has no daily quota): a cell whose answer is
 * cached, or that only waits for another cell's round or for the background, then needs no Properties call at all, and
 * still shows its answer when Google's daily Properties quota is used up. The owner's Save (settings, budget) in this
 * spreadsheet drops it; a change made elsewhere is seen within the hour (a cell that sends reads the key itself).
 */
export const FORMULA_SETTINGS = 'dapa.formulaSettings';
const FORMULA_SETTINGS_SECONDS = 3_600;

/** What a =DAPA cell needs of the owner's settings before it has anything to send. */
export interface FormulaSettings {
  baseUrl: string;
  /** Whether the owner has a key (a cell that has to ask for a domain reads it only then when there is none). */
  hasKey: boolean;
  /** Whether a monthly credit budget is set (a waiting cell reads the ledger only then). */
  budget: boolean;
  /** How the script is installed, as the cell that wrote the copy asked Google (a bound script or an add-on). */
  installMode?: InstallMode;
}

function parseFormulaSettings(text: string | null | undefined): FormulaSettings | undefined {
  try {
    const value: unknown = JSON.parse(text ?? '');
    if (typeof value !== 'object' || value === null) return undefined;
    const { baseUrl, hasKey, budget, installMode: mode } = value as Record<string, unknown>;
    if (typeof baseUrl !== 'string' || typeof hasKey !== 'boolean' || typeof budget !== 'boolean')
      return undefined;
    return mode === 'bound' || mode === 'addon'
      ? { baseUrl, hasKey, budget, installMode: mode }
      : { baseUrl, hasKey, budget };
  } catch {
    return undefined;
  }
}

/** The settings a =DAPA cell checks with: the spreadsheet's copy, else the owner's settings (one bulk read, copied). */
export function formulaSettings(): FormulaSettings {
  let reachable = false;
  try {
    const copy = parseFormulaSettings(readEntry(FORMULA_SETTINGS));
    reachable = true;
    if (copy?.installMode) knownInstallMode(copy.installMode); // one service call fewer a cell
    if (copy) return copy;
  } catch {
    // no cache: the settings
  }
  const budget = readText('user', USER_PROPERTY.creditBudget);
  const settings: FormulaSettings = {
    baseUrl: currentBaseUrl(),
    hasKey: storedApiKey() !== undefined,
    budget: !!budget,
    installMode: installMode(),
  };
  try {
    if (reachable) keepEntry(FORMULA_SETTINGS, JSON.stringify(settings), FORMULA_SETTINGS_SECONDS);
  } catch {
    // read again next time
  }
  return settings;
}

/** Drops the cells' copy of the settings (after the owner changed them here). */
export function dropFormulaSettings(): void {
  try {
    keepEntry(FORMULA_SETTINGS, undefined, 0);
  } catch {
    // the copy lasts an hour at most
  }
}

export function readSettings(): Settings {
  const key = storedApiKey() ?? '';
  return {
    hasKey: key !== '',
    keyHint: maskKey(key),
    environment: storedEnvironment(),
    baseUrl: currentBaseUrl(),
  };
}

/** The stored key, or undefined when none is set. */
export function storedApiKey(): string | undefined {
  return readText('user', USER_PROPERTY.apiKey) || undefined;
}

/** The stored key; throws the "no key, set it here" error when there is none. */
export function requireApiKey(): string {
  const key = storedApiKey();
  if (!key) throw new Error(NO_KEY);
  return key;
}

function cleanKey(value: unknown): string {
  if (typeof value !== 'string') throw new Error('The API key must be text.');
  const key = value.trim();
  if (key.length > MAX_KEY_LENGTH) throw new Error(`The API key is too long (${key.length} characters).`);
  if (/\s/.test(key) || [...key].some((ch) => ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127)) {
    throw new Error('The API key cannot contain spaces, tabs or line breaks: paste only the key itself.');
  }
  return key;
}

/** Applies a change from the sidebar or the menu; throws a specific Error on an invalid value. */
export function saveSettings(change: SettingsChange | undefined | null): Settings {
  if (change === null || typeof change !== 'object') throw new Error('saveSettings needs an object.');
  const before = currentBaseUrl();
  const environment = change.environment ?? storedEnvironment();
  if (!ENVIRONMENTS.includes(environment)) {
    throw new Error(`Unknown environment "${String(environment)}": choose production, staging or custom.`);
  }
  const updates: Record<string, string | undefined> = { [USER_PROPERTY.environment]: environment };
  if (environment !== 'production') {
    const custom = change.baseUrl ?? readText('user', USER_PROPERTY.customBaseUrl) ?? '';
    if (typeof custom !== 'string') throw new Error(`The ${environment} base URL must be text.`);
    updates[USER_PROPERTY.customBaseUrl] = typedBaseUrl(environment, custom);
  }
  let keyChanged = false;
  if (change.apiKey !== undefined) {
    const key = cleanKey(change.apiKey);
    keyChanged = key !== (storedApiKey() ?? '');
    updates[USER_PROPERTY.apiKey] = key || undefined;
    if (key) Object.assign(updates, saltToSave());
  }
  writeTexts('user', updates);
  dropFormulaSettings();
  // Learned plan limits belong to a key and a service: a new key or another service starts afresh.
  if (keyChanged || currentBaseUrl() !== before) forgetLearnedPlans();
  return readSettings();
}

// ─── retention ─────────────────────────────────────────────────────────────────────────────────────────────────────
// How long the result store keeps a result: the spreadsheet's own setting (1 to 365 days, 30 by default), read once an
// execution (every check reads it; only the user changes it).
export const DAY_MS = 86_400_000;
export const DEFAULT_RETENTION_DAYS = 30;

/**
 * A copy of the setting in the document's cache (an hour): every =DAPA cell reads the retention, and a spreadsheet that
 * never set it would cost a Properties call each time (the value of earlier versions is looked for in
 * DocumentProperties); one cell reads it for the next hour's cells.
 */
export const RETENTION_COPY = 'dapa.retentionDays';

function keepCopy(days: number): void {
  try {
    keepEntry(RETENTION_COPY, String(days), 3_600);
  } catch {
    // read from the setting next time
  }
}

export function retentionDays(): number {
  const retention = retentionTier();
  const id = idOrUndefined(currentSpreadsheet()) ?? '';
  const known = retention.get(id);
  if (known !== undefined) return known;
  let copy: number | undefined;
  try {
    copy = finite(Number(readEntry(RETENTION_COPY) ?? NaN));
  } catch {
    // no cache here
  }
  if (copy !== undefined && copy >= 1 && copy <= 365) {
    retention.set(id, copy);
    return copy;
  }
  const days = readValue('document', DOCUMENT_PROPERTY.retentionDays, finite) ?? 0;
  const kept = days >= 1 && days <= 365 ? Math.floor(days) : DEFAULT_RETENTION_DAYS;
  retention.set(id, kept);
  keepCopy(kept);
  return kept;
}

export function setRetentionDays(days: unknown): number {
  const n = Number(days);
  if (!Number.isInteger(n) || n < 1 || n > 365)
    throw new Error(`Keep results for 1 to 365 days, not "${String(days).slice(0, 20)}".`);
  writeValue('document', DOCUMENT_PROPERTY.retentionDays, n);
  retentionTier().set(idOrUndefined(currentSpreadsheet()) ?? '', n);
  keepCopy(n);
  return n;
}

// ─── key digest ────────────────────────────────────────────────────────────────────────────────────────────────────
// The one digest for cache keys derived from a secret (the API key): HMAC-SHA-256 keyed with a random salt of this
// user's, kept in the user's properties (USER_PROPERTY.digestSalt) and read with the settings' one bulk read, so a
// cache key tells nothing about the key to anyone who can list the cache, and costs no extra Properties call.
/** This user's salt; made (under the user lock, once per user) when there is none yet. */
function salt(): string {
  const known = readText('user', USER_PROPERTY.digestSalt);
  if (known) return known;
  return locked('user', () => {
    const again = readText('user', USER_PROPERTY.digestSalt);
    if (again) return again;
    const made = newSalt();
    writeTexts('user', { [USER_PROPERTY.digestSalt]: made });
    return made;
  });
}

/** The salt to store beside a key being saved, when the user has none yet (one write with the key). */
export function saltToSave(): Record<string, string> {
  return readText('user', USER_PROPERTY.digestSalt) ? {} : { [USER_PROPERTY.digestSalt]: newSalt() };
}

/** A keyed digest of `secret` for `purpose` (web-safe base64): the same for this user, another for anyone else. */
export function keyedDigest(purpose: string, secret: string): string {
  return rememberedDigest(`hmac\n${purpose}\n${secret}`, () => hmacSha256(`${purpose}\n${secret}`, salt()));
}

// ─── plan store ────────────────────────────────────────────────────────────────────────────────────────────────────
// What earlier executions of this user sent and learned against a service: the core's WindowSnapshot (the last
// minute's sends, the plan's limits labelled exact or inferred), kept in the user's properties per base URL, so every
// execution (formula, sidebar, background step) starts from the same window. The core's keeping rule applies
// (restoreWindow: sends older than a minute and limits older than 7 days are dropped, inferred limits are probed up
// again), the same rule as the n8n node's; this module stores the snapshot as it is and never recounts it.
function propertyName(baseUrl: string): string {
  return USER_PROPERTY.windowPrefix + digestOf(baseUrl);
}

const parse = (raw: unknown) => restoreWindow(raw, now());

/** The window every execution against this service starts from (undefined: nothing known). */
export function loadWindow(baseUrl: string): WindowSnapshot | undefined {
  return readValue('user', propertyName(baseUrl), parse);
}

/** Merges a run's window into the stored one (under the user lock: executions run side by side). */
export function saveWindow(baseUrl: string, window: WindowSnapshot | undefined): void {
  if (!window) return;
  updateValue('user', propertyName(baseUrl), parse, (stored) => mergeWindows(stored, window));
}

/** A new key or another service starts afresh. */
export function forgetLearnedPlans(): void {
  deleteKeys('user', USER_PROPERTY.windowPrefix);
  deleteKeys('user', USER_PROPERTY.planPrefix);
}

// ─── credit ledger ─────────────────────────────────────────────────────────────────────────────────────────────────
// The user's monthly credits: the budget they set (none by default) and what the service billed this calendar month
// (UTC), counted from every check's report whatever the surface. A check first holds the credits it may spend (what
// the budget leaves after what was billed and what other running checks hold), then settles the hold with what it
// was billed, both under the shared lock and read again there: two executions at once never spend past the budget
// together, and no count is lost. The ledger lives in the user's properties. A custom function may not be allowed to
// write them (Google: "Spreadsheet editors can't set user properties in a custom function"; whether the owner's own
// recalculation may is not said), so where the write is refused its holds and counts go to the document's cache, which
// custom functions may write ("Cache: Works"), and the next execution in that spreadsheet that can write folds them
// into the ledger. The ledger is the user's (user lock); the lists are the spreadsheet's (document lock, taken inside).
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
    raw = JSON.parse(readEntry(key) ?? ''); // the document's cache (storage.ts)
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
