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
// them back (store-compaction.ts). A refresh never compacts the store itself.
/// <reference types="google-apps-script" />
import { columnNumber } from '../platform/cells';
import type { Spreadsheet } from '../platform/gas';
import { now } from '../platform/gas';
import { formulaLooksTier } from '../stores/session';
import {
  randomPart,
  readVersionSlots,
  VERSION_SLOTS,
  versionSlotRef,
  writeVersionSlots,
} from '../stores/store-sheet';
import { STORE_SHEET, VERSIONS_SHEET } from '../stores/storage-keys';
import { fourthArgument, withFourthArgument } from './formula-text';

type Sheet = GoogleAppsScript.Spreadsheet.Sheet;

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
      .filter((m) => m.keys)
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
