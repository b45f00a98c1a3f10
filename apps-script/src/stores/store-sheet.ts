// The add-on's hidden sheets, owned here alone, and what is decided by their append log without a lock: claims, and
// the background step's lease (one claim). Each section below says its part.
// Over 300 lines: the log, the claims read from it and the lease taken through them share one walk of its rows.
/// <reference types="google-apps-script" />
import { STORE_SHEET, VERSIONS_SHEET } from './storage-keys';
import { now, sleep } from '../platform/gas';
import { currentSpreadsheet, idOf, type KnownSheets, sheetsTier } from './session';

// ─── store sheet ───────────────────────────────────────────────────────────────────────────────────────────────────
// The add-on's two hidden sheets, owned here alone: `_dapa_results`, an append-only log of 4 columns (results and
// claims; what its rows mean: results.ts, the claims section), and `_dapa_versions`, the formulas' version slots (one
// column of VERSION_SLOTS rows) and the relay cell below them (checks/formulas.ts). Creating them, reading the log
// in one call, appending to it, deleting its dead rows and its legacy columns, reading and writing the slots, and
// deleting them ("Remove DAPA").
//
// Why none of this needs a lock. A published add-on's dispatcher works in spreadsheets it opened by id, where it has
// no document lock (Google: getDocumentLock returns null "if the method is called from outside the context of a
// containing document"), and another user's execution may write the same sheet at that moment. So:
// - rows are added only with Sheet.appendRow, which Google documents as atomic ("This operation is atomic; it
//   prevents issues where a user asks for the last row, and then writes to that row, and an intervening mutation
//   occurs between getting the last row and writing to it"): two writers' rows both land, each below what was there;
// - no cell of the log is ever overwritten: a newer result or claim is a newer row, and readers decide by the rows;
// - rows are deleted only by the compaction (results.ts), which runs only as the holder of the step lease (so
//   two compactions never meet, with or without a document lock) and deletes only runs of rows it read as dead,
//   bottom-up: each deletion leaves the rows above it in place, and a row appended meanwhile lies below every row it
//   read, so it is never among them;
// - a sheet is made under a name of its own, sized and hidden there, then renamed: a name is unique, so one creator's
//   rename wins and the others use its sheet, and nobody appends to a sheet before it has its final size;
// - a version slot is one cell that each writer sets to a value nobody else writes (a time and a random part): a
//   write lost to another costs one more recalculation later, never a result; the relay cell below the slots is
//   written only by the holder of the step lease.
type Sheet = GoogleAppsScript.Spreadsheet.Sheet;
type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** The log's width: what a row is about | its kind (a service id, or "claim:" name) | its payload | a time. */
export const STORE_COLUMNS = 4;
/** How many version slots there are, whatever the number of formulas (formulas.ts). */
export const VERSION_SLOTS = 128;
const HEADER = ['domain', 'service', 'record', 'checked at (ms)'];
/** A sheet being made is named `<name>~<time in base 36>-<random>` until it is ready. */
const MAKING = '~';
/** A sheet left half-made (its execution was stopped) is deleted by the compaction after this long. */
const LEFT_HALF_MADE_MS = 3_600_000;

/** What this execution knows of a spreadsheet's hidden sheets: their handles, and the log's rows as last read. */
function knownOf(spreadsheet: Spreadsheet): KnownSheets {
  const known = sheetsTier();
  const id = idOf(spreadsheet);
  let k = known.get(id);
  if (!k) known.set(id, (k = {}));
  return k;
}

/** Whether a sheet is one of the add-on's own (formulas are never looked for there). */
export function isAddOnSheet(name: string): boolean {
  return [STORE_SHEET, VERSIONS_SHEET].some((own) => name === own || name.startsWith(own + MAKING));
}

/**
 * The sheet the user has in view. Google: insertSheet's "new sheet becomes the active sheet"; whether another
 * execution's insert (a step making a hidden sheet) moves this execution's view is not documented, so under the
 * reading where it does, a DAPA sheet in view is waited out (makeSheet gives the view back within its execution).
 */
export function sheetInView(
  spreadsheet: Spreadsheet,
  read: () => Sheet = () => spreadsheet.getActiveSheet(),
): Sheet {
  let sheet = read();
  for (let waited = 0; isAddOnSheet(sheet.getName()) && waited < VIEW_WAIT_MS; waited += VIEW_POLL_MS) {
    sleep(VIEW_POLL_MS);
    sheet = read();
  }
  return sheet;
}
const VIEW_WAIT_MS = 3_000;
const VIEW_POLL_MS = 100;

/**
 * Makes a hidden sheet of exactly rows × columns named `name` (header in row 1 if given), under a name of its own
 * until it is ready; when another execution made one meanwhile, its own is deleted and the other's is used.
 */
function makeSheet(
  spreadsheet: Spreadsheet,
  name: string,
  rows: number,
  columns: number,
  header?: unknown[],
): Sheet {
  const active = spreadsheet.getActiveSheet();
  const sheet = spreadsheet.insertSheet(`${name}${MAKING}${now().toString(36)}-${randomPart()}`);
  try {
    if (sheet.getMaxColumns() > columns) sheet.deleteColumns(columns + 1, sheet.getMaxColumns() - columns);
    if (sheet.getMaxRows() > rows) sheet.deleteRows(rows + 1, sheet.getMaxRows() - rows);
    if (header) sheet.getRange(1, 1, 1, header.length).setValues([header]);
    sheet.hideSheet();
    sheet.setName(name);
    return sheet;
  } catch (error) {
    const theirs = spreadsheet.getSheetByName(name);
    spreadsheet.deleteSheet(sheet);
    if (!theirs) throw error;
    return theirs;
  } finally {
    active?.activate();
  }
}

export function randomPart(): string {
  return Math.random().toString(36).slice(2, 8);
}

/** The result store's sheet; made (1 row: the header, 4 columns, hidden) when `make` and there is none. */
export function storeSheet(spreadsheet: Spreadsheet, make: boolean): Sheet | null {
  const k = knownOf(spreadsheet);
  k.store ??= spreadsheet.getSheetByName(STORE_SHEET) ?? undefined;
  if (!k.store && make) k.store = makeSheet(spreadsheet, STORE_SHEET, 1, STORE_COLUMNS, HEADER);
  return k.store ?? null;
}

/** The version slots' sheet; made (VERSION_SLOTS rows, 1 column, hidden) when `make` and there is none. */
export function versionsSheet(spreadsheet: Spreadsheet, make: boolean): Sheet | null {
  const k = knownOf(spreadsheet);
  k.versions ??= spreadsheet.getSheetByName(VERSIONS_SHEET) ?? undefined;
  if (!k.versions && make) k.versions = makeSheet(spreadsheet, VERSIONS_SHEET, VERSION_SLOTS, 1);
  return k.versions ?? null;
}

/** The log's rows from row 1 (index i is row i + 1), read now in one getValues; columns past the 4th are not read. */
export function readStore(spreadsheet: Spreadsheet): unknown[][] {
  const sheet = storeSheet(spreadsheet, false);
  const last = sheet ? sheet.getLastRow() : 0;
  const rows = sheet && last > 0 ? sheet.getRange(1, 1, last, STORE_COLUMNS).getValues() : [];
  knownOf(spreadsheet).rows = rows;
  return rows;
}

/** The log's rows as this execution last read them (read once if not yet), with its own appends after them. */
export function storeRows(spreadsheet: Spreadsheet): unknown[][] {
  return knownOf(spreadsheet).rows ?? readStore(spreadsheet);
}

/** Appends rows to the log, one atomic appendRow each (the store's sheet is made first when there is none). */
export function appendStore(spreadsheet: Spreadsheet, rows: ReadonlyArray<readonly unknown[]>): void {
  if (rows.length === 0) return;
  const sheet = storeSheet(spreadsheet, true) as Sheet;
  const memo = knownOf(spreadsheet).rows;
  for (const row of rows) {
    sheet.appendRow(row as unknown[]);
    memo?.push([...row]);
  }
}

/** The log as this execution knows it (storeRows) and how many columns past the 4th its sheet has: what upkeep weighs. */
export function weighLog(
  spreadsheet: Spreadsheet,
  columns: boolean,
): { rows: unknown[][]; extraColumns: number } {
  const rows = storeRows(spreadsheet);
  const sheet = columns ? storeSheet(spreadsheet, false) : null;
  return { rows, extraColumns: sheet ? Math.max(0, sheet.getMaxColumns() - STORE_COLUMNS) : 0 };
}

/** What one compaction deletes: rows of the log (numbers from 1), and whether the legacy columns go too. */
export interface LogCuts {
  rows: Iterable<number>;
  legacyColumns: boolean;
  /** Rows are deleted until then (the rest waits for the next compaction). */
  until: number;
}

/**
 * The compaction's one write (results.ts decides what; `read` must be a read of this same compaction by the
 * holder of the step lease): the dead rows, runs of neighbours at a time, bottom-up, until `until` (the execution's
 * rows become `read` without them); the columns past the 4th when asked (earlier versions' per-formula version
 * cells); the hidden sheets left half-made by an execution that was stopped over an hour ago. Answers how many rows
 * and columns went.
 */
export function compactLog(
  spreadsheet: Spreadsheet,
  read: unknown[][],
  cuts: LogCuts,
): { rows: number; columns: number } {
  const sheet = storeSheet(spreadsheet, false);
  const dead = [...new Set(cuts.rows)].filter((r) => r > 1 && r <= read.length).sort((a, b) => b - a);
  const gone = new Set<number>();
  for (let i = 0; sheet && i < dead.length && now() < cuts.until;) {
    let j = i + 1;
    while (j < dead.length && dead[j] === dead[j - 1] - 1) j++;
    sheet.deleteRows(dead[j - 1], j - i);
    for (let k = i; k < j; k++) gone.add(dead[k]);
    i = j;
  }
  if (gone.size > 0) knownOf(spreadsheet).rows = read.filter((_, i) => !gone.has(i + 1));
  const columns = sheet && cuts.legacyColumns ? Math.max(0, sheet.getMaxColumns() - STORE_COLUMNS) : 0;
  if (sheet && columns > 0) sheet.deleteColumns(STORE_COLUMNS + 1, columns);
  for (const half of spreadsheet.getSheets()) {
    const made = /~([0-9a-z]+)-[0-9a-z]*$/.exec(half.getName());
    if (made && isAddOnSheet(half.getName()) && parseInt(made[1], 36) < now() - LEFT_HALF_MADE_MS)
      spreadsheet.deleteSheet(half);
  }
  return { rows: gone.size, columns };
}

/**
 * "Remove DAPA from this spreadsheet": deletes the hidden sheets (half-made ones too) but the last sheet, as a
 * spreadsheet keeps one; answers how many went.
 */
export function deleteHiddenSheets(spreadsheet: Spreadsheet): number {
  let count = 0;
  for (const sheet of spreadsheet.getSheets()) {
    if (!isAddOnSheet(sheet.getName())) continue;
    if (spreadsheet.getSheets().length <= 1) break;
    spreadsheet.deleteSheet(sheet);
    count += 1;
  }
  return count;
}

/** The version slots' values ('' where none was written yet), read in one getValues. */
export function readVersionSlots(spreadsheet: Spreadsheet): string[] {
  const values = new Array<string>(VERSION_SLOTS).fill('');
  const sheet = versionsSheet(spreadsheet, false);
  const rows = sheet ? Math.min(VERSION_SLOTS, sheet.getMaxRows()) : 0;
  if (sheet && rows > 0)
    sheet
      .getRange(1, 1, rows, 1)
      .getValues()
      .forEach((row, i) => (values[i] = String(row[0] ?? '')));
  return values;
}

/** Writes version slots (slot index from 0 → value), one setValues per run of neighbouring slots. */
export function writeVersionSlots(spreadsheet: Spreadsheet, values: ReadonlyMap<number, string>): void {
  const slots = [...values.keys()].filter((s) => s >= 0 && s < VERSION_SLOTS).sort((a, b) => a - b);
  if (slots.length === 0) return;
  const sheet = versionsSheet(spreadsheet, true) as Sheet;
  for (let i = 0; i < slots.length;) {
    let j = i + 1;
    while (j < slots.length && slots[j] === slots[j - 1] + 1) j++;
    sheet.getRange(slots[i] + 1, 1, j - i, 1).setValues(slots.slice(i, j).map((s) => [values.get(s)]));
    i = j;
  }
}

/** The row below the slots that holds the relay cell: a DAPA_CACHE formula (formulas.ts) a step writes and reads. */
const RELAY_ROW = VERSION_SLOTS + 1;

/** The relay cell's formula and the value it shows ('' and '' where there is none). */
export function readRelay(spreadsheet: Spreadsheet): { formula: string; value: string } {
  const sheet = versionsSheet(spreadsheet, false);
  if (!sheet || sheet.getMaxRows() < RELAY_ROW) return { formula: '', value: '' };
  const cell = sheet.getRange(RELAY_ROW, 1);
  return { formula: cell.getFormula(), value: String(cell.getValue() ?? '') };
}

/** Writes the relay cell's formula ('' clears it), the first time adding its one row below the slots. */
export function writeRelay(spreadsheet: Spreadsheet, formula: string): void {
  const sheet = versionsSheet(spreadsheet, formula !== '');
  if (!sheet) return;
  const rows = sheet.getMaxRows();
  if (rows < RELAY_ROW && !formula) return;
  if (rows < RELAY_ROW) sheet.insertRowsAfter(rows, RELAY_ROW - rows);
  const cell = sheet.getRange(RELAY_ROW, 1);
  if (formula) cell.setFormula(formula);
  else cell.clearContent();
}

/** The absolute reference a formula takes as its 4th argument to read slot `slot` (from 0). */
export function versionSlotRef(slot: number): string {
  return `'${VERSIONS_SHEET}'!$A$${slot + 1}`;
}

// ─── claims ────────────────────────────────────────────────────────────────────────────────────────────────────────
// Claims without a lock: "holder H has <name> until U", decided by the store's append log alone, so executions with
// and without the document lock (the published add-on's dispatcher has none) agree on who holds what. A claim is a
// row (claimed-at ms | "claim:" name | holder | until ms) appended with the atomic Sheet.appendRow; the claimant then
// reads the log back. Walking a name's claims in row order, a claim wins when no current holder's until is later than
// the claim's own time, or when it is the current holder's renewal; a release is the holder's claim until now. Every
// reader walks the same rows in the same order (appendRow is atomic and rows are never reordered; the compaction only
// deletes a name's first claims once they all ended an hour ago and every later claim was made after that), so every
// reader finds the same winner.
export const CLAIM_PREFIX = 'claim:';
/** A name's first claims are deleted once they ended this long ago (longer than any lease is held). */
export const CLAIM_GRACE_MS = 3_600_000;

export interface Claim {
  at: number;
  holder: string;
  until: number;
}

/** The claim a row of the log holds, with its name; undefined for any other row. */
export function claimRow(row: readonly unknown[]): (Claim & { name: string }) | undefined {
  const [at, kind, holder, until] = row;
  if (typeof kind !== 'string' || !kind.startsWith(CLAIM_PREFIX)) return undefined;
  const [a, u] = [Number(at), Number(until)];
  if (!Number.isFinite(a) || !Number.isFinite(u) || at === '' || until === '') return undefined;
  return { name: kind.slice(CLAIM_PREFIX.length), at: a, holder: String(holder), until: u };
}

/** Which of these claims of one name (in row order) won, and who holds the name after the last. */
export function walkClaims(claims: readonly Claim[]): { won: boolean[]; holder?: Claim } {
  let holder: Claim | undefined;
  const won = claims.map((claim) => {
    const wins = !holder || holder.until <= claim.at || holder.holder === claim.holder;
    if (wins) holder = claim;
    return wins;
  });
  return { won, holder };
}

function claimsNamed(rows: readonly unknown[][], name: string): Claim[] {
  return rows.flatMap((row) => {
    const claim = claimRow(row);
    return claim && claim.name === name ? [claim] : [];
  });
}

/** A new holder id (a letter first: Sheets never reads it as a number, a date or a formula). */
export function newHolder(): string {
  return `h${now().toString(36)}-${randomPart()}`;
}

/**
 * Claims `name` for `holder` (a new one by default) until `until`: appends the claim, reads the log back and answers
 * the holder when this claim won, else undefined. The current spreadsheet's log.
 */
export function claim(name: string, until: number, holder = newHolder()): string | undefined {
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) throw new Error('There is no spreadsheet here to claim anything in.');
  const at = now();
  appendStore(spreadsheet, [[at, CLAIM_PREFIX + name, holder, until]]);
  const claims = claimsNamed(readStore(spreadsheet), name);
  const { won } = walkClaims(claims);
  for (let i = claims.length; i-- > 0;) {
    const c = claims[i];
    if (c.holder === holder && c.at === at && c.until === until) return won[i] ? holder : undefined;
  }
  return undefined;
}

/** Gives `name` back: the holder's claim until now (a claim by anyone else than the holder changes nothing). */
export function releaseClaim(name: string, holder: string): void {
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) return;
  const at = now();
  appendStore(spreadsheet, [[at, CLAIM_PREFIX + name, holder, at]]);
}

/**
 * The claim rows (indexes) the compaction may delete: for each name, the longest run of its first claims that all
 * ended before `at − CLAIM_GRACE_MS` such that every later claim of the name was made after that time. Walking the
 * claims left then gives every one of them the outcome it had (whoever held the name then had ended by the time the
 * first claim left was made), so readers agree before and after.
 */
export function deadClaimRows(rows: readonly unknown[][], at: number): number[] {
  const cutoff = at - CLAIM_GRACE_MS;
  const byName = new Map<string, Array<Claim & { index: number }>>();
  rows.forEach((row, index) => {
    const claim = claimRow(row);
    if (!claim) return;
    let list = byName.get(claim.name);
    if (!list) byName.set(claim.name, (list = []));
    list.push({ ...claim, index });
  });
  const dead: number[] = [];
  for (const list of byName.values()) {
    // laterMade[k]: the earliest claim time among claims k.. (Infinity when none).
    const laterMade = new Array<number>(list.length + 1).fill(Infinity);
    for (let k = list.length; k-- > 0;) laterMade[k] = Math.min(laterMade[k + 1], list[k].at);
    let ended = -Infinity;
    let cut = 0;
    for (let k = 1; k <= list.length; k++) {
      ended = Math.max(ended, list[k - 1].until);
      if (ended > cutoff) break;
      if (laterMade[k] >= cutoff) cut = k;
    }
    for (let k = 0; k < cut; k++) dead.push(list[k].index);
  }
  return dead;
}

// ─── step lease ────────────────────────────────────────────────────────────────────────────────────────────────────
// Which execution is running a background step in a spreadsheet, until when: a claim on the spreadsheet's store log
// (the claims section), taken and given back without a lock, so two users' steps (or the dispatcher, which has no
// document lock, and an open sidebar, which has one) never work one spreadsheet at once. An execution Google ended
// leaves a lease that runs out by itself.
/** The claim's name in the store's log. */
export const STEP_CLAIM = 'step';

/** Takes the current spreadsheet's step lease until `until`; answers its holder id, or undefined when it is held. */
export function takeStepLease(until: number): string | undefined {
  return claim(STEP_CLAIM, until);
}

/** Gives the lease back (only when it is still this holder's: anyone else's release changes nothing). */
export function returnStepLease(holder: string): void {
  releaseClaim(STEP_CLAIM, holder);
}
