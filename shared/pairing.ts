// Record pairing: which of the domains sent an answer's records and skips speak of. The spec promises neither the
// order of `data` nor that `domain` is spelled like the URL sent, so pairing goes by the domain, never by position.
import { keyOfDomain } from './inputs';
import type { DomainRecord, SkippedEntry } from './wire';

/**
 * Pairs records with the keys that were sent, never by order: first by the normalized domain, then by one
 * being a subdomain of the other (a server may answer for the registrable domain), then a lone leftover pair.
 */
export function matchRecords(
  keys: readonly string[],
  records: readonly DomainRecord[],
): { matched: Map<string, DomainRecord>; unmatched: DomainRecord[] } {
  const matched = new Map<string, DomainRecord>();
  const open = new Set(keys);
  let rest: DomainRecord[] = [];
  for (const record of records) {
    const k = keyOfDomain(record.domain);
    if (open.has(k)) {
      matched.set(k, record);
      open.delete(k);
    } else if (!matched.has(k)) rest.push(record);
  }
  rest = rest.filter((record) => {
    const k = keyOfDomain(record.domain);
    const related = [...open].filter((key) => key.endsWith('.' + k) || k.endsWith('.' + key));
    if (related.length !== 1) return true;
    matched.set(related[0], record);
    open.delete(related[0]);
    return false;
  });
  if (rest.length === 1 && open.size === 1) {
    const [key] = open;
    matched.set(key, rest[0]);
    rest = [];
  }
  return { matched, unmatched: rest };
}

/**
 * Finds the key a skipped entry speaks of among the keys of its request (`keys`, in the order sent) not yet paired
 * (`open`): by its index when the url agrees, else by its url.
 */
export function keyOfSkip(
  skip: SkippedEntry,
  keys: readonly string[],
  open: ReadonlySet<string>,
): string | undefined {
  const i = skip.index;
  const byIndex = i !== undefined && Number.isInteger(i) && i >= 0 && i < keys.length ? keys[i] : undefined;
  const url = (skip.url ?? '').trim();
  if (
    byIndex !== undefined &&
    open.has(byIndex) &&
    (url === '' || url === byIndex || keyOfDomain(url) === byIndex)
  )
    return byIndex;
  if (url === '') return undefined;
  const k = keyOfDomain(url);
  return open.has(k) ? k : keys.find((key) => open.has(key) && key === url.toLowerCase());
}
