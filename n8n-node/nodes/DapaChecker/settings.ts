// Reading and checking what the user set: the node's options and the credential's address and key. Every
// problem comes back as a message that names the setting and says what to change; the key is never quoted.
import type { ICredentialDataDecryptedObject, IDataObject } from 'n8n-workflow';
import { baseUrlFor, type Environment } from '../../../shared/index';
import { DEFAULT_SETTINGS, type CheckSettings } from './description';

export interface SettingProblem {
  message: string;
  description: string;
}

const ENVIRONMENTS: readonly Environment[] = ['production', 'staging', 'custom'];

type NumberOption = 'maxUrlsPerRequest' | 'retries' | 'maxWaitSeconds' | 'timeLimitSeconds';
const NUMBER_RULES: Record<NumberOption, { label: string; min: number; max: number }> = {
  maxUrlsPerRequest: { label: 'Max URLs per Request', min: 0, max: 10_000 },
  retries: { label: 'Retries', min: 0, max: 10 },
  maxWaitSeconds: { label: 'Maximum Total Wait (Seconds)', min: 0, max: 86_400 },
  timeLimitSeconds: { label: 'Time Limit (Seconds)', min: 0, max: 86_400 },
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
