// Drives a pinned real n8n (test/n8n-e2e/n8n/, or the folder E2E_N8N_DIR names, such as n8n-next/) headless through
// its CLI: a fresh user folder, imported credentials and workflows, and `n8n execute --id=… --rawOutput` parsed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

export const E2E_DIR = path.resolve(__dirname, '..');
export const REPO_ROOT = path.resolve(E2E_DIR, '..', '..');
/** The n8n install under test: `n8n` (2.8.4, Node 20) or `n8n-next` (run.sh puts Node 24 first on PATH for it). */
export const N8N_DIR = path.join(E2E_DIR, process.env.E2E_N8N_DIR ?? 'n8n');
export const N8N_BIN = path.join(N8N_DIR, 'node_modules', '.bin', 'n8n');
/** The version of the install under test, from its package.json. */
export function n8nVersion(): string {
  try {
    const manifest = path.join(N8N_DIR, 'node_modules', 'n8n', 'package.json');
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
/** The built community node package: n8n loads every `*.node.js` / `*.credentials.js` below it. */
export const NODE_DIST = path.join(REPO_ROOT, 'n8n-node', 'dist');
const BUILT_NODE = path.join('nodes', 'DapaChecker', 'DapaChecker.node.js');
const BUILT_CREDENTIAL = path.join('credentials', 'DapaCheckerApi.credentials.js');

export interface CredentialJson {
  id: string;
  name: string;
  type: string;
  /** Plain values: `import:credentials` encrypts an object with the instance's encryption key. */
  data: Record<string, string>;
}

export interface WorkflowJson {
  id: string;
  name: string;
  active: boolean;
  nodes: NodeJson[];
  connections: Record<string, { main: Array<Array<{ node: string; type: 'main'; index: number }>> }>;
  settings: Record<string, unknown>;
}

export interface NodeJson {
  id: string;
  name: string;
  type: string;
  typeVersion: number;
  position: [number, number];
  parameters: Record<string, unknown>;
  credentials?: Record<string, { id: string; name: string }>;
  onError?: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput';
  retryOnFail?: boolean;
  maxTries?: number;
  waitBetweenTries?: number;
  webhookId?: string;
}

export interface OutputItem {
  json: Record<string, unknown>;
  pairedItem?: { item: number; input?: number } | Array<{ item: number; input?: number }> | number;
  error?: unknown;
}

export interface NodeRun {
  startTime: number;
  executionTime: number;
  executionStatus?: string;
  data?: { main: Array<OutputItem[] | null> };
  error?: { message?: string; description?: string; name?: string };
}

/** What `n8n execute --rawOutput` prints: the whole run (also when it failed, after "Execution error:"). */
export interface ExecutionRun {
  status: string;
  startedAt: string;
  stoppedAt: string;
  data: {
    resultData: {
      runData: Record<string, NodeRun[]>;
      error?: { message?: string; description?: string; name?: string; node?: { name?: string } };
    };
  };
}

export interface CliResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  elapsedMs: number;
}

export interface Execution extends CliResult {
  run?: ExecutionRun;
}

/**
 * A free TCP port on the loopback interface (task brokers, n8n's HTTP port, Redis). Picked at random from
 * 20000-32767, below Linux's ephemeral range (32768-60999): a port the OS hands out for outgoing connections could
 * be taken by one of them (n8n runs beside other n8n processes that keep calling the sandbox) before n8n binds it.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port found on 127.0.0.1 between 20000 and 32767');
}

/** n8n could not bind a port that was free a moment before (another process took it): worth one more try. */
const PORT_TAKEN = /port \d+ is already in use/i;

/**
 * Finds the run n8n prints: a line that is exactly `{` up to the next line that is exactly `}`, parsed, with
 * `data.resultData`. The last such block wins (n8n may print other objects before it), and a log line printed in
 * the middle of it (at column 0, where no line of the indented document is) is left out.
 */
export function parseRunOutput(stdout: string): ExecutionRun | undefined {
  const lines = stdout.split('\n');
  let found: ExecutionRun | undefined;
  for (let start = lines.indexOf('{'); start >= 0; start = lines.indexOf('{', start + 1)) {
    const end = lines.indexOf('}', start);
    if (end < 0) break;
    const body = lines.slice(start, end + 1);
    for (const candidate of [body, body.filter((line) => line === '{' || line === '}' || /^\s/.test(line))]) {
      try {
        const parsed = JSON.parse(candidate.join('\n')) as Partial<ExecutionRun>;
        if (parsed?.data?.resultData) {
          found = parsed as ExecutionRun;
          break;
        }
      } catch {
        // try the next reading
      }
    }
  }
  return found;
}

/** The items a node put on one of its outputs in its first run; none when the node did not run. */
export function outputOf(run: ExecutionRun | undefined, nodeName: string, outputIndex = 0): OutputItem[] {
  const nodeRun = run?.data.resultData.runData[nodeName]?.[0];
  return nodeRun?.data?.main[outputIndex] ?? [];
}

/** The input item an output item is paired with (first pairing when there are several). */
export function pairedIndex(item: OutputItem): number | undefined {
  const paired = Array.isArray(item.pairedItem) ? item.pairedItem[0] : item.pairedItem;
  if (typeof paired === 'number') return paired;
  return paired?.item;
}

/** The nodes folder of the n8n user folder an N8nCli on `workDir` uses: `<N8N_USER_FOLDER>/.n8n/nodes`. */
export function nodesFolderOf(workDir: string): string {
  return path.join(workDir, 'user', '.n8n', 'nodes');
}

/**
 * The node installed as a self-hoster installs it (docs/guide.md, "Install the node"): into the nodes folder of the
 * n8n user folder in `workDir` (`<N8N_USER_FOLDER>/.n8n/nodes`, where n8n loads every `n8n-nodes-*` package at
 * start, under the package's published node type). With E2E_NODE_TARBALL (run.sh packs n8n-node/ once with
 * n8n-node/pack.mjs): that tarball installed by n8n-node/install.mjs. Without it (a script run by hand): n8n-node's
 * package.json and a copy of n8n-node/dist placed as that package, so that a rebuild in the shared checkout during the
 * run cannot pull it from under n8n; waits up to a minute for a build in progress. Returns the nodes folder, or
 * undefined when there is no package to load.
 */
export async function snapshotNodePackage(workDir: string): Promise<string | undefined> {
  const tarball = process.env.E2E_NODE_TARBALL;
  if (tarball) return installNodeTarball(workDir, tarball);
  const built = () => [BUILT_NODE, BUILT_CREDENTIAL].every((file) => existsSync(path.join(NODE_DIST, file)));
  for (let waited = 0; !built() && waited < 60_000; waited += 1000) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  if (!built()) return undefined;
  const nodes = nodesFolderOf(workDir);
  const installed = path.join(nodes, 'node_modules', 'n8n-nodes-dapa-checker');
  cpSync(NODE_DIST, path.join(installed, 'dist'), { recursive: true });
  cpSync(path.join(REPO_ROOT, 'n8n-node', 'package.json'), path.join(installed, 'package.json'));
  const ok = [BUILT_NODE, BUILT_CREDENTIAL].every((file) => existsSync(path.join(installed, 'dist', file)));
  return ok ? nodes : undefined;
}

/**
 * The tarball installed by n8n-node/install.mjs, the script n8n-node/README.md ("Install from a clone") gives a
 * self-hoster, into the nodes folder of the n8n user folder in `workDir` (nodesFolderOf). Throws with the script's
 * output when it fails. `script`: another copy of install.mjs (the one of the commit a "before" tarball was packed
 * from). Returns the nodes folder.
 */
export function installNodeTarball(
  workDir: string,
  tarball: string,
  script = path.join(REPO_ROOT, 'n8n-node', 'install.mjs'),
): string {
  const nodes = nodesFolderOf(workDir);
  const result = spawnSync(process.execPath, [script, nodes, '--tarball', path.resolve(tarball)], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  const installed = path.join(nodes, 'node_modules', 'n8n-nodes-dapa-checker', 'dist');
  if (
    result.status !== 0 ||
    ![BUILT_NODE, BUILT_CREDENTIAL].every((f) => existsSync(path.join(installed, f)))
  ) {
    throw new Error(
      `node n8n-node/install.mjs ${nodes} --tarball ${tarball} failed (${result.status}):\n${tail(`${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}`, 20)}`,
    );
  }
  console.log(`node package: ${path.basename(tarball)} installed into ${nodes} by n8n-node/install.mjs`);
  return nodes;
}

export class N8nCli {
  readonly userFolder: string;
  /**
   * The nodes folder holding the node package (snapshotNodePackage, installNodeTarball). n8n loads it from the user
   * folder's `.n8n/nodes`: a folder installed elsewhere (a cluster's package, installed before its user folder is
   * emptied) is copied there, as made, before n8n runs. Undefined: no community node.
   */
  extensionsDir: string | undefined;

  constructor(
    readonly workDir: string,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.userFolder = path.join(workDir, 'user');
  }

  /** Empties the user folder: a new SQLite database, no credentials, no workflows, no settings. */
  reset(): void {
    rmSync(this.workDir, { recursive: true, force: true });
    mkdirSync(this.userFolder, { recursive: true });
  }

  /** Settings added to every n8n process of this instance (queue mode: EXECUTIONS_MODE, the Redis address...). */
  extraEnv: NodeJS.ProcessEnv = {};

  /** The node package in the user folder's nodes folder (see extensionsDir). */
  private placeNodes(): void {
    const target = nodesFolderOf(this.workDir);
    if (!this.extensionsDir || path.resolve(this.extensionsDir) === target) return;
    if (!existsSync(path.join(target, 'node_modules', 'n8n-nodes-dapa-checker'))) {
      cpSync(this.extensionsDir, target, { recursive: true });
    }
  }

  private env(brokerPort: number): NodeJS.ProcessEnv {
    this.placeNodes();
    const env: NodeJS.ProcessEnv = {};
    // Only what a shell needs; nothing N8N_* leaks in from the caller's environment.
    for (const name of ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'NODE_OPTIONS']) {
      if (process.env[name] !== undefined) env[name] = process.env[name];
    }
    return {
      ...env,
      N8N_USER_FOLDER: this.userFolder,
      N8N_ENCRYPTION_KEY: 'dapa-e2e-fixed-encryption-key',
      N8N_DIAGNOSTICS_ENABLED: 'false',
      N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
      N8N_TEMPLATES_ENABLED: 'false',
      N8N_PERSONALIZATION_ENABLED: 'false',
      N8N_COMMUNITY_PACKAGES_ENABLED: 'false',
      N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
      N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
      N8N_RUNNERS_BROKER_PORT: String(brokerPort),
      N8N_LOG_LEVEL: 'info',
      N8N_LOG_OUTPUT: 'console',
      DB_TYPE: 'sqlite',
      EXECUTIONS_MODE: 'regular',
      GENERIC_TIMEZONE: 'UTC',
      ...this.extraEnv,
    };
  }

  /**
   * Starts a long-running n8n process (`start`, `worker`) in its own process group, its output appended to
   * `logFile`; `stop()` ends the group (SIGTERM, then SIGKILL after 10 s). `output()` is what it printed so far.
   */
  async startProcess(
    args: string[],
    logFile: string,
    env: NodeJS.ProcessEnv = {},
  ): Promise<{ child: ChildProcess; output: () => string; stop: () => Promise<void> }> {
    const child = spawn(N8N_BIN, args, {
      cwd: this.workDir,
      env: { ...this.env(await freePort()), ...env },
      detached: true,
    });
    const log = createWriteStream(logFile);
    let text = '';
    const collect = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      log.write(chunk);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        process.kill(-child.pid, 'SIGTERM');
        const timer = setTimeout(() => {
          try {
            if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }, 10_000);
        await exited;
        clearTimeout(timer);
      }
      log.end();
    };
    return { child, output: () => text, stop };
  }

  /** Runs one n8n CLI command (once more if a port it chose was taken meanwhile); see runOnce. */
  async run(args: string[], timeoutMs: number): Promise<CliResult> {
    let result = await this.runOnce(args, timeoutMs);
    for (
      let retry = 0;
      retry < 2 && result.exitCode !== 0 && PORT_TAKEN.test(result.stdout + result.stderr);
      retry++
    ) {
      this.log(
        `n8n ${args[0]}: a port was taken meanwhile (${PORT_TAKEN.exec(result.stdout + result.stderr)?.[0]}); again`,
      );
      result = await this.runOnce(args, timeoutMs);
    }
    return result;
  }

  /** Runs one n8n CLI command; the whole process group is killed when it outlives `timeoutMs`. */
  private async runOnce(args: string[], timeoutMs: number): Promise<CliResult> {
    if (!existsSync(N8N_BIN))
      throw new Error(`n8n is not installed at ${N8N_BIN}: run bash test/n8n-e2e/run.sh`);
    const env = this.env(await freePort());
    const started = Date.now();
    // stdout goes to a file, not a pipe: n8n exits right after printing a long run (--rawOutput of 1,000 items is
    // ~700 KB), and what is still queued for a pipe at exit is lost (a CI run once got the run cut off mid-document);
    // writes to a file are done when the process ends. Read only after 'close'.
    const outFile = path.join(this.workDir, `cli-${process.pid}-${started}.out`);
    const outFd = openSync(outFile, 'w');
    return await new Promise((resolve, reject) => {
      const child = spawn(N8N_BIN, args, {
        cwd: this.workDir,
        env,
        detached: true,
        stdio: ['ignore', outFd, 'pipe'],
      });
      closeSync(outFd);
      let stderr = '';
      let timedOut = false;
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const timer = setTimeout(() => {
        timedOut = true;
        this.log(`n8n ${args[0]} still running after ${timeoutMs} ms: killing it`);
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      }, timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('close', (exitCode) => {
        clearTimeout(timer);
        const stdout = readFileSync(outFile, 'utf8');
        rmSync(outFile, { force: true });
        resolve({ exitCode, stdout, stderr, timedOut, elapsedMs: Date.now() - started });
      });
    });
  }

  private async importFile(kind: 'credentials' | 'workflow', name: string, content: unknown): Promise<void> {
    const file = path.join(this.workDir, name);
    writeFileSync(file, JSON.stringify(content, null, 2));
    const result = await this.run([`import:${kind}`, `--input=${file}`], 120_000);
    if (kind === 'credentials') rmSync(file); // plain API keys: not left on disk once n8n has encrypted them
    if (result.exitCode !== 0 || !/Successfully imported/.test(result.stdout + result.stderr)) {
      throw new Error(
        `n8n import:${kind} failed (exit ${result.exitCode}):\n${tail(result.stdout + result.stderr, 30)}`,
      );
    }
  }

  async importCredentials(credentials: CredentialJson[]): Promise<void> {
    await this.importFile('credentials', 'credentials.json', credentials);
  }

  async importWorkflows(workflows: WorkflowJson[]): Promise<void> {
    await this.importFile('workflow', 'workflows.json', workflows);
  }

  /** `n8n execute --id=… --rawOutput`; `run` is the printed run data (present for failed runs too). */
  async execute(workflowId: string, timeoutMs = 300_000): Promise<Execution> {
    const result = await this.run(['execute', `--id=${workflowId}`, '--rawOutput'], timeoutMs);
    return { ...result, run: parseRunOutput(result.stdout) };
  }
}

/** The last `lines` lines of a text, for failure messages. */
export function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Calls a production webhook and waits for its answer however long the execution takes, or at most `timeoutMs` when
 * given (then status 0: the answer is lost): a POST sends `body` as JSON, a GET sends nothing.
 */
export function callWebhook(
  url: string,
  method: 'GET' | 'POST' = 'POST',
  body = '{}',
  timeoutMs?: number,
): Promise<{ status: number; text: string }> {
  const sent = method === 'POST' ? body : undefined;
  const headers: Record<string, string | number> = { 'content-type': 'application/json' };
  if (sent !== undefined) headers['content-length'] = Buffer.byteLength(sent);
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    if (timeoutMs !== undefined) {
      request.setTimeout(timeoutMs, () => {
        request.destroy();
        resolve({ status: 0, text: `no answer after ${Math.round(timeoutMs / 1000)} s` });
      });
    }
    request.on('error', reject);
    request.end(sent);
  });
}
