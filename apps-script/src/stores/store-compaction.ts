// The result store's upkeep, one explicit step (never a side effect of storing results or refreshing formulas): rows
// older than the retention, rows whose every result a newer row supersedes, claims long ended (claims.ts) and blank
// rows are deleted, runs at a time and bottom-up, for at most COMPACTION_MS at a time, never a cell overwritten; the
// legacy per-formula version columns (F on) go once no formula refers to them; half-made sheets go. Whoever holds the
// step lease does it (a background step, the published add-on's dispatcher, which has no document lock, the menu, the
// sidebar): the lease, decided by the log's row order, keeps two compactions from meeting, and a writer appending
// meanwhile loses nothing: its rows are below every row this compaction read, and only rows it read as dead go.
import { now, type Spreadsheet } from '../platform/gas';
import { claimRow, deadClaimRows, walkClaims } from './claims';
import { deadResultRows, ResultIndex } from './result-rows';
import { DAY_MS, retentionDays } from './retention';
import { idOf, weighedTier } from './session';
import { returnStepLease, STEP_CLAIM, takeStepLease } from './step-lease';
import { compactLog, readStore, weighLog } from './store-sheet';

/** A compaction is worth its service calls when this many rows, and a quarter of the log, are dead. */
const MIN_DEAD_ROWS = 8;
/**
 * A compaction deletes for at most this long, then leaves the rest to the next one (a step's upkeep comes out of its
 * budget; a formula beside it never waits for it: it holds no lock).
 */
export const COMPACTION_MS = 2_000;
/** The lease the menu or the sidebar takes for an upkeep of their own: the compaction and its read, with room. */
const UPKEEP_LEASE_MS = 60_000;

/** The rows (indexes) of the log that hold nothing anyone reads any more. */
export function deadRows(rows: readonly unknown[][], at: number, days = retentionDays()): number[] {
  const oldest = at - days * DAY_MS;
  return [...new Set([...deadResultRows(rows, oldest), ...deadClaimRows(rows, at)])];
}

export interface Compaction {
  /** Rows deleted. */
  rows: number;
  /** Legacy columns deleted. */
  columns: number;
}

/** Whether `holder` holds the step lease in these rows until at least `until`. */
function holdsLease(rows: readonly unknown[][], holder: string, until: number): boolean {
  const claims = rows.flatMap((row) => {
    const claim = claimRow(row);
    return claim?.name === STEP_CLAIM ? [claim] : [];
  });
  const current = walkClaims(claims).holder;
  return current?.holder === holder && current.until >= until;
}

/**
 * Compacts the log now, as the holder of the step lease `lease`: reads it again, checks the lease there, and deletes
 * what it read as dead (and, when no formula refers to them any more, the legacy version columns). Undefined when the
 * lease is not `lease`'s (someone else's compaction may run), or when something failed (the next upkeep does it).
 */
export function compactStore(
  spreadsheet: Spreadsheet,
  lease: string,
  legacyFree = false,
): Compaction | undefined {
  try {
    weighedTier().add(idOf(spreadsheet));
    const started = now();
    const read = readStore(spreadsheet);
    if (!holdsLease(read, lease, started + COMPACTION_MS)) return undefined;
    const dead = deadRows(read, started).map((i) => i + 1);
    return compactLog(spreadsheet, read, {
      rows: dead,
      legacyColumns: legacyFree,
      until: started + COMPACTION_MS,
    });
  } catch (error) {
    console.warn(`DAPA: results not compacted (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
}

/** What a look at the log's rows finds (no service call): its dead rows, and when its oldest result was checked. */
export interface Weight {
  /** Rows (indexes) that hold nothing anyone reads any more (deadRows). */
  dead: number[];
  /** When the oldest result kept was checked (Infinity: none kept). */
  oldest: number;
  /** Results kept are older than the retention the privacy policy states. */
  expired: boolean;
}

/** Weighs the log's rows at `at`, results being kept `days`: the dead rows, the oldest result, any past the retention. */
export function weigh(rows: readonly unknown[][], at: number, days = retentionDays()): Weight {
  let oldest = Infinity;
  for (const kept of new ResultIndex(rows).catchUp().all()) oldest = Math.min(oldest, kept.at);
  return { dead: deadRows(rows, at, days), oldest, expired: oldest < at - days * DAY_MS };
}

/** An upkeep for the retention comes this long after the oldest result passes it (never sooner than this from now). */
const UPKEEP_SLACK_MS = 60_000;

/** What an upkeep is told: the step lease its caller holds (else it takes one for itself), and the legacy columns. */
export interface UpkeepOptions {
  lease?: string;
  /** A look at every formula found none reading the legacy version columns. */
  legacyFree?: boolean;
}

/**
 * The upkeep step: weighs the log (once an execution and spreadsheet) and compacts it when worth it (a quarter of it
 * dead and at least a few rows, or any result older than the retention the privacy policy states, or legacy columns
 * to give back), under the step lease the caller holds, or one it takes for the while (the menu, the sidebar; when
 * another execution holds it, that one's upkeep does it). Never throws.
 */
export function upkeep(spreadsheet: Spreadsheet, options: UpkeepOptions = {}): Compaction | undefined {
  return stepUpkeep(spreadsheet, options, false).compaction;
}

/**
 * The upkeep, and when the next one is wanted for the retention (when the oldest result kept passes it; undefined:
 * none kept, or the log unreadable): the background's wanted table holds it, so an add-on nobody opens keeps nothing
 * past the retention. One read of the log (the execution's rows), weighed in pure code; a compaction reads it again.
 */
export function stepUpkeep(
  spreadsheet: Spreadsheet,
  { lease, legacyFree = false }: UpkeepOptions,
  due = true,
): { compaction?: Compaction; dueAt?: number } {
  let compaction: Compaction | undefined;
  let weight: Weight | undefined;
  try {
    const id = idOf(spreadsheet);
    const weighed = weighedTier();
    if (!weighed.has(id) || legacyFree) {
      weighed.add(id);
      const log = weighLog(spreadsheet, legacyFree);
      weight = weigh(log.rows, now());
      const worth =
        weight.dead.length >= Math.max(MIN_DEAD_ROWS, log.rows.length / 4) ||
        weight.expired ||
        log.extraColumns > 0;
      const holder = worth ? (lease ?? takeStepLease(now() + UPKEEP_LEASE_MS)) : undefined;
      if (holder) {
        weight = undefined; // the rows change
        try {
          compaction = compactStore(spreadsheet, holder, legacyFree);
        } finally {
          if (!lease) returnStepLease(holder);
        }
      }
    }
  } catch (error) {
    console.warn(`DAPA: results not compacted (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    const oldest = due ? (weight ?? weigh(weighLog(spreadsheet, false).rows, now())).oldest : Infinity;
    if (Number.isFinite(oldest))
      return { compaction, dueAt: Math.max(oldest + retentionDays() * DAY_MS, now()) + UPKEEP_SLACK_MS };
  } catch {
    // the next step's look says
  }
  return { compaction };
}
