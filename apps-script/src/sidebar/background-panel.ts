// The sidebar's and the menu's server functions for background checks: turn them on or off (a user action, where
// Google's authorization prompt belongs), what the sidebar shows of them (getBackground), the open sidebar's short
// steps (driveBackground), "Check again", the retention and the scheduled refresh.
/// <reference types="google-apps-script" />
import type { BackgroundInfo, ScheduleChange } from '../../sidebar/contract';
import { DAY_RUNTIME_MS, runStep, turnOf } from '../background/step';
import { formulaWork } from '../checks/formulas';
import { allowedFor, dailyLimitOf, missingFor, now } from '../platform/gas';
import { withSharing } from './key-sharing';
import { activeSpreadsheet, idOf, installMode } from '../stores/session';
import {
  type BackgroundState,
  backgroundStatus,
  type BackgroundStatus,
  dayOf,
  type DispatcherState,
  goesOn,
  loadBackground,
  loadDispatcher,
  loadJob,
  noteLimitedForTheDay,
  noteTurnOnAfterLimit,
  readSchedule,
  saveSchedule,
  triggerCadence,
  updateBackground,
  whenNext,
} from '../stores/background-store';
import {
  currentBaseUrl,
  DEFAULT_RETENTION_DAYS,
  loadWindow,
  retentionDays,
  setRetentionDays,
  storedApiKey,
} from '../stores/account';
import { savedCredits } from '../stores/results';
import {
  armDispatcher,
  installTriggers,
  keepTriggerThroughDailyLimit,
  removeEditTrigger,
  wakeBackground,
} from '../background/dispatcher';
import { forecastOf } from './credits';
import {
  accessText,
  BACKGROUND_ON,
  BACKGROUND_ON_HOURLY,
  backgroundOnThroughLimit,
  dailyRuntimeNote,
  MENU_NAME,
  NO_KEY,
} from '../messages';

/** The open sidebar's call: one short step at the plan's pace; the answer says when to call again. */
export function driveBackground(): BackgroundInfo {
  const spreadsheet = activeSpreadsheet();
  const step = runStep(spreadsheet, turnOf('sidebar'));
  if (step && goesOn(step.status)) armDispatcher(true);
  const info = getBackground();
  // The open sidebar calls again when the spreadsheet's next step is wanted (its wanted table's earliest entry).
  if (step && (step.pending.length > 0 || step.jobRunning)) info.driveAt = step.nextAt ?? now();
  else if (!step) info.driveAt = now() + 5_000;
  return info;
}

/**
 * Turns background checks on (menu or sidebar: a user action, where Google's authorization prompt belongs: the
 * scopes background checks need are asked for here when the user has not granted them) and starts a step.
 */
export function startBackground(): BackgroundInfo {
  try {
    return startNow();
  } catch (error) {
    if (dailyLimitOf(error) !== 'properties') throw error;
    return startThroughDailyLimit();
  }
}

/**
 * Google's Properties quota is spent (other sheets and scripts of the account count too): nothing can be stored, but a
 * trigger needs no Properties call. The triggers are installed (the one that comes back by itself hourly), the
 * spreadsheet is noted in the user's cache, and the first step after Google's reset turns its checks on and works.
 */
function startThroughDailyLimit(): BackgroundInfo {
  allowedFor('background', 'Turn on background checks');
  const spreadsheet = activeSpreadsheet();
  const name = spreadsheet.getName();
  installTriggers(spreadsheet, keepTriggerThroughDailyLimit);
  noteLimitedForTheDay('properties');
  noteTurnOnAfterLimit(idOf(spreadsheet), name);
  const quota = backgroundOnThroughLimit('properties');
  spreadsheet.toast(quota, MENU_NAME);
  let keepDays = DEFAULT_RETENTION_DAYS;
  try {
    keepDays = retentionDays();
  } catch {
    // the document's setting answers again after the reset
  }
  const mode = installMode();
  return {
    on: true,
    mode,
    cadence: mode === 'addon' ? 'hourly' : 'minute',
    rowsLeft: 0,
    creditsUsed: 0,
    steps: 0,
    runtimeMs: 0,
    savedCredits: 0,
    retentionDays: keepDays,
    quota,
  };
}

function startNow(): BackgroundInfo {
  if (!storedApiKey()) throw new Error(NO_KEY);
  allowedFor('background', 'Turn on background checks');
  const spreadsheet = activeSpreadsheet();
  const id = idOf(spreadsheet);
  const name = spreadsheet.getName();
  const started = updateBackground(id, (state) => {
    state.on = true;
    state.stopped = undefined;
    state.failures = 0;
    state.wanted = { work: now() + 1000, upkeep: state.wanted.upkeep }; // the store's upkeep stays wanted
    state.name = name;
  });
  try {
    installTriggers(spreadsheet, () => armDispatcher(true));
  } catch (error) {
    updateBackground(id, (state) => {
      state.on = false;
      state.wanted = { upkeep: state.wanted.upkeep };
    });
    throw error;
  }
  const hourly = backgroundStatus(started, loadDispatcher()) === 'hourly';
  const on = hourly ? BACKGROUND_ON_HOURLY : BACKGROUND_ON;
  const told = withSharing(on); // the owner of a shared bound copy is told again here
  if (told === on) spreadsheet.toast(on, MENU_NAME);
  else spreadsheet.toast(told, MENU_NAME, 20);
  return getBackground();
}

export function stopBackground(): BackgroundInfo {
  allowedFor('sheet', 'Turn off background checks');
  const spreadsheet = activeSpreadsheet();
  updateBackground(idOf(spreadsheet), (state) => {
    state.on = false;
    // The store's upkeep stays wanted: the retention holds with background checks off too.
    state.wanted = state.wanted.upkeep === undefined ? {} : { upkeep: state.wanted.upkeep };
  });
  try {
    removeEditTrigger(spreadsheet);
    armDispatcher(true);
  } catch {
    // Without the triggers scope nothing of ours can be listed; the step finds background checks off.
  }
  return getBackground();
}

/** "Check again": every formula's domains are checked anew in the background, ignoring kept results. */
export function checkFormulasAgain(): BackgroundInfo {
  allowedFor('sheet', 'Check DAPA formulas again');
  const id = idOf(activeSpreadsheet());
  updateBackground(id, (state) => (state.refreshSince = now()));
  wakeBackground(id, now());
  return getBackground();
}

/** When this spreadsheet's next step comes: the user's trigger, or a later one when that serves another sheet. */
function nextStepAt(
  status: BackgroundStatus,
  state: BackgroundState,
  d: DispatcherState,
): number | undefined {
  if (!goesOn(status)) return undefined;
  const wanted = whenNext(state.wanted, false)?.at; // the store's upkeep is not a step the user waits for
  if (wanted === undefined) return status === 'hourly' ? d.dueAt : undefined;
  return d.dueAt !== undefined && d.dueAt >= wanted ? d.dueAt : wanted;
}

export function getBackground(): BackgroundInfo {
  const state = loadBackground(idOf(activeSpreadsheet()));
  const d = loadDispatcher();
  const status = backgroundStatus(state, d);
  const mode = installMode();
  const info: BackgroundInfo = {
    on: status !== 'off',
    mode,
    // Off in an add-on, the cadence it would get; on, the user's trigger's.
    cadence: mode === 'addon' && (status === 'off' || triggerCadence(d) === 'hourly') ? 'hourly' : 'minute',
    steps: state.steps,
    runtimeMs: state.runtimeMs,
    creditsUsed: state.billed ?? 0,
    savedCredits: savedCredits(),
    retentionDays: retentionDays(),
    ...rowsLeft(),
  };
  const quota = status === 'off' ? undefined : quotaNote(state, d, info.rowsLeft);
  if (quota) info.quota = quota;
  const next = nextStepAt(status, state, d);
  if (next !== undefined) info.nextStepAt = next;
  if (state.stopped) info.stopped = state.stopped;
  const missing = missingFor('background');
  if (missing.length > 0) info.access = { missing, message: accessText(missing) };
  if (d.dropped?.length) info.dropped = d.dropped.map((n) => n.why);
  const schedule = readSchedule();
  if (schedule)
    info.schedule = {
      every: schedule.every,
      target: schedule.target,
      nextAt: schedule.nextAt,
      forecast: forecastOf(schedule),
    };
  return info;
}

/** Trigger runtime a domain costs when nothing was measured here yet (a background step's share, ms). */
const RUNTIME_PER_DOMAIN_MS = 900;

/**
 * A note when the rows left need more trigger runtime than the day leaves (at what this spreadsheet's steps spent per
 * domain billed so far): the background stops when Google's allowance is spent and goes on the next day.
 */
function quotaNote(state: BackgroundState, d: DispatcherState, rows: number): string | undefined {
  if (rows === 0) return undefined;
  const usedToday = d.day === dayOf(now()) ? (d.dayRuntimeMs ?? 0) : 0;
  const perDomain = state.billed && state.runtimeMs ? state.runtimeMs / state.billed : RUNTIME_PER_DOMAIN_MS;
  const need = rows * perDomain;
  const left = Math.max(0, DAY_RUNTIME_MS - usedToday);
  if (need <= left) return undefined;
  return dailyRuntimeNote(Math.ceil(need / 60_000), Math.floor(left / 60_000));
}

/** Rows (domains) the formulas and the job still wait for, and how long they take at the plan's pace. */
function rowsLeft(): { rowsLeft: number; leftMs?: number } {
  const spreadsheet = activeSpreadsheet();
  const baseUrl = currentBaseUrl();
  const formulaRows = formulaWork(spreadsheet, baseUrl).pending.length;
  const job = loadJob(idOf(spreadsheet));
  const rows = formulaRows + (job?.status === 'running' ? job.total - job.done : 0);
  const perMinute = loadWindow(baseUrl)?.limits.urlsPerMinute?.value;
  return perMinute ? { rowsLeft: rows, leftMs: Math.round((rows / perMinute) * 60_000) } : { rowsLeft: rows };
}

export function setKeepDays(days: unknown): BackgroundInfo {
  setRetentionDays(days);
  return getBackground();
}

export function setSchedule(change: ScheduleChange | null): BackgroundInfo {
  saveSchedule(change);
  const next = readSchedule()?.nextAt;
  if (next !== undefined) wakeBackground(idOf(activeSpreadsheet()), next);
  return getBackground();
}
