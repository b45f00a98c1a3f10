// Looking at a spreadsheet's =DAPA(...) formulas: every formula cell with the domains its range holds and the version
// slot it reads (formula-versions.ts), read in a few calls whatever the number of formulas (one getFormulas and one
// getValues a sheet), and which of them need a check. Parsing a formula's text: formula-text.ts.
/// <reference types="google-apps-script" />
import { type DomainRecord, toEntry } from '../../../shared';
import { dailyLimitOf, now } from '../platform/gas';
import { documentCacheHere } from '../stores/caches';
import { DAY_MS, retentionDays } from '../stores/retention';
import { readCachedRecords } from '../stores/result-cache';
import { readStoredRecords, storeRecords } from '../stores/result-store';
import { isAddOnSheet, readVersionSlots } from '../stores/store-sheet';
import { isDapaFormula, parseDapaCall, type RangeRef } from './formula-text';
import { askRelay, readRelayed, type Relay } from './shown-relay';
import { lookAtSlots, reads, upToDateIn, type VersionedCell, versionOf } from './formula-versions';

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

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
  const slots = since === undefined && all.some(reads) ? readVersionSlots(spreadsheet) : undefined;
  const needed = (c: FormulaCell) => !upToDateIn(c, slots) && !showsAll(c);
  const cells = since !== undefined ? all : all.filter(needed);
  const keys = formulaKeys(cells);
  const kept = readStoredRecords(baseUrl, keys, since);
  return { cells, pending: keys.filter((k) => !kept.has(k)), unkept: shownUnkept(spreadsheet, all, baseUrl) };
}

/** What the formulas show and the store lacks: those dated (kept as of when they were fetched), the rest not. */
export interface Unkept {
  dated: Array<{ key: string; record: DomainRecord; at: number }>;
  undated: string[];
  /** The relay cell as read (only a step with no document cache reads it: shown-relay.ts). */
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
