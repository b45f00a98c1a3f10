// The user's settings: API key (UserProperties, never returned, only a masked hint), environment and base URL.
import { BASE_URLS, baseUrlFor, type Environment } from '../../../shared';
import type { Settings, SettingsChange } from '../../sidebar/contract';
import { NO_KEY } from '../messages';
import { saltToSave } from './key-digest';
import { forgetLearnedPlans } from './plan-store';
import { readText, writeTexts } from './storage';
import { keepEntry, readEntry } from './caches';
import { type InstallMode, installMode, knownInstallMode } from './session';
import { USER_PROPERTY } from './storage-keys';

const ENVIRONMENTS: readonly Environment[] = ['production', 'staging', 'custom'];

/**
 * Apps Script fetches from Google's servers, and a versioned deployment only from the https prefixes of its
 * manifest's urlFetchWhitelist (Google: "Each prefix must use https://, not http://"), so a Staging or Custom
 * address is https or nothing: a local or http address could never be reached.
 */
export function httpsOnlyMessage(environment: Environment): string {
  return (
    `The ${environment} address must start with https:// (for example https://api.your-proxy.com). Apps Script ` +
    "runs on Google's servers: an http:// or local address such as 127.0.0.1 can never be reached from there. " +
    'The published add-on reaches only https://www.dapachecker.org; a copy you install yourself reaches another ' +
    'https server once its address is added to urlFetchWhitelist in appsscript.json.'
  );
}

/** The Staging or Custom address as typed, checked: https, no spaces; the endpoint path may be pasted with it. */
function typedBaseUrl(environment: Environment, typed: string): string {
  const url = typed.trim();
  if (/\s/.test(url)) throw new Error(`The ${environment} base URL cannot contain spaces.`);
  if (!/^https:\/\/[^\s/]+/i.test(url)) throw new Error(httpsOnlyMessage(environment));
  return baseUrlFor(environment, url);
}

const MAX_KEY_LENGTH = 512;

/** "••••••1234" for a key of 8 characters or more; a shorter key shows no character at all. */
export function maskKey(key: string): string {
  if (key === '') return '';
  return key.length >= 8 ? '••••••' + key.slice(-4) : '••••••';
}

function storedEnvironment(): Environment {
  const value = readText('user', USER_PROPERTY.environment);
  return ENVIRONMENTS.includes(value as Environment) ? (value as Environment) : 'production';
}

/** The base URL every request of this user goes to. */
export function currentBaseUrl(): string {
  const environment = storedEnvironment();
  if (environment === 'production') return BASE_URLS.production;
  try {
    return baseUrlFor(environment, readText('user', USER_PROPERTY.customBaseUrl) ?? '');
  } catch {
    return BASE_URLS.production;
  }
}

/**
 * The owner's settings as this spreadsheet's =DAPA cells last read them (the base URL, whether a key and a credit
 * budget are set; never the key itself), kept in the document cache (caches.ts; shared by everyone in the spreadsheet, whose
 * custom functions all read the owner's settings; CacheService has no daily quota): a cell whose answer is cached, or
 * that only waits for another cell's round or for the background, then needs no Properties call at all, and still
 * shows its answer when Google's daily Properties quota is used up. The owner's Save (settings, budget) in this
 * spreadsheet drops it; a change made elsewhere is seen within the hour (a cell that sends reads the key itself).
 */
export const FORMULA_SETTINGS = 'dapa.formulaSettings';
const FORMULA_SETTINGS_SECONDS = 3_600;

/** What a =DAPA cell needs of the owner's settings before it has anything to send. */
export interface FormulaSettings {
  baseUrl: string;
  /** Whether the owner has a key (a cell that has to ask for a domain reads it only then when there is none). */
  hasKey: boolean;
  /** Whether a monthly credit budget is set (a waiting cell reads the ledger only then). */
  budget: boolean;
  /** How the script is installed, as the cell that wrote the copy asked Google (a bound script or an add-on). */
  installMode?: InstallMode;
}

function parseFormulaSettings(text: string | null | undefined): FormulaSettings | undefined {
  try {
    const value: unknown = JSON.parse(text ?? '');
    if (typeof value !== 'object' || value === null) return undefined;
    const { baseUrl, hasKey, budget, installMode: mode } = value as Record<string, unknown>;
    if (typeof baseUrl !== 'string' || typeof hasKey !== 'boolean' || typeof budget !== 'boolean')
      return undefined;
    return mode === 'bound' || mode === 'addon'
      ? { baseUrl, hasKey, budget, installMode: mode }
      : { baseUrl, hasKey, budget };
  } catch {
    return undefined;
  }
}

/** The settings a =DAPA cell checks with: the spreadsheet's copy, else the owner's settings (one bulk read, copied). */
export function formulaSettings(): FormulaSettings {
  let reachable = false;
  try {
    const copy = parseFormulaSettings(readEntry(FORMULA_SETTINGS));
    reachable = true;
    if (copy?.installMode) knownInstallMode(copy.installMode); // one service call fewer a cell
    if (copy) return copy;
  } catch {
    // no cache: the settings
  }
  const budget = readText('user', USER_PROPERTY.creditBudget);
  const settings: FormulaSettings = {
    baseUrl: currentBaseUrl(),
    hasKey: storedApiKey() !== undefined,
    budget: !!budget,
    installMode: installMode(),
  };
  try {
    if (reachable) keepEntry(FORMULA_SETTINGS, JSON.stringify(settings), FORMULA_SETTINGS_SECONDS);
  } catch {
    // read again next time
  }
  return settings;
}

/** Drops the cells' copy of the settings (after the owner changed them here). */
export function dropFormulaSettings(): void {
  try {
    keepEntry(FORMULA_SETTINGS, undefined, 0);
  } catch {
    // the copy lasts an hour at most
  }
}

export function readSettings(): Settings {
  const key = storedApiKey() ?? '';
  return {
    hasKey: key !== '',
    keyHint: maskKey(key),
    environment: storedEnvironment(),
    baseUrl: currentBaseUrl(),
  };
}

/** The stored key, or undefined when none is set. */
export function storedApiKey(): string | undefined {
  return readText('user', USER_PROPERTY.apiKey) || undefined;
}

/** The stored key; throws the "no key, set it here" error when there is none. */
export function requireApiKey(): string {
  const key = storedApiKey();
  if (!key) throw new Error(NO_KEY);
  return key;
}

function cleanKey(value: unknown): string {
  if (typeof value !== 'string') throw new Error('The API key must be text.');
  const key = value.trim();
  if (key.length > MAX_KEY_LENGTH) throw new Error(`The API key is too long (${key.length} characters).`);
  if (/\s/.test(key) || [...key].some((ch) => ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127)) {
    throw new Error('The API key cannot contain spaces, tabs or line breaks: paste only the key itself.');
  }
  return key;
}

/** Applies a change from the sidebar or the menu; throws a specific Error on an invalid value. */
export function saveSettings(change: SettingsChange | undefined | null): Settings {
  if (change === null || typeof change !== 'object') throw new Error('saveSettings needs an object.');
  const before = currentBaseUrl();
  const environment = change.environment ?? storedEnvironment();
  if (!ENVIRONMENTS.includes(environment)) {
    throw new Error(`Unknown environment "${String(environment)}": choose production, staging or custom.`);
  }
  const updates: Record<string, string | undefined> = { [USER_PROPERTY.environment]: environment };
  if (environment !== 'production') {
    const custom = change.baseUrl ?? readText('user', USER_PROPERTY.customBaseUrl) ?? '';
    if (typeof custom !== 'string') throw new Error(`The ${environment} base URL must be text.`);
    updates[USER_PROPERTY.customBaseUrl] = typedBaseUrl(environment, custom);
  }
  let keyChanged = false;
  if (change.apiKey !== undefined) {
    const key = cleanKey(change.apiKey);
    keyChanged = key !== (storedApiKey() ?? '');
    updates[USER_PROPERTY.apiKey] = key || undefined;
    if (key) Object.assign(updates, saltToSave());
  }
  writeTexts('user', updates);
  dropFormulaSettings();
  // Learned plan limits belong to a key and a service: a new key or another service starts afresh.
  if (keyChanged || currentBaseUrl() !== before) forgetLearnedPlans();
  return readSettings();
}
