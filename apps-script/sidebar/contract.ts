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

export type JobSource = { source: 'selection' } | { source: 'column'; column: string; headerRow: boolean };

export type JobStatus = 'running' | 'done' | 'cancelled' | 'error';

export interface JobCounts {
  records: number;
  skipped: number;
  errors: number;
  requests: number;
  billed: number;
  cached: number;
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
}

export type ServerFunctionName = keyof ServerFunctions;
