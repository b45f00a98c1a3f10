// The scheduled refresh (document property dapa.schedule): the sheet's DAPA formulas or the sidebar's last range,
// checked again daily, weekly or monthly by the background steps, resuming where a step stopped.
import type { ScheduleChange, ScheduleEvery } from '../sidebar/contract';
import { now } from './gas';
import { jobRange, type JobRange, startRefreshJob } from './job';
import { finite, isRecord, readValue, writeValue } from './storage';
import { DOCUMENT_PROPERTY } from './storage-keys';

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

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
    schedule.range = jobRange(SpreadsheetApp.getActiveSpreadsheet().getId());
    if (!schedule.range)
      throw new Error('Check a range from the sidebar first: the schedule refreshes that range.');
  }
  writeValue('document', DOCUMENT_PROPERTY.schedule, schedule);
}

/** The schedule when a refresh is due at `at`. */
export function dueSchedule(at: number): Schedule | undefined {
  const schedule = readSchedule();
  return schedule && schedule.nextAt <= at ? schedule : undefined;
}

/** Starts the due refresh: formulas are re-checked from `since` on, a range becomes a refresh job; then the next date. */
export function startScheduledRun(
  spreadsheet: Spreadsheet,
  schedule: Schedule,
  refreshFormulasSince: (since: number) => void,
): void {
  const at = now();
  if (schedule.target === 'range' && schedule.range) startRefreshJob(spreadsheet, schedule.range, at);
  else refreshFormulasSince(at);
  schedule.lastRunAt = at;
  while (schedule.nextAt <= at) schedule.nextAt += PERIOD_MS[schedule.every];
  writeValue('document', DOCUMENT_PROPERTY.schedule, schedule);
}
