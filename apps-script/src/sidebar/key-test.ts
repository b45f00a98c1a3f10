// "Test key": one request whose only entry is empty, which a valid key on an active plan answers with a 422 that
// bills nothing (the core's key probe).
import { keyProbeRequest, readKeyProbe } from '../../../shared';
import type { KeyTestResult } from '../../sidebar/contract';
import { networkBlockedInSheets } from '../messages';
import { allowedFor, fetchAnswer, now } from '../platform/gas';
import { currentBaseUrl, storedApiKey } from '../stores/account';

export function testKey(): KeyTestResult {
  const apiKey = storedApiKey();
  if (!apiKey) return { ok: false, message: 'No API key is saved yet: enter it and save first.' };
  allowedFor('key', 'The key test');
  const baseUrl = currentBaseUrl();
  try {
    const answer = fetchAnswer(keyProbeRequest(baseUrl), apiKey);
    const result = readKeyProbe(answer, now());
    if (!result.ok && result.code === 'network_blocked')
      return { ok: false, message: networkBlockedInSheets(answer.status) };
    return { ok: result.ok, message: result.message };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `Could not reach ${baseUrl}: ${reason.slice(0, 200)}` };
  }
}
