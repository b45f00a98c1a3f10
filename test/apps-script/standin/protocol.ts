// Messages between the main thread (which holds the stand-in's state: sheet, properties, cache, locks, clock,
// HTTP) and a worker thread running one Apps Script execution in a bare node:vm realm. Plain data only.

/** Which object a call goes to: a service root (SpreadsheetApp, ...) or an object an earlier call returned. */
export type Target = { root: string } | { handle: number };

/** An Apps Script object crossing the boundary: the worker wraps it in a proxy of that kind. */
export interface HandleRef {
  $handle: number;
  kind: string;
}

export type RpcRequest =
  | { op: 'call'; target: Target; method: string; args: unknown[] }
  | { op: 'sleep'; ms: number }
  | { op: 'log'; level: string; text: string };

export type RpcReply = { ok: true; value: unknown } | { ok: false; error: { name: string; message: string } };

/** Main → worker: run one execution. */
export interface ExecuteMessage {
  type: 'execute';
  executionId: number;
  functionName: string;
  args: unknown[];
  /** Apps Script's ScriptApp.AuthMode of the execution (custom functions run in CUSTOM_FUNCTION). */
  authMode: string;
}

/** Worker → main: the worker has compiled the script and waits for executions. */
export interface ReadyMessage {
  type: 'ready';
}

/** Worker → main: how the execution ended. */
export type DoneMessage =
  | { type: 'done'; executionId: number; ok: true; value: unknown }
  | {
      type: 'done';
      executionId: number;
      ok: false;
      error: { name: string; message: string; stack?: string };
    };

/** The flag word the worker waits on for each reply. */
export const FLAG = { waiting: 0, replied: 1, killed: 2 } as const;

/** What the worker is started with. */
export interface WorkerSetup {
  code: string;
  filename: string;
  flag: Int32Array;
  /** Milliseconds added to Date.now() to get the stand-in's time (virtual clock); shared by every thread. */
  clockOffset: Float64Array;
}

export const ENUMS: Record<string, Record<string, Record<string, string>>> = {
  Ui: {
    Button: { OK: 'OK', CANCEL: 'CANCEL', YES: 'YES', NO: 'NO', CLOSE: 'CLOSE' },
    ButtonSet: { OK: 'OK', OK_CANCEL: 'OK_CANCEL', YES_NO: 'YES_NO', YES_NO_CANCEL: 'YES_NO_CANCEL' },
  },
  ScriptApp: {
    AuthMode: { NONE: 'NONE', LIMITED: 'LIMITED', FULL: 'FULL', CUSTOM_FUNCTION: 'CUSTOM_FUNCTION' },
    EventType: { CLOCK: 'CLOCK', ON_EDIT: 'ON_EDIT' },
    AuthorizationStatus: { REQUIRED: 'REQUIRED', NOT_REQUIRED: 'NOT_REQUIRED' },
    TriggerSource: { CLOCK: 'CLOCK', SPREADSHEETS: 'SPREADSHEETS' },
    InstallationSource: {
      APPS_MARKETPLACE_DOMAIN_ADD_ON: 'APPS_MARKETPLACE_DOMAIN_ADD_ON',
      NONE: 'NONE',
      WEB_STORE_ADD_ON: 'WEB_STORE_ADD_ON',
    },
  },
  SpreadsheetApp: {
    DeveloperMetadataVisibility: { DOCUMENT: 'DOCUMENT', PROJECT: 'PROJECT' },
  },
  HtmlService: {
    SandboxMode: { EMULATED: 'EMULATED', IFRAME: 'IFRAME', NATIVE: 'NATIVE' },
    XFrameOptionsMode: { ALLOWALL: 'ALLOWALL', DEFAULT: 'DEFAULT' },
  },
};
