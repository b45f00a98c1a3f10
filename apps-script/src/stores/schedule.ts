// The scheduled refresh (the spreadsheet's dapa.schedule): the sheet's DAPA formulas or the sidebar's last range,
// checked again daily, weekly or monthly by the background steps, resuming where a step stopped. A step claims the
// refresh that is due here and starts it itself (background/step.ts).
import type { ScheduleChange, ScheduleEvery } from '../../sidebar/contract';
import { now } from '../platform/gas';
import { currentSpreadsheet, idOrUndefined } from './session';
import { jobRange, type JobRange } from './job-store';
import { claim } from './claims';
import { finite, isRecord, readValue, writeValue } from './storage';
import { DOCUMENT_PROPERTY } from './storage-keys';

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
 * Claims the refresh due at `at`, if one is: a claim named after the due date (claims.ts: decided by the store's log,
 * no lock, so two users' dispatchers never both start the same refresh), then the schedule moves to its next date.
 * That move is a plain write: only the claim's winner makes it, and a race with another move repeats the same move.
 * The caller re-checks the formulas from `at` on, or the range as a job.
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
