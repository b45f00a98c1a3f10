// The fixed contract between the sidebar and the Apps Script server functions it calls through
// google.script.run: names, argument shapes and answers. Types only; nothing here runs.

export type Environment = 'production' | 'staging' | 'custom';

/** What `getSettings()` and `saveSettings()` answer: never the key itself, only a masked hint. */
export interface Settings {
  hasKey: boolean;
  keyHint: string;
  environment: Environment;
  baseUrl: string;
}

/** `apiKey` undefined keeps the stored key, '' removes it. */
export interface SettingsChange {
  apiKey?: string;
  environment?: Environment;
  baseUrl?: string;
}

export interface KeyTestResult {
  ok: boolean;
  message: string;
}

export interface SelectionInfo {
  sheetName: string;
  a1: string;
  rows: number;
  columns: number;
  firstColumn: string;
}

/** `fresh`: "Check again", ignoring cached and kept results. */
export type JobSource = (
  { source: 'selection' } | { source: 'column'; column: string; headerRow: boolean }
) & { fresh?: boolean };

export type ScheduleEvery = 'daily' | 'weekly' | 'monthly';

/** A scheduled refresh: the sheet's DAPA formulas, or the range of the last sidebar check. */
export interface ScheduleChange {
  every: ScheduleEvery;
  target: 'formulas' | 'range';
}

/** Background checks and the result store, as the sidebar shows them. */
export interface BackgroundInfo {
  on: boolean;
  /** How the add-on runs here: a bound script (clasp, copy-paste) or an Editor add-on (Google's stricter rules). */
  mode: 'bound' | 'addon';
  /** How soon a closed sheet's next step can come: within a minute, or hourly (the add-on rules). */
  cadence: 'minute' | 'hourly';
  /** Domains the formulas and the sidebar's check still wait for, and the time they take at the plan's pace. */
  rowsLeft: number;
  leftMs?: number;
  /** Credits the background's checks were billed in this sheet. */
  creditsUsed: number;
  /** driveBackground's answer: when the open sidebar should call it again (undefined: nothing to drive). */
  driveAt?: number;
  /** When the next background step is due (ms since epoch). */
  nextStepAt?: number;
  /** Why background checks stopped (they do not go on by themselves until turned on again). */
  stopped?: string;
  steps: number;
  runtimeMs: number;
  /** Kept results reused after the 6-hour cache had let them go (they would have been billed again). */
  savedCredits: number;
  retentionDays: number;
  schedule?: ScheduleChange & { nextAt: number };
  /** Scopes background checks need that the user did not grant (granular consent), and what to do. */
  access?: { missing: string[]; message: string };
  /** Spreadsheets the background dropped from its list (deleted, or their access lost), as notes to show. */
  dropped?: string[];
}

export type JobStatus = 'running' | 'done' | 'cancelled' | 'error';

export interface JobCounts {
  records: number;
  skipped: number;
  errors: number;
  requests: number;
  billed: number;
  cached: number;
  /** Rows "Retry skipped rows" checks again: those that ended for a reason that can change, and rows a cancel or
   *  an error left unchecked. */
  retryable: number;
}

export interface JobState {
  id: string;
  sheetName: string;
  a1: string;
  total: number;
  done: number;
  status: JobStatus;
  counts: JobCounts;
  skippedByReason: Record<string, number>;
  message?: string;
}

/** Every server function the sidebar calls, with its argument and answer. */
export interface ServerFunctions {
  getSettings(): Settings;
  saveSettings(change: SettingsChange): Settings;
  testKey(): KeyTestResult;
  getSelection(): SelectionInfo;
  startJob(source: JobSource): JobState;
  continueJob(): JobState;
  cancelJob(): JobState;
  getJob(): JobState | null;
  retrySkipped(): JobState;
  getBackground(): BackgroundInfo;
  startBackground(): BackgroundInfo;
  stopBackground(): BackgroundInfo;
  setKeepDays(days: number): BackgroundInfo;
  setSchedule(change: ScheduleChange | null): BackgroundInfo;
  checkFormulasAgain(): BackgroundInfo;
  driveBackground(): BackgroundInfo;
}

export type ServerFunctionName = keyof ServerFunctions;
