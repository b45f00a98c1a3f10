// What a published add-on's background keeps of the results an editor's formulas fetched. Its step opens the
// spreadsheet by id, with no document cache (Google: null "outside of the context of a containing document"), and that
// cache is where those formulas put their records with when each was fetched; the grid shows the metrics but not when,
// and keeping them as new would stretch the retention the privacy policy states. So the step asks the document: it
// writes =DAPA_CACHE(service, domains, asked at) in the relay cell of `_dapa_versions` (store-sheet.ts), Sheets
// recalculates that formula in the document, where the cache is readable, and its value lists the records with their
// times; the next step reads it and keeps each as of when it was fetched, then leaves only the time of the ask there
// (no domains). What the cache no longer holds stays unkept (it is as old as it is): a result shown past the retention
// can never be dated, so asks come at most every ASK_EVERY_MS, well inside the cache's 6 hours, never every step.
// Only the holder of the step lease writes the cell.
import type { DomainRecord } from '../../../shared';
import { type CachedRecord, cachedRecordOf, readCachedRecords } from '../stores/result-cache';
import { now } from '../platform/gas';
import { readRelay, writeRelay } from '../stores/store-sheet';

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** At most this many domains are asked a step (their answer stays well inside a cell's 50,000 characters). */
const RELAY_KEYS = 300;
/** How often the document is asked at most (a record stays in its cache 6 hours from its fetch: none is missed). */
const ASK_EVERY_MS = 4 * 3_600_000;
/** What a DAPA_CACHE value may hold. */
const MAX_CHARS = 45_000;
const KEY = /^[^\s"]+$/;

/** What the relay cell holds now: the formula (what was asked) and what it answered, by domain key. */
export interface Relay {
  formula: string;
  asked: Set<string>;
  /** When the last ask was written (0: never). */
  askedAt: number;
  answered: Map<string, CachedRecord>;
}

/** Reads the relay cell once: what it asked, and the records (with when fetched) it answered for this service. */
export function readRelayed(spreadsheet: Spreadsheet, baseUrl: string): Relay {
  const { formula, value } = readRelay(spreadsheet);
  const call = /^=DAPA_CACHE\("([^"]*)",\s*"([^"]*)",\s*(\d+)\)$/i.exec(formula);
  const answered = new Map<string, CachedRecord>();
  if (call?.[1] === baseUrl) {
    try {
      for (const entry of JSON.parse(value) as unknown[]) {
        const [key, record] = Array.isArray(entry) ? entry : [];
        const dated = cachedRecordOf(record);
        if (typeof key === 'string' && dated) answered.set(key, dated);
      }
    } catch {
      // not answered yet (or no longer a list): nothing to keep from it this step
    }
  }
  return { formula, asked: new Set(call?.[2].split(' ') ?? []), askedAt: Number(call?.[3] ?? 0), answered };
}

/**
 * Asks about the undated domains (those not asked last time first) when the last ask is ASK_EVERY_MS old, else leaves
 * only the last ask's time in the cell. Writes only what changed; true when it asked (the next step reads the answer).
 */
export function askRelay(
  spreadsheet: Spreadsheet,
  baseUrl: string,
  undated: readonly string[],
  relay: Relay,
): boolean {
  const due = now() - relay.askedAt >= ASK_EVERY_MS;
  // Domains not asked last time first, then those asked again: one pass, and every key checked, not trusted.
  const [fresh, again]: [string[], string[]] = [[], []];
  if (due) for (const k of undated) if (KEY.test(k)) (relay.asked.has(k) ? again : fresh).push(k);
  const ask = [...fresh, ...again].slice(0, RELAY_KEYS);
  const at = ask.length > 0 ? now() : relay.askedAt;
  const formula = at > 0 ? `=DAPA_CACHE("${baseUrl.replace(/"/g, '')}", "${ask.join(' ')}", ${at})` : '';
  if (formula !== relay.formula) writeRelay(spreadsheet, formula);
  return ask.length > 0;
}

/**
 * DAPA_CACHE(service, domains, asked at): what this spreadsheet's caches hold of these domains (separated by spaces), each with
 * when it was fetched, as one text. Nothing is sent and nothing is billed.
 */
export function cachedForRelay(service: unknown, domains: unknown): string {
  const baseUrl = String(service ?? '');
  if (!/^https?:\/\/\S+$/.test(baseUrl)) {
    throw new Error(
      'DAPA_CACHE is for background checks: =DAPA_CACHE("https://www.dapachecker.org", "example.com").',
    );
  }
  const keys = String(domains ?? '')
    .split(/\s+/)
    .filter((k) => KEY.test(k))
    .slice(0, RELAY_KEYS);
  const times = new Map<string, number>();
  const entries: Array<[string, DomainRecord & { fetchedAt?: number }]> = [];
  let chars = 2;
  for (const [key, record] of readCachedRecords(baseUrl, keys, times)) {
    const entry: [string, DomainRecord & { fetchedAt?: number }] = [
      key,
      { ...record, fetchedAt: times.get(key) },
    ];
    chars += JSON.stringify(entry).length + 1;
    if (chars > MAX_CHARS) break;
    entries.push(entry);
  }
  return JSON.stringify(entries);
}
