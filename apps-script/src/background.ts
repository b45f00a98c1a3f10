// Background checks: time-driven steps that finish unfinished =DAPA formulas, the sidebar's job and scheduled
// refreshes with nobody at the sheet. A step sends what the plan's window allows now, then ends and schedules the
// next one for when the window frees: trigger runtime is a daily quota, so it never sleeps through a minute.
/// <reference types="google-apps-script" />
import type { BackgroundInfo, ScheduleChange } from '../sidebar/contract';
import {
  type BackgroundState,
  deleteTriggers,
  EDIT_HANDLER,
  loadBackground,
  scheduleStep,
  STEP_HANDLER,
  updateBackground,
  wakeBackground,
  WATCH_HANDLER,
} from './background-state';
import { checkValues, lastResumeAt } from './check';
import { dapaFormulaCells, type FormulaCell, rewriteFormulas } from './formulas';
import { now, sleep } from './gas';
import { advanceJob, loadJob } from './job';
import { MENU_NAME, NO_KEY } from './messages';
import { loadLearnedPlan, loadRecentSends, windowRoom } from './plan-store';
import { readStoredRecords, retentionDays, savedCredits, setRetentionDays } from './result-store';
import { dueSchedule, readSchedule, saveSchedule, startScheduledRun } from './schedule';
import { currentBaseUrl, storedApiKey } from './settings';

/** A step starts no new request after this long, and its checks stop by STEP_DEADLINE_MS (the limit is 6 min). */
const STEP_START_MS = 240_000;
const STEP_DEADLINE_MS = 300_000;
/** A wait this short (plus the step's usual lateness) is slept in the step; a longer one ends it. */
const SHORT_WAIT_MS = 2_000;
/** The most a step is scheduled ahead of the window to make up for triggers that fire late. */
const MAX_EARLY_MS = 45_000;
/** Domains a step hands to one check when the plan's limits are not known yet. */
const CHUNK = 500;
/** After an edit, the first step waits for the formulas' own 30 seconds. */
const AFTER_EDIT_MS = 31_000;
/** Errors after which background work stops and says why, instead of trying again in a loop. */
const STOPPING = [
  'bad_key',
  'not_premium',
  'network_blocked',
  'validation',
  'not_found',
  'plan_limit',
  'error',
];
const RETRY_FAILURE_MS = 300_000;
const MAX_FAILURES = 5;

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

function spreadsheetId(): string {
  return SpreadsheetApp.getActiveSpreadsheet().getId();
}

/** How many new domains the plan's window lets us send now (Infinity while the limits are unknown). */
function roomNow(baseUrl: string): { domains: number; full: number; emptyAt: number } {
  const plan = loadLearnedPlan(baseUrl);
  const room = windowRoom(plan, loadRecentSends(baseUrl), now());
  const perRequest = plan.maxUrlsPerRequest ?? CHUNK;
  return {
    domains: Math.max(0, Math.min(room.urls, room.requests * perRequest, CHUNK)),
    full: Math.min(room.capacity, CHUNK),
    emptyAt: room.emptyAt,
  };
}

interface FormulaWork {
  cells: FormulaCell[];
  pending: string[];
}

/** The formulas' domains not kept yet (or checked before a refresh began). */
function formulaWork(spreadsheet: Spreadsheet, baseUrl: string, state: BackgroundState): FormulaWork {
  const cells = dapaFormulaCells(spreadsheet);
  const keys = [...new Set(cells.flatMap((c) => c.keys ?? []))];
  const kept = readStoredRecords(baseUrl, keys, state.refreshSince);
  return { cells, pending: keys.filter((k) => !kept.has(k)) };
}

/** How far ahead of the window a step is scheduled: the lateness steps always have, and half of what varies. */
function aheadMs(state: BackgroundState): number {
  const low = Math.min(state.slackLowMs ?? 0, state.slackMs ?? 0);
  return low + ((state.slackMs ?? 0) - low) / 2;
}

/** Runs one background step (the time-driven trigger's handler). */
export function dapaBackgroundStep(event?: { triggerUid?: string }): void {
  const startedAt = now();
  const spreadsheet = SpreadsheetApp.getActiveSpreadsheet();
  const id = spreadsheet.getId();
  const lock = LockService.getDocumentLock();
  if (!lock.tryLock(10_000)) return; // a step is running; it schedules the next one
  let next: number | undefined;
  let stopped: string | undefined;
  let failed = false;
  try {
    const state = loadBackground(id);
    if (!state.on || state.stopped) return;
    const apiKey = storedApiKey();
    if (!apiKey) {
      stopped = NO_KEY;
      return;
    }
    const baseUrl = currentBaseUrl();
    const schedule = dueSchedule(startedAt);
    if (schedule) startScheduledRun(spreadsheet, schedule, (since) => (state.refreshSince = since));
    let formulas = formulaWork(spreadsheet, baseUrl, state);
    let jobRunning = loadJob(id)?.status === 'running';
    const check = (values: string[], maxSend: number) =>
      checkValues(values, {
        apiKey,
        baseUrl,
        deadline: startedAt + STEP_DEADLINE_MS,
        waitForRateLimits: false,
        maxSend,
        keep: true,
        since: state.refreshSince,
        parallel: true,
      });
    let firstLook: number | undefined;
    while ((formulas.pending.length > 0 || jobRunning) && now() < startedAt + STEP_START_MS) {
      // The whole window at once: sends spread over seconds would free (and be re-sent) spread out, every minute.
      const room = roomNow(baseUrl);
      firstLook ??= now();
      const work = formulas.pending.length > 0 ? formulas.pending.length : Infinity;
      if (room.domains < Math.min(room.full, work)) {
        const wait = room.emptyAt - now();
        if (wait > SHORT_WAIT_MS + (firstLook === now() ? aheadMs(state) : 0)) {
          if (room.domains <= 0) {
            next = room.emptyAt;
            break;
          }
        } else {
          sleep(wait);
          continue;
        }
      }
      let fatal: { code: string; message: string } | undefined;
      if (formulas.pending.length > 0) {
        const report = check(formulas.pending, room.domains);
        fatal = report.fatal;
        const done = new Set(
          report.outcomes.filter((o) => o.kind === 'record' || !o.retryable).map((o) => o.key),
        );
        formulas.pending = formulas.pending.filter((k) => !done.has(k));
        if (!fatal && done.size === 0) {
          next = roomNow(baseUrl).emptyAt; // the window was spent elsewhere: come back when it frees
          break;
        }
      } else {
        const turn = advanceJob(
          spreadsheet,
          apiKey,
          () => roomNow(baseUrl).domains,
          startedAt + STEP_START_MS,
        );
        fatal = turn.fatal;
        jobRunning = turn.remaining;
      }
      if (fatal && STOPPING.includes(fatal.code)) {
        stopped = fatal.message;
        break;
      }
      if (fatal) {
        failed = true;
        next = now() + RETRY_FAILURE_MS;
        break;
      }
    }
    // Formulas that show unfinished rows recalculate once every domain they check is in; after a refresh, all.
    const refreshed = formulas.pending.length === 0 && state.refreshSince !== undefined;
    if (refreshed) state.refreshSince = undefined;
    formulas = { ...formulas, cells: formulas.cells.filter((c) => c.incomplete || refreshed) };
    const pending = new Set(formulas.pending);
    rewriteFormulas(formulas.cells.filter((c) => c.keys && c.keys.every((k) => !pending.has(k))));
    if (next === undefined && (formulas.pending.length > 0 || jobRunning)) next = now() + 1000;
    // The server's word wins: a Retry-After (through the core's resumeAt) later than our window's guess.
    if (next !== undefined && lastResumeAt > next) next = lastResumeAt;
    updateBackground(id, (s) => {
      s.steps += 1;
      s.lastStepAt = startedAt;
      s.runtimeMs += now() - startedAt;
      s.refreshSince = state.refreshSince;
      s.failures = failed ? (s.failures ?? 0) + 1 : 0;
      // How long after its due time a step gets to its first look at the window (trigger lateness + start-up):
      // the next step is scheduled that much ahead, and sleeps the rest if it comes early.
      if (firstLook !== undefined && state.dueAt !== undefined && state.forWindow) {
        const slack = Math.max(0, Math.min(MAX_EARLY_MS, firstLook - state.dueAt));
        s.slackMs = Math.round(0.7 * (s.slackMs ?? slack) + 0.3 * slack);
        const low = s.slackLowMs ?? slack;
        s.slackLowMs = Math.round(slack < low ? slack : low + 0.1 * (slack - low));
      }
      if (s.failures >= MAX_FAILURES) stopped = 'The DAPA service kept failing; background checks paused.';
      if (stopped) s.stopped = stopped;
      const scheduleNext = readSchedule()?.nextAt;
      const at = stopped ? scheduleNext : Math.min(next ?? Infinity, scheduleNext ?? Infinity);
      // Ahead by the least lateness and half the rest: early costs sleep (runtime), late costs time.
      s.forWindow = next !== undefined && at === next;
      if (at !== undefined && Number.isFinite(at) && !stopped) scheduleStep(s, at - aheadMs(s));
      else {
        deleteTriggers(STEP_HANDLER);
        if (stopped) deleteTriggers(WATCH_HANDLER);
        s.triggerId = s.dueAt = undefined;
      }
    });
  } finally {
    lock.releaseLock();
    if (stopped) updateBackground(id, (s) => (s.stopped = stopped));
  }
  void event;
}

/** The installable onEdit trigger: a new or changed formula gets a background step once its own run is over. */
export function dapaOnEdit(_event?: unknown): void {
  wakeBackground(spreadsheetId(), now() + AFTER_EDIT_MS);
}

/**
 * The hourly watch: revives the steps when a due one never ran (the day's trigger runtime was spent, or Google
 * dropped the trigger), so work resumes by itself, the next day at worst.
 */
export function dapaBackgroundWatch(_event?: unknown): void {
  const id = spreadsheetId();
  const state = loadBackground(id);
  if (state.on && !state.stopped && state.dueAt !== undefined && state.dueAt < now() - 600_000)
    wakeBackground(id, now());
}

/** Turns background checks on (menu or sidebar: where the authorization prompt belongs) and starts a step. */
export function startBackground(): BackgroundInfo {
  if (!storedApiKey()) throw new Error(NO_KEY);
  const id = spreadsheetId();
  updateBackground(id, (state) => {
    state.on = true;
    state.stopped = undefined;
    state.failures = 0;
    deleteTriggers(EDIT_HANDLER);
    deleteTriggers(WATCH_HANDLER);
    ScriptApp.newTrigger(EDIT_HANDLER)
      .forSpreadsheet(SpreadsheetApp.getActiveSpreadsheet())
      .onEdit()
      .create();
    ScriptApp.newTrigger(WATCH_HANDLER).timeBased().everyHours(1).create();
    scheduleStep(state, now() + 1000);
  });
  SpreadsheetApp.getActiveSpreadsheet().toast(
    'Background checks are on: unfinished formulas and sidebar checks go on with the sheet closed.',
    MENU_NAME,
  );
  return getBackground();
}

export function stopBackground(): BackgroundInfo {
  updateBackground(spreadsheetId(), (state) => {
    state.on = false;
    deleteTriggers(STEP_HANDLER);
    deleteTriggers(EDIT_HANDLER);
    deleteTriggers(WATCH_HANDLER);
    state.triggerId = state.dueAt = undefined;
  });
  return getBackground();
}

/** "Check again": every formula's domains are checked anew in the background, ignoring kept results. */
export function checkFormulasAgain(): BackgroundInfo {
  const id = spreadsheetId();
  updateBackground(id, (state) => (state.refreshSince = now()));
  wakeBackground(id, now());
  return getBackground();
}

export function getBackground(): BackgroundInfo {
  const state = loadBackground(spreadsheetId());
  const info: BackgroundInfo = {
    on: state.on,
    steps: state.steps,
    runtimeMs: state.runtimeMs,
    savedCredits: savedCredits(),
    retentionDays: retentionDays(),
  };
  if (state.dueAt !== undefined) info.nextStepAt = state.dueAt;
  if (state.stopped) info.stopped = state.stopped;
  const schedule = readSchedule();
  if (schedule) info.schedule = { every: schedule.every, target: schedule.target, nextAt: schedule.nextAt };
  return info;
}

export function setKeepDays(days: unknown): BackgroundInfo {
  setRetentionDays(days);
  return getBackground();
}

export function setSchedule(change: ScheduleChange | null): BackgroundInfo {
  saveSchedule(change);
  const next = readSchedule()?.nextAt;
  if (next !== undefined) wakeBackground(spreadsheetId(), next);
  return getBackground();
}
