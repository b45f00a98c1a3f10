// removeKey takes every spelling of the key a server may send back out of its text: as sent, JSON-escaped and
// percent-encoded, in bodies, headers and transport errors; text without the key is left as it came.
import { KEY_REMOVED, removeKey, removeKeyFromAnswer, removeKeyFromError } from '../../shared/redact';

const KEY = 'ab/cd+ef=0123456789';

describe('removeKey', () => {
  test('removes the key as sent, JSON-escaped and percent-encoded, wherever it is', () => {
    const body = JSON.stringify({ message: `incorrect API key provided (Authorization: Bearer ${KEY})` });
    const php = body.replace(/\//g, '\\/');
    for (const text of [body, php, `key=${encodeURIComponent(KEY)}&x=1`, `${KEY}${KEY}`]) {
      const clean = removeKey(text, KEY);
      expect(clean).toContain(KEY_REMOVED);
      for (const form of [KEY, KEY.replace(/\//g, '\\/'), encodeURIComponent(KEY)])
        expect(clean).not.toContain(form);
    }
  });

  test('leaves text without the key, and any text when there is no key, as it came', () => {
    expect(removeKey('you are not premium for this request', KEY)).toBe(
      'you are not premium for this request',
    );
    expect(removeKey(`Bearer ${KEY}`, undefined)).toBe(`Bearer ${KEY}`);
    expect(removeKey(`Bearer ${KEY}`, '')).toBe(`Bearer ${KEY}`);
  });

  test('answers: body and every header; errors: the message, same name', () => {
    const answer = removeKeyFromAnswer(
      { status: 401, headers: { 'x-echo': KEY, 'set-cookie': [`a=${KEY}`, 'b=1'] }, body: `{"m":"${KEY}"}` },
      KEY,
    );
    expect(JSON.stringify(answer)).not.toContain(KEY);
    expect(answer.headers?.['set-cookie']).toEqual([`a=${KEY_REMOVED}`, 'b=1']);
    const error = new TypeError(`fetch failed for Bearer ${KEY}`);
    const clean = removeKeyFromError(error, KEY) as Error;
    expect(clean.message).toBe(`fetch failed for Bearer ${KEY_REMOVED}`);
    expect(clean.name).toBe('TypeError');
    const other = new Error('socket hang up');
    expect(removeKeyFromError(other, KEY)).toBe(other);
  });
});
