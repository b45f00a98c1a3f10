// What a user builds without the core, as small honest simulations: a per-cell fetch formula in Sheets (one
// request per row), and n8n's HTTP Request node with Batching (fixed batches of 50, fixed pause, retry on 429).
import type { HttpAnswer } from '../../shared';
import { postOf, type BenchEnv } from './env';
import { FINAL_REASONS, type Metrics, type RowResult } from './score';

interface WireEnvelope {
  data?: unknown;
  skipped?: unknown;
}

function envelopeOf(
  answer: HttpAnswer,
): { data: Metrics[]; skipped: Array<{ index?: unknown; reason?: unknown }> } | undefined {
  if (answer.status !== 200 && answer.status !== 422) return undefined;
  let parsed: WireEnvelope | null;
  try {
    parsed = JSON.parse(answer.body) as WireEnvelope | null;
  } catch {
    return undefined;
  }
  if (!parsed || !Array.isArray(parsed.data)) return undefined;
  return {
    data: parsed.data as Metrics[],
    skipped: Array.isArray(parsed.skipped)
      ? (parsed.skipped as Array<{ index?: unknown; reason?: unknown }>)
      : [],
  };
}

function rowOfSkip(reason: unknown): RowResult {
  const text = String(reason);
  return FINAL_REASONS.has(text) ? { kind: 'reason', reason: text } : { kind: 'lost', why: text };
}

async function sendOrFail(env: BenchEnv, urls: unknown[]): Promise<HttpAnswer> {
  try {
    return await env.send(postOf(env.baseUrl, urls));
  } catch (error) {
    return { status: 0, body: String(error) };
  }
}

/**
 * A per-cell formula (`=IMPORTDATA`/UrlFetch in each row): one request per row, duplicates and blanks included, no
 * retry and no pause. A failed request is an error cell; every recalculation sends (and bills) it all again.
 */
export async function perRowFormula(rows: readonly unknown[], env: BenchEnv): Promise<RowResult[]> {
  const results: RowResult[] = [];
  for (const value of rows) {
    const answer = await sendOrFail(env, [value]);
    const envelope = envelopeOf(answer);
    if (!envelope) results.push({ kind: 'lost', why: `HTTP ${answer.status}` });
    else if (envelope.data.length > 0) results.push({ kind: 'record', metrics: envelope.data[0] });
    else if (envelope.skipped.length > 0) results.push(rowOfSkip(envelope.skipped[0].reason));
    else results.push({ kind: 'lost', why: 'empty answer' });
  }
  return results;
}

export const FIXED_BATCH_SIZE = 50;
export const FIXED_PAUSE_MS = 1000;
export const FIXED_MAX_RETRIES = 5;

/**
 * How a naive user reads one batch's answer: skipped entries by their index, and the records handed out in order
 * to the entries that were not skipped (the spec promises no order, so this can show another row's record).
 */
export function mapBatchByOrder(batch: readonly unknown[], answer: HttpAnswer): RowResult[] {
  const envelope = envelopeOf(answer);
  if (!envelope) return batch.map(() => ({ kind: 'lost', why: `HTTP ${answer.status}` }));
  const skippedAt = new Map<number, unknown>();
  for (const s of envelope.skipped) if (typeof s.index === 'number') skippedAt.set(s.index, s.reason);
  let next = 0;
  return batch.map((_, i): RowResult => {
    if (skippedAt.has(i)) return rowOfSkip(skippedAt.get(i));
    const record = envelope.data[next++];
    return record ? { kind: 'record', metrics: record } : { kind: 'lost', why: 'no record' };
  });
}

/**
 * n8n's HTTP Request node with Batching: batches of 50 rows (or the plan's maximum, when lower) in sheet order (no de-duplication), a fixed 1 s pause
 * between batches, a retry after 1 s on 429 (at most 5); any other failure loses the batch's rows.
 */
export async function fixedBatches(
  rows: readonly unknown[],
  env: BenchEnv,
  size = FIXED_BATCH_SIZE,
): Promise<RowResult[]> {
  const results: RowResult[] = [];
  for (let start = 0; start < rows.length; start += size) {
    if (start > 0) await env.sleep(FIXED_PAUSE_MS);
    const batch = rows.slice(start, start + size);
    let answer = await sendOrFail(env, batch);
    for (let retry = 1; answer.status === 429 && retry <= FIXED_MAX_RETRIES; retry++) {
      await env.sleep(FIXED_PAUSE_MS);
      answer = await sendOrFail(env, batch);
    }
    results.push(...mapBatchByOrder(batch, answer));
  }
  return results;
}
