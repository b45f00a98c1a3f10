// The real-n8n end-to-end suite: starts the sandbox API in this process, imports credentials and one workflow per
// row of the scenario table (lib/scenarioTable.ts) into a fresh n8n user folder, runs each with `n8n execute`, and
// checks it with lib/scenarioChecks.ts on what n8n printed and on the sandbox's own request/billing counters; then
// the shipped workflow templates. Run by test/n8n-e2e/run.sh; ends with `N passed, N failed`.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SandboxConfig } from '../sandbox/handler';
import { startSandbox } from '../sandbox/server';
import {
  E2E_DIR,
  N8nCli,
  NODE_DIST,
  outputOf,
  snapshotNodePackage,
  type CredentialJson,
  type WorkflowJson,
} from './lib/n8n';
import { checkRow, statsOf, type ScenarioRun } from './lib/scenarioChecks';
import { KEYS, PLAN_KEYS, scenarioTable, type Plan, type ScenarioRow } from './lib/scenarioTable';
import { Tally, runSuite } from './lib/tally';
import { withMetricDrift } from './lib/templateSandbox';
import {
  NEW_ONLY_ID,
  WATCH_ID,
  driftedMetrics,
  instantiate,
  newOnlyItems,
  runNewOnly,
  runWatch,
  startTemplateServer,
  watchItems,
  withWebhook,
} from './lib/templates';
import {
  dapaChecker,
  dapaCredential,
  bearerHeaderCredential,
  httpRequestDapa,
  manualTrigger,
  pairingProbe,
  sourceItems,
  workflow,
  type Link,
} from './lib/workflows';

const WORK_DIR = path.join(E2E_DIR, 'work', `e2e-${process.env.E2E_N8N_DIR ?? 'n8n'}`);
const PLAIN: SandboxConfig = { keys: KEYS };

interface Context {
  baseUrl: string;
  /** One DAPA credential per plan, and a Bearer header credential for the HTTP Request baseline. */
  credentials: Record<Plan, CredentialJson> & { httpPremium: CredentialJson };
}

/** A row's workflow: Start → Source → DAPA (or the HTTP Request baseline), with pairing probes when asked. */
function workflowOf(row: ScenarioRow, ctx: Context): WorkflowJson {
  const start = [manualTrigger(), sourceItems(row.items)];
  if (row.shape === 'httpBaseline') {
    return workflow(
      row.id,
      `e2e ${row.title}`,
      [...start, httpRequestDapa('HTTP', ctx.baseUrl, ctx.credentials.httpPremium)],
      [
        ['Start', 'Source'],
        ['Source', 'HTTP'],
      ],
    );
  }
  const dapa = dapaChecker('DAPA', ctx.credentials[row.plan], row.node);
  if (row.shape === 'twoInputs') {
    // Two Code nodes into DAPA's one input: n8n runs DAPA once per Source, in one execution.
    const split = row.splitAt ?? Math.ceil(row.items.length / 2);
    return workflow(
      row.id,
      `e2e ${row.title}`,
      [
        manualTrigger(),
        sourceItems(row.items.slice(0, split)),
        sourceItems(row.items.slice(split), 'Source 2'),
        dapa,
      ],
      [
        ['Start', 'Source'],
        ['Start', 'Source 2'],
        ['Source', 'DAPA'],
        ['Source 2', 'DAPA'],
      ],
    );
  }
  const nodes = [...start, dapa];
  const links: Link[] = [
    ['Start', 'Source'],
    ['Source', 'DAPA'],
  ];
  if (row.shape === 'probes') {
    nodes.push(pairingProbe('Results paired'), pairingProbe('Skipped paired'));
    links.push(['DAPA', 'Results paired', 0], ['DAPA', 'Skipped paired', 1]);
  }
  return workflow(row.id, `e2e ${row.title}`, nodes, links);
}

/**
 * Walks the table: per row, configures the sandbox, executes the workflow (twice when the row says so), keeps what
 * n8n printed in work/, and checks the row's expectations, its own extra checks and that its key leaked nowhere.
 */
async function runTable(
  t: Tally,
  rows: ScenarioRow[],
  n8n: N8nCli,
  sandbox: Awaited<ReturnType<typeof startSandbox>>,
  learning: { limitExceeded: number },
): Promise<void> {
  for (const row of rows) {
    const key = PLAN_KEYS[row.plan];
    const executeOnce = async (label: string): Promise<ScenarioRun> => {
      sandbox.sandbox.configure({ keys: KEYS, ...(row.faults ? { faults: row.faults } : {}) });
      learning.limitExceeded = 0;
      console.log(`\n# ${row.title} (workflow ${row.id}, ${label})`);
      const exec = await n8n.execute(row.id, row.timeoutMs ?? 180_000);
      const stats = sandbox.sandbox.stats();
      return {
        items: row.items,
        exec,
        stats,
        key: statsOf(stats, key),
        results: outputOf(exec.run, 'DAPA', 0),
        skipped: outputOf(exec.run, 'DAPA', 1),
        limitExceeded: learning.limitExceeded,
      };
    };
    const first = row.twice ? await executeOnce('first of two executions') : undefined;
    const run = { ...(await executeOnce(`${row.items.length} items`)), first };
    const { exec } = run;
    writeFileSync(path.join(WORK_DIR, `${row.id}.out.txt`), exec.stdout + '\n--- stderr ---\n' + exec.stderr);
    console.log(`        (n8n execute: ${exec.elapsedMs} ms, exit ${exec.exitCode})`);
    try {
      checkRow(t, row.title, row.expect, run);
      row.extra?.(t, row.title, run);
    } catch (error) {
      t.check(row.title, 'evaluation ran', false, (error as Error).stack ?? String(error));
    }
    const leaked = (exec.stdout + exec.stderr).includes(key);
    t.check(
      row.title,
      'the API key appears nowhere in what n8n printed',
      !leaked,
      `${leaked ? 1 : 0} key(s) found`,
    );
  }
}

// ---- main ------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const t = new Tally();
  const only = process.env.E2E_ONLY?.split(',').filter(Boolean);
  const lint = process.env.E2E_LINT_N8N;
  if (lint === 'passed' || lint === 'failed') {
    t.check(
      'package',
      'npm run lint:n8n (official community-node lint) passes',
      lint === 'passed',
      'see its output above',
    );
  }
  const learning = { limitExceeded: 0 };
  const sandbox = await startSandbox({
    port: 0,
    config: PLAIN,
    onRequest: (entry) => {
      if (entry.status === 422 && !entry.summary) learning.limitExceeded += 1;
    },
  });
  const n8n = new N8nCli(WORK_DIR, (line) => console.log(`        ${line}`));
  try {
    n8n.reset();
    const packageCopy = await snapshotNodePackage(WORK_DIR);
    t.check(
      'package',
      'the node and credential are built in n8n-node/dist (npm run build)',
      !!packageCopy,
      NODE_DIST,
    );
    if (packageCopy) n8n.extensionsDir = packageCopy;
    if (process.env.E2E_NODE_TARBALL) {
      // The guide's route: the packed tarball in the user folder's nodes folder, named there by a reference that
      // resolves (install.mjs keeps the tarball beside package.json).
      const nodes = path.join(n8n.userFolder, '.n8n', 'nodes');
      const manifest = JSON.parse(readFileSync(path.join(nodes, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
      const reference = manifest.dependencies?.['n8n-nodes-dapa-checker'] ?? '';
      t.check(
        'package',
        `installed by n8n-node/install.mjs into <N8N_USER_FOLDER>/.n8n/nodes (${reference})`,
        packageCopy === nodes &&
          reference.startsWith('file:') &&
          existsSync(path.resolve(nodes, reference.slice('file:'.length))),
        `${packageCopy}: ${reference}`,
      );
    }
    const credentials: Context['credentials'] = {
      premium: dapaCredential('e2eCredPremium', 'DAPA premium', PLAN_KEYS.premium, sandbox.url),
      wrong: dapaCredential('e2eCredWrong', 'DAPA wrong key', PLAN_KEYS.wrong, sandbox.url),
      expired: dapaCredential('e2eCredExpired', 'DAPA expired plan', PLAN_KEYS.expired, sandbox.url),
      small: dapaCredential('e2eCredSmall', 'DAPA small plan', PLAN_KEYS.small, sandbox.url),
      paced: dapaCredential('e2eCredPaced', 'DAPA paced plan', PLAN_KEYS.paced, sandbox.url),
      httpPremium: bearerHeaderCredential('e2eCredHttp', 'Bearer premium (HTTP Request)', 'sandbox-premium'),
    };
    const ctx: Context = { baseUrl: sandbox.url, credentials };
    const selected = scenarioTable().filter((row) => !only || only.includes(row.id));
    console.log(
      `n8n user folder: ${n8n.userFolder}; sandbox: ${sandbox.url}; node package: ${n8n.extensionsDir}`,
    );
    await n8n.importCredentials(Object.values(credentials));
    // The shipped workflow templates (n8n-node/templates/), as a user imports them, in the same n8n.
    const templatePaths: Record<string, string> = { [NEW_ONLY_ID]: 'tpl-new-only', [WATCH_ID]: 'tpl-watch' };
    const templates = [
      instantiate('check-only-what-is-new.json', NEW_ONLY_ID, credentials.premium, newOnlyItems()),
      instantiate('monthly-watch.json', WATCH_ID, credentials.premium, watchItems()),
    ]
      .filter((template) => !only || only.includes(template.id))
      .map((template) => withWebhook(template, templatePaths[template.id]));
    await n8n.importWorkflows([...selected.map((row) => workflowOf(row, ctx)), ...templates]);

    await runTable(t, selected, n8n, sandbox, learning);

    // The workflow templates, each executed twice, in one `n8n start` on this user folder (the Data Table node
    // needs n8n's backend modules, which `n8n execute` does not load); their Data tables live in its database.
    if (templates.length > 0) {
      sandbox.sandbox.configure(PLAIN);
      const drifting = withMetricDrift(sandbox, driftedMetrics);
      const server = await startTemplateServer(
        n8n,
        templates.map((template) => template.id),
        templatePaths,
      );
      try {
        const templateRun = {
          t,
          n8n,
          sandbox: drifting,
          key: 'sandbox-premium',
          execute: async (id: string) => {
            console.log(`\n# template workflow ${id} (through its webhook, in n8n start)`);
            const exec = await server.execute(id);
            writeFileSync(
              path.join(WORK_DIR, `${id}.out.txt`),
              exec.stdout + '\n--- stderr ---\n' + exec.stderr,
            );
            console.log(`        (execution: ${exec.elapsedMs} ms, status ${exec.run?.status})`);
            return exec;
          },
        };
        if (templates.some((template) => template.id === NEW_ONLY_ID)) await runNewOnly(templateRun);
        if (templates.some((template) => template.id === WATCH_ID)) await runWatch(templateRun);
      } finally {
        await server.stop();
      }
      const leaked = readFileSync(path.join(n8n.workDir, 'template-server.log'), 'utf8').includes(
        'sandbox-premium',
      );
      t.check('templates', 'the API key appears nowhere in what n8n start printed', !leaked);
    }
  } finally {
    await sandbox.close();
  }

  if (t.failures.length > 0) {
    console.log('\nFailures:');
    for (const failure of t.failures) console.log(`  - ${failure}`);
  }
  console.log(t.summary());
  return t.failed === 0 ? 0 : 1;
}

runSuite(main);
