// The add-on menu and what its items do: open the sidebar, set the key, check the selection, refresh DAPA
// formulas that are unfinished or older than the cache, and help.
/// <reference types="google-apps-script" />
import { wakeBackground, wantUpkeep } from '../background/dispatcher';
import { dapaFormulaCells, keepShown, refreshFormulas, upToDate } from '../checks/formulas';
import { allowedFor, now } from '../platform/gas';
import { startJob } from './job';
import { testKey } from './key-test';
import { sharedKeyWarning, withSharing } from './key-sharing';
import { uiAllowed } from './menu-consent';
import { MENU_NAME, SET_KEY_PATH } from '../messages';
import { readCachedRecords, readStoredRecords, stepUpkeep } from '../stores/results';
import { currentBaseUrl, readSettings, saveSettings, storedApiKey } from '../stores/account';
import { runStep, turnOf } from '../background/step';
import { idOf } from '../stores/session';

/** Builds the menu. Runs in AuthMode.NONE too, so it reads no property and calls no service but the UI. */
export function onOpen(_event?: unknown): void {
  SpreadsheetApp.getUi()
    .createAddonMenu()
    .addItem('Open sidebar', 'showSidebar')
    .addItem('Set API key', 'promptApiKey')
    .addItem('Try with sample data', 'trySampleData')
    .addItem('Check selection', 'checkSelection')
    .addItem('Refresh DAPA formulas', 'refreshDapaFormulas')
    .addItem('Check DAPA formulas again', 'checkFormulasAgain')
    .addItem('Turn on background checks', 'startBackground')
    .addItem('Turn off background checks', 'stopBackground')
    .addSeparator()
    .addItem('Remove DAPA from this spreadsheet', 'removeDapa')
    .addItem('Help', 'showHelp')
    .addToUi();
}

export function onInstall(event?: unknown): void {
  onOpen(event);
}

export function showSidebar(): void {
  uiAllowed();
  const html = HtmlService.createHtmlOutputFromFile('Sidebar').setTitle('DAPA checker');
  SpreadsheetApp.getUi().showSidebar(html);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function promptApiKey(): void {
  uiAllowed();
  const ui = SpreadsheetApp.getUi();
  const settings = readSettings();
  const current = settings.hasKey ? `The current key is ${settings.keyHint}. ` : 'No key is set yet. ';
  const response = ui.prompt(
    'DAPA API key',
    `${current}Paste your API key: it is kept in your own user properties and never shown again. ` +
      'Leave the box empty and press OK to remove the key.',
    ui.ButtonSet.OK_CANCEL,
  );
  if (response.getSelectedButton() !== ui.Button.OK) return;
  const text = response.getResponseText();
  try {
    saveSettings({ apiKey: text });
  } catch (error) {
    ui.alert(MENU_NAME, errorText(error), ui.ButtonSet.OK);
    return;
  }
  if (text.trim() === '') {
    ui.alert(MENU_NAME, 'The API key was removed.', ui.ButtonSet.OK);
    return;
  }
  const result = testKey();
  const warning = sharedKeyWarning();
  const saved = result.ok ? `Saved. ${result.message}` : `Saved, but the key test failed: ${result.message}`;
  ui.alert(MENU_NAME, warning ? `${saved}\n\n${warning}` : saved, ui.ButtonSet.OK);
}

/** Starts a job over the selection and opens the sidebar, which drives it. */
export function checkSelection(): void {
  uiAllowed();
  try {
    startJob({ source: 'selection' });
  } catch (error) {
    const ui = SpreadsheetApp.getUi();
    ui.alert(MENU_NAME, errorText(error), ui.ButtonSet.OK);
    return;
  }
  showSidebar();
}

/**
 * Makes Sheets recalculate the DAPA formulas that are not up to date or check a domain that is neither cached nor
 * kept, through their version cells (as the background does), and wakes background checks when domains are left.
 */
export function refreshDapaFormulas(): { formulas: number; refreshed: number } {
  allowedFor('sheet', 'Refresh DAPA formulas');
  const spreadsheet = SpreadsheetApp.getActiveSpreadsheet();
  const baseUrl = currentBaseUrl();
  const cells = dapaFormulaCells(spreadsheet);
  // The store and the caches read once for every formula's domains (not once a formula). What the caches hold and
  // the store lacks is kept now, as of when it was fetched (a formula recalculated once the cache has let it go would
  // pay for it again), as a step keeps what the formulas show.
  const keys = [...new Set(cells.flatMap((cell) => cell.keys ?? []))];
  const kept = readStoredRecords(baseUrl, keys);
  const fetchedAt = new Map<string, number>();
  const cached = readCachedRecords(
    baseUrl,
    keys.filter((k) => !kept.has(k)),
    fetchedAt,
  );
  const dated = [...cached].map(([key, record]) => ({ key, record, at: fetchedAt.get(key) ?? now() }));
  keepShown(spreadsheet, baseUrl, { dated, undated: [] });
  const left = new Set(keys.filter((k) => !kept.has(k) && !cached.has(k)));
  const stale = cells.filter(
    (cell) => !cell.keys || !upToDate(spreadsheet, cell) || cell.keys.some((k) => left.has(k)),
  );
  const complete = stale.filter((c) => c.keys && c.keys.every((k) => !left.has(k)));
  const legacyFree = refreshFormulas(spreadsheet, complete);
  // The domains left: what the plan's window allows now is checked here, as the open sidebar's step does (no wait),
  // and the step refreshes the formulas it completes; the others keep saying "refresh to finish" instead of being
  // recalculated in vain (each recalculation is an execution). Without a key, or with a step already at work, they
  // are recalculated: they say so, or the running step fills them.
  const stepped = left.size > 0 && storedApiKey() !== undefined && stepHere(spreadsheet);
  const recalculate = stale.filter((c) => !complete.includes(c) && (!stepped || !c.keys));
  const rest = refreshFormulas(spreadsheet, recalculate, false);
  // The store's upkeep, and the retention's promise for what this refresh kept: the next upkeep is wanted when the
  // oldest result passes the retention, with nobody opening the spreadsheet.
  const { dueAt } = stepUpkeep(spreadsheet, { legacyFree: legacyFree || rest });
  wantUpkeep(idOf(spreadsheet), dueAt, () => spreadsheet.getName());
  const woken = left.size > 0 && wakeBackground(idOf(spreadsheet), now());
  const formulas = cells.length;
  const notice =
    formulas === 0
      ? 'No DAPA formula in this spreadsheet.'
      : `Refreshing ${stale.length} of ${formulas} DAPA formulas (${formulas - stale.length} are up to date).` +
        (woken ? ` Background checks go on with ${left.size} domains.` : '');
  const told = withSharing(notice);
  spreadsheet.toast(told, MENU_NAME, told === notice ? 5 : 20);
  return { formulas, refreshed: stale.length };
}

/** One step of the spreadsheet's formulas, as the open sidebar runs it: whether it ran (another may hold the lease). */
function stepHere(spreadsheet: GoogleAppsScript.Spreadsheet.Spreadsheet): boolean {
  return runStep(spreadsheet, turnOf('sidebar')) !== undefined;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const HELP = [
  [
    '=DAPA(A2:A50)',
    'DA, PA, MR and Spam Score for each URL of the range, one row per cell, in one request per range.',
  ],
  [
    '=DAPA(A2:A50, "spam,da", TRUE)',
    'Choose and order the columns (da, pa, mr, spam, domain); TRUE adds a header row.',
  ],
  [
    'Skipped cells',
    'Show the reason (invalid_url_format, empty_url, lookup_failed, rate_limit_reached) in the first column.',
  ],
  [
    'unfinished',
    'A formula has 30 seconds; rows not checked in time say "unfinished". With background checks on they fill in by themselves; otherwise use Refresh DAPA formulas.',
  ],
  [
    'Kept results',
    'Results are kept 30 days (settable in the sidebar) in the hidden sheet _dapa_results: checking a domain again costs no query. Check again ignores them.',
  ],
  [
    'Sidebar',
    'Checks thousands of rows into the 5 columns right of the URLs, with progress, cancel and retry.',
  ],
  [
    'Your key',
    `Set it in ${SET_KEY_PATH}; it is stored in your own user properties. The sidebar, the menu and background checks always use the key of the person using them; a formula uses the key Google's properties hold for it (the user guide, "Shared spreadsheets"). In a copy you installed yourself, everyone who can edit the spreadsheet can read your key.`,
  ],
];

export function showHelp(): void {
  uiAllowed();
  const items = HELP.map(
    ([title, text]) => `<dt><b>${escapeHtml(title)}</b></dt><dd>${escapeHtml(text)}</dd>`,
  ).join('');
  const html = HtmlService.createHtmlOutput(
    `<div style="font:13px/1.45 Arial,sans-serif"><dl>${items}</dl></div>`,
  )
    .setWidth(460)
    .setHeight(420);
  SpreadsheetApp.getUi().showModalDialog(html, 'DAPA help');
}
