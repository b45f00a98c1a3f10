// The user's background state, in one module: each spreadsheet's marks and its "wanted at" table, the dispatcher's
// state, the scheduled refreshes, and the sidebar's job. Each section below says its part.
// Over 300 lines: every background mark of the user is here, with the job and refreshes the marks schedule.
/// <reference types="google-apps-script" />
import { columnLetter, type DailyLimit, now } from '../platform/gas';
import {
  documentCacheHere,
  dropEntries,
  digitsOf,
  finite,
  isRecord,
  keepEntries,
  keepEntry,
  locked,
  placesIn,
  readEntries,
  readEntry,
  readValue,
  userKeys,
  writeValue,
} from './storage';
import { currentSpreadsheet, idOrUndefined, installMode } from './session';
import { DOCUMENT_PROPERTY, USER_PROPERTY } from './storage-keys';
import type { JobState, ScheduleChange, ScheduleEvery } from '../../sidebar/contract';
import { claim } from './store-sheet';

// ─── background store ──────────────────────────────────────────────────────────────────────────────────────────────
// Background checks' stored state and their status. Per spreadsheet (user property dapa.bg.<id>): on/off, when its
// next step is wanted, why it stopped; these keys are also the list of spreadsheets the dispatcher opens by id. Per
// user (dapa.dispatcher): the ONE time-driven trigger that serves all of them and what it learned (lateness, runtime
// today). Where a spreadsheet's background checks stand is one value, backgroundStatus(), read by every site. Every
// change happens under the shared lock.
// Over 300 lines: every background mark of the user is here (properties, and the two notes in the user's cache a
// trigger reads in one call: Google's daily refusal, the dispatcher at work), so the dispatcher reads one module.
/** Notes about dropped spreadsheets are kept this long (the sidebar shows them). */
const NOTE_DAYS_MS = 30 * 86_400_000;

/** What earlier steps learned about how late their triggers fired (ms), kept in the user's trigger state. */
export interface Lateness {
  /** A moving average of the lateness. */
  typicalMs?: number;
  /** The least lateness lately (rises slowly): the part every step has. */
  lowMs?: number;
  /** The most lateness lately (falls slowly): a step scheduled this early is never late. */
  highMs?: number;
}

/** Background checks in one spreadsheet, for one user. */
export interface BackgroundState {
  on: boolean;
  /** When this spreadsheet's next step is wanted, and why (empty: nothing until an edit, a check or a schedule). */
  wanted: Wanted;
  /** The spreadsheet's name when last seen (for the note if it is dropped). */
  name?: string;
  /** Why background work stopped and will not go on by itself (a blocked network, a wrong key, ...). */
  stopped?: string;
  /** Steps run, their runtime (ms) and when the last one ran. */
  steps: number;
  runtimeMs: number;
  lastStepAt?: number;
  /** Credits the background's checks were billed in this spreadsheet. */
  billed?: number;
  /** Formula results checked before this time are checked again (Check again, a scheduled refresh). */
  refreshSince?: number;
  /** Server failures in a row; the background gives up after a few. */
  failures?: number;
  /** When a step's checks were last answered without a failure (a step soon after sends its window in one check). */
  answeredAt?: number;
}

/**
 * The one answer to "when next" for a spreadsheet: the earliest entry of its wanted table, and why. The user's
 * trigger, the dispatcher's list and the open sidebar's next call all ask it. The store's upkeep entry counts where a
 * published add-on's dispatcher serves it (`withUpkeep`); a bound script's hourly watch does that upkeep itself.
 */
export function whenNext(
  wanted: Wanted,
  withUpkeep = installMode() === 'addon',
): { at: number; cause: WantCause } | undefined {
  return earliest(withUpkeep ? wanted : { ...wanted, upkeep: undefined, kept: undefined });
}

/** Makes a step wanted for `cause` by `at` at the latest (an earlier entry of that cause stays). */
export function wantBy(state: BackgroundState, cause: WantCause, at: number): void {
  const entry = state.wanted[cause];
  if (entry === undefined || entry > at) state.wanted[cause] = at;
}

/** A spreadsheet the dispatcher could not open, and why: shown to the user, then forgotten. */
export interface DroppedNote {
  id: string;
  name?: string;
  why: string;
  at: number;
}

/** The user's one background trigger and what it learned. */
export interface DispatcherState {
  /** The pending trigger, when it is due, and since when it is the add-on's hourly one (a one-off was refused). */
  triggerId?: string;
  dueAt?: number;
  hourlySince?: number;
  /**
   * For the sleep budget: the day, its trigger runtime, what of it was sleep, what a window's executions lately
   * worked (an average: its step and any trigger that found the step running), and what such triggers worked since
   * the last step.
   */
  day?: number;
  dayRuntimeMs?: number;
  daySleptMs?: number;
  stepWorkMs?: number;
  besideStepMs?: number;
  /** How late steps got to work after their due time. */
  lateness?: Lateness;
  /** The pending trigger was set for the plan's window to free. */
  forWindow?: boolean;
  dropped?: DroppedNote[];
}

/** The day an instant falls on (ms / 86,400,000): what DispatcherState.day counts. */
export const dayOf = (at: number): number => Math.floor(at / 86_400_000);

// ---- stored state -------------------------------------------------------------------------------------

function propertyName(spreadsheetId: string): string {
  return USER_PROPERTY.backgroundPrefix + spreadsheetId;
}

/** A stored state; one of an earlier version (a single wantAt, forWindow) reads as its wanted table. */
function parseBackground(raw: unknown): BackgroundState | undefined {
  if (!isRecord(raw) || typeof raw.on !== 'boolean') return undefined;
  const { wantAt, forWindow, ...rest } = raw as Record<string, unknown>;
  const state = rest as unknown as BackgroundState;
  if (!isRecord(state.wanted)) state.wanted = {};
  if (typeof wantAt === 'number' && earliest(state.wanted) === undefined)
    state.wanted[forWindow === true ? 'window' : 'work'] = wantAt;
  return state;
}

const parseDispatcher = (raw: unknown): DispatcherState | undefined =>
  isRecord(raw) ? (raw as DispatcherState) : undefined;

export function loadBackground(spreadsheetId: string): BackgroundState {
  return (
    readValue('user', propertyName(spreadsheetId), parseBackground) ?? {
      on: false,
      steps: 0,
      runtimeMs: 0,
      wanted: {},
    }
  );
}

/** Runs `change` on the stored state under the shared lock (read again there) and stores the result. */
export function updateBackground(
  spreadsheetId: string,
  change: (state: BackgroundState) => void,
): BackgroundState {
  return locked('user', () => {
    const state = loadBackground(spreadsheetId);
    const was = goesOnAlone(state);
    change(state);
    writeValue('user', propertyName(spreadsheetId), state);
    if (goesOnAlone(state) !== was) dropCellsCopy();
    return state;
  });
}

/** Forgets a spreadsheet's background state (it was deleted, or its access lost), under the user lock. */
export function forgetBackground(spreadsheetId: string): void {
  locked('user', () => writeValue('user', propertyName(spreadsheetId), undefined));
  dropCellsCopy();
}

/** Every spreadsheet this user has background state for: the dispatcher's list. */
export function listBackgrounds(): Array<{ id: string; state: BackgroundState }> {
  const prefix = USER_PROPERTY.backgroundPrefix;
  return userKeys()
    .filter((key) => key.startsWith(prefix) && !key.includes('#'))
    .map((key) => ({ id: key.slice(prefix.length), state: loadBackground(key.slice(prefix.length)) }));
}

/**
 * Every spreadsheet whose result store wants its upkeep (the oldest result kept passes the retention), whatever its
 * background checks' status: off, stopped or going on. The user's trigger comes for these too, so the retention holds
 * on every path that kept results, with nobody opening the spreadsheet.
 */
export function listUpkeep(
  all = listBackgrounds(),
): Array<{ id: string; state: BackgroundState; at: number }> {
  return all.flatMap(({ id, state }) =>
    state.wanted.upkeep !== undefined && Number.isFinite(state.wanted.upkeep)
      ? [{ id, state, at: state.wanted.upkeep }]
      : [],
  );
}

/**
 * Sets when a spreadsheet's store wants its upkeep (undefined: nothing kept), under the user lock; a spreadsheet with
 * background checks off and nothing else wanted is forgotten once its store keeps nothing. Answers whether it changed.
 */
export function setUpkeepDue(spreadsheetId: string, at: number | undefined, name?: () => string): boolean {
  const seen = loadBackground(spreadsheetId);
  if (seen.wanted.upkeep === at) return false;
  locked('user', () => {
    const state = loadBackground(spreadsheetId);
    state.wanted.upkeep = at;
    if (at === undefined) delete state.wanted.upkeep;
    if (name) state.name ??= name();
    const idle = !state.on && earliest(state.wanted) === undefined;
    writeValue('user', propertyName(spreadsheetId), idle ? undefined : state);
  });
  return true;
}

export function loadDispatcher(): DispatcherState {
  return readValue('user', USER_PROPERTY.dispatcher, parseDispatcher) ?? {};
}

export function updateDispatcher(change: (state: DispatcherState) => void): DispatcherState {
  return locked('user', () => {
    const state = loadDispatcher();
    change(state);
    writeValue('user', USER_PROPERTY.dispatcher, state);
    return state;
  });
}

/** Notes a spreadsheet dropped from the list (kept 30 days, newest first, at most 10). */
export function noteDropped(note: DroppedNote): void {
  updateDispatcher((d) => {
    d.dropped = [
      note,
      ...(d.dropped ?? []).filter((n) => n.id !== note.id && n.at > now() - NOTE_DAYS_MS),
    ].slice(0, 10);
  });
}

// ---- status -----------------------------------------------------------------------------------------------

/** How the user's one trigger comes: a one-off trigger at any minute, or only the add-on's hourly dispatcher. */
export type TriggerCadence = 'minute' | 'hourly';

/**
 * Where a spreadsheet's background checks stand: off (never turned on, or turned off), stopped (on, but halted for a
 * reason the user must fix), or going on by themselves at the user's trigger's cadence.
 */
export type BackgroundStatus = 'off' | 'stopped' | TriggerCadence;

export function triggerCadence(dispatcher: DispatcherState): TriggerCadence {
  return dispatcher.hourlySince === undefined ? 'minute' : 'hourly';
}

/** The one place that tells a spreadsheet's status from its state and the user's trigger. */
export function backgroundStatus(state: BackgroundState, dispatcher: DispatcherState): BackgroundStatus {
  if (!state.on) return 'off';
  if (state.stopped) return 'stopped';
  return triggerCadence(dispatcher);
}

/** Whether background checks go on by themselves in that status (not off, not stopped). */
export function goesOn(status: BackgroundStatus): boolean {
  return status === 'minute' || status === 'hourly';
}

/** The spreadsheets whose background checks go on by themselves (with the user's trigger as `dispatcher` says). */
export function listGoingOn(
  dispatcher: DispatcherState,
  all = listBackgrounds(),
): Array<{ id: string; state: BackgroundState }> {
  return all.filter(({ state }) => goesOn(backgroundStatus(state, dispatcher)));
}

/** A spreadsheet's status as stored (for callers that hold neither its state nor the user's trigger). */
export function loadStatus(spreadsheetId: string): BackgroundStatus {
  return backgroundStatus(loadBackground(spreadsheetId), loadDispatcher());
}

/**
 * Whether a spreadsheet's background checks go on, as its =DAPA cells word a waiting cell: a copy in the document
 * cache (no daily quota) kept CELLS_COPY_SECONDS, so a waiting cell spends no Properties call. A change of on/stopped
 * here drops it; the dispatcher's in a spreadsheet opened by id reaches the cells within that time.
 */
export const [CELLS_COPY, CELLS_COPY_SECONDS] = ['dapa.bgGoesOn', 120];
export function goesOnForCells(spreadsheetId: string): boolean {
  let reachable = false;
  try {
    const copy = readEntry(CELLS_COPY);
    reachable = true;
    if (copy === '1' || copy === '0') return copy === '1';
  } catch {
    // no cache: the stored state
  }
  const on = goesOn(loadStatus(spreadsheetId));
  try {
    if (reachable) keepEntry(CELLS_COPY, on ? '1' : '0', CELLS_COPY_SECONDS);
  } catch {
    // read again next time
  }
  return on;
}

/** On and not stopped (what the cells' copy keeps; the trigger's cadence does not change it). */
function goesOnAlone(state: BackgroundState): boolean {
  return state.on && !state.stopped;
}

function dropCellsCopy(): void {
  try {
    keepEntry(CELLS_COPY, undefined, 0);
  } catch {
    // the copy lasts CELLS_COPY_SECONDS at most
  }
}

// ---- Google's daily quotas ------------------------------------------------------------------------------------

/**
 * Where a refusal by one of Google's daily quotas is noted: the user's cache (CacheService has no daily quota, and the
 * Properties quota may be the one used up). Each trigger that meets the refusal again notes it again (a cached item
 * lasts 6 hours at most); the first step after Google's reset wants a step in each spreadsheet that goes on.
 */
const DAILY_LIMIT_MARK = 'dapa.bg.dailyLimit';
const MARK_SECONDS = 21_600;

/** Notes that Google refused this user's work for the day, which quota and when (never throws). */
export function noteLimitedForTheDay(limit: DailyLimit): void {
  const text = `${limit}@${now()}`;
  try {
    // The document's copy, which the spreadsheet's =DAPA cells read with their other copies (no call of their own).
    if (documentCacheHere()) keepEntry(LIMIT_COPY, text, MARK_SECONDS);
  } catch {
    // the user's note below
  }
  try {
    keepEntries('user', { [DAILY_LIMIT_MARK]: text }, MARK_SECONDS);
  } catch {
    // no cache: the steps that were wanted still resume
  }
}

/** A noted refusal: which quota, and when it was last met (0: noted by an earlier version, without a time). */
function asNoted(noted: unknown): { limit: DailyLimit; at: number } | undefined {
  const [limit, at] = String(noted ?? '').split('@');
  return limit === 'properties' || limit === 'urlfetch' || limit === 'runtime'
    ? { limit, at: Number(at) || 0 }
    : undefined;
}
const asLimit = (noted: unknown): DailyLimit | undefined => asNoted(noted)?.limit;

/**
 * The document's copy of the note (`dapa.bg.dailyLimitHere`), written beside the user's by every execution that meets
 * a refusal in the document: a =DAPA cell reads it with its other copies, in one call. A refusal met in another of the
 * user's spreadsheets is not in it; a cell here then meets it itself, or its sender does and notes it here.
 */
export const LIMIT_COPY = 'dapa.bg.dailyLimitHere';

/**
 * The quota Google refused this user's work with, as noted until the first background step after Google's reset:
 * a cell left waiting says so (the sender that met the refusal is another execution).
 */
export function limitedForTheDay(): DailyLimit | undefined {
  try {
    return asLimit(readEntries('user', [DAILY_LIMIT_MARK])[DAILY_LIMIT_MARK]);
  } catch {
    return undefined;
  }
}

/**
 * The quota a =DAPA cell cannot do without (Properties calls, URL fetches; not trigger runtime) when another execution
 * met its refusal less than `withinMs` ago: the cell answers at once in the project's words instead of spending its
 * 30 seconds waiting for a round that cannot come. Past that a cell tries again (a reset may have come), and a cell
 * that meets the refusal notes it anew. One cache read, no daily quota.
 */
export function limitMetLately(withinMs: number): DailyLimit | undefined {
  try {
    const noted = asNoted(
      documentCacheHere() ? readEntry(LIMIT_COPY) : readEntries('user', [DAILY_LIMIT_MARK])[DAILY_LIMIT_MARK],
    );
    return noted && noted.limit !== 'runtime' && noted.at > now() - withinMs ? noted.limit : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Spreadsheets where the user turned background checks on while Google's Properties quota was spent (nothing could
 * be stored): kept in the user's cache beside the refusal's note, each trigger that meets the refusal keeps them
 * (a cached item lasts 6 hours at most), and the first step after Google's reset turns them on.
 */
const TURN_ON_MARK = 'dapa.bg.turnOn';

function pendingTurnOns(raw: unknown): Array<{ id: string; name?: string }> {
  try {
    const list: unknown = JSON.parse(String(raw ?? '[]'));
    return Array.isArray(list) ? (list as Array<{ id: string; name?: string }>) : [];
  } catch {
    return [];
  }
}

/** Notes that background checks are to be on in this spreadsheet once Properties answer again (never throws). */
export function noteTurnOnAfterLimit(id: string, name?: string): boolean {
  try {
    const list = pendingTurnOns(readEntries('user', [TURN_ON_MARK])[TURN_ON_MARK]).filter((p) => p.id !== id);
    keepEntries('user', { [TURN_ON_MARK]: JSON.stringify([...list, { id, name }].slice(-20)) }, MARK_SECONDS);
    return true;
  } catch {
    return false;
  }
}

/** Keeps the pending turn-ons another 6 hours (a trigger that met the refusal again). Never throws. */
export function keepTurnOns(): void {
  try {
    const raw = readEntries('user', [TURN_ON_MARK])[TURN_ON_MARK];
    if (raw) keepEntries('user', { [TURN_ON_MARK]: raw }, MARK_SECONDS);
  } catch {
    // the user turns them on again
  }
}

/**
 * After Google's reset: when a refusal was noted (`noted`, as read), a step is wanted now in every spreadsheet whose
 * checks go on (its formulas that said so fill in), and the note goes; spreadsheets whose checks were turned on during
 * the refusal are turned on now. Answers whether there was one.
 */
export function resumeAfterDailyLimit(noted = limitedForTheDay()): boolean {
  let turnOns: Array<{ id: string; name?: string }> = [];
  try {
    turnOns = pendingTurnOns(readEntries('user', [TURN_ON_MARK])[TURN_ON_MARK]);
  } catch {
    // none known
  }
  if (noted === undefined && turnOns.length === 0) return false;
  const at = now();
  for (const { id, name } of turnOns)
    updateBackground(id, (s) => {
      s.on = true;
      s.stopped = undefined;
      s.failures = 0;
      s.name ??= name;
      wantBy(s, 'work', at);
    });
  for (const { id } of listGoingOn(loadDispatcher())) updateBackground(id, (s) => wantBy(s, 'work', at));
  try {
    dropEntries('user', [DAILY_LIMIT_MARK, TURN_ON_MARK]);
  } catch {
    // noted again and resumed again: a step that finds nothing to do costs little
  }
  return true;
}

// ---- the user's dispatcher at work ------------------------------------------------------------------------------

/**
 * Where the user's dispatcher notes that one of its executions is at work, until when: in the user's cache, beside the
 * daily refusal's note, so that a trigger due with it (WINDOW_TRIGGERS) reads both in one call and ends at once. An
 * evicted note only costs that trigger the longer way (the step lease tells it the step is running).
 */
const AT_WORK_MARK = 'dapa.bg.atWork';

/** The user's marks, read in one call: the quota Google refused the day with, and whether a dispatcher is at work. */
export function dispatcherMarks(at: number): { limit?: DailyLimit; atWork: boolean; turnOns: boolean } {
  try {
    const marks = readEntries('user', [DAILY_LIMIT_MARK, AT_WORK_MARK, TURN_ON_MARK]);
    return {
      limit: asLimit(marks[DAILY_LIMIT_MARK]),
      atWork: Number(marks[AT_WORK_MARK]) > at,
      turnOns: marks[TURN_ON_MARK] !== undefined && marks[TURN_ON_MARK] !== null,
    };
  } catch {
    return { atWork: false, turnOns: false };
  }
}

/** Notes that this execution works the user's spreadsheets until `until` (undefined: it has ended). Never throws. */
export function noteDispatcherAtWork(until: number | undefined): void {
  try {
    if (until === undefined) dropEntries('user', [AT_WORK_MARK]);
    else
      keepEntries('user', { [AT_WORK_MARK]: String(until) }, Math.max(1, Math.ceil((until - now()) / 1000)));
  } catch {
    // a twin then takes the longer way: the step lease
  }
}

// ─── wanted ────────────────────────────────────────────────────────────────────────────────────────────────────────
// A spreadsheet's table of "wanted at": why its next background step is wanted and by when. Its earliest entry is
// the one answer to "when next", for the user's trigger and the open sidebar alike. Plain data, no I/O.
/**
 * Why a spreadsheet wants its next step: `window`, the plan's window frees; `work`, work is waiting (a start, an edit,
 * a check, rows left); `retry`, after a failed step; `month`, the month's turn frees the credit budget; `schedule`, a
 * scheduled refresh is due; `upkeep`, the oldest result kept passes the retention (the store's upkeep deletes it,
 * whether anyone opens the spreadsheet or not); `kept`, the relay cell asked the document what its formulas fetched and
 * the next step keeps its answer (checks/formulas.ts).
 */
export type WantCause = 'window' | 'work' | 'retry' | 'month' | 'schedule' | 'upkeep' | 'kept';
export type Wanted = Partial<Record<WantCause, number>>;

/** The earliest entry of a wanted table (undefined: nothing is wanted). */
export function earliest(wanted: Wanted): { at: number; cause: WantCause } | undefined {
  let first: { at: number; cause: WantCause } | undefined;
  for (const [cause, at] of Object.entries(wanted) as Array<[WantCause, number | undefined]>)
    if (at !== undefined && Number.isFinite(at) && (!first || at < first.at)) first = { at, cause };
  return first;
}

// ─── schedule ──────────────────────────────────────────────────────────────────────────────────────────────────────
// The scheduled refresh (the spreadsheet's dapa.schedule): the sheet's DAPA formulas or the sidebar's last range,
// checked again daily, weekly or monthly by the background steps, resuming where a step stopped. A step claims the
// refresh that is due here and starts it itself (background/step.ts).
export interface Schedule {
  every: ScheduleEvery;
  target: 'formulas' | 'range';
  range?: JobRange;
  nextAt: number;
  lastRunAt?: number;
}

const PERIOD_MS: Record<ScheduleEvery, number> = {
  daily: 86_400_000,
  weekly: 7 * 86_400_000,
  monthly: 30 * 86_400_000,
};

function parseSchedule(raw: unknown): Schedule | undefined {
  if (!isRecord(raw) || !PERIOD_MS[raw.every as ScheduleEvery] || finite(raw.nextAt) === undefined)
    return undefined;
  return raw as unknown as Schedule;
}

export function readSchedule(): Schedule | undefined {
  return readValue('document', DOCUMENT_PROPERTY.schedule, parseSchedule);
}

/** Sets (or with null, removes) the schedule; the first refresh is one period from now. */
export function saveSchedule(change: ScheduleChange | null): void {
  if (change === null || change === undefined) {
    writeValue('document', DOCUMENT_PROPERTY.schedule, undefined);
    return;
  }
  if (!PERIOD_MS[change.every])
    throw new Error(`Refresh "daily", "weekly" or "monthly", not "${String(change.every)}".`);
  if (change.target !== 'formulas' && change.target !== 'range')
    throw new Error(
      'Choose what to refresh: "formulas" (the DAPA formulas) or "range" (the last sidebar check).',
    );
  const schedule: Schedule = {
    every: change.every,
    target: change.target,
    nextAt: now() + PERIOD_MS[change.every],
  };
  if (change.target === 'range') {
    schedule.range = jobRange(idOrUndefined(currentSpreadsheet()) ?? '');
    if (!schedule.range)
      throw new Error('Check a range from the sidebar first: the schedule refreshes that range.');
  }
  writeValue('document', DOCUMENT_PROPERTY.schedule, schedule);
}

/** How long a step that claimed a due refresh has to move the schedule on before another may claim it. */
const REFRESH_CLAIM_MS = 10 * 60_000;

/**
 * Claims the refresh due at `at`, if one is: a claim named after the due date (store-sheet.ts: decided by the store's
 * log, no lock, so two users' dispatchers never both start the same refresh), then the schedule moves to its next date.
 * That move is a plain write: only the claim's winner makes it, and a race with another move repeats the same move. The
 * caller re-checks the formulas from `at` on, or the range as a job.
 */
export function claimDueSchedule(at: number): Schedule | undefined {
  const schedule = readSchedule();
  if (!schedule || schedule.nextAt > at) return undefined;
  if (!claim(`schedule:${schedule.nextAt}`, at + REFRESH_CLAIM_MS)) return undefined;
  const moved = readSchedule();
  if (moved && moved.nextAt === schedule.nextAt) {
    moved.lastRunAt = at;
    while (moved.nextAt <= at) moved.nextAt += PERIOD_MS[moved.every];
    writeValue('document', DOCUMENT_PROPERTY.schedule, moved);
  }
  return schedule;
}

// ─── job store ─────────────────────────────────────────────────────────────────────────────────────────────────────
// The sidebar's job as kept in the user's properties: its range, where it stands, its counts, and (beside it) which
// rows ended for a reason that can change, so "Retry skipped rows" knows them from stored state, not from cell text.
/** Where a job reads its URLs (one column, these rows); a scheduled refresh re-checks such a range. */
export interface JobRange {
  sheetId: number;
  sheetName: string;
  column: number;
  firstRow: number;
  lastRow: number;
}

/** A job as kept: what the sidebar sees (its A1 range is derived) plus where it stands. */
export interface StoredJob extends Omit<JobState, 'a1'>, JobRange {
  spreadsheetId: string;
  /** Rows before the cursor are finished; rows after it may be finished already (written, so skipped). */
  cursor: number;
  mode: 'all' | 'retry';
  /** While a turn (a sidebar step or a background step) runs it holds a lease on the job, so that a second one
   *  does not overlap; `lease` names the holder, so a turn that outlived its lease knows it was overtaken. */
  leaseUntil?: number;
  lease?: string;
  /** "Check again": the cache and the results kept before `freshFrom` are not used. */
  fresh?: boolean;
  /** When a "Check again" began: what the job itself receives from then on is reused by its later slices (and by
   *  "Retry skipped rows"), so a domain in two slices is billed once. Absent (a job stored before): nothing is. */
  freshFrom?: number;
  /** A scheduled refresh: only results checked since then are reused, and a "Checked at" column is written. */
  since?: number;
}

function parseJob(raw: unknown): StoredJob | undefined {
  return isRecord(raw) && typeof raw.id === 'string' && typeof raw.cursor === 'number'
    ? (raw as unknown as StoredJob)
    : undefined;
}

export function loadJob(spreadsheetId: string): StoredJob | undefined {
  return readValue('user', USER_PROPERTY.jobPrefix + spreadsheetId, parseJob);
}

/** Stores the job (under the user lock: changeJob). */
function storeJob(job: StoredJob): void {
  writeValue('user', USER_PROPERTY.jobPrefix + job.spreadsheetId, job);
}

/** What a change of the job may write, inside its hold of the lock. */
export interface JobWrites {
  /** Stores the job whole. */
  store(job: StoredJob): void;
  /** Stores the rows marked retryable (none: the key is removed). */
  retryRows(rows: ReadonlySet<number>): void;
}

/**
 * Changes a spreadsheet's job under the user lock (a sidebar turn and a background step may meet): `change` gets the
 * job read again there and writes what it changed. Answers what `change` answered.
 */
export function changeJob<T>(
  spreadsheetId: string,
  change: (job: StoredJob | undefined, writes: JobWrites) => T,
): T {
  return locked('user', () =>
    change(loadJob(spreadsheetId), {
      store: storeJob,
      retryRows: (rows) => storeRetryRows(spreadsheetId, rows),
    }),
  );
}

/** Stores a new job and forgets the retryable rows of the one before. */
export function storeNewJob(job: StoredJob): void {
  changeJob(job.spreadsheetId, (_, writes) => {
    writes.store(job);
    writes.retryRows(new Set());
  });
}

/** Forgets a spreadsheet's job and its retryable rows ("Remove DAPA from this spreadsheet"), under the user lock. */
export function forgetJob(spreadsheetId: string): void {
  changeJob(spreadsheetId, (_, writes) => {
    writeValue('user', USER_PROPERTY.jobPrefix + spreadsheetId, undefined);
    writes.retryRows(new Set());
  });
}

/** Just the range of a job (or a target). */
export function rangeOf({ sheetId, sheetName, column, firstRow, lastRow }: JobRange): JobRange {
  return { sheetId, sheetName, column, firstRow, lastRow };
}

/** Where a scheduled refresh re-checks: the range of the last sidebar job. */
export function jobRange(spreadsheetId: string): JobRange | undefined {
  const job = loadJob(spreadsheetId);
  return job && rangeOf(job);
}

/** A new job over a range, running from its first row; `fields` set the rest (mode, total, message, ...). */
export function newJob(spreadsheetId: string, range: JobRange, fields: Partial<StoredJob> = {}): StoredJob {
  return {
    id: Utilities.getUuid(),
    spreadsheetId,
    ...rangeOf(range),
    cursor: range.firstRow,
    mode: 'all',
    total: range.lastRow - range.firstRow + 1,
    done: 0,
    status: 'running',
    counts: { records: 0, skipped: 0, errors: 0, requests: 0, billed: 0, cached: 0, retryable: 0 },
    skippedByReason: {},
    ...fields,
  };
}

/** What the sidebar sees. `retryable` counts the rows "Retry skipped rows" would check: retryable ones, plus
 *  rows a cancel or an error left unchecked. */
export function stateOf(job: StoredJob, note?: string): JobState {
  const letter = columnLetter(job.column);
  const unchecked = job.status === 'cancelled' || job.status === 'error' ? job.total - job.done : 0;
  const state: JobState = {
    id: job.id,
    sheetName: job.sheetName,
    a1: `${letter}${job.firstRow}:${letter}${job.lastRow}`,
    total: job.total,
    done: job.done,
    status: job.status,
    counts: { ...job.counts, retryable: job.counts.retryable + Math.max(0, unchecked) },
    skippedByReason: { ...job.skippedByReason },
  };
  const message = note ?? job.message;
  if (message) state.message = message;
  return state;
}

// ---- the rows that ended for a reason that can change: one bit per row of the job's range ------------------

function retryKey(spreadsheetId: string): string {
  return USER_PROPERTY.retryRowsPrefix + spreadsheetId;
}

function parseRows(raw: unknown): string | undefined {
  return typeof raw === 'string' && /^[0-9a-v]*$/.test(raw) ? raw : undefined;
}

/** Offsets (from the job's first row) of the rows marked retryable (results.ts: five rows a digit, so 10,000
 *  rows take 2,000 characters; longer values are kept in parts). */
export function loadRetryRows(spreadsheetId: string): Set<number> {
  return placesIn(readValue('user', retryKey(spreadsheetId), parseRows) ?? '');
}

/** Stores the rows marked retryable (none: the key is removed), under the user lock (changeJob). */
function storeRetryRows(spreadsheetId: string, rows: ReadonlySet<number>): void {
  writeValue('user', retryKey(spreadsheetId), digitsOf(rows) || undefined);
}
