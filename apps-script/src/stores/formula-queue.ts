// The formulas' queue of one spreadsheet and service: the domains that =DAPA cells running now are waiting for, which
// execution sends for all of them (one at a time, so that cells running at once never overshoot the plan's minute
// together), what the sends ended in besides records, and the window the sends left. It is the spreadsheet's state, so
// it lives in the document cache (a custom function may use CacheService; user properties are read-only to an
// editor's formula), under the document lock for every change: never the script's cache or lock, which every user of
// a published add-on shares. Records themselves go to the result cache (result-cache.ts), never here.
import { type Fatal, mergeWindows, type Outcome, restoreWindow, type WindowSnapshot } from '../../../shared';
import { now } from '../platform/gas';
import { documentCacheHere, keepEntry, readEntry } from './caches';
import { cacheKeyDigest, currentSpreadsheet, idOrUndefined } from './session';
import { utf8Bytes } from './byte-size';
import { isRecord, locked } from './storage';
import { CACHE_PREFIX } from './storage-keys';

/** A queue unused this long is gone (a minute's window and a sender's turn are long over by then). */
const QUEUE_SECONDS = 600;
/** What a send ended in besides a record is shown to waiting cells this long. */
const ENDED_MS = 5 * 60_000;
/**
 * The queue's stored text stays under this many UTF-8 bytes (a cache value holds 100 KB; what is past it would be
 * refused whole): the longest-waiting domains are kept, then the newest outcomes.
 */
export const MAX_QUEUE_BYTES = 96 * 1024;

export interface FormulaQueue {
  /** Domain key → when a running formula first asked for it. */
  wanted: Record<string, number>;
  /** The execution that sends for every waiting cell, until when its turn lasts (and since when: `since`). */
  sender?: { id: string; until: number; since?: number };
  /** The domains of the sender's round in flight now (no other execution sends them meanwhile). */
  sending?: string[];
  /** When the sender expects the round in flight answered (a cell whose domains ride in it may wait that long). */
  answerBy?: number;
  /** What sends ended in besides a record (a skip, an error), by domain key, with when. */
  ended: Record<string, { outcome: Outcome; at: number }>;
  /** An error that ends every check with this key (wrong key, expired plan), with when. */
  fatal?: { fatal: Fatal; at: number };
  /** The plan's window as the last send left it. */
  window?: WindowSnapshot;
  /** What a background step of this spreadsheet has in flight, until when (no cell sends it beside the step). */
  step?: { keys: string[]; until: number };
}

/** The queue's key in the document's cache (caches.ts); undefined outside a document (no formula runs there). */
function place(baseUrl: string): string | undefined {
  const here = documentCacheHere();
  const id = idOrUndefined(currentSpreadsheet());
  return here && id ? `${CACHE_PREFIX}q:${cacheKeyDigest(id + '\n' + baseUrl)}` : undefined;
}

function parseQueue(text: string | null, at: number): FormulaQueue {
  const queue: FormulaQueue = { wanted: {}, ended: {} };
  if (!text) return queue;
  try {
    const raw = JSON.parse(text) as unknown;
    if (!isRecord(raw)) return queue;
    if (isRecord(raw.wanted))
      for (const [key, t] of Object.entries(raw.wanted)) if (typeof t === 'number') queue.wanted[key] = t;
    if (isRecord(raw.sender) && typeof raw.sender.id === 'string' && typeof raw.sender.until === 'number')
      queue.sender = {
        id: raw.sender.id,
        until: raw.sender.until,
        ...(typeof raw.sender.since === 'number' ? { since: raw.sender.since } : {}),
      };
    if (Array.isArray(raw.sending))
      queue.sending = raw.sending.filter((k): k is string => typeof k === 'string');
    if (typeof raw.answerBy === 'number') queue.answerBy = raw.answerBy;
    if (isRecord(raw.ended))
      for (const [key, e] of Object.entries(raw.ended))
        if (isRecord(e) && typeof e.at === 'number' && e.at > at - ENDED_MS && isRecord(e.outcome))
          queue.ended[key] = { outcome: e.outcome as unknown as Outcome, at: e.at };
    if (isRecord(raw.fatal) && typeof raw.fatal.at === 'number' && raw.fatal.at > at - ENDED_MS)
      queue.fatal = { fatal: raw.fatal.fatal as Fatal, at: raw.fatal.at };
    queue.window = restoreWindow(raw.window, at);
    if (
      isRecord(raw.step) &&
      Array.isArray(raw.step.keys) &&
      typeof raw.step.until === 'number' &&
      raw.step.until > at
    )
      queue.step = {
        keys: raw.step.keys.filter((k): k is string => typeof k === 'string'),
        until: raw.step.until,
      };
  } catch {
    // A damaged queue costs a wait at most: it starts afresh.
  }
  return queue;
}

/** The queue as it stands (no lock: a look, not a change). */
export function readQueue(baseUrl: string): FormulaQueue {
  const at = place(baseUrl);
  return parseQueue(at ? readEntry(at) : null, now());
}

/**
 * Loads the queue under the document lock, stores the next one `transition` answers (the transitions are pure:
 * formula/turn.ts) and answers it. Outside a document (no formula runs there) nothing is stored.
 */
export function changeQueue(
  baseUrl: string,
  transition: (queue: FormulaQueue) => FormulaQueue,
): FormulaQueue {
  const key = place(baseUrl);
  if (!key) return transition({ wanted: {}, ended: {} });
  return locked('document', () => {
    const kept = fitQueue(transition(parseQueue(readEntry(key), now())));
    keepEntry(key, JSON.stringify(kept), QUEUE_SECONDS);
    return kept;
  });
}

/**
 * The queue cut to MAX_QUEUE_BYTES as stored (pure): its longest-waiting domains and newest outcomes, as many as fit
 * beside the rest (sender, window, step, each small); a cell whose domain was cut asks again at its next look.
 */
export function fitQueue(queue: FormulaQueue, maxBytes = MAX_QUEUE_BYTES): FormulaQueue {
  if (utf8Bytes(JSON.stringify(queue)) <= maxBytes) return queue;
  let room = maxBytes - utf8Bytes(JSON.stringify({ ...queue, wanted: {}, ended: {} }));
  const take = <T>(entries: Array<[string, T]>): Array<[string, T]> => {
    const kept: Array<[string, T]> = [];
    for (const entry of entries) {
      const size = utf8Bytes(JSON.stringify(entry[0]) + JSON.stringify(entry[1])) + 2; // ':' and ','
      if (size > room) break;
      room -= size;
      kept.push(entry);
    }
    return kept;
  };
  const wanted = take(Object.entries(queue.wanted).sort((a, b) => a[1] - b[1]));
  const ended = take(Object.entries(queue.ended).sort((a, b) => b[1].at - a[1].at));
  return { ...queue, wanted: Object.fromEntries(wanted), ended: Object.fromEntries(ended) };
}

/** The window every formula starts from: the stored one merged with the queue's newer sends. */
export function formulasWindow(
  stored: WindowSnapshot | undefined,
  queued: WindowSnapshot | undefined,
): WindowSnapshot | undefined {
  return queued ? mergeWindows(stored, queued) : stored;
}
