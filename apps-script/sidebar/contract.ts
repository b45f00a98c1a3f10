// The fixed contract between the sidebar and the Apps Script server functions it calls through
// google.script.run: argument shapes, answers, and SERVER_FUNCTIONS, the one list of those functions (build.mjs
// writes Code.js's top-level stubs from it; tsc checks that src/main.ts exports each with its signature).

export type Environment = 'production' | 'staging' | 'custom';

/** What `getSettings()` and `saveSettings()` answer: never the key itself, only a masked hint. */
export interface Settings {
  hasKey: boolean;
  keyHint: string;
  environment: Environment;
  baseUrl: string;
  /** Set when a key was just saved in a bound copy that others can edit: they can read it. */
  sharedKeyWarning?: string;
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
  /** What is left needs more trigger runtime than Google leaves today: it goes on tomorrow (a note to show). */
  quota?: string;
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

/** A server function as the sidebar calls it: the names of its parameters (Code.js's stub is written with them);
 *  its arguments and answer are types only. */
export interface ServerFunction<Args extends unknown[], Answer> {
  readonly params: { readonly [I in keyof Args]: string };
  /** Never set: it carries the signature for tsc. */
  readonly signature?: (...args: Args) => Answer;
}

function call<Args extends unknown[], Answer>(
  ...params: { [I in keyof Args]: string }
): ServerFunction<Args, Answer> {
  return { params };
}

/** Every server function the sidebar calls, with its arguments and answer: the one list of them. */
export const SERVER_FUNCTIONS = {
  getSettings: call<[], Settings>(),
  saveSettings: call<[change: SettingsChange], Settings>('change'),
  testKey: call<[], KeyTestResult>(),
  getSelection: call<[], SelectionInfo>(),
  startJob: call<[source: JobSource], JobState>('source'),
  continueJob: call<[], JobState>(),
  cancelJob: call<[], JobState>(),
  getJob: call<[], JobState | null>(),
  retrySkipped: call<[], JobState>(),
  getBackground: call<[], BackgroundInfo>(),
  startBackground: call<[], BackgroundInfo>(),
  stopBackground: call<[], BackgroundInfo>(),
  setKeepDays: call<[days: number], BackgroundInfo>('days'),
  setSchedule: call<[change: ScheduleChange | null], BackgroundInfo>('change'),
  checkFormulasAgain: call<[], BackgroundInfo>(),
  driveBackground: call<[], BackgroundInfo>(),
  getCredits: call<[], CreditInfo>(),
  setCreditBudget: call<[budget: number | null], CreditInfo>('budget'),
  estimateJob: call<[source: JobSource], Estimate>('source'),
  estimateFormulasAgain: call<[], Estimate>(),
};

export type ServerFunctionName = keyof typeof SERVER_FUNCTIONS;

/** The server functions as functions: `ServerFunctions['startJob']` is `(source: JobSource) => JobState`. */
export type ServerFunctions = {
  [N in ServerFunctionName]: NonNullable<(typeof SERVER_FUNCTIONS)[N]['signature']>;
};
