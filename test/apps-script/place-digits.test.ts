// The one base-32 format of sets of places kept in the user's properties (apps-script/src/stores/storage.ts):
// the saved-credit marks and the job's retry rows. Users' properties already hold strings in it, so the strings are
// pinned here, written out as the code before the shared module wrote them.
import { digitsOf, placesIn } from '../../apps-script/src/stores/storage';

/** Sets and the strings the earlier code (results.ts `bitsOf`, background-store.ts `storeRetryRows`) wrote for them. */
const WRITTEN_BEFORE: Array<[number[], string]> = [
  [[], ''],
  [[0], '1'],
  [[4], 'g'], // the highest place of a digit
  [[5], '01'],
  [[0, 1, 2, 3, 4], 'v'],
  [[3, 1, 2, 40, 41, 99], 'e000000030000000000g'],
  [[0, 7, 12, 31, 63, 239], '14400020000080000000000000000000000000000000000g'], // 239: the last of a 240-result row
  [Array.from({ length: 80 }, (_, i) => 3 * i), '9i4'.repeat(16)], // every third place of a 240-result row
  [[9999], `${'0'.repeat(1999)}g`], // the last row of a 10,000-row job: 2,000 characters
];

const sorted = (places: Iterable<number>) => [...places].sort((a, b) => a - b);

describe('sets of places as base-32 digits', () => {
  it.each(WRITTEN_BEFORE)('writes %j as the earlier code did', (places, digits) => {
    expect(digitsOf(new Set(places))).toBe(digits);
  });

  it.each(WRITTEN_BEFORE)('reads %j back from what the earlier code wrote', (places, digits) => {
    expect(sorted(placesIn(digits))).toEqual(sorted(places));
  });

  it('round-trips any set, whatever the order it is given in', () => {
    const sets = [
      new Set<number>(),
      new Set([9999, 0]),
      new Set(Array.from({ length: 240 }, (_, i) => 239 - i)),
      new Set(Array.from({ length: 500 }, (_, i) => (i * 7919) % 10_000)),
    ];
    for (const set of sets) expect(sorted(placesIn(digitsOf(set)))).toEqual(sorted(set));
  });

  it('writes the empty set as nothing and reads nothing, or no digits, as the empty set', () => {
    expect(digitsOf([])).toBe('');
    expect(placesIn('')).toEqual(new Set());
    expect(placesIn('000')).toEqual(new Set());
    expect(placesIn('*!V')).toEqual(new Set()); // not digits ('V' upper case included): no places
  });
});
