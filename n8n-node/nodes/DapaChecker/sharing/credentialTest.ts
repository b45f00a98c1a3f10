// The DAPA Shared State API credential's Test: every Redis command the node uses, run once through webdis on a key of its
// own, so that the answer says which of the three is wrong: the address (nothing answers, or not webdis), the auth,
// or webdis's ACL (a command refused). webdis answers a wrong user or password with 403, like a disabled command (its
// ACL then disables every command for that caller): a 403 to PING, the first command, is the auth. Like the API credential's test, it uses Node's fetch (the credential
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
  ['DEL', TEST_KEY],
  ['LRANGE', `${TEST_KEY}:list`, 0, -1],
  ['EVAL', "return redis.call('del', ARGV[1])", 0, TEST_KEY],
];

/** What to change for each kind of problem. */
const NEXT_STEP: Record<StoreProblem['problem'] | 'wrongAuth', string> = {
  unreachable:
    'Check the Webdis URL (scheme, host, port) and that webdis runs and is reachable from this n8n server.',
  auth: 'Check the User and Password against the http_basic_auth of webdis.json.',
  wrongAuth:
    'webdis answers 403 to every command when the User or Password is wrong: check them against the http_basic_auth of webdis.json (and that PING is enabled in its acl).',
  refused: `Allow the commands ${[...new Set(COMMANDS.map((c) => c[0]))].join(', ')} for this user in the acl of webdis.json.`,
  unexpected: 'Check the Webdis URL: it must be the address of webdis itself.',
};

function wrongAuthMessage(base: string): string {
  return `The shared store (webdis) at ${base} refused PING (HTTP 403): the User or Password of the DAPA Shared State API credential is wrong`;
}

/** The Authorization header of webdis's HTTP Basic auth, when the credential has a user. */
export function basicAuthHeader(data: ICredentialDataDecryptedObject): Record<string, string> {
  const user = typeof data.user === 'string' ? data.user : '';
  if (user === '') return {};
  const password = typeof data.password === 'string' ? data.password : '';
  return { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

/** The credential's Signing Secret (keys its digests and signs its answers), or why it is unusable. */
export function signingSecret(data: ICredentialDataDecryptedObject): string | StoreProblem {
  const secret = typeof data.secret === 'string' ? data.secret : '';
  if (secret.length >= 16) return secret;
  return {
    problem: 'unexpected',
    message: `The Signing Secret of the DAPA Shared State API credential must be at least 16 characters (it has ${secret.length}); set the same one wherever the credential is used`,
  };
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
  const secret = signingSecret(data);
  if (typeof secret !== 'string') return { status: 'Error', message: `${secret.message}.` };
  const headers = basicAuthHeader(data);
  const http: StoreHttp = async (url) => {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(TEST_TIMEOUT_MS) });
    return { status: response.status, body: await response.text() };
  };
  for (const command of COMMANDS) {
    const reply = await runCommand(http, base, command);
    if (!isStoreProblem(reply)) continue;
    // The first command refused with 403: webdis refuses every command to a wrong user or password.
    const step = reply.problem === 'refused' && command === COMMANDS[0] ? 'wrongAuth' : reply.problem;
    const message = step === 'wrongAuth' ? wrongAuthMessage(base) : reply.message;
    return { status: 'Error', message: `${message}. ${NEXT_STEP[step]}` };
  }
  return {
    status: 'OK',
    message: 'Connection tested: webdis answers and allows every command the DAPA Checker node uses.',
  };
}
