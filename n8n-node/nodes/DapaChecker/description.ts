// The parameters of the DAPA Checker node (the URL and the options) and the names the node reads them by. No
// behaviour here; the node class in `DapaChecker.node.ts` holds the rest of the description.
import type { INodeProperties } from 'n8n-workflow';

/** The credential type the node uses (the same name as in the node's `credentials` list). */
export const CREDENTIAL_NAME = 'dapaCheckerApi';

/** The optional credential of the shared store (webdis in front of Redis), shown when Share Across Workers is on. */
export const SHARED_STATE_CREDENTIAL = 'dapaSharedStateApi';

/** The options as the node uses them (names as in the "Options" collection below). */
export interface CheckSettings {
  includeInputFields: boolean;
  maxUrlsPerRequest: number;
  retries: number;
  waitForRateLimits: boolean;
  maxWaitSeconds: number;
  timeLimitSeconds: number;
  /** How long an answered domain is reused by later executions with the same key, in hours (0: only in flight). */
  reuseResultsHours: number;
  /** Credits this execution may spend; undefined: no budget (the option not added, or left empty). */
  creditBudget?: number;
}

/**
 * The defaults of the options below (the editor shows the literals there; a unit test keeps both equal). The
 * Credit Budget has none: without it (or empty) there is no budget; `CREDIT_BUDGET_WHEN_ADDED` is what the editor
 * fills in when the option is added.
 */
export const DEFAULT_SETTINGS: CheckSettings = {
  includeInputFields: true,
  maxUrlsPerRequest: 0,
  retries: 3,
  waitForRateLimits: true,
  maxWaitSeconds: 0,
  timeLimitSeconds: 0,
  reuseResultsHours: 720,
};

/** The value the editor shows when the Credit Budget option is added (a tenth of the entry plan's month). */
export const CREDIT_BUDGET_WHEN_ADDED = 1000;

/** The node's parameters; the node class holds the rest of its description. */
export const dapaCheckerProperties: INodeProperties[] = [
  {
    displayName: 'URL',
    name: 'url',
    type: 'string',
    default: '={{ $json.url }}',
    required: true,
    placeholder: 'example.com',
    description:
      'The URL or domain to check for each item, such as example.com or https://www.example.com/page. By default it is read from the URL field of the incoming item.',
  },
  {
    displayName: 'Share Across Workers',
    name: 'shareAcrossWorkers',
    type: 'boolean',
    default: false,
    description:
      "Whether executions on different n8n processes (queue-mode workers) share what is being checked, what was answered and the plan's limits through Redis, by way of webdis and a DAPA Shared State API credential. Executions in one process always share, without it.",
  },
  {
    displayName:
      'All items are checked together: each domain is sent once, and items without a result go to the Skipped output with a reason',
    name: 'notice',
    type: 'notice',
    default: '',
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add option',
    default: {},
    options: [
      {
        displayName: 'Credit Budget',
        name: 'creditBudget',
        type: 'number',
        default: 1000,
        typeOptions: { minValue: 0, numberPrecision: 0 },
        description:
          'The most credits this execution may spend (one credit per distinct domain that comes back with metrics). Items past it go to the Skipped output with the reason "credit_budget", unbilled, to run again later. It counts what this node bills in this execution only, not other executions, other workflows or tools using the same key, or the credits left in your plan this month. Leave it empty for no budget.',
      },
      {
        displayName: 'Include Input Fields',
        name: 'includeInputFields',
        type: 'boolean',
        default: true,
        description:
          'Whether to copy the fields of each input item into its output item. When off, output items carry only the URL and the result or the reason.',
      },
      {
        displayName: 'Max URLs per Request',
        name: 'maxUrlsPerRequest',
        type: 'number',
        default: 0,
        typeOptions: { minValue: 0 },
        description:
          "How many URLs to send in one request. 0 means automatic: the node learns the plan's maximum (the service refuses a request that is too large without billing it, and the node splits it).",
      },
      {
        displayName: 'Maximum Total Wait (Seconds)',
        name: 'maxWaitSeconds',
        type: 'number',
        default: 0,
        typeOptions: { minValue: 0 },
        description:
          'The longest time, in all, that the node waits for rate limits to reset. 0 means as long as the plan needs (on the entry plan, 60 URLs a minute, 1,000 domains take about 17 minutes). URLs still waiting after a limit you set go to the Skipped output with the reason "unfinished".',
      },
      {
        displayName: 'Retries',
        name: 'retries',
        type: 'number',
        default: 3,
        typeOptions: { minValue: 0, maxValue: 10 },
        description:
          'How many times a domain is sent again after the service could not fetch its data ("lookup_failed") or answered without it. Server errors and 429 answers are retried separately.',
      },
      {
        displayName: 'Reuse Results For (Hours)',
        name: 'reuseResultsHours',
        type: 'number',
        default: 720,
        typeOptions: { minValue: 0, maxValue: 8760 },
        description:
          'How long a domain answered by one execution is reused by later executions with the same API key, at no credit (720 hours = 30 days). Kept in this n8n process, and in Redis when Share Across Workers is on. 0 shares only what is being checked at the moment.',
      },
      {
        displayName: 'Time Limit (Seconds)',
        name: 'timeLimitSeconds',
        type: 'number',
        default: 0,
        typeOptions: { minValue: 0 },
        description:
          "The node sends no request after this many seconds. 0 means no limit of its own: the run takes as long as the plan's rate limits need, and only the workflow's timeout or stopping the execution ends it early; used as an AI agent's tool, 0 means 60 seconds. URLs not checked by then go to the Skipped output with the reason \"unfinished\".",
      },
      {
        displayName: 'Wait for Rate Limits',
        name: 'waitForRateLimits',
        type: 'boolean',
        default: true,
        description:
          'Whether to wait for the plan\'s per-minute limits to reset and then check the remaining URLs. When off, those URLs go to the Skipped output at once with the reason "rate_limit_reached".',
      },
    ],
  },
];
