// Turns the core's report (one outcome per input position) into the node's two outputs, Results and Skipped,
// every output item paired with its input item. Errors become error items only where the caller asks for them.
import type { IDataObject, INodeExecutionData, NodeApiError, NodeOperationError } from 'n8n-workflow';
import { outcomeText, type Outcome } from '../../../shared/index';

export const BLANK_URL_MESSAGE =
  'No URL: the URL parameter is empty for this item. Map the field that holds the URL or domain (the default is {{ $json.url }}).';

/** The message of an item not checked because the execution's Credit Budget was spent. */
export function creditBudgetMessage(budget: number): string {
  return (
    `Not checked: this execution's Credit Budget (${budget} credits) is spent, so this domain was not sent and cost nothing. ` +
    'Raise the Credit Budget option, or run it again in a later execution (each execution has its own budget).'
  );
}

export interface RouteInput {
  items: INodeExecutionData[];
  /** The value the URL parameter gave for each item. */
  urls: unknown[];
  outcomes: Outcome[];
  includeInputFields: boolean;
  /** Positions that end as error items (continue on fail), with their error. */
  errors: ReadonlyMap<number, NodeApiError | NodeOperationError>;
  /** The execution's Credit Budget, named in the message of the items past it. */
  creditBudget?: number;
  /** When the service answered for a domain (ms), for `checked_at`; absent: now. */
  checkedAt?: (key: string) => number | undefined;
  /** Set when the shared store was configured but could not be used: every item says so in `shared_store`. */
  sharedStore?: string;
}

export interface RoutedItems {
  results: INodeExecutionData[];
  skipped: INodeExecutionData[];
}

function baseFields(input: RouteInput, index: number): IDataObject {
  const store: IDataObject = input.sharedStore === undefined ? {} : { shared_store: input.sharedStore };
  if (input.includeInputFields) return { ...input.items[index].json, ...store };
  const url = input.urls[index];
  return { url: url === undefined ? null : (url as IDataObject[string]), ...store };
}

function skipMessage(outcome: Extract<Outcome, { kind: 'skip' }>, creditBudget: number | undefined): string {
  if (outcome.blank) return BLANK_URL_MESSAGE;
  if (outcome.reason === 'credit_budget')
    return creditBudgetMessage(creditBudget ?? outcome.detail?.budget ?? 0);
  return outcomeText(outcome);
}

/**
 * Results get the metrics, `no_data`, `reused` (true when the metrics came from another execution or the shared store,
 * at no credit to this one) and `checked_at` (when the service answered, ISO); Skipped gets `reason` (the core's code),
 * `message` (worded from it) and `reused: false`. Error outcomes that are not error items (an
 * unfinished or cancelled run, an answer that could not be matched) go to Skipped with their code as reason.
 */
export function routeOutcomes(input: RouteInput): RoutedItems {
  const results: INodeExecutionData[] = [];
  const skipped: INodeExecutionData[] = [];
  input.items.forEach((item, index) => {
    const fields = baseFields(input, index);
    // Binary data of the input item travels with it when its fields do.
    const binary = input.includeInputFields && item.binary ? { binary: item.binary } : {};
    const pairedItem = { item: index };
    const error = input.errors.get(index);
    if (error) {
      results.push({ json: { ...fields, error: error.message }, ...binary, error, pairedItem });
      return;
    }
    const outcome = input.outcomes[index];
    switch (outcome.kind) {
      case 'record': {
        const { site_da, site_pa, site_mr, spam_score } = outcome.record;
        // Metrics the service marked "no data" are null, and named in `no_data` ([] when all are there).
        const noData = [...(outcome.record.noData ?? [])];
        const checkedAt = new Date(input.checkedAt?.(outcome.key) ?? Date.now()).toISOString();
        const reused = outcome.cached === true;
        results.push({
          json: {
            ...fields,
            ...{ domain: outcome.key, site_da, site_pa, site_mr, spam_score, no_data: noData },
            ...{ reused, checked_at: checkedAt },
          },
          ...binary,
          pairedItem,
        });
        return;
      }
      case 'skip':
        skipped.push({
          json: {
            ...fields,
            reason: outcome.reason,
            message: skipMessage(outcome, input.creditBudget),
            reused: false,
          },
          ...binary,
          pairedItem,
        });
        return;
      case 'error':
        skipped.push({
          json: { ...fields, reason: outcome.code, message: outcomeText(outcome), reused: false },
          ...binary,
          pairedItem,
        });
        return;
    }
  });
  return { results, skipped };
}
