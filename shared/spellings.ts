// Where a text spells a given string in any of the encodings a server or a library may give it: as is,
// percent-encoded (either case, once or twice, `+` for a space), as HTML references (named, decimal, hexadecimal) or
// JSON-escaped (short escapes, `\uXXXX`, escaped again inside JSON), character by character, mixed as they come.
// A hand-written matcher rather than one big regular expression: linear in the text (a position and a character
// are tried once each), so no text a server sends can make it backtrack for long. No I/O, ES2020.

/**
 * HTML's named references an escaper writes for the characters of a key (WHATWG's named character references: what
 * PHP's htmlspecialchars, Python's html.escape, lodash's escape and the like emit, and a few more); any character
 * may also come as a numeric reference, and a reference may come without its `;`.
 */
const NAMED: Record<string, string[]> = {
  '&': ['amp', 'AMP'],
  '<': ['lt', 'LT'],
  '>': ['gt', 'GT'],
  '"': ['quot', 'QUOT'],
  "'": ['apos'],
  '/': ['sol'],
  '+': ['plus'],
  '=': ['equals'],
  '\\': ['bsol'],
  '`': ['grave'],
};

/** JSON's short escapes (RFC 8259, section 7) besides `\uXXXX`. */
const JSON_SHORT: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  '\b': 'b',
  '\f': 'f',
  '\n': 'n',
  '\r': 'r',
  '\t': 't',
};

/** The UTF-8 bytes of one code point (no TextEncoder in Apps Script). */
function utf8(codePoint: number): number[] {
  if (codePoint < 0x80) return [codePoint];
  if (codePoint < 0x800) return [0xc0 | (codePoint >> 6), 0x80 | (codePoint & 0x3f)];
  if (codePoint < 0x10000)
    return [0xe0 | (codePoint >> 12), 0x80 | ((codePoint >> 6) & 0x3f), 0x80 | (codePoint & 0x3f)];
  return [
    0xf0 | (codePoint >> 18),
    0x80 | ((codePoint >> 12) & 0x3f),
    0x80 | ((codePoint >> 6) & 0x3f),
    0x80 | (codePoint & 0x3f),
  ];
}

/** The UTF-8 bytes of a text. */
export function utf8Bytes(text: string): number[] {
  const bytes: number[] = [];
  for (const ch of text) bytes.push(...utf8(ch.codePointAt(0) as number));
  return bytes;
}

/** The number written in hexadecimal (`digits` long, either case) at `at`, or NaN. */
function hexAt(text: string, at: number, digits: number): number {
  const part = text.slice(at, at + digits);
  return part.length === digits && /^[0-9A-Fa-f]+$/.test(part) ? parseInt(part, 16) : NaN;
}

/** Where the percent-encoding of `bytes` starting at `at` may end (each byte `%XX`, or `%25XX` encoded twice). */
function percentEnds(text: string, at: number, bytes: number[]): number[] {
  let ends = [at];
  for (const byte of bytes) {
    const next: number[] = [];
    for (const pos of ends) {
      if (text[pos] !== '%') continue;
      if (hexAt(text, pos + 1, 2) === byte) next.push(pos + 3);
      if (hexAt(text, pos + 1, 2) === 0x25 && hexAt(text, pos + 3, 2) === byte) next.push(pos + 5);
    }
    ends = next;
  }
  return ends;
}

/** Where an HTML reference to `ch` starting at `at` ends, or -1. */
function htmlEnd(text: string, at: number, ch: string): number {
  const m = /^&(?:#([xX][0-9A-Fa-f]{1,8}|[0-9]{1,10})|([A-Za-z]{2,20}));?/.exec(text.slice(at, at + 24));
  if (!m) return -1;
  const numeric = m[1];
  const value =
    numeric === undefined ? undefined : /^[xX]/.test(numeric) ? parseInt(numeric.slice(1), 16) : +numeric;
  if (value !== undefined) return value === ch.codePointAt(0) ? at + m[0].length : -1;
  return (NAMED[ch] ?? []).includes(m[2]) ? at + m[0].length : -1;
}

/** The text being searched, and how many backslashes run from each position (counted once, right to left). */
interface Scan {
  text: string;
  runs: Uint32Array;
}

function scanOf(text: string): Scan {
  const runs = new Uint32Array(text.length + 1);
  for (let i = text.length - 1; i >= 0; i--) runs[i] = text[i] === '\\' ? runs[i + 1] + 1 : 0;
  return { text, runs };
}

/** Where the JSON escapes of `ch` starting at `at` may end (any run of backslashes before each escape). */
function jsonEnds({ text, runs }: Scan, at: number, ch: string): number[] {
  const ends: number[] = [];
  const escape = (pos: number, unit: number): number => {
    const run = runs[pos];
    if (run === 0) return -1;
    if (text[pos + run] === 'u' && hexAt(text, pos + run + 1, 4) === unit) return pos + run + 5;
    return -1;
  };
  const units = ch.length === 2 ? [ch.charCodeAt(0), ch.charCodeAt(1)] : [ch.charCodeAt(0)];
  let pos = at;
  for (const unit of units) if (pos >= 0) pos = escape(pos, unit);
  if (pos >= 0) ends.push(pos);
  const short = JSON_SHORT[ch];
  if (short !== undefined) {
    // `\"` once, `\\\"` inside JSON again: a run of backslashes, then the escape's letter (for `\`, the run itself).
    const run = runs[at];
    if (ch === '\\') {
      for (const n of [2, 4, 8]) if (run >= n) ends.push(at + n);
    } else if (run > 0 && text[at + run] === short) ends.push(at + run + 1);
  }
  return ends;
}

/** Every place the spelling of one character starting at `at` may end. */
function characterEnds(scan: Scan, at: number, ch: string): number[] {
  const { text } = scan;
  const ends: number[] = [];
  const lead = text[at];
  if (lead === '%') ends.push(...percentEnds(text, at, utf8(ch.codePointAt(0) as number)));
  else if (lead === '&') ends.push(htmlEnd(text, at, ch));
  else if (lead === '\\') ends.push(...jsonEnds(scan, at, ch));
  else if (lead === '+' && ch === ' ') ends.push(at + 1);
  if (text.startsWith(ch, at)) ends.push(at + ch.length);
  return ends.filter((end) => end > at);
}

/** Where a spelling of `form` that starts at `at` ends, or -1 (each character's choices tried once per position). */
function formEnd(scan: Scan, at: number, form: string[]): number {
  const tried = new Set<string>();
  const visit = (pos: number, index: number): number => {
    if (index === form.length) return pos;
    const mark = `${pos}:${index}`;
    if (tried.has(mark)) return -1;
    tried.add(mark);
    for (const end of characterEnds(scan, pos, form[index])) {
      const found = visit(end, index + 1);
      if (found >= 0) return found;
    }
    return -1;
  };
  return visit(at, 0);
}

/** The text with every spelling of each of `forms` (longest first) replaced by `replacement`. */
export function replaceSpellings(text: string, forms: string[], replacement: string): string {
  const chars = forms.filter((f) => f !== '').map((form) => [...form]);
  const leads = new Set(['%', '&', '\\', '+', ...chars.map((c) => c[0][0])]);
  const scan = scanOf(text);
  let out = '';
  let copied = 0;
  for (let at = 0; at < text.length;) {
    let end = -1;
    if (leads.has(text[at])) for (const form of chars) if ((end = formEnd(scan, at, form)) >= 0) break;
    if (end < 0) {
      at += 1;
      continue;
    }
    out += text.slice(copied, at) + replacement;
    copied = at = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
