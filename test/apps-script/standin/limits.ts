// Apps Script's documented limits that the stand-in enforces (developers.google.com/apps-script/guides/services/quotas
// and the Cache, Properties, Lock and Utilities references), in one place.

/** "Simultaneous executions per user: 30" (quotas page), and the message past it. */
export const SIMULTANEOUS_EXECUTIONS_PER_USER = 30;
export const TOO_MANY_SIMULTANEOUS_MESSAGE =
  'There are too many scripts running simultaneously for this Google user account.';
/**
 * "Simultaneous executions per script: 1,000" (quotas page): every user's executions of one script together (a
 * published add-on is one script for all its users). Google gives no text for it; the stand-in refuses with the
 * per-user message above.
 */
export const SIMULTANEOUS_EXECUTIONS_PER_SCRIPT = 1_000;
/** A custom function's execution: 30 seconds ("Custom function runtime"). */
export const CUSTOM_FUNCTION_MS = 30_000;
/** Any other execution (menu item, google.script.run): 6 minutes ("Script runtime"). */
export const EXECUTION_MS = 6 * 60_000;
/** The message Apps Script gives an execution it stops at its limit. */
export const TIME_LIMIT_MESSAGE = 'Exceeded maximum execution time';

/** CacheService: key ≤ 250 characters, value ≤ 100 KB, expiration 1 s to 21,600 s (default 600), ~1,000 items. */
export const CACHE_KEY_MAX_CHARS = 250;
export const CACHE_VALUE_MAX_BYTES = 100 * 1024;
export const CACHE_MAX_EXPIRATION_S = 21_600;
export const CACHE_DEFAULT_EXPIRATION_S = 600;
export const CACHE_MAX_ITEMS = 1000;
/** Cache reference: "If more than 1,000 items are written, the cache stores the 900 items farthest from expiration." */
export const CACHE_KEEP_ON_EVICTION = 900;

/** PropertiesService: 9 KB per value, 500 KB per store, 50,000 reads/writes a day (consumer accounts). */
export const PROPERTY_VALUE_MAX_BYTES = 9 * 1024;
export const PROPERTY_STORE_MAX_BYTES = 500 * 1024;
export const PROPERTY_CALLS_PER_DAY = 50_000;
/** Quotas page: "Quotas are per user and reset 24 hours after the first request." */
export const QUOTA_WINDOW_MS = 86_400_000;
export const PROPERTY_QUOTA_MESSAGE = 'Service invoked too many times for one day: properties.';

/** UrlFetchApp: 20,000 calls a day, URL ≤ 2 KB, ≤ 100 headers, response ≤ 50 MB; a fetch gives up after 60 s. */
export const URL_FETCH_CALLS_PER_DAY = 20_000;
export const URL_FETCH_QUOTA_MESSAGE = 'Service invoked too many times for one day: urlfetch.';
export const URL_FETCH_URL_MAX_CHARS = 2 * 1024;
export const URL_FETCH_MAX_HEADERS = 100;
export const URL_FETCH_RESPONSE_MAX_BYTES = 50 * 1024 * 1024;
export const URL_FETCH_TIMEOUT_MS = 60_000;

/** LockService: tryLock/waitLock wait at most 5 minutes. Utilities.sleep: at most 5 minutes. */
export const LOCK_MAX_WAIT_MS = 300_000;
export const SLEEP_MAX_MS = 300_000;

/** Sheets: 50,000 characters in a cell. New sheets have 1,000 rows and 26 columns. */
export const CELL_MAX_CHARS = 50_000;
export const DEFAULT_ROWS = 1000;
export const DEFAULT_COLUMNS = 26;
/**
 * Google Drive help, "Files you can store in Google Drive": "Up to 10 million cells or 18,278 columns (column ZZZ) for
 * spreadsheets that are created in or converted to Google Sheets." Cells are the grid of every sheet (maxRows ×
 * maxColumns), filled or not. Past them Sheets refuses the change with the text users report from Apps Script and
 * the Sheets API (e.g. UoaWDCC/uasc-web#833, nithinmurali/pygsheets#589). No report gives the column text: the one
 * below is the stand-in's own, on the cells text's model.
 */
export const WORKBOOK_MAX_CELLS = 10_000_000;
export const SHEET_MAX_COLUMNS = 18_278;
export const WORKBOOK_CELLS_MESSAGE =
  'This action would increase the number of cells in the workbook above the limit of 10000000 cells.';
export const SHEET_COLUMNS_MESSAGE =
  'This action would increase the number of columns in the sheet above the limit of 18278 columns.';

/** ScriptApp: 20 triggers per user per script; a trigger's execution has 6 minutes like any other. */
export const TRIGGERS_PER_USER = 20;
/** Daily trigger runtime ("Triggers total runtime"): 90 min on consumer accounts, 6 h on Workspace. */
export const TRIGGER_RUNTIME_PER_DAY_MS = { consumer: 90 * 60_000, workspace: 6 * 3_600_000 } as const;
export const TRIGGER_QUOTA_MESSAGE = 'Service using too much computer time for one day';

/**
 * Editor add-ons (developers.google.com/workspace/add-ons/concepts/editor-triggers, "Restrictions"): one installable
 * trigger of each type per user per document, and time-driven triggers no more often than once an hour. Google's
 * texts for a refusal, as add-on developers report them (issue 13; ttsukagoshi/mail-merge-for-gmail#165).
 */
export const ADD_ON_TOO_MANY_CLOCK_MESSAGE =
  'This add-on has created too many time-based triggers in this document for this Google user account';
/** Not quoted anywhere we found: the time-based text with the trigger type changed. */
export const ADD_ON_TOO_MANY_EDIT_MESSAGE =
  'This add-on has created too many edit triggers in this document for this Google user account';
export const ADD_ON_RECURRENCE_MESSAGE =
  'The recurrence interval for an Add-on trigger must be at least one hour.';
export const ADD_ON_MIN_INTERVAL_MS = 3_600_000;
/** Default lateness of a time-driven trigger in the stand-in: seeded, uniform between these (ms). */
export const DEFAULT_TRIGGER_LATENESS_MS = { min: 0, max: 60_000 } as const;

/**
 * Developer metadata: the Sheets API's developer-metadata guide limits the metadata of a spreadsheet (and of each
 * sheet) to 30,000 characters. The stand-in keeps the spreadsheet's own metadata and that of each sheet's columns
 * (counted per sheet), and counts keys plus values.
 */
export const DEVELOPER_METADATA_MAX_CHARS = 30_000;

/** SpreadsheetApp.openById/openByUrl of a deleted spreadsheet or one the user cannot read (as users report it). */
export function documentMissingMessage(id: string): string {
  return `Document ${id} is missing (perhaps it was deleted, or you don't have read access?)`;
}
