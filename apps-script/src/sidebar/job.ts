// The sidebar's server functions for its bulk check: start a job over the selection or a column (header and
// output area guarded), continue it in short calls (or leave it to background checks when they are on), cancel it,
// show it, and retry the rows that ended for a reason that can change. The job's turns are checks/job-run.ts.
/// <reference types="google-apps-script" />
import type { JobSource, JobState, JobStatus, SelectionInfo } from '../../sidebar/contract';
import {
  advanceJob,
  chooseTarget,
  claimJob,
  clearOutput,
  guardOutputArea,
  makeRoom,
  markOutput,
  OUTPUT_HEADER,
  OUTPUT_WIDTH,
  reopenJob,
  sheetOf,
} from '../checks/job-run';
import {
  allowedFor,
  asCellText,
  type CellValue,
  columnLetter,
  isEmptyCell,
  missingFor,
  now,
  sleep,
} from '../platform/gas';
import { activeSpreadsheet, idOf } from '../stores/session';
import {
  changeJob,
  goesOn,
  loadJob,
  loadRetryRows,
  loadStatus,
  newJob,
  stateOf,
  type StoredJob,
  storeNewJob,
} from '../stores/background-store';
import { requireApiKey, storedApiKey } from '../stores/account';
import { stepUpkeep } from '../stores/results';
import { wakeBackground, wantUpkeep } from '../background/dispatcher';
import {
  BLANK_STATUS,
  inBackgroundMessage,
  JOB_HELD_ELSEWHERE,
  JOB_STILL_RUNNING,
  jobMessage,
  NO_JOB,
  NO_JOB_TO_CANCEL,
  NO_JOB_TO_RETRY,
  retryMessage,
  sidebarAccessText,
} from '../messages';

/** A sidebar call starts no new slice after this long, and its check stops by STEP_BUDGET_MS. */
const STEP_START_MS = 10_000;
const STEP_BUDGET_MS = 25_000;

/** What is selected, for the sidebar's "check the selection". */
export function getSelection(): SelectionInfo {
  const spreadsheet = activeSpreadsheet();
  const range = spreadsheet.getActiveRange();
  if (!range)
    return {
      sheetName: spreadsheet.getActiveSheet().getName(),
      a1: '',
      rows: 0,
      columns: 0,
      firstColumn: '',
    };
  return {
    sheetName: range.getSheet().getName(),
    a1: range.getA1Notation(),
    rows: range.getNumRows(),
    columns: range.getNumColumns(),
    firstColumn: columnLetter(range.getColumn()),
  };
}

export function startJob(source: JobSource): JobState {
  requireApiKey();
  allowedFor('sidebar', 'A check from the sidebar or Check selection');
  const spreadsheet = activeSpreadsheet();
  const target = chooseTarget(spreadsheet, source);
  const { sheet, column, headerRow } = target;
  makeRoom(sheet, target, OUTPUT_WIDTH);
  const writeHeader = guardOutputArea(target);
  clearOutput(sheet, target, OUTPUT_WIDTH);
  markOutput(target);
  if (writeHeader && headerRow !== undefined) {
    sheet.getRange(headerRow, column + 1, 1, OUTPUT_WIDTH).setValues([OUTPUT_HEADER.slice()]);
  }
  const job = newJob(idOf(spreadsheet), target, { message: target.note });
  if (source.fresh === true) {
    job.fresh = true;
    job.freshFrom = now();
  }
  storeNewJob(job);
  wakeBackground(job.spreadsheetId, now());
  return stateOf(job);
}
export function continueJob(): JobState {
  const startedAt = now();
  const spreadsheet = activeSpreadsheet();
  const spreadsheetId = idOf(spreadsheet);
  const missing = missingFor('sidebar');
  if (missing.length > 0) return stopForConsent(spreadsheetId, missing);
  // Who runs the job is decided before any lease is claimed: background checks when they go on (also with the
  // sidebar closed; the sidebar only shows where it stands), else this call.
  if (goesOn(loadStatus(spreadsheetId))) {
    const job = reopenJob(spreadsheetId);
    if (!job) throw new Error(NO_JOB);
    if (job.status !== 'running') return stateOf(job);
    wakeBackground(spreadsheetId);
    return stateOf(job, inBackgroundMessage(job));
  }
  const claim = claimJob(spreadsheetId, startedAt, true);
  const { job, lease } = claim;
  if (!job) throw new Error(NO_JOB);
  if (!lease && job.status !== 'running') return stateOf(job);
  if (!lease) {
    // Another turn holds the job (a second sidebar, a background step): wait a little instead of being called
    // again at once.
    sleep(Math.max(0, Math.min(5_000, (job.leaseUntil ?? 0) - startedAt)));
    return stateOf(job, JOB_HELD_ELSEWHERE);
  }
  const turn = advanceJob(spreadsheet, {
    apiKey: storedApiKey(),
    pace: { kind: 'sidebar', startBy: startedAt + STEP_START_MS, deadline: startedAt + STEP_BUDGET_MS },
    claim,
  });
  // The results it kept may leave dead rows: the store's upkeep, under a lease of its own; and the retention's promise
  // with nobody opening the spreadsheet: the next upkeep is wanted when the oldest result passes it.
  wantUpkeep(spreadsheetId, stepUpkeep(spreadsheet, {}).dueAt, () => spreadsheet.getName());
  if (!turn.progressed && !turn.fatal && turn.remaining) {
    // Nothing could be sent (a plan's rate limit): wait here a little rather than have the sidebar call at once.
    sleep(Math.max(0, Math.min(10_000, startedAt + 30_000 - now())));
  }
  return turn.state ?? stateOf(job);
}

/**
 * Ends the job under the lock when its status is one of `from`: it takes status `to` and the message `say` gives;
 * throws `none` where there is no job.
 */
function endJob(
  spreadsheetId: string,
  none: string,
  from: readonly JobStatus[],
  to: JobStatus,
  say: (job: StoredJob) => string,
): JobState {
  return changeJob(spreadsheetId, (job, writes) => {
    if (!job) throw new Error(none);
    if (from.includes(job.status)) {
      job.status = to;
      job.message = say(job);
      writes.store(job);
    }
    return stateOf(job);
  });
}

/** A scope the check needs was taken back (granular consent): the job stops and says what to allow. */
function stopForConsent(spreadsheetId: string, missing: readonly string[]): JobState {
  const why = sidebarAccessText(missing);
  return endJob(spreadsheetId, why, ['running'], 'error', () => why);
}

export function cancelJob(): JobState {
  const spreadsheetId = idOf(activeSpreadsheet());
  return endJob(spreadsheetId, NO_JOB_TO_CANCEL, ['running', 'error'], 'cancelled', jobMessage);
}

export function getJob(): JobState | null {
  const job = loadJob(idOf(activeSpreadsheet()));
  return job ? stateOf(job) : null;
}

/** A new job over the rows of the last job that ended for a reason that can change, and rows never checked. */
export function retrySkipped(): JobState {
  requireApiKey();
  allowedFor('sidebar', 'A check from the sidebar or Check selection');
  const spreadsheet = activeSpreadsheet();
  const spreadsheetId = idOf(spreadsheet);
  const last = loadJob(spreadsheetId);
  if (!last) throw new Error(NO_JOB_TO_RETRY);
  if (last.status === 'running' && (last.leaseUntil ?? 0) > now()) {
    throw new Error(JOB_STILL_RUNNING);
  }
  const sheet = sheetOf(spreadsheet, last);
  const count = last.lastRow - last.firstRow + 1;
  const inputs = sheet.getRange(last.firstRow, last.column, count, 1).getValues();
  const outputRange = sheet.getRange(last.firstRow, last.column + 1, count, OUTPUT_WIDTH);
  const marked = loadRetryRows(spreadsheetId);
  let again = 0;
  const rewritten = outputRange.getValues().map((row, i) => {
    if (!marked.has(i) && !row.every(isEmptyCell))
      return row.map((cell) => (typeof cell === 'string' ? asCellText(cell) : (cell as CellValue)));
    if (isEmptyCell(inputs[i][0])) return ['', '', '', '', BLANK_STATUS];
    again += 1;
    return row.map(() => '');
  });
  if (again > 0) outputRange.setValues(rewritten);
  const job = newJob(spreadsheetId, last, {
    mode: 'retry',
    total: again,
    status: again > 0 ? 'running' : 'done',
    message: retryMessage(again),
    fresh: last.fresh,
    freshFrom: last.freshFrom,
    since: last.since,
  });
  storeNewJob(job);
  return stateOf(job);
}
