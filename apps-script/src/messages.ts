// The texts a user reads, worded by the Sheets shell from the core's codes (never parsed back): what happened and
// where to fix it.
// Over 300 lines: every text of the Sheets shell in one module, so each is worded once and the troubleshooting page's
// test reads them in one place.
import { type Fatal, type Outcome, outcomeText } from '../../shared';
import type { JobCounts, JobStatus } from '../sidebar/contract';

export const MENU_NAME = 'DAPA';
export const SET_KEY_PATH = `Extensions → ${MENU_NAME} → Set API key`;
export const SAMPLE_PATH = `Extensions → ${MENU_NAME} → Try with sample data`;
export const REFRESH_PATH = `Extensions → ${MENU_NAME} → Refresh DAPA formulas`;

export const NO_KEY = `No DAPA API key is set. Add your key in ${SET_KEY_PATH}.`;

/** The menu, the sidebar and the edit trigger work on the active spreadsheet. */
export const NO_SPREADSHEET = 'Open a spreadsheet first: DAPA works on the spreadsheet you have open.';

/** The service's own words, quoted, when it sent any. */
function quoted(serverText: string | undefined): string {
  return serverText ? ` ("${serverText}")` : '';
}

/**
 * A 403 page in Sheets: Apps Script always fetches from Google's servers, so "try another network" is no advice here;
 * the service's support or a self-hosted n8n is.
 */
export function networkBlockedInSheets(status = 403): string {
  return (
    `The DAPA service refused requests from this server's network (HTTP ${status}): not your API key. Apps Script ` +
    "runs on Google's servers and the service blocks them; nothing in this sheet or on your own network changes " +
    'that. Ask DAPA checker support (https://www.dapachecker.org) to allow Google Apps Script, or check the list ' +
    'with the DAPA Checker node in a self-hosted n8n.'
  );
}

/** The error a whole =DAPA formula shows when no row can be checked (wrong key, expired plan, wrong base URL). */
export function formulaError(fatal: Fatal): string {
  if (fatal.code === 'bad_key')
    return `The DAPA API key was rejected${quoted(fatal.serverText)}: it is wrong or missing. Fix it in ${SET_KEY_PATH}.`;
  if (fatal.code === 'not_premium')
    return `Your DAPA plan has expired or does not allow this request${quoted(fatal.serverText)}. Renew the plan, or set another key in ${SET_KEY_PATH}.`;
  if (fatal.code === 'network_blocked') return networkBlockedInSheets(fatal.detail?.status);
  return outcomeText(fatal);
}

/** A sidebar row's Status cell: the code, then what happened (empty for a record with metrics). */
export function statusText(outcome: Outcome): string {
  if (outcome.kind === 'record') return '';
  if (outcome.kind === 'skip' && outcome.blank) return BLANK_STATUS;
  return `${outcome.kind === 'skip' ? outcome.reason : outcome.code}: ${outcomeText(outcome)}`;
}

/** The Status of a blank row (none is sent). */
export const BLANK_STATUS = 'empty_url: Empty cell: nothing to check.';

/** The Status of a record the service sent without any metric. */
export const NO_DATA_STATUS = 'no_data: the service returned this domain without metrics.';

/** What a DAPA cell shows for a row that the 30-second limit cut off. */
export const UNFINISHED_CELL = `unfinished: refresh to finish (${REFRESH_PATH})`;

/** The same with background checks on: the formula is refreshed by itself once its domains are in. */
export const UNFINISHED_IN_BACKGROUND = 'unfinished: checking in the background, this fills in by itself';

export const SIDEBAR_PATH = `Extensions → ${MENU_NAME} → Open sidebar`;

/** What a formula shows when Google refused its network call: the user did not allow the add-on to reach the service. */
export function fetchRefused(): string {
  return (
    'Google did not let DAPA reach the DAPA service: allow "Connect to an external service" for DAPA. ' +
    `Open ${SIDEBAR_PATH} (or any DAPA menu item): Google asks for the permission; then refresh (${REFRESH_PATH}).`
  );
}

/**
 * Google's daily quotas per user that refuse a call with their own words: Properties calls (50,000 a day on a consumer
 * account), URL fetches (20,000) and trigger runtime (90 minutes). Each comes back by itself within a day.
 */
export type DailyLimit = 'properties' | 'urlfetch' | 'runtime';

/** Google's daily quotas per user, in the project's words (what Google counts, not Google's own text). */
const DAILY_LIMIT_WORDS: Record<DailyLimit, string> = {
  properties: "DAPA's calls to its saved settings and state (Properties)",
  urlfetch: 'requests to outside services (URL Fetch)',
  runtime: 'time for background work (trigger runtime)',
};

/**
 * What a DAPA cell shows when Google refused a call for the day (one of its daily quotas per account is used up,
 * often by other sheets or scripts of the same account): nothing was sent or billed, and it fills in after the reset.
 */
export function dailyLimitCell(limit: DailyLimit): string {
  return (
    `daily_limit: Google's daily limit on ${DAILY_LIMIT_WORDS[limit]} for your account is used up; nothing was ` +
    `billed. This fills in by itself once Google resets it (within 24 hours) with background checks on, or with ${REFRESH_PATH} then.`
  );
}

/** The sidebar's and the menu's words for the same: what is used up, and that DAPA goes on by itself. */
export function dailyLimitText(limit: DailyLimit): string {
  return (
    `Google's daily limit on ${DAILY_LIMIT_WORDS[limit]} for your Google account is used up (other sheets and ` +
    'scripts of the account count too). It comes back by itself within 24 hours of its first use; DAPA then goes on ' +
    'where it stopped: formulas fill in and background checks resume, and nothing is billed twice. Try this again then.'
  );
}

/**
 * What "Turn on background checks" says when Google's daily quota refused DAPA's saved state: they are on (the trigger
 * needs no Properties call) and when the work resumes.
 */
export function backgroundOnThroughLimit(limit: DailyLimit): string {
  return (
    `Background checks are on. Google's daily limit on ${DAILY_LIMIT_WORDS[limit]} for your Google account is used ` +
    "up, so the work resumes by itself within an hour of Google's reset (24 hours after the day's first use at the " +
    'latest): formulas that wait fill in then, and nothing is billed twice. Nothing more to do.'
  );
}

/** What a DAPA cell shows for a domain past the monthly credit budget (never sent, never billed). */
export const BUDGET_CELL = `credit_budget: credit budget reached: raise it in the sidebar (${SIDEBAR_PATH})`;

/** The same with background checks on: the cell fills in once the budget is raised or the month turns. */
export const BUDGET_IN_BACKGROUND =
  'credit_budget: credit budget reached: raise it in the sidebar, or this fills in by itself when the month turns';

/** What the monthly budget allows, as the sidebar shows it beside the budget. */
export function creditsText(used: number, budget: number | undefined, month: string): string {
  const left =
    budget === undefined ? 'no budget set' : `budget ${budget}, ${Math.max(0, budget - used)} left`;
  return `${used} credits used in ${month} (UTC; ${left}).`;
}

/** Before a check: what it reads and the most it can cost. */
export function estimateText(e: {
  rows: number;
  domains: number;
  free: number;
  cost: number;
  capped: boolean;
}): string {
  return (
    `${e.rows} rows, ${e.domains} distinct domains, ${e.free} kept or cached (free): ` +
    `costs at most ${e.cost} credits` +
    (e.capped ? ' (the budget left; the rest wait for it).' : '.')
  );
}

/** A schedule's monthly forecast and, when it is too much, the warning. */
export function forecastText(
  perRun: number,
  runs: number,
  over: 'budget' | 'plan' | undefined,
  budget?: number,
): string {
  const warning =
    over === 'budget'
      ? ` Warning: more than your monthly budget (${budget}); refreshes past it wait for next month.`
      : over === 'plan'
        ? ` Warning: more than the entry plan's ${ENTRY_PLAN_CREDITS} credits a month.`
        : '';
  return `About ${perRun * runs} credits a month (${perRun} domains × ${runs} refreshes).${warning}`;
}

/** The entry plan's monthly credits (about 10,000). */
export const ENTRY_PLAN_CREDITS = 10_000;

/** What each OAuth scope the add-on asks for lets it do, in the words of the sidebar. */
const SCOPE_WORDS: Record<string, string> = {
  'https://www.googleapis.com/auth/script.external_request': 'connect to the DAPA service',
  'https://www.googleapis.com/auth/spreadsheets': 'open the spreadsheets where you use DAPA',
  'https://www.googleapis.com/auth/script.scriptapp': 'run in the background (triggers)',
  'https://www.googleapis.com/auth/script.container.ui': 'show its menu and sidebar',
};

export const START_BACKGROUND_PATH = `Extensions → ${MENU_NAME} → Turn on background checks`;

/** Background checks need scopes the user did not grant (Google's granular consent): what is missing, what works. */
function scopeWords(missing: readonly string[]): string {
  return missing.map((s) => SCOPE_WORDS[s] ?? s).join(', ');
}

export function accessText(missing: readonly string[]): string {
  return (
    `Background checks need your permission to ${scopeWords(missing)}, which you did not grant. =DAPA formulas still work` +
    (missing.includes('https://www.googleapis.com/auth/script.external_request')
      ? ' where Google lets them reach the service on their own (a cell says so where it does not).'
      : ', and so do checks from the sidebar.') +
    ` To allow it, turn background checks on again (${START_BACKGROUND_PATH}): Google asks for just what is missing.`
  );
}

/** A sidebar check needs a scope the user did not grant. */
export function sidebarAccessText(missing: readonly string[]): string {
  return (
    `Checks from the sidebar need your permission to ${scopeWords(missing)}, which you did not grant. =DAPA formulas still ` +
    'work. Start the check again to allow it: Google asks for just what is missing.'
  );
}

/** The note shown after the background dropped a spreadsheet it could no longer open. */
export function spreadsheetGone(name: string | undefined, why: string): string {
  const which = name ? `"${name}"` : 'A spreadsheet';
  return `${which} was taken off background checks: it could not be opened (${why}). Open it and turn background checks on again if you still use it.`;
}

// ---- the sidebar's job ------------------------------------------------------------------------------------

/** Where a job stands: its rows and counts (a stored job, or what the sidebar sees). */
interface JobProgress {
  status: JobStatus;
  done: number;
  total: number;
  counts: JobCounts;
}

function jobSummary({ counts: c }: JobProgress): string {
  return (
    `${c.records} with metrics, ${c.skipped} skipped, ${c.errors} not checked; ` +
    `${c.requests} requests, ${c.billed} credits billed, ${c.cached} from the cache.`
  );
}

/**
 * Where a job stands: cancelled or done (with its counts), else how far it got, or (`progressed` false: the turn
 * sent nothing) that it waits for the plan's rate limit.
 */
export function jobMessage(job: JobProgress, progressed = true): string {
  if (job.status === 'cancelled')
    return `Cancelled after ${job.done} of ${job.total} rows. ${jobSummary(job)}`;
  if (job.status === 'done') return `Done: ${job.total} rows. ${jobSummary(job)}`;
  return progressed
    ? `Checked ${job.done} of ${job.total} rows.`
    : "Waiting for the plan's rate limit before the next rows.";
}

/** Background checks run the job (also with the sidebar closed); the sidebar only shows where it stands. */
export function inBackgroundMessage(job: JobProgress): string {
  return `Checked ${job.done} of ${job.total} rows; the rest is checked in the background.`;
}

export function retryMessage(rows: number): string {
  return rows > 0
    ? `Retrying ${rows} rows that were skipped for a reason that can change.`
    : 'Nothing to retry: no row was skipped for a reason that can change.';
}

export const SCHEDULED_REFRESH = 'Scheduled refresh.';
export const NO_JOB = 'There is no DAPA job in this spreadsheet: start one from the sidebar.';
export const NO_JOB_TO_CANCEL = 'There is no DAPA job in this spreadsheet to cancel.';
export const NO_JOB_TO_RETRY = 'There is no earlier DAPA job in this spreadsheet to retry.';
export const JOB_STILL_RUNNING = 'The job is still running: let it finish or cancel it first.';
export const JOB_HELD_ELSEWHERE = 'Another step of this job is running (is the sidebar open twice?).';

// ---- background checks --------------------------------------------------------------------------------------

export const BACKGROUND_ON =
  'Background checks are on: unfinished formulas and sidebar checks go on with the sheet closed.';

export const BACKGROUND_ON_HOURLY =
  'Background checks are on, hourly (Google’s rule for add-ons): keep the sidebar open for the plan’s pace.';

export const TRIGGER_REFUSED =
  'Background checks could not start: Google refused a trigger in this spreadsheet, and none was left ' +
  'installed. Keep the sidebar open to finish formulas and checks, or remove other triggers of this ' +
  'add-on (Extensions › Apps Script › Triggers) and turn background checks on again.';

export const SERVICE_KEPT_FAILING = 'The DAPA service kept failing; background checks paused.';

/** Followed by the last failure's words. */
export const PAUSED_AFTER_FAILURES = 'Background checks paused after repeated failures: ';

/**
 * The sidebar's note when what the background still has to do needs more trigger runtime than Google leaves today
 * (90 minutes a day on a consumer account): it goes on by itself the next day.
 */
export function dailyRuntimeNote(needMinutes: number, leftMinutes: number): string {
  return (
    `Background checks need about ${needMinutes} more minutes of trigger runtime, and Google leaves ${leftMinutes} ` +
    "today (a consumer Google account has 90 minutes a day): what does not fit goes on by itself tomorrow, when Google's " +
    'daily allowance starts again. Keeping the sidebar open checks without trigger runtime.'
  );
}

/**
 * Saving a key in a copy bound to a spreadsheet that others can edit: they can add a custom function to its script
 * project, and a custom function reads the owner's user properties, so the key is theirs to read.
 */
export function keyReadableByEditors(others: number): string {
  return (
    `Anyone who can edit this spreadsheet (${others} other ${others === 1 ? 'person' : 'people'}) can read the key ` +
    'saved in this copy: they can open its Apps Script project and add a formula that returns it. For a shared ' +
    "spreadsheet, use the DAPA add-on (each person's key stays in their own account), share it as view-only, or " +
    `remove the key here when you are done (${SET_KEY_PATH}, empty box).`
  );
}

/** A menu item that opens the sidebar or a dialog, when the user did not allow Google's box for them. */
export const UI_REFUSED =
  'DAPA cannot open its sidebar or dialogs: you did not allow "Display and run third-party web content in prompts ' +
  'and sidebars inside Google applications" for DAPA. Tick that box on the Google screen that opens now (or choose ' +
  'the menu item again). =DAPA formulas work without it.';

/** "Remove DAPA from this spreadsheet": what it will do, asked first. */
export function removeConfirmText(): string {
  return (
    'Remove DAPA from this spreadsheet? Every =DAPA formula becomes the values it shows now, DAPA’s hidden sheets ' +
    '(_dapa_results, _dapa_versions) and the DAPA sample sheet are deleted, and so are DAPA’s notes in the ' +
    'spreadsheet and your background checks and triggers for it. Your own data and the results stay, as values. ' +
    'Your key and your other spreadsheets are not touched.'
  );
}

/** "1 DAPA formula", "3 DAPA formulas": a count with its noun in the number it takes. */
export function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** What "Remove DAPA from this spreadsheet" did (a count of one takes the singular). */
export function removedText(removed: { formulas: number; sheets: number; notes: number }): string {
  const formulas =
    removed.formulas === 1
      ? '1 DAPA formula is now a value'
      : `${removed.formulas} DAPA formulas are now values`;
  return (
    `DAPA is removed from this spreadsheet: ${formulas}, ${counted(removed.sheets, 'sheet', 'sheets')} of DAPA's ` +
    `and ${counted(removed.notes, 'note', 'notes')} of its are deleted, and your background checks here are off. ` +
    'Other people who turned background checks on here remove theirs with the same menu item. To remove DAPA itself, ' +
    'see the user guide, "Uninstall from Sheets".'
  );
}

/**
 * A menu item or sidebar button whose consent box is unticked (Google's granular consent): what it needs, in DAPA's
 * words, before Google's own screen asks for it. `screens` are the boxes as Google's screen words them.
 */
export function permissionNeeded(what: string, screens: string[]): string {
  const boxes = screens.map((s) => `"${s}"`).join(' and ');
  return (
    `${what} needs your permission: you did not allow ${boxes} for DAPA. Tick ` +
    `${screens.length === 1 ? 'that box' : 'those boxes'} on the Google screen that opens next (or choose the menu ` +
    'item again). =DAPA formulas work without it.'
  );
}

/**
 * Said after keyReadableByEditors: what else editors of a bound copy can do with the owner's key, what Google does
 * not let DAPA see (link sharing; who recalculated a formula), and what binds them.
 */
export const KEY_SPENT_BY_EDITORS =
  'They can also spend your credits: a =DAPA formula uses the key of the spreadsheet’s owner whoever recalculates ' +
  'it, as Google does not tell a formula who did (your monthly credit budget, set in the sidebar, binds everyone). ' +
  'Google does not show DAPA who may edit through the link: if "Anyone with the link" is an editor, they can too.';

/** A bound copy holding a key whose sharing DAPA could not check: the Spreadsheets box unticked. */
export const SHARING_UNCHECKED =
  'DAPA could not check who can edit this spreadsheet: you did not allow "See, edit, create, and delete all your ' +
  'Google Sheets spreadsheets" for DAPA. In this copy, anyone who can edit the spreadsheet can read your key and ' +
  `spend your credits. To let DAPA check, choose Extensions → ${MENU_NAME} → Refresh DAPA formulas and tick that box on ` +
  "Google's screen.";
