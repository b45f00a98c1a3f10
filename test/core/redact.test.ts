// removeKey takes every spelling of the key a server may send back out of its text: as sent, JSON-escaped and
// percent-encoded, in bodies, headers and transport errors; text without the key is left as it came.
import fc from 'fast-check';
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

// Every spelling a server or a library may give the key (issue 45): each encoder below is written here from its
// standard (or taken from Node), not from redact.ts, and runs over keys that hold the characters those encodings touch.
describe('removeKey: the key in every spelling', () => {
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  const lowerPercent = (text: string) => text.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  const everyBytePercent = (text: string) =>
    [...Buffer.from(text, 'utf8')].map((b) => `%${hex(b, 2).toLowerCase()}`).join('');
  const ENCODINGS: Record<string, (key: string) => string> = {
    'as sent': (k) => k,
    'percent-encoded, upper case': (k) => encodeURIComponent(k),
    'percent-encoded, lower case': (k) => lowerPercent(encodeURIComponent(k)),
    'percent-encoded, every byte': everyBytePercent,
    'percent-encoded twice': (k) => encodeURIComponent(encodeURIComponent(k)),
    'form-encoded (+ for a space)': (k) => new URLSearchParams({ k }).toString().slice(2),
    'HTML, named': (k) =>
      k.replace(
        /[&<>"']/g,
        (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
      ),
    'HTML, decimal': (k) => [...k].map((c) => `&#${c.codePointAt(0)};`).join(''),
    'HTML, hex upper': (k) => [...k].map((c) => `&#x${hex(c.codePointAt(0) as number, 1)};`).join(''),
    'HTML, hex lower': (k) =>
      [...k].map((c) => `&#x${hex(c.codePointAt(0) as number, 4).toLowerCase()};`).join(''),
    'JSON string': (k) => JSON.stringify(k).slice(1, -1),
    'JSON, \\/ escaped': (k) => JSON.stringify(k).slice(1, -1).replace(/\//g, '\\/'),
    'JSON, \\uXXXX for every character': (k) =>
      Array.from({ length: k.length }, (_, i) => `\\u${hex(k.charCodeAt(i), 4).toLowerCase()}`).join(''),
    'JSON inside JSON': (k) => JSON.stringify(JSON.stringify({ authorization: `Bearer ${k}` })).slice(1, -1),
    'base64 of the key': (k) => Buffer.from(k, 'utf8').toString('base64'),
    'base64url of the key': (k) => Buffer.from(k, 'utf8').toString('base64url'),
    'base64 of the Authorization value': (k) => Buffer.from(`Bearer ${k}`, 'utf8').toString('base64'),
    'base64 of the header line': (k) => Buffer.from(`Authorization: Bearer ${k}`, 'utf8').toString('base64'),
    'base64 of the Authorization value, in JSON': (k) =>
      JSON.stringify(Buffer.from(`Bearer ${k}`, 'utf8').toString('base64')).replace(/\//g, '\\/'),
  };
  const CHARACTERS = [...'abcXYZ0189', ...' /+=&<>"\'\\%#?:;@_-.~', 'é', '€', '😀'];
  const keys = fc.string({ unit: fc.constantFrom(...CHARACTERS), minLength: 12, maxLength: 40 });

  test.each(Object.keys(ENCODINGS))('%s: removed, and the text around it kept', (name) => {
    const encode = ENCODINGS[name];
    fc.assert(
      fc.property(keys, (key) => {
        const spelled = encode(key);
        const clean = removeKey(`{"error":"bad key ${spelled} sent"}`, key);
        expect(clean).toContain(KEY_REMOVED);
        expect(clean).not.toContain(spelled);
        expect(clean.startsWith('{"error":"bad key ')).toBe(true);
        expect(clean.endsWith(' sent"}')).toBe(true);
      }),
      { numRuns: 60, seed: 45 },
    );
  });

  test('the key of the issue, in each spelling a server showed it', () => {
    const key = 'k3y/with+sp ce&"quote"=é';
    for (const encode of Object.values(ENCODINGS)) {
      const clean = removeKey(`Unauthorized: ${encode(key)}`, key);
      expect({ clean, left: clean.includes(encode(key)) }).toEqual({
        clean: expect.any(String),
        left: false,
      });
    }
  });

  test('text without the key stays as it came, escapes and all', () => {
    const key = 'k3y/with+sp ce&"quote"=é';
    const body =
      '{"status":"success","message":"a \\/ b \\u00e9 %2F &amp; &#47; + x","data":[{"domain":"example.com","site_da":"41"}]}';
    expect(removeKey(body, key)).toBe(body);
    expect(removeKey('k3y/with', key)).toBe('k3y/with'); // a part of the key is not the key
  });

  test('answers and errors: every spelling, in headers and bodies', () => {
    const key = 'ab/cd+ef "gh" 0123';
    const answer = removeKeyFromAnswer(
      {
        status: 401,
        headers: {
          'x-echo': encodeURIComponent(key).toLowerCase(),
          'x-auth': Buffer.from(`Bearer ${key}`).toString('base64'),
        },
        body: `<p>key &quot;${key.replace(/"/g, '&#34;')}&quot;</p>`,
      },
      key,
    );
    expect(answer.headers?.['x-echo']).toBe(KEY_REMOVED);
    expect(answer.headers?.['x-auth']).toContain(KEY_REMOVED);
    expect(answer.body).toBe(`<p>key &quot;${KEY_REMOVED}&quot;</p>`);
    const error = removeKeyFromError(new Error(`POST failed: ${JSON.stringify({ key })}`), key) as Error;
    expect(error.message).toBe(`POST failed: {"key":"${KEY_REMOVED}"}`);
  });
});
