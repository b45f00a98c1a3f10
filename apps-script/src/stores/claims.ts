// Claims without a lock: "holder H has <name> until U", decided by the store's append log alone, so executions with
// and without the document lock (the published add-on's dispatcher has none) agree on who holds what. A claim is a
// row (claimed-at ms | "claim:" name | holder | until ms) appended with the atomic Sheet.appendRow; the claimant then
// reads the log back. Walking a name's claims in row order, a claim wins when no current holder's until is later than
// the claim's own time, or when it is the current holder's renewal; a release is the holder's claim until now. Every
// reader walks the same rows in the same order (appendRow is atomic and rows are never reordered; the compaction only
// deletes a name's first claims once they all ended an hour ago and every later claim was made after that), so every
// reader finds the same winner.
import { now } from '../platform/gas';
import { currentSpreadsheet } from './session';
import { appendStore, randomPart, readStore } from './store-sheet';

export const CLAIM_PREFIX = 'claim:';
/** A name's first claims are deleted once they ended this long ago (longer than any lease is held). */
export const CLAIM_GRACE_MS = 3_600_000;

export interface Claim {
  at: number;
  holder: string;
  until: number;
}

/** The claim a row of the log holds, with its name; undefined for any other row. */
export function claimRow(row: readonly unknown[]): (Claim & { name: string }) | undefined {
  const [at, kind, holder, until] = row;
  if (typeof kind !== 'string' || !kind.startsWith(CLAIM_PREFIX)) return undefined;
  const [a, u] = [Number(at), Number(until)];
  if (!Number.isFinite(a) || !Number.isFinite(u) || at === '' || until === '') return undefined;
  return { name: kind.slice(CLAIM_PREFIX.length), at: a, holder: String(holder), until: u };
}

/** Which of these claims of one name (in row order) won, and who holds the name after the last. */
export function walkClaims(claims: readonly Claim[]): { won: boolean[]; holder?: Claim } {
  let holder: Claim | undefined;
  const won = claims.map((claim) => {
    const wins = !holder || holder.until <= claim.at || holder.holder === claim.holder;
    if (wins) holder = claim;
    return wins;
  });
  return { won, holder };
}

function claimsNamed(rows: readonly unknown[][], name: string): Claim[] {
  return rows.flatMap((row) => {
    const claim = claimRow(row);
    return claim && claim.name === name ? [claim] : [];
  });
}

/** A new holder id (a letter first: Sheets never reads it as a number, a date or a formula). */
export function newHolder(): string {
  return `h${now().toString(36)}-${randomPart()}`;
}

/**
 * Claims `name` for `holder` (a new one by default) until `until`: appends the claim, reads the log back and answers
 * the holder when this claim won, else undefined. The current spreadsheet's log.
 */
export function claim(name: string, until: number, holder = newHolder()): string | undefined {
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) throw new Error('There is no spreadsheet here to claim anything in.');
  const at = now();
  appendStore(spreadsheet, [[at, CLAIM_PREFIX + name, holder, until]]);
  const claims = claimsNamed(readStore(spreadsheet), name);
  const { won } = walkClaims(claims);
  for (let i = claims.length; i-- > 0;) {
    const c = claims[i];
    if (c.holder === holder && c.at === at && c.until === until) return won[i] ? holder : undefined;
  }
  return undefined;
}

/** Gives `name` back: the holder's claim until now (a claim by anyone else than the holder changes nothing). */
export function releaseClaim(name: string, holder: string): void {
  const spreadsheet = currentSpreadsheet();
  if (!spreadsheet) return;
  const at = now();
  appendStore(spreadsheet, [[at, CLAIM_PREFIX + name, holder, at]]);
}

/**
 * The claim rows (indexes) the compaction may delete: for each name, the longest run of its first claims that all
 * ended before `at − CLAIM_GRACE_MS` such that every later claim of the name was made after that time. Walking the
 * claims left then gives every one of them the outcome it had (whoever held the name then had ended by the time the
 * first claim left was made), so readers agree before and after.
 */
export function deadClaimRows(rows: readonly unknown[][], at: number): number[] {
  const cutoff = at - CLAIM_GRACE_MS;
  const byName = new Map<string, Array<Claim & { index: number }>>();
  rows.forEach((row, index) => {
    const claim = claimRow(row);
    if (!claim) return;
    let list = byName.get(claim.name);
    if (!list) byName.set(claim.name, (list = []));
    list.push({ ...claim, index });
  });
  const dead: number[] = [];
  for (const list of byName.values()) {
    // laterMade[k]: the earliest claim time among claims k.. (Infinity when none).
    const laterMade = new Array<number>(list.length + 1).fill(Infinity);
    for (let k = list.length; k-- > 0;) laterMade[k] = Math.min(laterMade[k + 1], list[k].at);
    let ended = -Infinity;
    let cut = 0;
    for (let k = 1; k <= list.length; k++) {
      ended = Math.max(ended, list[k - 1].until);
      if (ended > cutoff) break;
      if (laterMade[k] >= cutoff) cut = k;
    }
    for (let k = 0; k < cut; k++) dead.push(list[k].index);
  }
  return dead;
}
