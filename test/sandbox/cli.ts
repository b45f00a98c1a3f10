// `npm run sandbox`: the sandbox DAPA checker on 127.0.0.1:${SANDBOX_PORT:-8787}, with optional
// `--config file.json` (keys merged over the built-in ones, faults as given); one log line per request.
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

async function main(): Promise<void> {
  const config = loadConfig(process.argv.slice(2));
  const running = await startSandbox({
    port: Number(process.env.SANDBOX_PORT ?? 8787),
    config,
    onRequest: (entry) => console.log(logLine(entry)),
  });
  console.log(`DAPA sandbox listening on ${running.url}`);
  console.log(`  POST ${running.url}${API_PATH}  (Authorization: Bearer <key>)`);
  console.log('Keys:');
  for (const [key, plan] of Object.entries(config.keys))
    console.log(`  ${key.padEnd(18)} ${describePlan(plan)}`);
  if (config.faults) console.log(`Faults: ${JSON.stringify(config.faults)}`);
  console.log(`Test endpoints: GET /__sandbox/stats, POST /__sandbox/reset, POST /__sandbox/config`);
  const stop = (): void => void running.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
