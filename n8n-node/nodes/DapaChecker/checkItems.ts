// One execution of the node: all input items are checked together by the core's CheckRun (each domain sent once,
// batches as large as the plan allows, retries, rate-limit waits, a deadline), then routed to Results / Skipped.
// What the run learns of the plan is kept in the workflow's static data (learnedPlan.ts) for the next execution.
import {
  sleep,
  sleepWithAbort,
  type IDataObject,
  type IExecuteFunctions,
  type INodeExecutionData,
  type NodeApiError,
  type NodeOperationError,
} from 'n8n-workflow';
import { CheckRun, runAsync, type Report, type Totals } from '../../../shared/index';
import { CREDENTIAL_NAME } from './description';
import { settingError, stoppedRunError } from './errors';
import { keepLearnedPlan, planKey, readLearnedPlan } from './learnedPlan';
import { routeOutcomes } from './outputs';
import {
  credentialProblem,
  isSettingProblem,
  readSettings,
  resolveBaseUrl,
  type SettingProblem,
} from './settings';
import { sendWithCredential } from './transport';

type ItemError = NodeApiError | NodeOperationError;

/** Waits `ms`, returning early when the execution is cancelled (the driver then cancels the run). */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal || typeof sleepWithAbort !== 'function') return await sleep(ms);
  try {
    await sleepWithAbort(ms, signal);
  } catch {
    // Cancelled while waiting: `cancelled()` now reports it and the run ends its open URLs as "cancelled".
  }
}

function summary(totals: Totals): string {
  const waited = totals.waitedMs > 0 ? `, waited ${Math.ceil(totals.waitedMs / 1000)} s for rate limits` : '';
  return (
    `${totals.inputs} items, ${totals.distinct} distinct domains: ${totals.requests} requests, ` +
    `${totals.billed} billed, ${totals.retries} retries${waited}. ` +
    `${totals.records} results, ${totals.skips + totals.errors} skipped.`
  );
}

/** Every item gets the same error (continue on fail), or the node fails on the first item. */
function failAllItems(context: IExecuteFunctions, items: INodeExecutionData[], problem: SettingProblem) {
  const node = context.getNode();
  if (!context.continueOnFail()) throw settingError(node, problem, 0);
  const errors = new Map<number, ItemError>(items.map((_item, i) => [i, settingError(node, problem, i)]));
  const routed = routeOutcomes({ items, urls: [], outcomes: [], includeInputFields: true, errors });
  return [routed.results, routed.skipped];
}

/** The error items of a stopped run: each position that ended with the stopping error. */
function stoppedRunErrors(context: IExecuteFunctions, report: Report): Map<number, ItemError> {
  const errors = new Map<number, ItemError>();
  const fatal = report.fatal;
  if (!fatal) return errors;
  report.outcomes.forEach((outcome, index) => {
    if (outcome.kind === 'error' && outcome.code === fatal.code) {
      errors.set(index, stoppedRunError(context.getNode(), fatal, index));
    }
  });
  return errors;
}

export async function checkItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
  const items = this.getInputData();
  if (items.length === 0) return [[], []];
  const node = this.getNode();
  const continueOnFail = this.continueOnFail();

  const settings = readSettings(this.getNodeParameter('options', 0, {}) as IDataObject);
  if (isSettingProblem(settings)) return failAllItems(this, items, settings);

  const credentials = await this.getCredentials(CREDENTIAL_NAME);
  const keyProblem = credentialProblem(credentials);
  if (keyProblem) return failAllItems(this, items, keyProblem);
  const baseUrl = resolveBaseUrl(credentials);
  if (typeof baseUrl !== 'string') return failAllItems(this, items, baseUrl);

  // The URL of every item; an expression that fails for one item fails the node before anything is sent.
  const urls: unknown[] = [];
  const readErrors = new Map<number, ItemError>();
  for (let i = 0; i < items.length; i++) {
    try {
      urls.push(this.getNodeParameter('url', i, ''));
    } catch (error) {
      const problem = {
        message: `The URL parameter could not be read for item ${i}`,
        description: `${error instanceof Error ? error.message : String(error)}. Check the expression of the URL parameter.`,
      };
      if (!continueOnFail) throw settingError(node, problem, i);
      readErrors.set(i, settingError(node, problem, i));
      urls.push(undefined);
    }
  }

  // 0 means "as long as the plan needs": only n8n's own execution timeout or a cancel ends the run early.
  const deadline = settings.timeLimitSeconds > 0 ? Date.now() + settings.timeLimitSeconds * 1000 : Infinity;
  const staticData = this.getWorkflowStaticData('node');
  const planStorageKey = planKey(baseUrl, String(credentials.apiKey));
  const known = readLearnedPlan(staticData, planStorageKey, Date.now());
  const run = new CheckRun(urls, {
    baseUrl,
    deadline,
    maxUrlsPerRequest: settings.maxUrlsPerRequest > 0 ? settings.maxUrlsPerRequest : known?.maxUrlsPerRequest,
    pace: { requestsPerMinute: known?.requestsPerMinute, urlsPerMinute: known?.urlsPerMinute },
    retries: settings.retries,
    waitForRateLimits: settings.waitForRateLimits,
    maxWaitMs: settings.maxWaitSeconds > 0 ? settings.maxWaitSeconds * 1000 : undefined,
    seed: Date.now() % 2_147_483_647,
  });
  const signal = this.getExecutionCancelSignal?.();
  const report = await runAsync(run, {
    send: sendWithCredential(this, () => deadline - Date.now()),
    sleep: async (ms) => await pause(ms, signal),
    now: () => Date.now(),
    cancelled: () => signal?.aborted === true,
  });
  keepLearnedPlan(staticData, planStorageKey, report.learned, Date.now());

  // A stopped run (wrong key, expired plan, ...) fails the node only when that loses no paid result.
  const stopErrors = stoppedRunErrors(this, report);
  if (report.fatal && !continueOnFail) {
    if (report.totals.records === 0) {
      const first = stopErrors.keys().next().value ?? 0;
      throw stoppedRunError(node, report.fatal, first);
    }
    this.addExecutionHints?.({
      message: `Stopped early, results so far are kept; the rest are in Skipped: ${report.fatal.message}`,
      type: 'warning',
      location: 'outputPane',
    });
  }
  const errors = new Map<number, ItemError>(continueOnFail ? [...readErrors, ...stopErrors] : []);
  const routed = routeOutcomes({
    items,
    urls,
    outcomes: report.outcomes,
    includeInputFields: settings.includeInputFields,
    errors,
  });
  this.addExecutionHints?.({ message: summary(report.totals), type: 'info', location: 'outputPane' });
  return [routed.results, routed.skipped];
}
