// Removes the user's API key from text that came from a server before anything shows, logs or keeps it: a server may
// repeat the request (its Authorization header) in an error message. Each shell calls it where an answer enters.
import type { HttpAnswer } from './wire';

/** What stands where the key was. */
export const KEY_REMOVED = '[API key removed]';

/** The spellings of a key a server may send back: as sent, JSON-escaped (`\/`), and percent-encoded. */
function spellings(key: string): string[] {
  const forms = new Set([key, key.replace(/\//g, '\\/'), encodeURIComponent(key)]);
  return [...forms].filter((form) => form !== '').sort((a, b) => b.length - a.length);
}

/** The text with every spelling of the key replaced; the text as it was when there is no key. */
export function removeKey(text: string, key: string | undefined): string {
  if (!key || !text) return text;
  let out = text;
  for (const form of spellings(key)) out = out.split(form).join(KEY_REMOVED);
  return out;
}

/** An answer whose body and headers carry no spelling of the key. */
export function removeKeyFromAnswer(answer: HttpAnswer, key: string | undefined): HttpAnswer {
  if (!key) return answer;
  const headers: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {}))
    headers[name] = Array.isArray(value)
      ? value.map((v) => removeKey(v, key))
      : value === undefined
        ? value
        : removeKey(value, key);
  return { ...answer, ...(answer.headers ? { headers } : {}), body: removeKey(answer.body, key) };
}

/** The message of a thrown transport failure with the key removed (a client may quote the request it sent). */
export function removeKeyFromError(error: unknown, key: string | undefined): unknown {
  if (!key || !(error instanceof Error)) return error;
  const message = removeKey(error.message, key);
  if (message === error.message) return error;
  const clean = new Error(message);
  clean.name = error.name;
  return clean;
}
