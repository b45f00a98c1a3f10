// The add-on's entry: every top-level function Apps Script sees. build.mjs bundles this module into one IIFE
// (global `__dapa`) and adds a one-line top-level stub per export, so keep this list and build.mjs in step.
export { DAPA } from './dapa';
export {
  onOpen,
  onInstall,
  showSidebar,
  promptApiKey,
  checkSelection,
  refreshDapaFormulas,
  showHelp,
} from './menu';
export { readSettings as getSettings, saveSettings } from './settings';
export { testKey } from './key-test';
export { getSelection, startJob, continueJob, cancelJob, getJob, retrySkipped } from './job';
export {
  dapaBackgroundStep,
  dapaOnEdit,
  dapaBackgroundWatch,
  startBackground,
  stopBackground,
  getBackground,
  setKeepDays,
  setSchedule,
  checkFormulasAgain,
  driveBackground,
} from './background';
