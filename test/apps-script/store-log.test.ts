// The hidden store's rows as plain data (no Apps Script): claims decided by row order alone (two claims interleaved,
// an expired holder, renewal, release; the compaction's deletions change no outcome), batches of results (many a row,
// the newest per key and service wins, earlier versions' one-result rows still read), which rows are dead, a formula's
// 4th argument written without touching the user's own, and the version slots a formula's place gives it.
import {
  BLOCK_ROWS,
  fourthArgument,
  homeSlot,
  parseDapaCall,
  versionOf,
  withFourthArgument,
} from '../../apps-script/src/checks/formulas';
import {
  type Claim,
  CLAIM_GRACE_MS,
  claimRow,
  deadClaimRows,
  VERSION_SLOTS,
  walkClaims,
} from '../../apps-script/src/stores/store-sheet';
import {
  BATCH_CHARS,
  batchRows,
  deadResultRows,
  ResultIndex,
  resultRow,
} from '../../apps-script/src/stores/results';

const c = (holder: string, at: number, until: number): Claim => ({ holder, at, until });

describe('claims: the holder is decided by row order alone', () => {
  it('two claims interleaved: the first wins, the second made while it holds loses', () => {
    const { won, holder } = walkClaims([c('a', 100, 400), c('b', 105, 405)]);
    expect(won).toEqual([true, false]);
    expect(holder).toEqual(c('a', 100, 400));
  });

  it('the same two rows in the other order give the other winner: order, not time, decides', () => {
    const { won, holder } = walkClaims([c('b', 105, 405), c('a', 100, 400)]);
    expect(won).toEqual([true, false]);
    expect(holder?.holder).toBe('b');
  });

  it('an expired holder: a claim made at or after its until wins', () => {
    expect(walkClaims([c('a', 0, 100), c('b', 100, 300)]).won).toEqual([true, true]);
    expect(walkClaims([c('a', 0, 100), c('b', 99, 300)]).won).toEqual([true, false]);
  });

  it("renewal: the holder's own claim wins while it holds, and pushes its until on", () => {
    const { won, holder } = walkClaims([c('a', 0, 100), c('a', 90, 200), c('b', 150, 300)]);
    expect(won).toEqual([true, true, false]);
    expect(holder).toEqual(c('a', 90, 200));
  });

  it('a holder overtaken after it expired does not win back by "renewing"', () => {
    const { won } = walkClaims([c('a', 0, 100), c('b', 120, 300), c('a', 130, 400)]);
    expect(won).toEqual([true, true, false]);
  });

  it("release: the holder's claim until now frees the name at once; anyone else's release changes nothing", () => {
    expect(walkClaims([c('a', 0, 100), c('a', 30, 30), c('b', 40, 140)]).won).toEqual([true, true, true]);
    const other = walkClaims([c('a', 0, 100), c('b', 30, 30), c('c', 40, 140)]);
    expect(other.won).toEqual([true, false, false]);
    expect(other.holder?.holder).toBe('a');
  });

  it('reads claim rows (claimed at | "claim:" name | holder | until) and nothing else', () => {
    expect(claimRow([5, 'claim:schedule:123', 'h1', 9])).toEqual({
      name: 'schedule:123',
      at: 5,
      holder: 'h1',
      until: 9,
    });
    expect(claimRow(['*', 'sabc', '{}', 9])).toBeUndefined();
    expect(claimRow(['domain', 'service', 'record', 'checked at (ms)'])).toBeUndefined();
    expect(claimRow(['', 'claim:step', 'h1', ''])).toBeUndefined();
  });

  it('the compaction deletes only first claims long ended, and every later claim keeps its outcome', () => {
    const now = 10 * CLAIM_GRACE_MS;
    const old = now - 3 * CLAIM_GRACE_MS;
    const recent = now - 60_000;
    const rows: unknown[][] = [
      ['domain', 'service', 'record', 'checked at (ms)'],
      [old, 'claim:step', 'a', old + 300_000],
      [old + 10, 'claim:step', 'b', old + 400_000], // lost
      [old + 400_000, 'claim:step', 'a', old + 400_000], // a's release, once it had ended
      [recent, 'claim:step', 'c', recent + 300_000],
      [recent + 5, 'claim:step', 'd', recent + 300_000], // lost to c
      [old, 'claim:other', 'x', now + 1_000], // still held: stays, and so does the rest of its name
      [old + 1, 'claim:other', 'y', old + 2],
    ];
    const dead = deadClaimRows(rows, now);
    expect(dead.sort()).toEqual([1, 2, 3]);
    const outcome = (rs: unknown[][], name: string) =>
      walkClaims(rs.flatMap((r) => (claimRow(r)?.name === name ? [claimRow(r) as Claim] : []))).won;
    const kept = rows.filter((_, i) => !dead.includes(i));
    expect(outcome(kept, 'step')).toEqual(outcome(rows, 'step').slice(3));
    expect(outcome(kept, 'other')).toEqual(outcome(rows, 'other'));
  });

  it('a claim made before the cutoff keeps the claims before it, whose holder might have blocked it', () => {
    const now = 10 * CLAIM_GRACE_MS;
    const cutoff = now - CLAIM_GRACE_MS;
    const rows: unknown[][] = [
      ['header'],
      [cutoff - 500, 'claim:step', 'a', cutoff - 100],
      [cutoff - 200, 'claim:step', 'b', cutoff + 600_000], // lost to a; deleting a alone would make it win
      [now - 10, 'claim:step', 'c', now + 100],
    ];
    expect(deadClaimRows(rows, now)).toEqual([]);
  });
});

describe('results: batches of many a row, the newest per key and service', () => {
  const record = (domain: string, da = 1) => ({
    domain,
    site_da: da,
    site_pa: 2,
    site_mr: 3,
    spam_score: 4,
  });
  const fresh = (n: number, da = 1) =>
    Array.from({ length: n }, (_, i) => ({
      key: `d${i}.example.com`,
      record: record(`d${i}.example.com`, da),
    }));

  it('5,000 results fit in a few rows of at most 45,000 characters, and read back whole', () => {
    const rows = batchRows('sX', fresh(5_000), 1_000);
    expect(rows.length).toBeLessThanOrEqual(15);
    for (const row of rows) {
      expect(row.slice(0, 2)).toEqual(['*', 'sX']);
      expect(row[3]).toBe(1_000);
      expect(String(row[2]).length).toBeLessThanOrEqual(BATCH_CHARS);
    }
    const index = new ResultIndex(rows).catchUp();
    expect(index.get('sX', 'd4999.example.com')?.record).toEqual(record('d4999.example.com'));
    expect(rows.reduce((n, row) => n + (resultRow(row)?.results.length ?? 0), 0)).toBe(5_000);
    // A sidebar job of 100,000 rows: a few hundred rows, not 100,000.
    expect(batchRows('sX', fresh(100_000), 1_000).length).toBeLessThanOrEqual(300);
  });

  it('the newest wins: the later checked-at, then the later row; services never mix; claims and the header are no results', () => {
    const rows: unknown[][] = [
      ['domain', 'service', 'record', 'checked at (ms)'],
      ['a.com', 'sX', JSON.stringify(record('a.com', 10)), 500], // an earlier version's row
      ...batchRows('sX', [{ key: 'a.com', record: record('a.com', 20) }], 400), // older, though later
      ...batchRows('sX', [{ key: 'b.com', record: record('b.com', 30) }], 600),
      ...batchRows('sX', [{ key: 'b.com', record: record('b.com', 31) }], 600), // same time, later row
      ...batchRows('sY', [{ key: 'a.com', record: record('a.com', 99) }], 900),
      [700, 'claim:step', 'h1', 800],
    ];
    const index = new ResultIndex(rows).catchUp();
    expect(index.get('sX', 'a.com')).toMatchObject({ at: 500, row: 1, record: { site_da: 10 } });
    expect(index.get('sX', 'b.com')).toMatchObject({ at: 600, row: 4, record: { site_da: 31 } });
    expect(index.get('sY', 'a.com')?.record.site_da).toBe(99);
    expect(index.get('sX', 'h1')).toBeUndefined();
    // Rows appended after the read are indexed by the next catchUp (the execution's own appends).
    rows.push(...batchRows('sX', [{ key: 'a.com', record: record('a.com', 40) }], 1_000));
    expect(index.catchUp().get('sX', 'a.com')?.record.site_da).toBe(40);
  });

  it('dead rows: expired, wholly superseded, blank or unreadable; a partly superseded batch and the header stay', () => {
    const rows: unknown[][] = [
      ['domain', 'service', 'record', 'checked at (ms)'],
      ...batchRows('sX', [{ key: 'old.com', record: record('old.com') }], 100), // 1: expired
      ...batchRows('sX', fresh(3), 1_000), // 2: d0 and d1 superseded below, d2 not
      ['d0.example.com', 'sX', JSON.stringify(record('d0.example.com')), 900], // 3: older than row 2
      ...batchRows('sX', fresh(2, 7), 2_000), // 4: supersedes d0, d1 of row 2
      ['', '', '', ''], // 5: blank
      ['*', 'sX', '{not json', 2_000], // 6: unreadable
      [2_000, 'claim:step', 'h', 3_000], // 7: a claim (not the results' to judge)
    ];
    expect(deadResultRows(rows, 500)).toEqual([1, 3, 5, 6]);
  });
});

describe("a formula's 4th argument", () => {
  const ref = "'_dapa_versions'!$A$7";

  it('is added after the user’s own arguments, kept exactly as written, or put in place of an earlier one', () => {
    expect(withFourthArgument('=DAPA(A2)', ref)).toBe(`=DAPA(A2,,,${ref})`);
    expect(withFourthArgument('=DAPA(A1:A150, "da")', ref)).toBe(`=DAPA(A1:A150, "da",,${ref})`);
    expect(withFourthArgument('=DAPA(C1:C2, "da", TRUE)', ref)).toBe(`=DAPA(C1:C2, "da", TRUE,${ref})`);
    expect(withFourthArgument('=IFERROR(DAPA(A2:A9, "a,b",,\'_dapa_results\'!$F$1), "")', ref)).toBe(
      `=IFERROR(DAPA(A2:A9, "a,b",,${ref}), "")`,
    );
    expect(withFourthArgument(`=DAPA(A2,,,'_dapa_versions'!$A$3)`, ref)).toBe(`=DAPA(A2,,,${ref})`);
    expect(fourthArgument(withFourthArgument('=dapa( A2 ; "da" )', ref))).toBe(ref);
    expect(parseDapaCall(withFourthArgument('=DAPA(A2:A9, "da,pa", TRUE)', ref))).toMatchObject({
      header: true,
      width: 2,
      source: { firstRow: 2, lastRow: 9, firstColumn: 1, lastColumn: 1 },
    });
  });

  it('names a version slot, or an earlier version’s column of the store', () => {
    expect(versionOf(`=DAPA(A2,,,${ref})`)).toEqual({ slot: 6 });
    expect(versionOf("=DAPA(A2,,,'_dapa_results'!$AB$1)")).toEqual({ legacyColumn: 28 });
    expect(versionOf('=DAPA(A2)')).toEqual({});
    expect(versionOf(`=DAPA(A2,,,'_dapa_versions'!$A$${VERSION_SLOTS + 1})`)).toEqual({});
  });
});

describe('version slots: a fixed number, chosen by place', () => {
  it('5,000 formulas of a sheet share 100 slots, one per block of 50 rows; another sheet starts elsewhere', () => {
    const slots = Array.from({ length: 5_000 }, (_, i) => homeSlot({ sheetId: 0, row: i + 2 }));
    expect(new Set(slots).size).toBe(Math.ceil(5_001 / BLOCK_ROWS));
    expect(slots.every((s) => Number.isInteger(s) && s >= 0 && s < VERSION_SLOTS)).toBe(true);
    expect(homeSlot({ sheetId: 0, row: 1 })).toBe(homeSlot({ sheetId: 0, row: BLOCK_ROWS }));
    expect(homeSlot({ sheetId: 0, row: BLOCK_ROWS + 1 })).not.toBe(homeSlot({ sheetId: 0, row: BLOCK_ROWS }));
    // 100,000 rows still take no more than the 128 slots.
    const many = new Set(Array.from({ length: 100_000 }, (_, i) => homeSlot({ sheetId: 7, row: i + 1 })));
    expect(many.size).toBe(VERSION_SLOTS);
    expect(homeSlot({ sheetId: 1_000_003, row: 2 })).not.toBe(homeSlot({ sheetId: 0, row: 2 }));
  });
});
