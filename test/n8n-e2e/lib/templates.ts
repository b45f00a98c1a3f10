// The workflow templates shipped with the package (n8n-node/templates/*.json), run as users import them, in the
// e2e suite's n8n and sandbox: "Check only what is new" (a Data table of results newer than N days, DAPA Checker for
// the rest, upsert) executed twice over the same 400 domains, and "Monthly watch" executed twice with some domains'
// metrics moved in between (a wrapper around the sandbox's answers: test/sandbox/ itself is not changed).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { metricsFor, normalizeDomain, type RunningSandboxLike } from './templateSandbox';
import {
  N8N_DIR,
  REPO_ROOT,
  callWebhook,
  freePort,
  outputOf,
  tail,
  type CredentialJson,
  type Execution,
  type ExecutionRun,
  type N8nCli,
  type WorkflowJson,
} from './n8n';
import { Tally, clip } from './tally';
import { DAPA_CREDENTIAL_TYPE, DAPA_NODE_TYPE } from './workflows';
import { domainPool, spell } from './datasets';

export const TEMPLATES_DIR = path.join(REPO_ROOT, 'n8n-node', 'templates');
export const NEW_ONLY_ID = 'e2eTplNewOnly';
export const WATCH_ID = 'e2eTplWatch';

interface TemplateJson {
  name: string;
  nodes: Array<Record<string, unknown> & { name: string; type: string; parameters: Record<string, unknown> }>;
  connections: WorkflowJson['connections'];
  settings?: Record<string, unknown>;
}

export function readTemplate(file: string): TemplateJson {
  return JSON.parse(readFileSync(path.join(TEMPLATES_DIR, file), 'utf8')) as TemplateJson;
}

/**
 * A template as a user imports it, with what a user changes: the credential chosen, the Domains list replaced by
 * `items`. Every node keeps its type as shipped: the DAPA node its published type, which n8n gives the package
 * installed in its nodes folder (throws if the template names another).
 */
export function instantiate(
  file: string,
  id: string,
  credential: CredentialJson,
  items: Array<Record<string, unknown>>,
): WorkflowJson {
  const template = readTemplate(file);
  const nodes = template.nodes.map((node) => {
    const copy = JSON.parse(JSON.stringify(node)) as TemplateJson['nodes'][number];
    if (copy.type === DAPA_NODE_TYPE) {
      copy.credentials = { [DAPA_CREDENTIAL_TYPE]: { id: credential.id, name: credential.name } };
    }
    if (copy.name === 'Domains') {
      copy.parameters = {
        ...copy.parameters,
        jsCode: `return ${JSON.stringify(items)}.map((json) => ({ json }));`,
      };
    }
    return copy;
  });
  if (!nodes.some((node) => node.type === DAPA_NODE_TYPE))
    throw new Error(`${file} has no node of the published type ${DAPA_NODE_TYPE}`);
  return {
    id,
    name: `e2e template: ${template.name}`,
    active: false,
    nodes: nodes as unknown as WorkflowJson['nodes'],
    connections: template.connections,
    settings: template.settings ?? { executionOrder: 'v1' },
  };
}

/** The 400 domains of "Check only what is new", each once, in the spellings users paste. */
export function newOnlyItems(): Array<{ row: number; url: string; note: string }> {
  return domainPool(400, 'fresh-').map((domain, row) => ({
    row,
    url: spell(domain, row % 6),
    note: `item ${row}`,
  }));
}

/** The 40 watched domains. */
export function watchItems(): Array<{ row: number; url: string; note: string }> {
  return domainPool(40, 'watch-').map((domain, row) => ({ row, url: domain, note: `item ${row}` }));
}

/**
 * How the watched domains' metrics move between the two executions (the thresholds of the template are a DA change
 * of more than 3 and a spam score change of more than 5): some beyond, some exactly at the threshold (not moved).
 */
export const WATCH_DRIFT: Record<string, { da?: number; spam?: number }> = {
  'watch-alpha-0.com': { da: 4 }, // moved (DA 86 -> 90)
  'watch-cedar-0.org': { da: -10 }, // moved (DA 32 -> 22)
  'watch-ember-0.co.uk': { spam: 6 }, // moved (spam 48 -> 54)
  'watch-juniper-0.net': { da: -4, spam: -9 }, // moved (both)
  'watch-bravo-0.net': { da: 3 }, // at the DA threshold: not moved
  'watch-indigo-0.com': { spam: -5 }, // at the spam threshold: not moved
  'watch-bravo-1.io': { da: 1, spam: 2 }, // small: not moved
};
export const WATCH_MOVED = [
  'watch-alpha-0.com',
  'watch-cedar-0.org',
  'watch-ember-0.co.uk',
  'watch-juniper-0.net',
];

/** The metrics the sandbox answers for a domain once the drift is on (kept within the API's 0..100). */
export function driftedMetrics(domain: string): ReturnType<typeof metricsFor> {
  const base = metricsFor(domain);
  const drift = WATCH_DRIFT[normalizeDomain(domain)];
  if (!drift) return base;
  const clamp = (n: number) => Math.max(0, Math.min(100, n));
  return {
    ...base,
    site_da: clamp(base.site_da + (drift.da ?? 0)),
    spam_score: clamp(base.spam_score + (drift.spam ?? 0)),
  };
}

const METRIC_FIELDS = ['url', 'domain', 'site_da', 'site_pa', 'site_mr', 'spam_score', 'no_data'] as const;
/** An output item reduced to what both executions must agree on, sorted by URL. */
function comparable(items: Array<{ json: Record<string, unknown> }>): string[] {
  return items.map((item) => JSON.stringify(METRIC_FIELDS.map((field) => item.json[field]))).sort();
}

export interface TemplateRunContext {
  t: Tally;
  n8n: N8nCli;
  sandbox: RunningSandboxLike;
  /** The sandbox key the templates' credential uses. */
  key: string;
  execute(id: string): Promise<Execution>;
}

function succeeded(t: Tally, scenario: string, exec: Execution, label: string): boolean {
  return t.check(
    scenario,
    `${label}: the execution succeeds`,
    exec.exitCode === 0 && exec.run?.status === 'success',
    `exit ${exec.exitCode}, status ${exec.run?.status}: ${(exec.stdout + exec.stderr).trimEnd().split('\n').slice(-12).join('\n')}`,
  );
}

/** "Check only what is new", twice over the same 400 domains: the second bills 0 and gives the same items. */
export async function runNewOnly(ctx: TemplateRunContext): Promise<{ first: number; second: number }> {
  const { t, sandbox, key } = ctx;
  const s = 'template "check only what is new"';
  const items = newOnlyItems();
  sandbox.reset();
  const first = await ctx.execute(NEW_ONLY_ID);
  const billedFirst = sandbox.billed(key);
  const second = await ctx.execute(NEW_ONLY_ID);
  const billedSecond = sandbox.billed(key) - billedFirst;
  succeeded(t, s, first, 'first execution');
  succeeded(t, s, second, 'second execution');
  const out1 = outputOf(first.run, 'All results');
  const out2 = outputOf(second.run, 'All results');
  t.equal(
    s,
    'first execution: 400 domains billed, once each',
    [billedFirst, sandbox.billedTwice(key)],
    [400, []],
  );
  t.equal(s, 'second execution of the same 400 domains: 0 billed', billedSecond, 0);
  const urls = (list: typeof out1) => list.map((item) => String(item.json.url)).sort();
  const inputUrls = items.map((item) => item.url).sort();
  t.check(
    s,
    'both executions output each of the 400 input items once',
    JSON.stringify(urls(out1)) === JSON.stringify(inputUrls) &&
      JSON.stringify(urls(out2)) === JSON.stringify(inputUrls),
    `out ${out1.length} / ${out2.length}`,
  );
  const wrong = out1.filter((item) => {
    const expected = metricsFor(normalizeDomain(String(item.json.url)));
    return item.json.site_da !== expected.site_da || item.json.spam_score !== expected.spam_score;
  });
  t.check(
    s,
    "first execution: each item carries its domain's metrics",
    wrong.length === 0,
    clip(wrong[0]?.json),
  );
  t.equal(
    s,
    'second execution: the same items (url, domain, DA, PA, MR, spam score, no_data)',
    comparable(out2),
    comparable(out1),
  );
  t.check(
    s,
    'second execution: every item came from the Data table (checked_at set), none went to DAPA Checker',
    out2.every((item) => typeof item.json.checked_at === 'string') &&
      outputOf(second.run, 'DAPA Checker', 0).length === 0 &&
      outputOf(second.run, 'Recent results', 0).length === 400,
    `recent rows ${outputOf(second.run, 'Recent results', 0).length}, DAPA results ${outputOf(second.run, 'DAPA Checker', 0).length}`,
  );
  console.log(`        (billed: first execution ${billedFirst}, second ${billedSecond})`);
  return { first: billedFirst, second: billedSecond };
}

/** "Monthly watch", twice, with some metrics moved in between: it emits exactly the domains that moved. */
export async function runWatch(ctx: TemplateRunContext): Promise<string[]> {
  const { t, sandbox, key } = ctx;
  const s = 'template "monthly watch"';
  sandbox.reset();
  sandbox.drift(false);
  const first = await ctx.execute(WATCH_ID);
  sandbox.drift(true);
  const second = await ctx.execute(WATCH_ID);
  sandbox.drift(false);
  succeeded(t, s, first, 'first execution');
  succeeded(t, s, second, 'second execution');
  t.equal(s, 'first execution: nothing stored before, no alert', outputOf(first.run, 'Moved').length, 0);
  t.equal(s, 'each execution checks the 40 domains', sandbox.billed(key), 80);
  const pool = new Set(watchItems().map((item) => item.url));
  t.check(
    s,
    'the drift is set on watched domains, away from the 0..100 bounds',
    Object.keys(WATCH_DRIFT).every((domain) => pool.has(domain)) &&
      Object.keys(WATCH_DRIFT).every((domain) => {
        const [before, after] = [metricsFor(domain), driftedMetrics(domain)];
        const drift = WATCH_DRIFT[domain];
        return (
          after.site_da - before.site_da === (drift.da ?? 0) &&
          after.spam_score - before.spam_score === (drift.spam ?? 0)
        );
      }),
  );
  const moved = outputOf(second.run, 'Moved');
  const domains = moved.map((item) => String(item.json.domain)).sort();
  t.equal(
    s,
    'second execution: an item for exactly the domains whose DA or spam score moved beyond the threshold',
    domains,
    WATCH_MOVED,
  );
  const wrongChange = moved.filter((item) => {
    const domain = String(item.json.domain);
    const before = metricsFor(domain);
    const now = driftedMetrics(domain);
    return (
      item.json.da_change !== now.site_da - before.site_da ||
      item.json.spam_change !== now.spam_score - before.spam_score ||
      item.json.previous_da !== before.site_da
    );
  });
  t.check(
    s,
    'each alert carries the old and new values and the change',
    wrongChange.length === 0,
    clip(wrongChange[0]?.json),
  );
  return domains;
}

// ---- running the templates in a started n8n -----------------------------------------------------------------

/**
 * The Data Table node works only where n8n initialises its backend modules: `n8n start`, `webhook` and `worker`
 * (both 2.8.4 and 2.41.1). `n8n execute` does not, and the node fails there with "Attempted to use Data table node
 * but the module is disabled". So the e2e suite gives each template a production webhook beside its manual trigger,
 * as a user adds a trigger, publishes it, starts n8n once and calls the webhook.
 */
export function withWebhook(wf: WorkflowJson, webhookPath: string): WorkflowJson {
  const first = wf.connections['Check now']?.main[0]?.[0]?.node;
  if (!first) throw new Error(`template ${wf.id} has no "Check now" trigger to stand beside`);
  const webhook = {
    id: `${wf.id}-webhook`,
    name: 'E2E webhook',
    type: 'n8n-nodes-base.webhook',
    typeVersion: 2,
    position: [0, 300] as [number, number],
    webhookId: `e2e-template-${webhookPath}`,
    parameters: {
      httpMethod: 'POST',
      path: webhookPath,
      responseMode: 'lastNode',
      responseData: 'noData',
      options: {},
    },
  };
  return {
    ...wf,
    active: true,
    nodes: [...wf.nodes, webhook],
    connections: { ...wf.connections, 'E2E webhook': { main: [[{ node: first, type: 'main', index: 0 }]] } },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface StoredExecution {
  id: number;
  status: string;
  data: string;
}

/** The finished executions of a workflow, oldest first, from n8n's SQLite database (read-only). */
function storedExecutions(userFolder: string, workflowId: string): Promise<StoredExecution[]> {
  const sqlite3 = requireFromN8n('sqlite3') as {
    OPEN_READONLY: number;
    Database: new (
      file: string,
      mode: number,
    ) => {
      all(sql: string, params: unknown[], done: (error: Error | null, rows: StoredExecution[]) => void): void;
      close(): void;
    };
  };
  const db = new sqlite3.Database(path.join(userFolder, '.n8n', 'database.sqlite'), sqlite3.OPEN_READONLY);
  return new Promise((resolve, reject) =>
    db.all(
      `SELECT e.id AS id, e.status AS status, d.data AS data FROM execution_entity e
       JOIN execution_data d ON d.executionId = e.id
       WHERE e.workflowId = ? AND e.status IN ('success', 'error', 'crashed', 'canceled')
       ORDER BY e.id`,
      [workflowId],
      (error, rows) => {
        db.close();
        if (error) reject(error);
        else resolve(rows);
      },
    ),
  );
}

function requireFromN8n(name: string): unknown {
  return createRequire(path.join(N8N_DIR, 'node_modules', 'n8n', 'package.json'))(name);
}

/**
 * `n8n start` on the suite's user folder (the templates imported and published before), each template executed
 * through its webhook; an execution's run is read back from the database as `n8n execute --rawOutput` prints it.
 */
export async function startTemplateServer(
  n8n: N8nCli,
  workflowIds: string[],
  paths: Record<string, string>,
): Promise<{ execute(id: string): Promise<Execution>; stop(): Promise<void> }> {
  for (const id of workflowIds) {
    const published = await n8n.run(['publish:workflow', `--id=${id}`], 120_000);
    if (published.exitCode !== 0) {
      throw new Error(`publish:workflow ${id} failed: ${tail(published.stdout + published.stderr, 8)}`);
    }
  }
  const port = await freePort();
  const log = path.join(n8n.workDir, 'template-server.log');
  const server = await n8n.startProcess(['start'], log, {
    N8N_PORT: String(port),
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    N8N_SECURE_COOKIE: 'false',
  });
  const until = Date.now() + 180_000;
  while (!/Editor is now accessible/.test(server.output())) {
    if (Date.now() > until || server.child.exitCode !== null) {
      await server.stop();
      throw new Error(`n8n start did not come up: ${tail(server.output(), 15)}`);
    }
    await sleep(250);
  }
  // n8n 2.41.1 registers the published workflows' webhooks only after "Editor is now accessible" (2.8.4 before it):
  // a GET on a POST-only webhook tells a registered one ("not registered for GET requests") from an unknown one
  // ("The requested webhook ... is not registered"), without starting an execution.
  for (const id of workflowIds) {
    let answer = { status: 0, text: '' };
    for (let waited = 0; waited < 120_000; waited += 500) {
      answer = await callWebhook(`http://127.0.0.1:${port}/webhook/${paths[id]}`, 'GET');
      if (answer.status !== 404 || /not registered for GET|did you mean/i.test(answer.text)) break;
      await sleep(500);
    }
    if (answer.status === 404 && !/not registered for GET|did you mean/i.test(answer.text)) {
      await server.stop();
      throw new Error(`the webhook of ${id} was not registered within 2 minutes: ${answer.text}`);
    }
  }
  return {
    async execute(id: string): Promise<Execution> {
      const before = (await storedExecutions(n8n.userFolder, id)).length;
      const started = Date.now();
      const answer = await callWebhook(`http://127.0.0.1:${port}/webhook/${paths[id]}`);
      // The execution is saved when it ends, which may be just after the answer.
      let stored: StoredExecution[] = [];
      for (let waited = 0; waited < 30_000; waited += 250) {
        stored = await storedExecutions(n8n.userFolder, id);
        if (stored.length > before) break;
        await sleep(250);
      }
      const latest = stored.length > before ? stored[stored.length - 1] : undefined;
      const flatted = requireFromN8n('flatted') as { parse(text: string): ExecutionRun['data'] };
      const run: ExecutionRun | undefined = latest
        ? { status: latest.status, startedAt: '', stoppedAt: '', data: flatted.parse(latest.data) }
        : undefined;
      return {
        exitCode: answer.status === 200 && run?.status === 'success' ? 0 : 1,
        stdout: `HTTP ${answer.status}: ${answer.text}\n${tail(server.output(), 40)}`,
        stderr: '',
        timedOut: false,
        elapsedMs: Date.now() - started,
        run,
      };
    },
    stop: () => server.stop(),
  };
}
