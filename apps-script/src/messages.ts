// The texts a user reads, worded by the Sheets shell from the core's codes (never parsed back): what happened and
// where to fix it.
import { type Fatal, type Outcome, outcomeText } from '../../shared';

export const MENU_NAME = 'DAPA';
export const SET_KEY_PATH = `Extensions → ${MENU_NAME} → Set API key`;
export const REFRESH_PATH = `Extensions → ${MENU_NAME} → Refresh DAPA formulas`;
export const SIDEBAR_PATH = `Extensions → ${MENU_NAME} → Open sidebar`;

export const NO_KEY = `No DAPA API key is set. Add your key in ${SET_KEY_PATH}.`;

/** The service's own words, quoted, when it sent any. */
function quoted(serverText: string | undefined): string {
  return serverText ? ` ("${serverText}")` : '';
}

/** The error a whole =DAPA formula shows when no row can be checked (wrong key, expired plan, wrong base URL). */
export function formulaError(fatal: Fatal): string {
  if (fatal.code === 'bad_key')
    return `The DAPA API key was rejected${quoted(fatal.serverText)}: it is wrong or missing. Fix it in ${SET_KEY_PATH}.`;
  if (fatal.code === 'not_premium')
    return `Your DAPA plan has expired or does not allow this request${quoted(fatal.serverText)}. Renew the plan, or set another key in ${SET_KEY_PATH}.`;
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

/** What each OAuth scope the add-on asks for lets it do, in the words of the sidebar. */
const SCOPE_WORDS: Record<string, string> = {
  'https://www.googleapis.com/auth/script.external_request': 'connect to the DAPA service',
  'https://www.googleapis.com/auth/spreadsheets': 'open the spreadsheets where you use DAPA',
  'https://www.googleapis.com/auth/script.scriptapp': 'run in the background (triggers)',
  'https://www.googleapis.com/auth/script.container.ui': 'show its menu and sidebar',
};

export const START_BACKGROUND_PATH = `Extensions → ${MENU_NAME} → Turn on background checks`;

/** Background checks need scopes the user did not grant (Google's granular consent): what is missing, what works. */
export function accessText(missing: readonly string[]): string {
  const words = missing.map((s) => SCOPE_WORDS[s] ?? s).join(', ');
  return (
    `Background checks need your permission to ${words}, which you did not grant. =DAPA formulas still work` +
    (missing.includes('https://www.googleapis.com/auth/script.external_request')
      ? '.'
      : ', and so do checks from the sidebar.') +
    ` To allow it, turn background checks on again (${START_BACKGROUND_PATH}): Google asks for just what is missing.`
  );
}

/** A sidebar check needs a scope the user did not grant. */
export function sidebarAccessText(missing: readonly string[]): string {
  const words = missing.map((s) => SCOPE_WORDS[s] ?? s).join(', ');
  return (
    `Checks from the sidebar need your permission to ${words}, which you did not grant. =DAPA formulas still ` +
    'work. Start the check again to allow it: Google asks for just what is missing.'
  );
}

/** The note shown after the background dropped a spreadsheet it could no longer open. */
export function spreadsheetGone(name: string | undefined, why: string): string {
  const which = name ? `"${name}"` : 'A spreadsheet';
  return `${which} was taken off background checks: it could not be opened (${why}). Open it and turn background checks on again if you still use it.`;
}
