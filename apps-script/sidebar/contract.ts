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
  schedule?: ScheduleChange & { nextAt: number; forecast?: Forecast };
  /** Scopes background checks need that the user did not grant (granular consent), and what to do. */
  access?: { missing: string[]; message: string };
  /** Spreadsheets the background dropped from its list (deleted, or their access lost), as notes to show. */
  dropped?: string[];
}

/** What a check will cost, before it runs (estimateJob, estimateFormulasAgain). */
export interface Estimate {
  rows: number;
  /** Distinct domains among the rows. */
  domains: number;
  /** Of those, kept or cached results: free. */
  free: number;
  /** The most it can be billed: its new domains, capped by what the monthly budget leaves. */
  cost: number;
  /** The budget left is less than its new domains: the rest wait for it. */
  capped: boolean;
  text: string;
}

/** A schedule's monthly forecast: domains a refresh bills × refreshes a month, and the warning when too much. */
export interface Forecast {
  perRun: number;
  runs: number;
  credits: number;
  /** 'budget': over the user's monthly budget; 'plan': over the entry plan's 10,000 credits. */
  over?: 'budget' | 'plan';
  text: string;
}

/** The user's monthly credits (getCredits, setCreditBudget). */
export interface CreditInfo {
  /** Credits a calendar month (UTC) the user's checks may spend; undefined: no budget. */
  budget?: number;
  /** "2026-11" */
  month: string;
  /** Billed this month by this user's checks (formulas, sidebar, background, schedules), counted by the add-on. */
  used: number;
  left?: number;
  text: string;
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
  getCredits(): CreditInfo;
  setCreditBudget(budget: number | null): CreditInfo;
  estimateJob(source: JobSource): Estimate;
  estimateFormulasAgain(): Estimate;
}

export type ServerFunctionName = keyof ServerFunctions;
