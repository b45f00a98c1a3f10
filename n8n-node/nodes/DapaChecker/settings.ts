// Reading and checking what the user set: the node's options and the credential's address and key. Every
// problem comes back as a message that names the setting and says what to change; the key is never quoted.
import type { ICredentialDataDecryptedObject, IDataObject } from 'n8n-workflow';
import { baseUrlFor, type Environment } from '../../../shared/index';
import { DEFAULT_SETTINGS, type CheckSettings } from './description';

/**
 * The Time Limit of a run as an AI agent's tool when the user set none: an agent waits for the tool's answer, and the
 * plan alone could make it wait for many minutes (1,000 domains on the entry plan: about 17). What is not checked by
 * then goes to Skipped as "unfinished", as at any time limit.
 */
export const TOOL_TIME_LIMIT_SECONDS = 60;

/**
 * Whether n8n runs the node as an AI agent's tool. A node with `usableAsTool` is offered to agents as a node type of
 * its own, its name with "Tool" after it (`n8n-nodes-dapa-checker.dapaCheckerTool`); n8n-workflow's `isToolType`
 * reads the type the same way.
 */
export function runsAsTool(nodeType: string | undefined): boolean {
  const name = (nodeType ?? '').split('.').pop() ?? '';
  return name.endsWith('Tool');
}

/** The run's Time Limit in seconds (0: none): the user's, else 60 s as a tool, else none. */
export function timeLimitSeconds(settings: CheckSettings, nodeType: string | undefined): number {
  if (settings.timeLimitSeconds > 0) return settings.timeLimitSeconds;
  return runsAsTool(nodeType) ? TOOL_TIME_LIMIT_SECONDS : 0;
}

export interface SettingProblem {
  message: string;
  description: string;
}

const ENVIRONMENTS: readonly Environment[] = ['production', 'staging', 'custom'];

type NumberOption =
  'maxUrlsPerRequest' | 'retries' | 'maxWaitSeconds' | 'timeLimitSeconds' | 'reuseResultsHours';
const NUMBER_RULES: Record<NumberOption, { label: string; min: number; max: number }> = {
  maxUrlsPerRequest: { label: 'Max URLs per Request', min: 0, max: 10_000 },
  retries: { label: 'Retries', min: 0, max: 10 },
  maxWaitSeconds: { label: 'Maximum Total Wait (Seconds)', min: 0, max: 86_400 },
  timeLimitSeconds: { label: 'Time Limit (Seconds)', min: 0, max: 86_400 },
  reuseResultsHours: { label: 'Reuse Results For (Hours)', min: 0, max: 8_760 },
};

function readNumber(options: IDataObject, name: NumberOption): number | SettingProblem {
  const raw = options[name];
  if (raw === undefined || raw === null || raw === '') return DEFAULT_SETTINGS[name];
  const value = typeof raw === 'string' ? Number(raw.trim()) : raw;
  const rule = NUMBER_RULES[name];
  if (typeof value !== 'number' || !Number.isFinite(value) || value < rule.min || value > rule.max) {
    return {
      message: `The option "${rule.label}" must be a number from ${rule.min} to ${rule.max}`,
      description: `It is ${JSON.stringify(raw)}. Change it in the node's options.`,
    };
  }
  return Math.floor(value);
}

function readBoolean(options: IDataObject, name: 'includeInputFields' | 'waitForRateLimits'): boolean {
  const raw = options[name];
  if (typeof raw === 'boolean') return raw;
  if (raw === 'false') return false;
  if (raw === 'true') return true;
  return DEFAULT_SETTINGS[name];
}

/**
 * The Credit Budget: undefined when the option is not added or left empty (no budget), else a whole number of
 * credits, 0 or more (0 spends nothing: every item with a domain goes to Skipped).
 */
function readCreditBudget(options: IDataObject): number | undefined | SettingProblem {
  const raw = options.creditBudget;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return undefined;
  const value = typeof raw === 'string' ? Number(raw.trim()) : raw;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    return {
      message: 'The option "Credit Budget" must be a whole number of credits, 0 or more',
      description: `It is ${JSON.stringify(raw)}. Change it in the node's options, or leave it empty for no budget.`,
    };
  }
  return value;
}

/** The node's options with defaults filled in, or the first problem found. */
export function readSettings(options: IDataObject): CheckSettings | SettingProblem {
  const settings: CheckSettings = {
    ...DEFAULT_SETTINGS,
    includeInputFields: readBoolean(options, 'includeInputFields'),
    waitForRateLimits: readBoolean(options, 'waitForRateLimits'),
  };
  for (const name of Object.keys(NUMBER_RULES) as NumberOption[]) {
    const value = readNumber(options, name);
    if (typeof value !== 'number') return value;
    settings[name] = value;
  }
  const creditBudget = readCreditBudget(options);
  if (isSettingProblem(creditBudget)) return creditBudget;
  if (creditBudget !== undefined) settings.creditBudget = creditBudget;
  return settings;
}

export function isSettingProblem(value: unknown): value is SettingProblem {
  return typeof value === 'object' && value !== null && 'message' in value && 'description' in value;
}

/** A problem with the stored API key itself (missing, or with spaces or line breaks that break the header). */
export function credentialProblem(data: ICredentialDataDecryptedObject): SettingProblem | undefined {
  const key = data.apiKey;
  if (typeof key !== 'string' || key.trim() === '') {
    return {
      message: 'The DAPA Checker API credential has no API key.',
      description: 'Open the credential and paste the API key of your plan.',
    };
  }
  if (key !== key.trim() || /[\r\n\t]/.test(key)) {
    return {
      message: 'The API key in the DAPA Checker API credential has spaces or line breaks around it.',
      description: 'Open the credential and paste the key again, without spaces or line breaks.',
    };
  }
  return undefined;
}

/** The base URL the credential points at, or why it has none. */
export function resolveBaseUrl(data: ICredentialDataDecryptedObject): string | SettingProblem {
  const environment = (data.environment ?? 'production') as Environment;
  if (!ENVIRONMENTS.includes(environment)) {
    return {
      message: `The DAPA Checker API credential has an unknown environment "${String(data.environment)}".`,
      description: 'Open the credential and choose Production, Staging or Custom.',
    };
  }
  try {
    return baseUrlFor(environment, typeof data.baseUrl === 'string' ? data.baseUrl : '');
  } catch (error) {
    return {
      message: 'The DAPA Checker API credential has no usable base URL.',
      description: `${error instanceof Error ? error.message : String(error)}. Open the credential and fill in or fix the Base URL.`,
    };
  }
}
