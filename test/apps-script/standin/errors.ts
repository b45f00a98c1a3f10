// Errors the fake services throw, shaped like Apps Script's: name "Exception" and the service's own wording.

export class AppsScriptException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Exception';
  }
}

/** Thrown by a service a custom function (or AuthMode.NONE) may not call. */
export function noPermission(what: string): AppsScriptException {
  return new AppsScriptException(`You do not have permission to call ${what}`);
}

/** Ends an execution that ran past its time limit; the execution fails, whatever its code catches. */
export class ExecutionKilled extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExecutionKilled';
  }
}
