// The benchmark inputs: a sheet column as a user pastes it (one domain in many spellings, duplicates, blanks,
// junk), a list of distinct domains for the rate-bound run, and a large column for the CPU figure. Deterministic.
import { seededRandom } from '../../shared/random';

const TLDS = ['com', 'net', 'org', 'io', 'de', 'co.uk', 'fr', 'app'];

/** `n` distinct registrable domains, such as `brand17.net`. */
export function distinctDomains(n: number, prefix = 'brand'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}.${TLDS[i % TLDS.length]}`);
}

/** Ways a user writes the same domain in a sheet; the server and the core both read them as one domain. */
const SPELLINGS: Array<(domain: string) => string> = [
  (d) => d,
  (d) => d.toUpperCase(),
  (d) => `https://www.${d}/`,
  (d) => `http://${d}/blog/post-1?utm_source=sheet`,
  (d) => ` ${d} `,
  (d) => `www.${d}`,
  (d) => `HTTPS://WWW.${d.toUpperCase()}/about`,
  (d) => `${d}/`,
];

/** Entries that are not a domain with an extension: the server skips them as invalid_url_format. */
const INVALID: unknown[] = [
  'not a domain',
  'localhost',
  'n/a',
  'TODO',
  'example',
  'http://',
  'www.',
  '#N/A',
  'see row 12',
  'https:// spaced.com',
  42,
  3.5,
  true,
];

export interface SheetColumn {
  rows: unknown[];
  blank: number;
  invalid: number;
  /** Distinct valid domains among the rows: the fewest billed queries possible. */
  distinctValid: number;
}

/**
 * A sheet column of `rows` cells: `distinct` domains, each at least once, in mixed spellings, with the given shares
 * of invalid entries and blank cells, in shuffled order.
 */
export function sheetColumn(
  rows: number,
  distinct: number,
  { invalidShare = 0.05, blankShare = 0.03, seed = 7, prefix = 'brand' } = {},
): SheetColumn {
  const random = seededRandom(seed);
  const blank = Math.round(rows * blankShare);
  const invalid = Math.round(rows * invalidShare);
  const valid = rows - blank - invalid;
  if (valid < distinct) throw new Error(`sheetColumn: ${valid} valid rows cannot hold ${distinct} domains`);
  const domains = distinctDomains(distinct, prefix);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const cells: unknown[] = [];
  for (let i = 0; i < valid; i++) {
    const domain = i < distinct ? domains[i] : pick(domains);
    cells.push(pick(SPELLINGS)(domain));
  }
  for (let i = 0; i < invalid; i++) cells.push(INVALID[i % INVALID.length]);
  for (let i = 0; i < blank; i++) cells.push(i % 3 === 0 ? '   ' : '');
  for (let i = cells.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [cells[i], cells[j]] = [cells[j], cells[i]];
  }
  return { rows: cells, blank, invalid, distinctValid: distinct };
}
