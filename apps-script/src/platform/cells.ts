// Cell helpers: A1 column letters, and values made safe to write with setValues (never read as a formula).

/** 1 → "A", 27 → "AA". */
export function columnLetter(column: number): string {
  let n = Math.floor(column);
  let letters = '';
  while (n > 0) {
    const rest = (n - 1) % 26;
    letters = String.fromCharCode(65 + rest) + letters;
    n = Math.floor((n - 1) / 26);
  }
  return letters;
}

/** "A" → 1, "aa" → 27; undefined for anything that is not 1 to 3 letters. */
export function columnNumber(letters: string): number | undefined {
  const text = letters.trim().toUpperCase();
  if (!/^[A-Z]{1,3}$/.test(text)) return undefined;
  let n = 0;
  for (const ch of text) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

/**
 * A text as setValues must receive it to stay text: Sheets reads a leading `=`, `+`, `-` or `@` as a formula
 * (or a mention), so such texts get the `'` prefix that Sheets consumes and that marks the cell as text.
 * Texts that look like numbers or dates are kept as text the same way.
 */
export function asCellText(text: string): string {
  const clipped = text.length > 50_000 ? text.slice(0, 49_997) + '...' : text;
  if (/^[=+\-@']/.test(clipped) || /^[\d.,:/\s]*\d[\d.,:/\s]*$/.test(clipped)) return "'" + clipped;
  return clipped;
}

/** Whether a cell value counts as empty. */
export function isEmptyCell(value: unknown): boolean {
  return value === '' || value === null || value === undefined;
}
