// The texts a user reads when something needs fixing: each says what happened and where to fix it.

export const MENU_NAME = 'DAPA';
export const SET_KEY_PATH = `Extensions → ${MENU_NAME} → Set API key`;
export const REFRESH_PATH = `Extensions → ${MENU_NAME} → Refresh DAPA formulas`;
export const SIDEBAR_PATH = `Extensions → ${MENU_NAME} → Open sidebar`;

export const NO_KEY = `No DAPA API key is set. Add your key in ${SET_KEY_PATH}.`;

export function wrongKeyMessage(serverText: string): string {
  return `The DAPA API key was rejected ("${serverText}"): it is wrong or missing. Fix it in ${SET_KEY_PATH}.`;
}

export function expiredPlanMessage(serverText: string): string {
  return `Your DAPA plan has expired or does not allow this request ("${serverText}"). Renew the plan, or set another key in ${SET_KEY_PATH}.`;
}

/** What a DAPA cell shows for a row that the 30-second limit cut off. */
export const UNFINISHED_CELL = `unfinished: refresh to finish (${REFRESH_PATH})`;

/** The same with background checks on: the formula is refreshed by itself once its domains are in. */
export const UNFINISHED_IN_BACKGROUND = 'unfinished: checking in the background, this fills in by itself';
