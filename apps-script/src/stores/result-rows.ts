// The result rows of the store's log as plain data (no service call): a batch row holds many results of one service
// checked at one time ('*' | service id | {"k":[keys],"r":[records]} | checked-at ms, at most BATCH_CHARS of JSON);
// earlier versions wrote one result a row (domain key | service id | record JSON | checked-at ms), still read. The
// newest result of a key and service wins: the later checked-at, then the later row.
import type { DomainRecord } from '../../../shared';

/** Column A of a batch row. */
export const BATCH_MARK = '*';
/** The JSON of a batch stays under this (a cell holds at most 50,000 characters). */
export const BATCH_CHARS = 45_000;

export interface Kept {
  record: DomainRecord;
  at: number;
  /** Its row's index in the rows read (row number − 1). */
  row: number;
  /** Its row's name, the same in every execution while the row lives (batchId), its place there and the row's size. */
  batch: string;
  pos: number;
  size: number;
}

interface ResultRow {
  service: string;
  at: number;
  results: Array<[key: string, record: DomainRecord]>;
}

function isRecord(value: unknown): value is DomainRecord {
  return typeof value === 'object' && value !== null && typeof (value as DomainRecord).domain === 'string';
}

/** The rows that keep these fresh results of one service checked at `at`: as few as BATCH_CHARS allows. */
export function batchRows(
  service: string,
  fresh: ReadonlyArray<{ key: string; record: DomainRecord }>,
  at: number,
): unknown[][] {
  const rows: unknown[][] = [];
  let keys: string[] = [];
  let records: string[] = [];
  let chars = 0;
  const flush = () => {
    if (keys.length > 0) rows.push([BATCH_MARK, service, `{"k":[${keys}],"r":[${records}]}`, at]);
    [keys, records, chars] = [[], [], 0];
  };
  for (const { key, record } of fresh) {
    const k = JSON.stringify(key);
    const r = JSON.stringify(record);
    if (chars + k.length + r.length + 16 > BATCH_CHARS) flush();
    keys.push(k);
    records.push(r);
    chars += k.length + r.length + 2;
  }
  flush();
  return rows;
}

/** What a row of the log holds if it is a result row (a batch or an earlier version's single result). */
export function resultRow(row: readonly unknown[]): ResultRow | undefined {
  const [a, service, payload, checked] = row;
  const at = typeof checked === 'number' ? checked : Number(checked);
  if (typeof service !== 'string' || service === '' || service.startsWith('claim:')) return undefined;
  if (checked === '' || checked === null || !Number.isFinite(at)) return undefined;
  if (a === '' || a === null || a === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(String(payload));
    if (a !== BATCH_MARK) return { service, at, results: isRecord(parsed) ? [[String(a), parsed]] : [] };
    const { k, r } = (parsed ?? {}) as { k?: unknown; r?: unknown };
    const results: ResultRow['results'] = [];
    if (Array.isArray(k) && Array.isArray(r))
      k.forEach((key, i) => {
        if (typeof key === 'string' && isRecord(r[i])) results.push([key, r[i]]);
      });
    return { service, at, results };
  } catch {
    return { service, at, results: [] };
  }
}

/**
 * A result row's name: its checked-at time and its first key (rows of one check share the time), short and stable
 * (rows are appended and deleted, never rewritten), so a mark on a result survives other rows coming and going.
 */
export function batchId(row: ResultRow): string {
  const first = row.results[0]?.[0] ?? '';
  let hash = 0x811c9dc5;
  for (let i = 0; i < first.length; i++) hash = Math.imul(hash ^ first.charCodeAt(i), 0x01000193) >>> 0;
  return `${row.at.toString(36)}.${hash.toString(36)}`;
}

/** When a batch named by batchId was checked (ms), or NaN. */
export function batchTime(id: string): number {
  return parseInt(id.split('.')[0], 36);
}

/**
 * The newest results of a few keys of one service in the rows read, without indexing the rest: a row is parsed only
 * when its text holds one of the keys (a =DAPA cell asks for one or a few; a store of 50,000 results is about 150
 * rows of 45,000 characters, which the full index would parse whole). Answers what ResultIndex.get answers.
 */
export function findResults(
  rows: readonly unknown[][],
  service: string,
  keys: readonly string[],
): Map<string, Kept> {
  const found = new Map<string, Kept>();
  const quoted = keys.map((key) => [key, JSON.stringify(key)] as const);
  rows.forEach((raw, index) => {
    if (raw[1] !== service) return;
    const text = `${String(raw[0])}\n${String(raw[2])}`;
    const held = quoted.filter(([key, q]) => text.includes(q) || raw[0] === key);
    if (held.length === 0) return;
    const row = resultRow(raw);
    if (!row) return;
    const batch = batchId(row);
    row.results.forEach(([key, record], pos) => {
      if (!held.some(([k]) => k === key)) return;
      const current = found.get(key);
      if (!current || row.at >= current.at)
        found.set(key, { record, at: row.at, row: index, batch, pos, size: row.results.length });
    });
  });
  return found;
}

/**
 * The newest result of each key and service in the rows read, kept up to date as rows are added after them (the
 * execution's own appends): index once, then only the new rows.
 */
export class ResultIndex {
  private readonly newest = new Map<string, Map<string, Kept>>();
  private indexed = 0;

  constructor(readonly rows: readonly unknown[][]) {}

  /** Indexes the rows added since the last call. */
  catchUp(): this {
    for (; this.indexed < this.rows.length; this.indexed++) {
      const found = resultRow(this.rows[this.indexed]);
      if (!found) continue;
      let byKey = this.newest.get(found.service);
      if (!byKey) this.newest.set(found.service, (byKey = new Map()));
      const batch = batchId(found);
      const size = found.results.length;
      found.results.forEach(([key, record], pos) => {
        const current = byKey.get(key);
        if (!current || found.at >= current.at)
          byKey.set(key, { record, at: found.at, row: this.indexed, batch, pos, size });
      });
    }
    return this;
  }

  get(service: string, key: string): Kept | undefined {
    return this.newest.get(service)?.get(key);
  }

  /** Every newest result, of every service. */
  *all(): IterableIterator<Kept> {
    for (const byKey of this.newest.values()) yield* byKey.values();
  }
}

/**
 * The rows (indexes) that keep nothing a reader would take: result rows older than `oldest`, or whose every result
 * a newer row supersedes, or that hold none readable; blank rows. Row 1 (the header) is never among them.
 */
export function deadResultRows(rows: readonly unknown[][], oldest: number): number[] {
  const live = new Set<number>();
  for (const kept of new ResultIndex(rows).catchUp().all()) if (kept.at >= oldest) live.add(kept.row);
  const dead: number[] = [];
  rows.forEach((row, i) => {
    if (i === 0 || live.has(i)) return;
    const blank = row.every((cell) => cell === '' || cell === null || cell === undefined);
    if (blank || resultRow(row)) dead.push(i);
  });
  return dead;
}
