// What one background step reads and writes of its spreadsheet, in one place (one StepBooks a step): it looks once
// (the spreadsheet's background state, the job, the formulas not up to date and their domains not kept; what the
// formulas show and the store lacks is kept at once, free), and closes once: the formulas refreshed through their
// version slots, the upkeep (the step holds the lease), the step's one outcome in the background state. step.ts
// drives the run between the two.
import { type FormulaCell, formulaWork, keepShown } from '../checks/formulas';
import { BLOCK_ROWS, refreshSlots } from '../checks/formula-versions';
import { now } from '../platform/gas';
import {
  type BackgroundState,
  backgroundStatus,
  goesOn,
  loadBackground,
  updateBackground,
  whenNext,
} from '../stores/background-store';
import { loadJob } from '../stores/job-store';
import { readSchedule } from '../stores/schedule';
import { stepUpkeep, upkeep } from '../stores/store-compaction';
import { SERVICE_KEPT_FAILING } from '../messages';
import { MAX_FAILURES, type StepOutcome } from './run';
import type { StepResult, Turn } from './step';
import { idOf } from '../stores/session';

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** A step that asked the relay cell wants the next one this soon (Sheets recalculates it meanwhile). */
const KEPT_AFTER_MS = 10 * 60_000;

/** What a step read of its spreadsheet once: its state, the formulas and the job. */
export interface Look {
  state: BackgroundState;
  cells: FormulaCell[];
  pending: string[];
  jobRunning: boolean;
  jobLeft: number;
}

export class StepBooks {
  private look?: Look;
  /** The step's refresh looked at every formula and none reads the legacy version columns. */
  private legacyFree?: boolean;
  private upkept = false;
  private relayAsked = false;

  constructor(
    private readonly spreadsheet: Spreadsheet,
    private readonly holder: string,
  ) {}

  /** Reads what the step needs of its spreadsheet once (undefined: background checks are off there). */
  open(turn: Turn, baseUrl: string): Look | undefined {
    const state = loadBackground(idOf(this.spreadsheet));
    const on = goesOn(backgroundStatus(state, turn.dispatcher));
    if (turn.cadence !== 'sidebar' && !on) return undefined;
    const job = loadJob(idOf(this.spreadsheet));
    // The formulas not up to date, and their domains not kept yet (or checked before a refresh began).
    const { cells, pending, unkept } = formulaWork(this.spreadsheet, baseUrl, state.refreshSince);
    // On the grid already: kept for free, never paid again (what the relay cell was asked, the next step keeps).
    this.relayAsked = keepShown(this.spreadsheet, baseUrl, unkept);
    return (this.look = {
      state,
      cells,
      pending,
      // With background checks off, the open sidebar's own loop (continueJob) runs its job, not this step.
      jobRunning: on && job?.status === 'running',
      jobLeft: job ? job.total - job.done : 0,
    });
  }

  /**
   * Formulas are refreshed through their version cells: those whose domains are all in (after a refresh, all), once
   * their block's are; and, marked not complete, those that show more than before (this step answered some of their
   * domains) or whose rest waits for the budget, so results already paid for are never held back for the rest. Nothing after a stop: a
   * recalculation would only meet the same error.
   */
  private refreshShown(look: Look, outcome: StepOutcome): void {
    if (outcome.stopped) return;
    const pending = new Set(outcome.pending);
    const waiting = new Set(outcome.waiting);
    const answered = new Set(outcome.answered);
    if (pending.size === 0 && waiting.size === 0) look.state.refreshSince = undefined;
    const cells = look.cells.filter((c) => c.keys);
    // A block of formulas (one version slot) is refreshed once its last domain is in: refreshing it sooner for the
    // formulas this step completed would recalculate them again with the rest, each recalculation an execution.
    const done = (c: (typeof cells)[number]) => c.keys?.every((k) => !pending.has(k) && !waiting.has(k));
    const blockOf = (c: (typeof cells)[number]) => `${c.sheetId}:${Math.floor((c.row - 1) / BLOCK_ROWS)}`;
    const unfinished = new Set(cells.filter((c) => c.keys?.some((k) => pending.has(k))).map(blockOf));
    const complete = new Set(cells.filter((c) => done(c) && !unfinished.has(blockOf(c))));
    // A formula whose domains are all in waits for its block's others (above); one with some in and some still to
    // check (a range) shows what this step answered, so a long range shows its progress.
    const partly = cells.filter((c) => !done(c) && c.keys?.some((k) => answered.has(k) || waiting.has(k)));
    this.legacyFree = refreshSlots(this.spreadsheet, [...complete], partly);
  }

  /**
   * Shows what the step brought (refreshShown), does the step's upkeep and writes its one outcome: counts, why it
   * stopped, the wanted table.
   */
  close(outcome: StepOutcome, turn: Turn, startedAt: number): StepResult {
    const look = this.look as Look;
    try {
      this.refreshShown(look, outcome);
    } catch (error) {
      // The formulas show it at their next recalculation; the step's outcome is written whatever happens here.
      console.warn(
        `DAPA: formulas not refreshed (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    const { dueAt: upkeepAt } = stepUpkeep(this.spreadsheet, {
      lease: this.holder,
      legacyFree: this.legacyFree,
    });
    this.upkept = true;
    const name = this.spreadsheet.getName();
    let result: StepResult | undefined;
    updateBackground(idOf(this.spreadsheet), (s) => {
      if (turn.cadence !== 'sidebar') {
        s.steps += 1;
        s.lastStepAt = startedAt;
        s.runtimeMs += now() - startedAt;
        if (outcome.sent > 0 && !outcome.failed && !outcome.stopped) s.answeredAt = now();
      }
      s.name = name;
      s.billed = (s.billed ?? 0) + outcome.billed;
      s.refreshSince = look.state.refreshSince;
      s.failures = outcome.failed ? (s.failures ?? 0) + 1 : 0;
      const stopped = outcome.stopped ?? (s.failures >= MAX_FAILURES ? SERVICE_KEPT_FAILING : undefined);
      if (stopped) s.stopped = stopped;
      const status = backgroundStatus(s, turn.dispatcher);
      const kept = this.relayAsked ? now() + KEPT_AFTER_MS : undefined;
      const wanted = { ...outcome.wanted, schedule: readSchedule()?.nextAt, upkeep: upkeepAt, kept };
      // Stopped or off, the store's upkeep stays wanted (the retention holds on every path).
      s.wanted = goesOn(status) ? wanted : upkeepAt === undefined ? {} : { upkeep: upkeepAt };
      result = { ...outcome, stopped, status, nextAt: whenNext(wanted)?.at };
    });
    return result as StepResult;
  }

  /** The upkeep a step owes when it did not close (it ended early or threw): the step holds the lease. */
  upkeepLeft(): void {
    if (!this.upkept) upkeep(this.spreadsheet, { lease: this.holder, legacyFree: this.legacyFree });
  }
}
