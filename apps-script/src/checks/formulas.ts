// A spreadsheet's =DAPA formulas, in one module: their text, their version slots, the cells and domains they read,
// and the relay of what they show to the background. Each section below says its part.
// Over 300 lines: the text, the slots and the relay are the three parts of reading a formula.
/// <reference types="google-apps-script" />
import { type DomainRecord, toEntry } from '../../../shared';
import { columnNumber, dailyLimitOf, now, type Spreadsheet } from '../platform/gas';
import { documentCacheHere } from '../stores/storage';
import { DAY_MS, retentionDays } from '../stores/account';
import {
  type CachedRecord,
  cachedRecordOf,
  readCachedRecords,
  readStoredRecords,
  storeRecords,
} from '../stores/results';
import {
  isAddOnSheet,
  randomPart,
  readRelay,
  readVersionSlots,
  VERSION_SLOTS,
  versionSlotRef,
  writeRelay,
  writeVersionSlots,
} from '../stores/store-sheet';
import { formulaLooksTier } from '../stores/session';
import { STORE_SHEET, VERSIONS_SHEET } from '../stores/storage-keys';

// ─── formulas ──────────────────────────────────────────────────────────────────────────────────────────────────────
// Looking at a spreadsheet's =DAPA(...) formulas: every formula cell with the domains its range holds and the version
// slot it reads (the formula versions section), read in a few calls whatever the number of formulas (one getFormulas
// and one getValues a sheet), and which of them need a check. Parsing a formula's text: the formula text section.
type Sheet = GoogleAppsScript.Spreadsheet.Sheet;

const HOUR_MS = 3_600_000;

export interface FormulaCell extends VersionedCell {
  /** The cells of its source range that hold a value. */
  rows?: number;
  /** Its domains whose result row shows metrics now (a number where the row's first metric goes). */
  shown?: string[];
  /** What a formula showing DA, PA, MR and Spam Score (its default) shows of each domain: a whole record. */
  showing?: Array<{ key: string; record: DomainRecord }>;
}

/**
 * Each sheet's values, read once per look at the spreadsheet (one service call a sheet, not one a formula), by the
 * sheet object (asking a sheet its name is a service call too, and 5,000 formulas would ask it 5,000 times).
 */
type Grids = Map<Sheet, unknown[][]>;

function gridOf(sheet: Sheet, grids: Grids, size?: { rows: number; columns: number }): unknown[][] {
  let grid = grids.get(sheet);
  if (!grid) {
    const rows = size?.rows ?? sheet.getLastRow();
    const columns = size?.columns ?? sheet.getLastColumn();
    grid = rows < 1 || columns < 1 ? [] : sheet.getRange(1, 1, rows, columns).getValues();
    grids.set(sheet, grid);
  }
  return grid;
}

/** Where a formula shows its result: its sheet's values and its cell, and whether a header row comes first. */
interface ResultAt {
  grid: unknown[][];
  row: number;
  column: number;
  header: boolean;
  /** The result's columns are DA, PA, MR and Spam Score (the records it shows can be read back). */
  whole: boolean;
}

/** The record a default result row shows (DA, PA, MR, Spam Score; a blank metric is the service's "no data"). */
function recordOn(line: unknown[] | undefined, column: number, key: string): DomainRecord | undefined {
  const cells = [0, 1, 2, 3].map((i) => line?.[column - 1 + i]);
  if (typeof cells[0] !== 'number' || !cells.every((v) => typeof v === 'number' || v === ''))
    return undefined;
  const metric = (v: unknown) => (typeof v === 'number' ? v : null);
  return {
    domain: key,
    site_da: metric(cells[0]),
    site_pa: metric(cells[1]),
    site_mr: metric(cells[2]),
    spam_score: metric(cells[3]),
  };
}

function sourceKeys(
  spreadsheet: Spreadsheet,
  sheet: Sheet,
  source: RangeRef,
  grids: Grids,
  at: ResultAt,
):
  | { keys: string[]; rows: number; shown: string[]; showing: Array<{ key: string; record: DomainRecord }> }
  | undefined {
  const from = source.sheetName === undefined ? sheet : spreadsheet.getSheetByName(source.sheetName);
  if (!from) return undefined;
  const grid = gridOf(from, grids);
  const lastRow = source.lastRow ?? Math.max(source.firstRow, grid.length);
  if (lastRow < source.firstRow || source.lastColumn < source.firstColumn) return undefined;
  const keys = new Set<string>();
  const shown = new Set<string>();
  const showing: Array<{ key: string; record: DomainRecord }> = [];
  let filled = 0;
  // The result has one row per source cell, row by row (DAPA's cellsOf): the i-th cell's metrics are on row i.
  let i = at.header ? 1 : 0;
  for (let r = source.firstRow; r <= Math.min(lastRow, grid.length); r++)
    for (let c = source.firstColumn; c <= source.lastColumn; c++, i++) {
      const value = grid[r - 1][c - 1] ?? '';
      const entry = toEntry(value);
      if (entry.kind === 'candidate') {
        keys.add(entry.key);
        const line = at.grid[at.row - 1 + i];
        if (typeof line?.[at.column - 1] === 'number' && !shown.has(entry.key)) {
          shown.add(entry.key);
          const record = at.whole ? recordOn(line, at.column, entry.key) : undefined;
          if (record) showing.push({ key: entry.key, record });
        }
      }
      if (value !== '' && value !== null) filled += 1;
    }
  return { keys: [...keys], rows: filled, shown: [...shown], showing };
}

/** Every DAPA formula of the spreadsheet (the add-on's hidden sheets aside), with its domains and version slot. */
export function dapaFormulaCells(spreadsheet: Spreadsheet): FormulaCell[] {
  const found: FormulaCell[] = [];
  const grids: Grids = new Map();
  for (const sheet of spreadsheet.getSheets()) {
    if (isAddOnSheet(sheet.getName())) continue;
    const lastRow = sheet.getLastRow();
    const lastColumn = sheet.getLastColumn();
    if (lastRow < 1 || lastColumn < 1) continue;
    const size = { rows: lastRow, columns: lastColumn };
    let sheetId: number | undefined;
    sheet
      .getRange(1, 1, lastRow, lastColumn)
      .getFormulas()
      .forEach((line, r) =>
        line.forEach((formula, c) => {
          if (!formula || !isDapaFormula(formula)) return;
          const id = (sheetId ??= sheet.getSheetId());
          const call = parseDapaCall(formula);
          const source = call?.source;
          const at = {
            grid: gridOf(sheet, grids, size),
            row: r + 1,
            column: c + 1,
            header: call?.header ?? false,
            whole: call?.defaultMetrics ?? false,
          };
          const read = source ? sourceKeys(spreadsheet, sheet, source, grids, at) : undefined;
          found.push({
            sheet,
            sheetId: id,
            row: r + 1,
            column: c + 1,
            formula,
            ...read,
            ...versionOf(formula),
          });
        }),
      );
  }
  lookAtSlots(found);
  return found;
}

/** The distinct domain keys of formula cells (with `unshown`, only those some formula does not show yet). */
export function formulaKeys(cells: readonly FormulaCell[], unshown = false): string[] {
  const keysOf = (c: FormulaCell) => {
    const shown = unshown && c.shown ? new Set(c.shown) : undefined;
    return shown ? (c.keys ?? []).filter((k) => !shown.has(k)) : (c.keys ?? []);
  };
  return [...new Set(cells.flatMap(keysOf))];
}

/** Whether the formula's result shows metrics for every domain of its range (read from the sheet). */
/** Whether the formula's range is known to hold no domain (blank cells, or no text a domain can be read from). */
function blankOnly(c: VersionedCell): boolean {
  return c.keys !== undefined && c.keys.length === 0;
}

function showsAll(c: FormulaCell): boolean {
  if (!c.keys || c.keys.length === 0 || !c.shown) return false;
  const shown = new Set(c.shown);
  return c.keys.every((k) => shown.has(k));
}

/**
 * The formulas that need a check (those not up to date; with `since`, a refresh, all of them) and their domains that
 * are not kept (checked since then).
 */
export function formulaWork(
  spreadsheet: Spreadsheet,
  baseUrl: string,
  since?: number,
): { cells: FormulaCell[]; pending: string[]; unkept: Unkept } {
  const all = dapaFormulaCells(spreadsheet);
  // A formula that shows metrics for each of its domains needs nothing, whatever its slot says (a slot shared with
  // formulas still filling stays marked partial, and refreshing its shown formulas each step would recalculate them
  // all again and again); a refresh (`since`) takes them all. The slots are read once, when a formula reads its own.
  // A formula of blank cells only (dragged past the list) has nothing to check or show: it is never refreshed or given
  // a slot (each would recalculate it for nothing); once a domain is typed beside it, Sheets recalculates it anyway.
  const slots = since === undefined && all.some(reads) ? readVersionSlots(spreadsheet) : undefined;
  const needed = (c: FormulaCell) => !upToDateIn(c, slots) && !showsAll(c);
  const cells = (since !== undefined ? all : all.filter(needed)).filter((c) => !blankOnly(c));
  const keys = formulaKeys(cells);
  const kept = readStoredRecords(baseUrl, keys, since);
  return { cells, pending: keys.filter((k) => !kept.has(k)), unkept: shownUnkept(spreadsheet, all, baseUrl) };
}

/** What the formulas show and the store lacks: those dated (kept as of when they were fetched), the rest not. */
export interface Unkept {
  dated: Array<{ key: string; record: DomainRecord; at: number }>;
  undated: string[];
  /** The relay cell as read (only a step with no document cache reads it: the shown relay section). */
  relay?: Relay;
}

/**
 * What the formulas show that the result store does not keep (an editor's cells cached their results where the
 * owner's background cannot read them; a round's records were only cached): on the grid already, so kept for free,
 * and the background never pays for them again. Only what can be dated: a record the caches hold (6 hours at most)
 * carries when it was fetched, and with no document cache here the relay cell answers for the document's cache; a
 * result shown for longer is as old as it is, and keeping it as new would stretch the retention the privacy policy
 * states.
 */
function shownUnkept(spreadsheet: Spreadsheet, cells: readonly FormulaCell[], baseUrl: string): Unkept {
  const showing = new Map<string, DomainRecord>();
  for (const c of cells) for (const { key, record } of c.showing ?? []) showing.set(key, record);
  const relay = documentCacheHere() ? undefined : readRelayed(spreadsheet, baseUrl);
  if (showing.size === 0) return { dated: [], undated: [], relay };
  const kept = readStoredRecords(baseUrl, [...showing.keys()]);
  const missing = [...showing.keys()].filter((k) => !kept.has(k));
  const times = new Map<string, number>();
  const dated: Unkept['dated'] = [];
  for (const [key, record] of readCachedRecords(baseUrl, missing, times))
    dated.push({ key, record, at: times.get(key) as number });
  const found = new Set(dated.map((d) => d.key));
  for (const key of missing) {
    const relayed = found.has(key) ? undefined : relay?.answered.get(key);
    if (!relayed) continue;
    const { fetchedAt, ...record } = relayed;
    dated.push({ key, record, at: fetchedAt });
    found.add(key);
  }
  return { dated, undated: missing.filter((k) => !found.has(k)), relay };
}

/**
 * Keeps what the formulas show and the store does not, each as of the hour it was fetched (never later), nothing past
 * the retention; with no document cache, asks the relay cell about the rest (true: it asked, and the next step reads
 * the answer). A refusal for the day goes on up; anything else is logged.
 */
export function keepShown(spreadsheet: Spreadsheet, baseUrl: string, unkept: Unkept): boolean {
  try {
    const byHour = new Map<number, Array<{ key: string; record: DomainRecord }>>();
    const since = now() - retentionDays() * DAY_MS;
    for (const { key, record, at } of unkept.dated) {
      const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
      if (hour <= since) continue;
      const group = byHour.get(hour);
      if (group) group.push({ key, record });
      else byHour.set(hour, [{ key, record }]);
    }
    for (const [hour, records] of byHour) storeRecords(baseUrl, records, hour);
    return unkept.relay ? askRelay(spreadsheet, baseUrl, unkept.undated, unkept.relay) : false;
  } catch (error) {
    if (dailyLimitOf(error)) throw error;
    console.warn(`DAPA: shown results not kept (${error instanceof Error ? error.message : String(error)})`);
    return false;
  }
}

// ─── formula text ──────────────────────────────────────────────────────────────────────────────────────────────────
// The text of a =DAPA(...) formula, read and written without a service call: which range it checks, how wide its
// result is, and its 4th argument (the version cell the background adds), replaced or added with the user's own
// arguments kept exactly as written.
export interface RangeRef {
  sheetName?: string;
  firstRow: number;
  firstColumn: number;
  /** undefined for an open-ended reference such as A2:A or A:A (to the sheet's last row). */
  lastRow?: number;
  lastColumn: number;
}

export interface DapaCall {
  source?: RangeRef;
  header: boolean;
  /** How many columns the result has (4 by default), when it can be told from the formula. */
  width: number;
  /** The metrics argument is left out: the result shows DA, PA, MR and Spam Score in that order. */
  defaultMetrics: boolean;
}

const DAPA_CALL = /(^|[^A-Za-z0-9_.])DAPA\s*\(/i;

/** Where each top-level argument of a function's argument text starts and ends (commas, or semicolons in some locales). */
function argumentSpans(text: string): Array<[start: number, end: number]> {
  const spans: Array<[number, number]> = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(' || ch === '{') depth += 1;
    else if (ch === ')' || ch === '}') depth -= 1;
    else if ((ch === ',' || ch === ';') && depth === 0) {
      spans.push([start, i]);
      start = i + 1;
    }
  }
  spans.push([start, text.length]);
  return spans;
}

/** Splits a function's argument text at top-level separators, each argument trimmed. */
export function splitArguments(text: string): string[] {
  return argumentSpans(text).map(([start, end]) => text.slice(start, end).trim());
}

/** Where the argument text of the first DAPA( call starts and ends, or undefined when there is none or it is unclosed. */
function dapaSpan(formula: string): [start: number, end: number] | undefined {
  const match = DAPA_CALL.exec(formula);
  if (!match) return undefined;
  let depth = 1;
  let quote = '';
  const start = match.index + match[0].length;
  for (let i = start; i < formula.length; i++) {
    const ch = formula[i];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(') depth += 1;
    else if (ch === ')' && --depth === 0) return [start, i];
  }
  return undefined;
}

/** The argument text of the first DAPA( call in a formula, or undefined when there is none or it is unclosed. */
export function dapaArguments(formula: string): string | undefined {
  const span = dapaSpan(formula);
  return span && formula.slice(...span);
}

export function isDapaFormula(formula: string): boolean {
  return DAPA_CALL.test(formula);
}

/** A call of one of DAPA's own functions (DAPA, DAPA_SAMPLE, DAPA_CACHE), outside text in quotes and sheet names. */
const ANY_DAPA_CALL = /(^|[^A-Za-z0-9_.])DAPA(?:_SAMPLE|_CACHE)?\s*\(/i;

/**
 * Whether a formula calls one of DAPA's functions anywhere in it (=DAPA(A2), =INDEX(DAPA(A2),1,1),
 * =IFERROR(DAPA_SAMPLE(A2),"")), not counting "DAPA(" written inside a text in quotes or a quoted sheet name: what
 * "Remove DAPA" turns into values, as nothing else would work once DAPA is gone.
 */
export function callsDapa(formula: string): boolean {
  return ANY_DAPA_CALL.test(formula.replace(/"(?:[^"]|"")*"|'(?:[^']|'')*'/g, '""'));
}

/** Parses "A2:A21", "Sheet 1!B:B", "'My sheet'!A2:A" or "C5". */
export function parseRangeRef(text: string): RangeRef | undefined {
  const m =
    /^(?:(?:'((?:[^']|'')+)'|([A-Za-z0-9_.]+))!)?\$?([A-Za-z]{1,3})\$?(\d*)(?::\$?([A-Za-z]{1,3})\$?(\d*))?$/.exec(
      text.trim(),
    );
  if (!m) return undefined;
  const sheetName = m[1] !== undefined ? m[1].replace(/''/g, "'") : m[2];
  const firstColumn = columnNumber(m[3]);
  const lastColumn = columnNumber(m[5] ?? m[3]);
  if (firstColumn === undefined || lastColumn === undefined) return undefined;
  const firstRow = m[4] ? Number(m[4]) : 1;
  const lastRowText = m[5] === undefined ? m[4] : m[6];
  if (m[5] === undefined && !m[4]) return undefined; // a bare column letter is not a reference
  const lastRow = lastRowText ? Number(lastRowText) : undefined;
  return { sheetName, firstRow, firstColumn, lastRow, lastColumn };
}

/** What a DAPA formula checks, as far as the formula text tells. */
export function parseDapaCall(formula: string): DapaCall | undefined {
  const inside = dapaArguments(formula);
  if (inside === undefined) return undefined;
  const [urls = '', metrics = '', header = ''] = splitArguments(inside);
  const source = parseRangeRef(urls);
  let width = 4;
  const quoted = /^"(.*)"$/.exec(metrics);
  if (quoted) {
    const names = quoted[1].split(/[,;\s]+/).filter((n) => n !== '');
    if (names.length > 0) width = names.length;
  }
  return {
    source,
    header: /^(TRUE|1|"true"|"yes")$/i.test(header),
    width,
    defaultMetrics: metrics.trim() === '',
  };
}

/** The 4th argument of the DAPA call (trimmed), where the background keeps its version cell; undefined if none. */
export function fourthArgument(formula: string): string | undefined {
  const inside = dapaArguments(formula);
  return inside === undefined ? undefined : splitArguments(inside)[3];
}

/**
 * The formula with `ref` as the DAPA call's 4th argument: put in place of the one it has, or added after its own
 * arguments (empty ones filled in with commas); everything else is kept exactly as written.
 */
export function withFourthArgument(formula: string, ref: string): string {
  const span = dapaSpan(formula);
  if (!span) return formula;
  const inside = formula.slice(...span);
  const spans = argumentSpans(inside);
  const at = (i: number) => span[0] + i;
  if (spans.length >= 4) {
    const [start, end] = spans[3];
    return formula.slice(0, at(start)) + ref + formula.slice(at(end));
  }
  return formula.slice(0, span[1]) + ','.repeat(4 - spans.length) + ref + formula.slice(span[1]);
}

// ─── formula versions ──────────────────────────────────────────────────────────────────────────────────────────────
// Version slots: how the background makes Sheets recalculate =DAPA formulas once their domains are kept, with a fixed
// number of cells whatever the number of formulas. A formula takes a version cell as its 4th argument (DAPA ignores
// it); changing that cell changes the formula's arguments, so Sheets recalculates it whether or not it keeps the
// result of an identical formula. The cells are the VERSION_SLOTS rows of the hidden sheet `_dapa_versions`
// (store-sheet.ts), never one a formula: a formula's slot follows from where it is (its sheet, and its block of
// BLOCK_ROWS rows), so the formulas of a block share one (bumping it recalculates about 50 cells, most of which just
// filled) and two writers that give a formula its slot write the same formula text (no lock needed).
//
// A slot holds "v<signature of the domains of every formula whose slot it is>.<time and random part>": its formulas
// are up to date while it holds their current signature; "p.<…>" recalculates them without saying so. Every writer
// writes a value nobody else writes, so a bump lost to another writer's costs one more refresh later, not a result.
// A formula whose 4th argument is not its own slot (copied from elsewhere with its argument, or written by an earlier
// version: `'_dapa_results'!$F$1`, one column a formula) is not up to date; refreshing it rewrites its argument to its
// own slot. A refresh answers whether no formula refers to the legacy columns any more: the upkeep step then gives
// them back (results.ts). A refresh never compacts the store itself.

/** The formulas of this many neighbouring rows of a sheet share a version slot. */
export const BLOCK_ROWS = 50;

/** What the version slots need to know of a formula cell (the scan's FormulaCell has it). */
export interface VersionedCell {
  sheet: Sheet;
  /** Sheet.getSheetId(): stable across renames and moves. */
  sheetId: number;
  row: number;
  column: number;
  formula: string;
  /** The domain keys its source range holds; undefined when the range cannot be told from the formula. */
  keys?: string[];
  /** The slot its 4th argument reads (from 0), when it reads one. */
  slot?: number;
  /** The store's column its 4th argument reads, when an earlier version gave it one. */
  legacyColumn?: number;
}

const SLOT_REF = new RegExp(`^'?${VERSIONS_SHEET}'?!\\$?A\\$?(\\d+)$`, 'i');
const LEGACY_REF = new RegExp(`^'?${STORE_SHEET}'?!\\$?([A-Z]{1,3})\\$?1$`, 'i');

/** Which slot (or legacy column) a formula's 4th argument reads. */
export function versionOf(formula: string): { slot?: number; legacyColumn?: number } {
  const ref = fourthArgument(formula) ?? '';
  const slot = Number(SLOT_REF.exec(ref)?.[1] ?? 0) - 1;
  if (slot >= 0 && slot < VERSION_SLOTS) return { slot };
  const legacy = LEGACY_REF.exec(ref);
  return legacy ? { legacyColumn: columnNumber(legacy[1]) } : {};
}

/** A 32-bit FNV-1a hash in base 36 (no service call; what it tells apart is domains and sheets, not secrets). */
function hash(text: string, seed = 0x811c9dc5): string {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36);
}

/** The slot a formula at this place takes: its sheet's first slot, then one a block of rows, around the K slots. */
export function homeSlot(cell: Pick<VersionedCell, 'sheetId' | 'row'>): number {
  const first = parseInt(hash(String(cell.sheetId)), 36) % VERSION_SLOTS;
  return (first + Math.floor((cell.row - 1) / BLOCK_ROWS)) % VERSION_SLOTS;
}

/** One look at the spreadsheet's formulas: who shares each slot, their signatures, the slots' values once read. */
interface Look {
  /** Whether it holds every formula of the spreadsheet (a scan), not just the cells a caller had. */
  whole: boolean;
  members: Map<number, VersionedCell[]>;
  signatures: Map<number, string>;
  values?: string[];
}

/** The look each formula cell was seen in (a memory tier of the store session). */
function looks(): WeakMap<VersionedCell, Look> {
  return formulaLooksTier() as WeakMap<VersionedCell, Look>;
}

/** Records every formula of one look at the spreadsheet (dapaFormulaCells): a slot's signature covers them all. */
export function lookAtSlots(cells: readonly VersionedCell[], whole = true): void {
  const look: Look = { whole, members: new Map(), signatures: new Map() };
  for (const cell of cells) {
    const home = homeSlot(cell);
    const list = look.members.get(home);
    if (list) list.push(cell);
    else look.members.set(home, [cell]);
    looks().set(cell, look);
  }
}

function lookOf(cell: VersionedCell): Look {
  let look = looks().get(cell);
  if (!look) {
    lookAtSlots([cell], false);
    look = looks().get(cell) as Look;
  }
  return look;
}

/** "v" + a hash of the domains of every formula whose slot this is: what the slot holds once they all show them. */
function signature(look: Look, slot: number): string {
  let found = look.signatures.get(slot);
  if (found === undefined) {
    const keys = new Set((look.members.get(slot) ?? []).flatMap((c) => c.keys ?? []));
    const text = [...keys].sort().join('\n');
    found = 'v' + hash(text) + hash(text, 0x2f1e5a3b);
    look.signatures.set(slot, found);
  }
  return found;
}

/** Whether the formula has shown its current domains since they were all in (its slot, read once a look). */
export function upToDate(spreadsheet: Spreadsheet, cell: VersionedCell): boolean {
  return reads(cell) && upToDateIn(cell, (lookOf(cell).values ??= readVersionSlots(spreadsheet)));
}

/** Whether the formula's 4th argument is its own slot: only then can the slot say it is up to date. */
export function reads(cell: VersionedCell): boolean {
  return cell.keys !== undefined && cell.slot === homeSlot(cell);
}

/** Whether the formula is up to date, the version slots holding `values` (readVersionSlots; no service call). */
export function upToDateIn(cell: VersionedCell, values: readonly string[] | undefined): boolean {
  if (!values || !reads(cell)) return false;
  const home = homeSlot(cell);
  const look = lookOf(cell);
  look.values ??= [...values];
  // A slot marked partial ("p.") is never up to date: no signature (a sort and hash of every domain of the slot's
  // formulas, a quarter of a second for one 50,000-row range) is made to compare with it.
  const value = look.values[home];
  return !value.startsWith('p.') && value.startsWith(signature(look, home) + '.');
}

/**
 * Makes Sheets recalculate these formulas: the slot of each is bumped, and a formula whose 4th argument is not its own
 * slot is rewritten to it. With `complete` (their domains are kept, so the recalculation reads them from the store and
 * sends nothing) a slot is marked up to date when every formula of it is among these or was up to date; otherwise it
 * is bumped with "p" and its formulas check what they can themselves. No lock: see the header. Answers whether a look
 * at every formula found none reading the legacy version columns (the upkeep gives them back).
 */
export function refreshFormulas(
  spreadsheet: Spreadsheet,
  cells: readonly VersionedCell[],
  complete = true,
): boolean {
  return complete ? refreshSlots(spreadsheet, cells, []) : refreshSlots(spreadsheet, [], cells);
}

/**
 * Refreshes formulas whose domains are all kept (`complete`, as refreshFormulas with `complete`) and formulas that
 * show more than before (`partly`: their slots are bumped with "p") in one read and one write of the slots: a slot
 * of both kinds ends "p". Answers as refreshFormulas.
 */
export function refreshSlots(
  spreadsheet: Spreadsheet,
  complete: readonly VersionedCell[],
  partly: readonly VersionedCell[],
): boolean {
  const cells = [...complete, ...partly];
  if (cells.length === 0) return false;
  const given = new Set(complete);
  const current = readVersionSlots(spreadsheet);
  const values = new Map<number, string>();
  const bumped = () => `${now().toString(36)}${randomPart()}`;
  for (const cell of partly) values.set(homeSlot(cell), `p.${bumped()}`);
  for (const cell of complete) {
    const home = homeSlot(cell);
    if (values.has(home)) continue;
    const look = lookOf(cell);
    const sig = signature(look, home);
    const wasUpToDate = current[home].startsWith(sig + '.');
    const all = (look.members.get(home) ?? [cell])
      .filter((m) => m.keys && !blankOnly(m))
      .every((m) => given.has(m) || (wasUpToDate && m.slot === home));
    values.set(home, `${all ? sig : 'p'}.${bumped()}`);
  }
  writeVersionSlots(spreadsheet, values);
  for (const cell of cells) {
    const look = lookOf(cell);
    look.values = current.map((v, slot) => values.get(slot) ?? v);
  }
  rewriteFormulas(cells.filter((c) => c.slot !== homeSlot(c)));
  // The legacy columns go once a look at every formula finds none reading them.
  const scans = new Set(cells.map(lookOf));
  const whole = [...scans].every((look) => look.whole);
  const legacy = [...scans].some((look) =>
    [...look.members.values()].some((m) => m.some((c) => c.legacyColumn)),
  );
  return whole && !legacy;
}

/**
 * Gives formulas their own slot as 4th argument: each sheet's formulas are read again first (one call a sheet), and a
 * formula changed since the look is left alone; then written a column run at a time.
 */
function rewriteFormulas(cells: readonly VersionedCell[]): void {
  const bySheet = new Map<Sheet, VersionedCell[]>();
  for (const cell of cells) {
    const list = bySheet.get(cell.sheet);
    if (list) list.push(cell);
    else bySheet.set(cell.sheet, [cell]);
  }
  for (const [sheet, list] of bySheet) {
    const top = Math.min(...list.map((c) => c.row));
    const left = Math.min(...list.map((c) => c.column));
    const bottom = Math.max(...list.map((c) => c.row));
    const right = Math.max(...list.map((c) => c.column));
    const grid = sheet.getRange(top, left, bottom - top + 1, right - left + 1).getFormulas();
    const written: VersionedCell[] = [];
    for (const cell of list) {
      if (grid[cell.row - top][cell.column - left] !== cell.formula) continue;
      const home = homeSlot(cell);
      cell.formula = withFourthArgument(cell.formula, versionSlotRef(home));
      cell.slot = home;
      cell.legacyColumn = undefined;
      written.push(cell);
    }
    writeColumnRuns(sheet, written);
  }
}

/** Writes formulas of one sheet, one setFormulas per run of cells one below the other in a column. */
function writeColumnRuns(sheet: Sheet, written: readonly VersionedCell[]): void {
  const sorted = [...written].sort((a, b) => a.column - b.column || a.row - b.row);
  for (let i = 0; i < sorted.length;) {
    const first = sorted[i];
    let j = i + 1;
    while (j < sorted.length && sorted[j].column === first.column && sorted[j].row === first.row + (j - i))
      j++;
    sheet.getRange(first.row, first.column, j - i, 1).setFormulas(sorted.slice(i, j).map((c) => [c.formula]));
    i = j;
  }
}

// ─── shown relay ───────────────────────────────────────────────────────────────────────────────────────────────────
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
 * DAPA_CACHE(service, domains, asked at): what this spreadsheet's caches hold of these domains (separated by spaces),
 * each with when it was fetched, as one text. Nothing is sent and nothing is billed.
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
