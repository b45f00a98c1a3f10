// Removes the user's API key from text that came from a server before anything shows, logs or keeps it: a server may
// repeat the request (its `Authorization: Bearer <key>` header, the only place the key travels) in an error message,
// in any spelling a server or a library may give it. Each shell calls it where an answer enters.
import { replaceSpellings, utf8Bytes } from './spellings';
import type { HttpAnswer } from './wire';

/** What stands where the key was. */
export const KEY_REMOVED = '[API key removed]';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Base64 of bytes (RFC 4648, section 4, with `=` padding; no btoa in Apps Script). */
export function base64(bytes: number[]): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = [18, 12, 6, 0].map((shift) => BASE64[(n >> shift) & 63]);
    const kept = Math.min(4, bytes.length - i + 1);
    out += chars.slice(0, kept).join('') + '='.repeat(4 - kept);
  }
  return out;
}

/**
 * The stretches of base64 that the key's bytes alone decide, wherever they sit in the encoded text (the Authorization
 * value `Bearer <key>`, a whole header line, the key by itself): for each of the three alignments, the characters
 * not shared with a neighbouring byte; standard and URL-safe alphabets (RFC 4648, sections 4 and 5).
 */
function base64Cores(key: string): string[] {
  const bytes = utf8Bytes(key);
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = base64([...new Array<number>(offset).fill(0), ...bytes, 0, 0, 0]);
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.slice(first, last);
    if (core.length < 8) continue; // too short to tell from other text
    cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

/** The key and the base64 stretches it decides, longest first: the plain forms every spelling is made of. */
function plainForms(key: string): string[] {
  return [key, ...base64Cores(key)].sort((a, b) => b.length - a.length);
}

/** Characters every escaped spelling needs (percent, HTML, JSON, `+`): a text without them holds only plain forms. */
const ESCAPING = /[%&\\+]/;

/** Removes the key from texts, one after the other. */
function keyRemover(key: string): (text: string) => string {
  const forms = plainForms(key);
  return (text) => {
    if (!text) return text;
    if (!ESCAPING.test(text)) return forms.reduce((out, form) => out.split(form).join(KEY_REMOVED), text);
    return replaceSpellings(text, forms, KEY_REMOVED);
  };
}

/** The text with every spelling of the key replaced; the text as it was when there is no key. */
export function removeKey(text: string, key: string | undefined): string {
  if (!key || !text) return text;
  return keyRemover(key)(text);
}

/** An answer whose body and headers carry no spelling of the key. */
export function removeKeyFromAnswer(answer: HttpAnswer, key: string | undefined): HttpAnswer {
  if (!key) return answer;
  const remove = keyRemover(key);
  const headers: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {}))
    headers[name] = Array.isArray(value) ? value.map(remove) : value === undefined ? value : remove(value);
  return { ...answer, ...(answer.headers ? { headers } : {}), body: remove(answer.body) };
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
