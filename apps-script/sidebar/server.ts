// The page's only way to the server: google.script.run as Promises, typed by the contract, with job answers
// checked before use so that a malformed one gives a message instead of a broken page.
/// <reference lib="dom" />
import type { JobSource, JobState, ServerFunctionName, ServerFunctions } from './contract';

interface ScriptRun {
  withSuccessHandler(handler: (value: unknown) => void): ScriptRun;
  withFailureHandler(handler: (error: unknown) => void): ScriptRun;
}

interface ScriptHost {
  google?: { script?: { run?: ScriptRun } };
}

export function scriptRun(): ScriptRun | undefined {
  return (window as unknown as ScriptHost).google?.script?.run;
}

/** A readable message from whatever a failure handler received (Apps Script passes an Error, sometimes a string). */
export function errorMessage(error: unknown): string {
  if (typeof error === 'string' && error.trim()) return error;
  if (error && typeof (error as { message?: unknown }).message === 'string') {
    const message = (error as { message: string }).message.trim();
    if (message) return message;
  }
  return 'The call to the script failed without a message. Check your connection and try again.';
}

/** Calls one server function through google.script.run as a Promise. */
export function server<N extends ServerFunctionName>(
  name: N,
  ...args: Parameters<ServerFunctions[N]>
): Promise<ReturnType<ServerFunctions[N]>> {
  return new Promise((resolve, reject) => {
    const run = scriptRun();
    if (!run) {
      reject(
        new Error('google.script.run is not available: open this sidebar from the add-on menu in Sheets.'),
      );
      return;
    }
    const runner = run
      .withSuccessHandler((value) => resolve(value as ReturnType<ServerFunctions[N]>))
      .withFailureHandler((error) => reject(new Error(errorMessage(error))));
    const call = (runner as unknown as Record<string, (...callArgs: unknown[]) => void>)[name];
    if (typeof call !== 'function') {
      reject(new Error(`The script has no server function ${name}(); the add-on may be out of date.`));
      return;
    }
    call.apply(runner, args);
  });
}

export function isJobState(value: unknown): value is JobState {
  const job = value as JobState | null;
  return (
    !!job &&
    typeof job === 'object' &&
    typeof job.total === 'number' &&
    typeof job.done === 'number' &&
    typeof job.status === 'string' &&
    !!job.counts &&
    typeof job.counts === 'object'
  );
}

async function checkedJob(name: ServerFunctionName, answer: Promise<unknown>): Promise<JobState> {
  const value = await answer;
  if (!isJobState(value)) throw new Error(`The script answered ${name}() with something that is not a job.`);
  return value;
}

export const jobCalls = {
  start: (source: JobSource) => checkedJob('startJob', server('startJob', source)),
  continue: () => checkedJob('continueJob', server('continueJob')),
  cancel: () => checkedJob('cancelJob', server('cancelJob')),
  retrySkipped: () => checkedJob('retrySkipped', server('retrySkipped')),
};
