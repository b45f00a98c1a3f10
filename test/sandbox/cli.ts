// `npm run sandbox`: the sandbox DAPA checker on 127.0.0.1:${SANDBOX_PORT:-8787}, with optional
// `--config file.json` (keys merged over the built-in ones, faults as given) and `--host <address>` (or
// DAPA_SANDBOX_HOST) to listen on another address, such as 0.0.0.0 for an n8n in Docker; one log line per request.
import { readFileSync } from 'node:fs';
import { parseSandboxConfig } from './config';
import { API_PATH, DEFAULT_CONFIG, type PlanConfig, type SandboxConfig } from './handler';
import { startSandbox, type RequestLogEntry } from './server';

function loadConfig(argv: string[]): SandboxConfig {
  const at = argv.indexOf('--config');
  if (at < 0) return DEFAULT_CONFIG;
  const file = argv[at + 1];
  if (!file) throw new Error('--config needs a path to a JSON file');
  return parseSandboxConfig(JSON.parse(readFileSync(file, 'utf8')), true);
}

/**
 * The address to listen on: `--host` first, then DAPA_SANDBOX_HOST, else 127.0.0.1 (this computer only). A container
 * reaches the host's 127.0.0.1 only through the host's network, so n8n in Docker needs 0.0.0.0 (every interface).
 */
export function listenHost(argv: string[], env: NodeJS.ProcessEnv = process.env): string {
  const at = argv.indexOf('--host');
  const host = at >= 0 ? argv[at + 1] : env.DAPA_SANDBOX_HOST;
  if (at >= 0 && (!host || host.startsWith('--')))
    throw new Error('--host needs an address, such as 0.0.0.0');
  return host?.trim() || '127.0.0.1';
}

/** Where to point a credential, for the address listened on (0.0.0.0 and :: are every interface, not an address). */
function reachableAt(host: string, port: number): string[] {
  if (host === '127.0.0.1' || host === 'localhost' || host === '::1') return [`http://127.0.0.1:${port}`];
  if (host === '0.0.0.0' || host === '::')
    return [
      `http://127.0.0.1:${port} (this computer)`,
      `http://host.docker.internal:${port} (from a Docker container; on Linux start it with --add-host=host.docker.internal:host-gateway)`,
      `http://<this computer's address>:${port} (from another machine)`,
    ];
  return [`http://${host.includes(':') ? `[${host}]` : host}:${port}`];
}

function describePlan(plan: PlanConfig): string {
  if (plan.expired) return 'plan expired';
  const limit = (n: number | undefined): string => (n === undefined ? 'unlimited' : String(n));
  return (
    `${limit(plan.maxUrlsPerRequest)} URLs/request, ${limit(plan.requestsPerMinute)} requests/min, ` +
    `${limit(plan.urlsPerMinute)} URLs/min`
  );
}

// The Authorization header never reaches this function: the log entry carries none.
function logLine(e: RequestLogEntry): string {
  const counts = e.summary
    ? ` submitted=${e.summary.submitted} processed=${e.summary.processed} skipped=${e.summary.skipped}`
    : '';
  return `${new Date().toISOString()} ${e.method} ${e.path} ${e.status}${counts} (${e.latencyMs} ms)`;
}

/** What `npm run sandbox -- --help` prints (nothing is started). */
export const USAGE = `Usage: npm run sandbox [-- <options>]
  The sandbox DAPA checker API (the real service's plans, made-up metrics), on 127.0.0.1:\${SANDBOX_PORT:-8787}.
  --config <file.json>   keys merged over the built-in ones, faults as given
  --host <address>       listen on another address (or DAPA_SANDBOX_HOST), such as 0.0.0.0 for n8n in Docker
  --help, -h             print this and exit
  SANDBOX_PORT=<port>    another port`;

/** The options the command line takes: --help, or --config/--host with their values; anything else is refused. */
export function checkArgs(argv: string[]): 'help' | 'run' {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--config' || argv[i] === '--host') i++;
    else throw new Error(`unknown option ${argv[i]}\n${USAGE}`);
  }
  return 'run';
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (checkArgs(argv) === 'help') {
    console.log(USAGE);
    return;
  }
  const config = loadConfig(argv);
  const host = listenHost(argv);
  const running = await startSandbox({
    host,
    port: Number(process.env.SANDBOX_PORT ?? 8787),
    config,
    onRequest: (entry) => console.log(logLine(entry)),
  });
  console.log(`DAPA sandbox listening on ${running.url}`);
  console.log(`  POST ${running.url}${API_PATH}  (Authorization: Bearer <key>)`);
  if (host !== '127.0.0.1') {
    console.log(`  Open to other machines: anyone who can reach this address may use the sandbox's keys.`);
    console.log(`Base URL for a credential:`);
    for (const where of reachableAt(host, running.port)) console.log(`  ${where}`);
  }
  console.log('Keys:');
  for (const [key, plan] of Object.entries(config.keys))
    console.log(`  ${key.padEnd(18)} ${describePlan(plan)}`);
  if (config.faults) console.log(`Faults: ${JSON.stringify(config.faults)}`);
  console.log(`Test endpoints: GET /__sandbox/stats, POST /__sandbox/reset, POST /__sandbox/config`);
  const stop = (): void => void running.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (require.main === module)
  main().catch((err: unknown) => {
    console.error((err as Error).message);
    process.exit(1);
  });
