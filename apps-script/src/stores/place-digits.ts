// Sets of places (small whole numbers: a result's place in a store row, a row of a job's range) as the short strings
// kept in the user's properties: one base-32 digit ('0'-'9', 'a'-'v') holds five places, place p being bit p % 5 of
// digit p / 5; trailing places set nothing. The one format of the saved-credit marks and the job's retry rows.
const DIGITS = '0123456789abcdefghijklmnopqrstuv';

/** The places `digits` holds (a character that is not a digit holds none). */
export function placesIn(digits: string): Set<number> {
  const places = new Set<number>();
  for (let i = 0; i < digits.length; i++)
    for (let d = DIGITS.indexOf(digits[i]), b = 0; d > 0; d >>= 1, b++) if (d & 1) places.add(i * 5 + b);
  return places;
}

/** The digits that hold `places` ('' for none). */
export function digitsOf(places: Iterable<number>): string {
  const digits: number[] = [];
  for (const p of places) digits[Math.floor(p / 5)] = (digits[Math.floor(p / 5)] ?? 0) | (1 << (p % 5));
  return Array.from(digits, (d) => DIGITS[d ?? 0]).join('');
}
