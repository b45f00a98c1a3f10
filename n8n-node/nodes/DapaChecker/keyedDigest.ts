// The names under which the node keeps what it learns of an API key, all keyed digests (HMAC-SHA-256) of the key and
// the service address, never the key or a plain hash of it: in this process's memory with a secret the process draws
// at start and keeps nowhere; in the workflow's static data with a random salt kept there beside it; in the shared
// store with the Signing Secret of the DAPA Shared State API credential, which also signs every answer kept there.
import { createHmac, randomBytes } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';

/** Drawn once per process (n8n loads the node's code once per process): names in memory only. */
const PROCESS_SECRET = randomBytes(32);
/** Where the node's static data keeps its salt. */
export const SALT_NAME = 'dapaSalt';

function hmac(secret: string | Buffer, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

/** The key and address as one text to digest. */
function keyText(baseUrl: string, apiKey: string): string {
  return `${baseUrl}\n${apiKey}`;
}

/** The key's name in this process's memory (the executions' registry, the remembered windows). */
export function processKey(baseUrl: string, apiKey: string): string {
  return `dapaWindow:${hmac(PROCESS_SECRET, keyText(baseUrl, apiKey)).slice(0, 24)}`;
}

/** The static data's salt, drawn and kept there the first time. */
function saltOf(staticData: IDataObject): string {
  const kept = staticData[SALT_NAME];
  if (typeof kept === 'string' && /^[0-9a-f]{32}$/.test(kept)) return kept;
  const salt = randomBytes(16).toString('hex');
  staticData[SALT_NAME] = salt;
  return salt;
}

/** The key's name in the node's workflow static data: `dapaWindow:h:<HMAC with the salt kept there>`. */
export function staticKey(staticData: IDataObject, baseUrl: string, apiKey: string): string {
  return `dapaWindow:h:${hmac(saltOf(staticData), keyText(baseUrl, apiKey)).slice(0, 24)}`;
}

/** The key's namespace in the shared store: `dapa:<HMAC with the credential's Signing Secret>`. */
export function storeNamespace(secret: string, baseUrl: string, apiKey: string): string {
  return `dapa:${hmac(secret, keyText(baseUrl, apiKey)).slice(0, 24)}`;
}

/** The signature of an answer kept in the shared store: its domain, time and record, under the Signing Secret. */
export function answerMac(secret: string, domain: string, checkedAt: number, record: string): string {
  return hmac(secret, `${domain}\n${checkedAt}\n${record}`).slice(0, 32);
}
