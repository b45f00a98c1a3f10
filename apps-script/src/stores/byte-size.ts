// Sizes as Google's caps count them: UTF-8 bytes (9 KB a property value, 100 KB a cache value), not characters; a
// name with accents takes more bytes than characters. Pure code (Apps Script has no TextEncoder).

/** The UTF-8 bytes of a text (Apps Script has no TextEncoder): what Google's caps on values count. */
export function utf8Bytes(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? (i++, 4) : 3;
  }
  return n;
}

/** A text cut into pieces of at most `maxBytes` UTF-8 bytes each, never inside a character. */
export function byteParts(text: string, maxBytes: number): string[] {
  const parts: string[] = [];
  let [start, bytes] = [0, 0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c < 0xdc00;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > maxBytes) [parts[parts.length], start, bytes] = [text.slice(start, i), i, 0];
    bytes += size;
    if (pair) i++;
  }
  if (start < text.length) parts.push(text.slice(start));
  return parts;
}
