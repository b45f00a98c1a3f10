// The add-on's entry: every top-level function Apps Script sees. build.mjs bundles this module into one IIFE
// (global `__dapa`) and adds a one-line top-level stub per export: the sidebar's server functions from the
// contract's SERVER_FUNCTIONS, the others from its own list; it refuses to build when they and these exports differ.
import type { ServerFunctions } from '../sidebar/contract';
import type * as Entry from './main';
export { DAPA } from './formula/dapa';
export { DAPA_SAMPLE, trySampleData } from './sample/sample';
export {
  onOpen,
  onInstall,
  showSidebar,
  promptApiKey,
  checkSelection,
  refreshDapaFormulas,
  showHelp,
} from './sidebar/menu';
export { readSettings as getSettings } from './stores/settings';
export { saveKeySettings as saveSettings } from './sidebar/key-sharing';
export { testKey } from './sidebar/key-test';
export { removeDapa } from './sidebar/remove-all';
export { getSelection, startJob, continueJob, cancelJob, getJob, retrySkipped } from './sidebar/job';
export { dapaBackgroundStep, dapaOnEdit, dapaBackgroundWatch } from './background/dispatcher';
export {
  startBackground,
  stopBackground,
  getBackground,
  setKeepDays,
  setSchedule,
  checkFormulasAgain,
  driveBackground,
} from './sidebar/background-panel';
export { getCredits, setCreditBudget, estimateJob, estimateFormulasAgain } from './sidebar/credits';

/** tsc refuses this file when a server function of the contract is not exported here, or not with its signature. */
type Checked<Exports extends ServerFunctions> = Exports;
export type SidebarServerFunctions = Checked<Pick<typeof Entry, keyof ServerFunctions>>;
