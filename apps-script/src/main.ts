// The add-on's entry: every top-level function Apps Script sees. build.mjs bundles this module into one IIFE
// (global `__dapa`) and adds a one-line top-level stub per export: the sidebar's server functions from the
// contract's SERVER_FUNCTIONS, the others from its own list; it refuses to build when they and these exports differ.
import type { ServerFunctions } from '../sidebar/contract';
import type * as Entry from './main';
import { inOurWords } from './stores/session';
import * as sample from './sample/sample';
import * as menu from './sidebar/menu';
import * as keySharing from './sidebar/key-sharing';
import * as removal from './sidebar/remove-all';
import * as keyTest from './sidebar/key-test';
import * as job from './sidebar/job';
import * as panel from './sidebar/background-panel';
import * as credits from './sidebar/credits';
export { DAPA } from './formula/dapa';
export { DAPA_SAMPLE } from './sample/sample';
export { cachedForRelay as DAPA_CACHE } from './checks/formulas';
export { onOpen, onInstall, showSidebar, showHelp } from './sidebar/menu';
export { dapaBackgroundStep, dapaOnEdit, dapaBackgroundWatch } from './background/dispatcher';

// Menu items and sidebar calls: a refusal by one of Google's daily quotas reaches the user in the project's words.
export const trySampleData = inOurWords(sample.trySampleData);
export const promptApiKey = inOurWords(menu.promptApiKey);
export const checkSelection = inOurWords(menu.checkSelection);
export const refreshDapaFormulas = inOurWords(menu.refreshDapaFormulas);
export const getSettings = inOurWords(keySharing.readKeySettings);
export const saveSettings = inOurWords(keySharing.saveKeySettings);
export const removeDapa = inOurWords(removal.removeDapa);
export const testKey = inOurWords(keyTest.testKey);
export const getSelection = inOurWords(job.getSelection);
export const startJob = inOurWords(job.startJob);
export const continueJob = inOurWords(job.continueJob);
export const cancelJob = inOurWords(job.cancelJob);
export const getJob = inOurWords(job.getJob);
export const retrySkipped = inOurWords(job.retrySkipped);
export const startBackground = inOurWords(panel.startBackground);
export const stopBackground = inOurWords(panel.stopBackground);
export const getBackground = inOurWords(panel.getBackground);
export const setKeepDays = inOurWords(panel.setKeepDays);
export const setSchedule = inOurWords(panel.setSchedule);
export const checkFormulasAgain = inOurWords(panel.checkFormulasAgain);
export const driveBackground = inOurWords(panel.driveBackground);
export const getCredits = inOurWords(credits.getCredits);
export const setCreditBudget = inOurWords(credits.setCreditBudget);
export const estimateJob = inOurWords(credits.estimateJob);
export const estimateFormulasAgain = inOurWords(credits.estimateFormulasAgain);

/** tsc refuses this file when a server function of the contract is not exported here, or not with its signature. */
type Checked<Exports extends ServerFunctions> = Exports;
export type SidebarServerFunctions = Checked<Pick<typeof Entry, keyof ServerFunctions>>;
