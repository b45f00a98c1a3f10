// A key test that bills nothing: one request whose only entry is empty. A valid key on an active plan gets the
// all-skipped 422 envelope (`empty_url`, 0 processed); a wrong key or an expired plan gets its own 401.
import { endpointUrl } from './endpoints';
import { type HttpRequest, checkRequest } from './step';
import { networkBlockedMessage } from './wording';
import { type HttpAnswer, classify } from './wire';

export function keyProbeRequest(baseUrl: string): HttpRequest {
  return checkRequest(endpointUrl(baseUrl), ['']);
}

export type KeyProbeResult =
  | { ok: true; message: string }
  | {
      ok: false;
      code: 'bad_key' | 'not_premium' | 'network_blocked' | 'not_found' | 'rate_limited' | 'unexpected';
      message: string;
    };

export function readKeyProbe(answer: HttpAnswer, now = 0): KeyProbeResult {
  const a = classify(answer, 1, now);
  switch (a.kind) {
    case 'envelope':
      return { ok: true, message: 'The API key works and the plan is active (the test billed nothing).' };
    case 'bad_key':
      return {
        ok: false,
        code: 'bad_key',
        message: 'Incorrect API key: the service answered "incorrect API key provided".',
      };
    case 'not_premium':
      return {
        ok: false,
        code: 'not_premium',
        message:
          'The key is valid but the plan does not allow this request, has expired or has spent its monthly credits.',
      };
    case 'blocked':
      return { ok: false, code: 'network_blocked', message: networkBlockedMessage(a.status) };
    case 'not_found':
      return {
        ok: false,
        code: 'not_found',
        message: `The base URL does not serve the DAPA checker (HTTP ${a.status}).`,
      };
    case 'rate_limited':
      return {
        ok: false,
        code: 'rate_limited',
        message:
          'The service is rate limiting requests right now (429), so the key could not be tested. Try again in a minute.',
      };
    default:
      return {
        ok: false,
        code: 'unexpected',
        message: `Unexpected answer from the service (HTTP ${answer.status}).`,
      };
  }
}
