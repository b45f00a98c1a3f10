// The credential test ("Test" in the credential dialog): one probe whose only URL is empty, which a valid key on an
// active plan answers with the all-skipped 422 envelope (billing nothing), and which tells a wrong key from an
// expired plan. n8n's declarative credential test cannot do this (a 422 is a failure to it, and both 401s look
// alike), so the node provides it as `methods.credentialTest` and the node's credential entry names it (`testedBy`).
import type {
  ICredentialDataDecryptedObject,
  ICredentialsDecrypted,
  ICredentialTestFunctions,
  INodeCredentialTestResult,
} from 'n8n-workflow';
import { keyProbeRequest, readKeyProbe } from '../../../shared/index';
import { removeKey, removeKeyFromAnswer } from '../../../shared/redact';
import { credentialProblem, resolveBaseUrl } from './settings';

const PROBE_TIMEOUT_MS = 20_000;

const NEXT_STEP: Record<string, string> = {
  bad_key: 'Paste the API key of your plan again.',
  not_premium: 'Renew or upgrade the plan, or use a key with an active plan.',
  network_blocked:
    "The key was not checked. Test again from a self-hosted n8n or another network, or ask DAPA checker support to allow this server's address.",
  not_found:
    'Check the environment and, for Staging or Custom, the base URL (without /api/user/dapa-checker).',
  unexpected: 'Check the environment and the base URL, then test again.',
};

/** Why fetch failed, with the network cause (`ENOTFOUND api.example.com`) rather than just "fetch failed". */
function failureReason(error: unknown): string {
  // Duck-typed: the error may come from another realm than this module's `Error`.
  const failure = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    cause?: { code?: unknown; message?: unknown };
  };
  const message = typeof failure.message === 'string' ? failure.message : String(error);
  const cause = failure.cause;
  const detail =
    typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  return detail ? `${message}: ${detail}` : message;
}

/** Runs the probe against the credential's address; the key goes only into the Authorization header. */
export async function testDapaCheckerCredential(
  this: ICredentialTestFunctions,
  credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
  const data: ICredentialDataDecryptedObject = credential.data ?? {};
  const problem = credentialProblem(data);
  if (problem) return { status: 'Error', message: `${problem.message} ${problem.description}` };
  const baseUrl = resolveBaseUrl(data);
  if (typeof baseUrl !== 'string')
    return { status: 'Error', message: `${baseUrl.message} ${baseUrl.description}` };

  const probe = keyProbeRequest(baseUrl);
  let answer;
  try {
    // ICredentialTestFunctions offers only the deprecated `helpers.request`; Node's own fetch does the one call.
    const response = await fetch(probe.url, {
      method: probe.method,
      headers: { ...probe.headers, Authorization: `Bearer ${String(data.apiKey)}` },
      body: probe.body,
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    answer = removeKeyFromAnswer(
      {
        status: response.status,
        headers: Object.fromEntries(response.headers.entries()),
        body: await response.text(),
      },
      String(data.apiKey),
    );
  } catch (error) {
    const reason = removeKey(failureReason(error), String(data.apiKey));
    return {
      status: 'Error',
      message: `Could not reach the DAPA service at ${baseUrl} (${reason}). Check the environment and the base URL.`,
    };
  }
  const result = readKeyProbe(answer, Date.now());
  if (result.ok) return { status: 'OK', message: result.message };
  return { status: 'Error', message: `${result.message} ${NEXT_STEP[result.code] ?? ''}`.trim() };
}
