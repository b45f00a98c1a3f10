// Opens an execution's sharing: through Redis (webdis) when Share Across Workers is on and its credential is usable,
// else within the process only, with the reason every output item will carry. The store is reached only through
// n8n's `helpers.httpRequest` (webdis's Basic auth in the header); the API key never goes there.
import type { IExecuteFunctions, IN8nHttpFullResponse } from 'n8n-workflow';
import { SHARED_STATE_CREDENTIAL } from '../description';
import { bodyText } from '../transport';
import { storeNamespace } from '../keyedDigest';
import { basicAuthHeader, signingSecret, storeAddress } from './credentialTest';
import { RedisShare } from './redisShare';
import { ShareSession } from './session';
import type { StoreHttp } from './webdis';

/**
 * The budget of one store call: a call not answered within it makes the execution treat the store as down, as if
 * webdis were stopped (its items say so). Calls held 300 ms or 2 s go on; a store that stalls does not hold the run.
 */
export const STORE_CALL_BUDGET_MS = 5_000;

export interface OpenSetup {
  /** The process's storage key of the window: `dapaWindow:<keyed digest of the key and the address>`. */
  storageKey: string;
  baseUrl: string;
  apiKey: string;
  reuseHours: number;
  maximumSet: boolean;
  signal?: AbortSignal;
}

export async function openSession(context: IExecuteFunctions, setup: OpenSetup): Promise<ShareSession> {
  const base = {
    storageKey: setup.storageKey,
    reuseMs: setup.reuseHours * 3600_000,
    maximumSet: setup.maximumSet,
    signal: setup.signal,
  };
  if (context.getNodeParameter('shareAcrossWorkers', 0, false) !== true) return new ShareSession(base);
  let credential;
  try {
    credential = await context.getCredentials(SHARED_STATE_CREDENTIAL);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return new ShareSession({
      ...base,
      problem: `The DAPA Shared State API credential could not be read (${why})`,
    });
  }
  const address = storeAddress(credential);
  if (typeof address !== 'string') return new ShareSession({ ...base, problem: address.message });
  const secret = signingSecret(credential);
  if (typeof secret !== 'string') return new ShareSession({ ...base, problem: secret.message });
  const headers = basicAuthHeader(credential);
  const http: StoreHttp = async (url) => {
    const started = Date.now();
    const response = (await context.helpers
      .httpRequest({
        method: 'GET',
        url,
        headers,
        encoding: 'text',
        json: false,
        returnFullResponse: true,
        ignoreHttpStatusErrors: true,
        timeout: STORE_CALL_BUDGET_MS,
      })
      .catch((error: unknown) => {
        if (Date.now() - started < STORE_CALL_BUDGET_MS) throw error;
        throw new Error(`no answer within ${STORE_CALL_BUDGET_MS / 1000} s, the budget of one store call`);
      })) as IN8nHttpFullResponse;
    return { status: response.statusCode, body: bodyText(response.body) };
  };
  const prefix = storeNamespace(secret, setup.baseUrl, setup.apiKey);
  const remote = new RedisShare(context.getNode(), http, address, prefix, secret);
  return new ShareSession({ ...base, remote });
}
