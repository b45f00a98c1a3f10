// Queue mode on virtual time, for unit tests: n8n workers (each its own copy of the node's modules, so nothing in
// memory is shared between them), each running a few executions at once, sharing one key through the in-memory
// Redis of the webdis stand-in, against the sandbox's handler called in process. No socket and no real wait: every
// request and every store command takes a latency drawn from a seeded generator, on jest's fake timers, so a run is
// one fixed ordering of answers, the same on every machine.
import type { INodeType } from 'n8n-workflow';
import { seededRandom } from '../../shared/random';
import { createSandbox, DEFAULT_CONFIG, type KeyStats, type PlanConfig } from '../sandbox/handler';
import {
  anotherWorker,
  createExecuteContext,
  type SentRequest,
  type TransportAnswer,
} from './executeContext';
import { STORE_TEST_SECRET, memoryRedis, memoryWebdis } from './fakeWebdis';

const SERVICE = 'http://service.test';
const STORE = 'http://webdis.test';

/** One way of a trip in ms: [shortest, longest]. */
export type Latency = readonly [number, number];

export interface ClusterSetup {
  /** Workers, and executions each runs at once. */
  workers: number;
  slots: number;
  /** Each execution's URLs, in the order the queue hands them out. */
  lists: string[][];
  /** The API key (long enough not to be found in the service's texts: the node removes it from them). */
  key: string;
  plan: PlanConfig;
  seed: number;
  /** To the service, which counts a request when it arrives, and back. */
  up: Latency;
  down: Latency;
  /** A store command, each way. */
  store: Latency;
  /** How long the store (a proxy in front of webdis) holds a command sent at this time from the first start. */
  hold?: (ms: number) => number;
  /** Before each execution starts on its worker (the queue's hand-over and n8n's set-up). */
  start: Latency;
  /** Share Across Workers (the store); off: each worker shares only within its own process. Default on. */
  shareAcrossWorkers?: boolean;
}

export interface ClusterRun {
  /** The service's own counts for the key. */
  stats: KeyStats;
  /** When the last execution ended, from the first start (virtual ms). */
  lastMs: number;
  /** Output items (results and skipped) of every execution. */
  items: number;
  /** Why the shared store was not used, as items said it (none when every execution used it). */
  storeNotes: string[];
  /** Each execution's time from the first start to its end (virtual ms), in the order they ended. */
  executionMs: number[];
  /** URLs the service billed in each minute from the first start, as the request log would count them. */
  perMinute: number[];
  /** Skipped items by their reason. */
  skippedReasons: Record<string, number>;
  /** Redis commands sent through webdis, by command (EVAL by the script's name, its first line's `-- dapa:<name>`). */
  storeCommands: Record<string, number>;
}

/** `executions` lists of `size` domains, each overlapping the next by half (as in the end-to-end scenario). */
export function overlapping(executions: number, size: number, tag: string): string[][] {
  const half = size / 2;
  return Array.from({ length: executions }, (_v, e) =>
    Array.from({ length: size }, (_w, i) => `${tag}${half * e + i}.org`),
  );
}

/** Runs the lists on the cluster to the end. Call with jest's modern fake timers on: it advances them itself. */
export async function runCluster(setup: ClusterSetup): Promise<ClusterRun> {
  const random = seededRandom(setup.seed);
  const draw = ([lo, hi]: Latency) => lo + Math.floor(random() * (hi - lo + 1));
  const after = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const sandbox = createSandbox({ ...DEFAULT_CONFIG, keys: { [setup.key]: setup.plan } });
  let first = Date.now();
  const webdis = memoryWebdis(memoryRedis(), STORE, () => draw(setup.store));
  const held = async (url: string) => {
    const hold = setup.hold?.(Date.now() - first) ?? 0;
    if (hold > 0) await after(hold);
    return await webdis(url);
  };

  const storeCommands: Record<string, number> = {};
  const transport = async (request: SentRequest): Promise<TransportAnswer> => {
    if (request.url.startsWith(STORE)) {
      const [command, script] = request.url
        .slice(STORE.length + 1)
        .replace(/\.json$/, '')
        .split('/');
      const name =
        command.toUpperCase() === 'EVAL'
          ? `EVAL ${/^-- (dapa:[a-z-]+)/.exec(decodeURIComponent(script ?? ''))?.[1] ?? '?'}`
          : command.toUpperCase();
      storeCommands[name] = (storeCommands[name] ?? 0) + 1;
      const answer = await held(request.url);
      return { status: answer.status, headers: { 'content-type': 'application/json' }, text: answer.body };
    }
    await after(draw(setup.up));
    const out = sandbox.handle({ ...request, path: request.url.slice(SERVICE.length) }, Date.now());
    billedAt(Date.now(), out.body);
    await after(draw(setup.down));
    return { status: out.status, headers: out.headers, text: out.body };
  };

  const queue = setup.lists.slice();
  first = Date.now();
  const perMinute: number[] = [];
  const billedAt = (at: number, body: string) => {
    let processed = 0;
    try {
      processed = (JSON.parse(body) as { summary?: { processed?: number } }).summary?.processed ?? 0;
    } catch {
      // not an envelope: nothing billed
    }
    const minute = Math.floor((at - first) / 60_000);
    while (perMinute.length <= minute) perMinute.push(0);
    perMinute[minute] += processed;
  };
  const executionMs: number[] = [];
  let items = 0;
  const storeNotes = new Set<string>();
  const skippedReasons: Record<string, number> = {};
  const slot = async (Node: new () => INodeType) => {
    for (let list = queue.shift(); list; list = queue.shift()) {
      await after(draw(setup.start));
      const double = createExecuteContext({
        items: list.map((url) => ({ url })),
        credentials: { apiKey: setup.key, environment: 'custom', baseUrl: SERVICE },
        shareAcrossWorkers: setup.shareAcrossWorkers ?? true,
        sharedState: { url: STORE, secret: STORE_TEST_SECRET },
        transport,
      });
      const out = (await new Node().execute!.call(double.context)) as unknown as Array<
        Array<{ json: { shared_store?: string } }>
      >;
      executionMs.push(Date.now() - first);
      for (const item of [...out[0], ...out[1]]) {
        items += 1;
        if (item.json.shared_store) storeNotes.add(item.json.shared_store);
      }
      for (const item of out[1] as Array<{ json: { reason?: string } }>) {
        const reason = String(item.json.reason);
        skippedReasons[reason] = (skippedReasons[reason] ?? 0) + 1;
      }
    }
  };
  const workers = Array.from({ length: setup.workers }, () => anotherWorker());
  let done = false;
  const all = Promise.all(
    workers.flatMap((Node) => Array.from({ length: setup.slots }, () => slot(Node))),
  ).finally(() => (done = true));
  while (!done) await jest.advanceTimersByTimeAsync(1000);
  await all;
  return {
    stats: sandbox.stats()[setup.key],
    lastMs: Date.now() - first,
    items,
    storeNotes: [...storeNotes],
    executionMs,
    perMinute,
    storeCommands,
    skippedReasons,
  };
}
