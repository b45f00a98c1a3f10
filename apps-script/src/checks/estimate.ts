// What a check will cost before it runs: its rows, distinct domains, how many are kept or cached (free) and the most
// it can be billed (its new domains, capped by what the monthly budget leaves), for the sidebar's check, "Check
// formulas again" and a schedule's monthly forecast. The same reading as the check itself (readKnown), so on a
// service without faults the estimate is what the check then bills.
import type { Estimate } from '../../sidebar/contract';
import { creditView } from '../stores/account';
import { estimateText } from '../messages';
import { readKnown, type Reuse } from './check';

/** The estimate of checking `domains` (distinct keys) read from `rows` rows, reusing as `reuse` says. */
export function estimateKeys(
  rows: number,
  domains: readonly string[],
  baseUrl: string,
  apiKey: string,
  reuse: Reuse,
): Estimate {
  const free = readKnown(baseUrl, domains, reuse).known.size;
  const { left } = creditView(apiKey);
  const fresh = domains.length - free;
  const cost = Math.min(fresh, left ?? fresh);
  const e = { rows, domains: domains.length, free, cost, capped: cost < fresh };
  return { ...e, text: estimateText(e) };
}
