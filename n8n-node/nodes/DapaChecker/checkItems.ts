// One execution of the node: all input items are checked together by the core's CheckRun (each domain sent once,
// batches as large as the plan allows, retries, rate-limit waits, a deadline), then routed to Results / Skipped.
// The plan's window (the key's recent sends, the plan's limits) is kept between executions (planWindow.ts).
import {
  sleep,
  sleepWithAbort,
  type IDataObject,
  type IExecuteFunctions,
  type INodeExecutionData,
  type NodeApiError,
  type NodeOperationError,
} from 'n8n-workflow';
import { mergeWindows, runAsync, toEntry, type Report, type Totals } from '../../../shared/index';
import { addBudgetUse, budgetUsed, type BudgetUse } from './creditBudget';
import { CREDENTIAL_NAME } from './description';
import { settingError, stoppedRunError, stoppedRunWords } from './errors';
import { processKey, staticKey } from './keyedDigest';
import { keepWindow, readWindow, rememberWindow } from './planWindow';
import { routeOutcomes } from './outputs';
import {
  credentialProblem,
  isSettingProblem,
  readSettings,
  resolveBaseUrl,
  type SettingProblem,
  timeLimitSeconds,
} from './settings';
import { SharingRun } from '../../../shared/sharing-run';
import { openSession } from './sharing/open';
import type { ShareSession } from './sharing/session';
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

/** The Credit Budget part of the summary: the budget, what this execution billed of it, and the items past it. */
function budgetSummary(budget: number, run: BudgetUse, execution: BudgetUse): string {
  const earlier =
    execution.billed > run.billed || execution.skipped > run.skipped
      ? ` (${execution.billed - run.billed} billed and ${execution.skipped - run.skipped} skipped by earlier runs of this node)`
      : '';
  return (
    ` Credit Budget ${budget}: ${execution.billed} billed in this execution, ${Math.max(0, budget - execution.billed)} left; ` +
    `${run.skipped} items skipped for the budget (credit_budget)${earlier}.`
  );
}

/** The domains other executions (or the shared store) answered for this one, at no credit. */
function reusedPart(reused: number): string {
  return reused > 0 ? `, ${reused} domains reused from other executions (0 credits)` : '';
}

function summary(totals: Totals, budget?: { budget: number; run: BudgetUse; execution: BudgetUse }): string {
  const waited = totals.waitedMs > 0 ? `, waited ${Math.ceil(totals.waitedMs / 1000)} s for rate limits` : '';
  return (
    `${totals.inputs} items, ${totals.distinct} distinct domains: ${totals.requests} requests, ` +
    `${totals.billed} billed, ${totals.retries} retries${waited}${reusedPart(totals.cached)}. ` +
    `${totals.records} results, ${totals.skips + totals.errors} skipped.` +
    (budget ? budgetSummary(budget.budget, budget.run, budget.execution) : '')
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

/** The URL of every item; an expression that fails for one item fails the node unless errors continue. */
function readUrls(context: IExecuteFunctions, items: INodeExecutionData[]) {
  const node = context.getNode();
  const urls: unknown[] = [];
  const readErrors = new Map<number, ItemError>();
  for (let i = 0; i < items.length; i++) {
    try {
      urls.push(context.getNodeParameter('url', i, ''));
    } catch (error) {
      const problem = {
        message: `The URL parameter could not be read for item ${i}`,
        description: `${error instanceof Error ? error.message : String(error)}. Check the expression of the URL parameter.`,
      };
      if (!context.continueOnFail()) throw settingError(node, problem, i);
      readErrors.set(i, settingError(node, problem, i));
      urls.push(undefined);
    }
  }
  return { urls, readErrors };
}

/** Settings, credential and address, or the problem that fails every item. */
async function prepare(context: IExecuteFunctions) {
  const settings = readSettings(context.getNodeParameter('options', 0, {}) as IDataObject);
  if (isSettingProblem(settings)) return settings;
  const credentials = await context.getCredentials(CREDENTIAL_NAME);
  const keyProblem = credentialProblem(credentials);
  if (keyProblem) return keyProblem;
  const baseUrl = resolveBaseUrl(credentials);
  if (typeof baseUrl !== 'string') return baseUrl;
  const apiKey = String(credentials.apiKey);
  return { settings, baseUrl, apiKey, storageKey: processKey(baseUrl, apiKey) };
}

type Prepared = Exclude<Awaited<ReturnType<typeof prepare>>, SettingProblem>;

/** Resolves at the run's deadline or when the execution is cancelled (what bounds a wait for other executions). */
function stopped(deadline: number, signal: AbortSignal | undefined, done: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    signal?.addEventListener('abort', () => resolve());
    done.addEventListener('abort', () => resolve());
    if (Number.isFinite(deadline)) void pause(Math.max(0, deadline - Date.now()), done).then(resolve);
  });
}

/** The URLs a request carries (its body is the core's JSON). */
function urlsIn(body: string): number {
  try {
    return ((JSON.parse(body) as { urls?: unknown[] }).urls ?? []).length;
  } catch {
    return 0;
  }
}

/**
 * Runs the check from the plan's window as earlier executions left it, sharing its key with the executions that run
 * beside it (sharing/session.ts): domains answered or being checked elsewhere are not sent; while it runs, its window
 * is merged into this process's copy at every request and wait, and at the end it is kept (planWindow.ts).
 */
async function check(
  context: IExecuteFunctions,
  urls: unknown[],
  prepared: Prepared,
  creditsLeft: number | undefined,
): Promise<{ report: Report; session: ShareSession }> {
  const { settings, baseUrl, apiKey, storageKey } = prepared;
  // 0 means "as long as the plan needs": only n8n's own execution timeout or a cancel ends the run early. As an AI
  // agent's tool, a run with no Time Limit of its own stops after TOOL_TIME_LIMIT_SECONDS.
  const limitSeconds = timeLimitSeconds(settings, context.getNode().type);
  const deadline = limitSeconds > 0 ? Date.now() + limitSeconds * 1000 : Infinity;
  const staticData = context.getWorkflowStaticData('node');
  const names = { stored: staticKey(staticData, baseUrl, apiKey), memory: storageKey };
  const signal = context.getExecutionCancelSignal?.();
  const maximumSet = settings.maxUrlsPerRequest > 0;
  const reuseHours = settings.reuseResultsHours;
  const session = await openSession(context, { storageKey, baseUrl, apiKey, reuseHours, maximumSet, signal });
  const done = new AbortController();
  try {
    await session.awaitPlan(stopped(deadline, signal, done.signal));
    const startWindow = mergeWindows(readWindow(staticData, names, Date.now()), session.window(Date.now()));
    const run = new SharingRun(
      urls,
      {
        baseUrl,
        deadline,
        maxUrlsPerRequest: maximumSet ? settings.maxUrlsPerRequest : undefined,
        window: startWindow,
        retries: settings.retries,
        waitForRateLimits: settings.waitForRateLimits,
        maxWaitMs: settings.maxWaitSeconds > 0 ? settings.maxWaitSeconds * 1000 : undefined,
        seed: Date.now() % 2_147_483_647,
        creditBudget: creditsLeft,
      },
      (now) => session.view(now),
      (now) => session.taken(now),
    );
    const keys = new Set<string>();
    for (const url of urls) {
      const entry = toEntry(url);
      if (entry.kind === 'candidate') keys.add(entry.key);
    }
    await session.start(run, [...keys], Date.now());
    const share = () => rememberWindow(storageKey, run.window(Date.now()), Date.now());
    const send = sendWithCredential(context, () => deadline - Date.now(), apiKey);
    const report = await runAsync(run, {
      received: (records) => session.received(records, Date.now()),
      send: async (request) => {
        // Counted as in flight at once, in the same turn as the decision to send it.
        const urls = urlsIn(request.body);
        const token = session.sending(urls);
        let reserved: string | undefined;
        try {
          share();
          await session.tick(Date.now());
          reserved = await session.reserve(urls, deadline);
          return await send(request);
        } finally {
          session.answered(token);
          session.unreserve(reserved);
        }
      },
      sleep: async (ms) => {
        share();
        await session.tick(Date.now());
        await session.sleep(ms);
      },
      now: () => Date.now(),
      cancelled: () => signal?.aborted === true,
    });
    keepWindow(staticData, names, report.window, Date.now());
    return { report, session };
  } finally {
    done.abort();
    await session.end();
  }
}

export async function checkItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
  const items = this.getInputData();
  if (items.length === 0) return [[], []];
  const prepared = await prepare(this);
  if (isSettingProblem(prepared)) return failAllItems(this, items, prepared);
  const { urls, readErrors } = readUrls(this, items);
  // The budget is per execution: earlier runs of this node in it (a loop, several inputs) spent part of it.
  const budget = prepared.settings.creditBudget;
  const creditsLeft = budget === undefined ? undefined : Math.max(0, budget - budgetUsed(this).billed);
  const { report, session } = await check(this, urls, prepared, creditsLeft);
  const continueOnFail = this.continueOnFail();
  let budgetUse: Parameters<typeof summary>[1];
  if (budget !== undefined) {
    const run = { billed: report.totals.billed, skipped: report.totals.skippedByReason.credit_budget ?? 0 };
    budgetUse = { budget, run, execution: addBudgetUse(this, run) };
  }

  // A stopped run (wrong key, expired plan, ...) fails the node only when that loses no paid result.
  const stopErrors = stoppedRunErrors(this, report);
  if (report.fatal && !continueOnFail) {
    if (report.totals.records === 0) {
      const first = stopErrors.keys().next().value ?? 0;
      throw stoppedRunError(this.getNode(), report.fatal, first);
    }
    this.addExecutionHints?.({
      message: `Stopped early, results so far are kept; the rest are in Skipped: ${stoppedRunWords(report.fatal).message}`,
      type: 'warning',
      location: 'outputPane',
    });
  }
  const errors = new Map<number, ItemError>(continueOnFail ? [...readErrors, ...stopErrors] : []);
  const routed = routeOutcomes({
    items,
    urls,
    outcomes: report.outcomes,
    includeInputFields: prepared.settings.includeInputFields,
    errors,
    creditBudget: budget,
    checkedAt: (key) => session.checkedAt.get(key),
    sharedStore: session.problem,
  });
  if (budgetUse && budgetUse.run.skipped > 0) {
    this.addExecutionHints?.({
      message: `Credit Budget of ${budgetUse.budget} reached: ${budgetUse.run.skipped} items were not checked and are on the Skipped output (reason credit_budget). Raise the budget or run them again later.`,
      type: 'warning',
      location: 'outputPane',
    });
  }
  this.addExecutionHints?.({
    message: summary(report.totals, budgetUse),
    type: 'info',
    location: 'outputPane',
  });
  return [routed.results, routed.skipped];
}
