// The DAPA Shared State API credential's Test: every Redis command the node uses, run once through webdis on a key of its
// own, so that the answer says which of the three is wrong: the address (nothing answers, or not webdis), the auth
// (401), or webdis's ACL (a command refused). Like the API credential's test, it uses Node's fetch (the credential
// test functions offer only the deprecated `helpers.request`).
import type {
  ICredentialDataDecryptedObject,
  ICredentialsDecrypted,
  ICredentialTestFunctions,
  INodeCredentialTestResult,
} from 'n8n-workflow';
import { isStoreProblem, runCommand, type StoreHttp, type StoreProblem } from './webdis';

const TEST_TIMEOUT_MS = 10_000;

/** The commands the node sends, on a key that holds nothing of anyone's. */
const TEST_KEY = 'dapa:credential-test';
const COMMANDS: ReadonlyArray<ReadonlyArray<string | number>> = [
  ['PING'],
  ['SET', TEST_KEY, 'x', 'NX', 'PX', 10_000],
  ['GET', TEST_KEY],
  ['MGET', TEST_KEY, `${TEST_KEY}:b`],
  ['PEXPIRE', TEST_KEY, 10_000],
  ['DEL', TEST_KEY],
  ['RPUSH', `${TEST_KEY}:list`, 'x'],
  ['LRANGE', `${TEST_KEY}:list`, 0, -1],
  ['LTRIM', `${TEST_KEY}:list`, -1, -1],
  ['LREM', `${TEST_KEY}:list`, 1, 'x'],
  ['DEL', `${TEST_KEY}:list`],
];

/** What to change for each kind of problem. */
const NEXT_STEP: Record<StoreProblem['problem'], string> = {
  unreachable:
    'Check the Webdis URL (scheme, host, port) and that webdis runs and is reachable from this n8n server.',
  auth: 'Check the User and Password against the http_basic_auth of webdis.json.',
  refused:
    'Allow the commands PING, SET, GET, MGET, PEXPIRE, DEL, RPUSH, LRANGE, LTRIM and LREM for this user in the acl of webdis.json, and check the User and Password.',
  unexpected: 'Check the Webdis URL: it must be the address of webdis itself.',
};

/** The Authorization header of webdis's HTTP Basic auth, when the credential has a user. */
export function basicAuthHeader(data: ICredentialDataDecryptedObject): Record<string, string> {
  const user = typeof data.user === 'string' ? data.user : '';
  if (user === '') return {};
  const password = typeof data.password === 'string' ? data.password : '';
  return { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

/** The credential's address, or why it is unusable. */
export function storeAddress(data: ICredentialDataDecryptedObject): string | StoreProblem {
  const raw = typeof data.url === 'string' ? data.url.trim() : '';
  if (!/^https?:\/\/[^/\s]+/i.test(raw))
    return {
      problem: 'unexpected',
      message: `The Webdis URL of the DAPA Shared State API credential must start with http:// or https:// (it is ${JSON.stringify(raw)})`,
    };
  return raw.replace(/\/+$/, '');
}

export async function testSharedStateCredential(
  this: ICredentialTestFunctions,
  credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
  const data: ICredentialDataDecryptedObject = credential.data ?? {};
  const base = storeAddress(data);
  if (typeof base !== 'string') return { status: 'Error', message: `${base.message}.` };
  const headers = basicAuthHeader(data);
  const http: StoreHttp = async (url) => {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(TEST_TIMEOUT_MS) });
    return { status: response.status, body: await response.text() };
  };
  for (const command of COMMANDS) {
    const reply = await runCommand(http, base, command);
    if (isStoreProblem(reply))
      return { status: 'Error', message: `${reply.message}. ${NEXT_STEP[reply.problem]}` };
  }
  return {
    status: 'OK',
    message: 'Connection tested: webdis answers and allows every command the DAPA Checker node uses.',
  };
}
