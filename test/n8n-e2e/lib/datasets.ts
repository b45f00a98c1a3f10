// Deterministic test items: domains spelled the many ways users paste them (scheme, `www.`, case, paths), so that
// one domain is billed once however it is written; plus the 1,000-item / 400-domain set of the load scenario.
import { createHash } from 'node:crypto';
import { seededRandom } from '../../../shared/random';

export interface TestItem extends Record<string, unknown> {
  row: number;
  url?: unknown;
  note: string;
}

const TLDS = ['com', 'net', 'org', 'io', 'co.uk', 'de', 'fr', 'info'];
const WORDS = ['alpha', 'bravo', 'cedar', 'delta', 'ember', 'fjord', 'gamma', 'harbor', 'indigo', 'juniper'];

/** `count` distinct registrable domains, the same ones on every run (e.g. `cedar-17.org`). */
export function domainPool(count: number, prefix = ''): string[] {
  return Array.from(
    { length: count },
    (_, i) => `${prefix}${WORDS[i % WORDS.length]}-${Math.floor(i / WORDS.length)}.${TLDS[i % TLDS.length]}`,
  );
}

/**
 * A domain prefix for a case named after its key that never spells the key: the node removes every spelling of the
 * API key from what the server sends back (shared/redact.ts), records included, so a domain that contained the key
 * would come back changed and could not be paired.
 */
export function keylessTag(tag: string): string {
  return 'l' + createHash('sha256').update(tag).digest('hex').slice(0, 10);
}

/** The `variant`-th way of writing a domain; every variant normalizes back to the same domain. */
export function spell(domain: string, variant: number): string {
  switch (variant % 6) {
    case 0:
      return domain;
    case 1:
      return `https://www.${domain}/pricing?ref=e2e`;
    case 2:
      return domain.toUpperCase();
    case 3:
      return `www.${domain}`;
    case 4:
      return `  http://${domain}/blog/post-${variant}  `;
    default:
      return `https://${domain}/`;
  }
}

/**
 * `total` items over `distinct` domains: every domain at least once, the rest repeats picked at random, spelled
 * differently each time, in a shuffled order. `row` is the item's position.
 */
export function itemsOverDomains(total: number, distinct: number, seed = 4242, prefix = ''): TestItem[] {
  if (distinct > total) throw new Error('more distinct domains than items');
  const random = seededRandom(seed);
  const domains = domainPool(distinct, prefix);
  const picks = [...domains];
  while (picks.length < total) picks.push(domains[Math.floor(random() * distinct)]);
  for (let i = picks.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [picks[i], picks[j]] = [picks[j], picks[i]];
  }
  const seen = new Map<string, number>();
  return picks.map((domain, row) => {
    const times = seen.get(domain) ?? 0;
    seen.set(domain, times + 1);
    return { row, url: spell(domain, times), note: `item ${row}` };
  });
}

/** The load set of the e2e suite and the benchmark: 1,000 items over 400 distinct domains. */
export function thousandItemsOver400Domains(): TestItem[] {
  return itemsOverDomains(1000, 400, 1000, 'load-');
}
