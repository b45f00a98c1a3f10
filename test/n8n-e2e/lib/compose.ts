// The Docker Compose file of n8n-node/README.md ("Scaling out"), read by the e2e clusters so that they run queue mode
// with the file's own n8n settings (hosts and ports swapped for the processes started here), and by its unit test.
// A small YAML reader for the subset the file keeps to: block mappings by indentation, flow sequences and mappings
// (`[a, 'b']`, `{ k: v }`), single or double quoted scalars, anchors (`&name`) and aliases (`*name`).
import { readFileSync } from 'node:fs';
import path from 'node:path';

export type Yaml = string | Yaml[] | { [key: string]: Yaml } | null;

const README = path.resolve(__dirname, '..', '..', '..', 'n8n-node', 'README.md');

/** The yaml block that follows the README's "A Docker Compose file for queue mode" line. */
export function composeBlock(readme = readFileSync(README, 'utf8')): string {
  const at = readme.indexOf('A Docker Compose file for queue mode');
  const block = /```yaml\n([\s\S]*?)```/.exec(readme.slice(at));
  if (at < 0 || !block) throw new Error('n8n-node/README.md has no Docker Compose block for queue mode');
  return block[1];
}

/** A flow scalar: quotes removed, plain text trimmed. */
function scalar(text: string): string {
  const t = text.trim();
  if ((t.startsWith("'") && t.endsWith("'")) || (t.startsWith('"') && t.endsWith('"'))) return t.slice(1, -1);
  return t;
}

/** Splits a flow collection's inside at top-level commas (none inside quotes). */
function splitFlow(inside: string): string[] {
  const parts: string[] = [];
  let quote = '';
  let current = '';
  for (const ch of inside) {
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === ',') {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  if (current.trim()) parts.push(current);
  return parts;
}

function inlineValue(text: string, anchors: Map<string, Yaml>): Yaml {
  const t = text.trim();
  if (t === '') return null;
  if (t.startsWith('*')) {
    const value = anchors.get(t.slice(1));
    if (value === undefined) throw new Error(`unknown alias ${t}`);
    return value;
  }
  if (t.startsWith('[') && t.endsWith(']')) return splitFlow(t.slice(1, -1)).map(scalar);
  if (t.startsWith('{') && t.endsWith('}')) {
    const out: Record<string, Yaml> = {};
    for (const part of splitFlow(t.slice(1, -1))) {
      const colon = part.indexOf(':');
      out[scalar(part.slice(0, colon))] = scalar(part.slice(colon + 1));
    }
    return out;
  }
  return scalar(t);
}

/** Parses the subset described above; anything else (a `- item` sequence, tabs) is refused by name. */
export function parseYaml(text: string): Yaml {
  const lines = text
    .split('\n')
    .map((raw, i) => ({ raw, n: i + 1 }))
    .filter(({ raw }) => raw.trim() !== '' && !raw.trim().startsWith('#'));
  const anchors = new Map<string, Yaml>();
  let i = 0;
  const indentOf = (raw: string) => raw.length - raw.trimStart().length;
  function block(indent: number): Record<string, Yaml> {
    const out: Record<string, Yaml> = {};
    while (i < lines.length && indentOf(lines[i].raw) === indent) {
      const { raw, n } = lines[i];
      const m = /^\s*([\w.-]+):(?:\s+(.*))?$/.exec(raw);
      if (!m || raw.includes('\t')) throw new Error(`line ${n}: not in the subset read here: ${raw.trim()}`);
      i++;
      let rest = m[2] ?? '';
      let anchor: string | undefined;
      const a = /^&([\w-]+)\s*(.*)$/.exec(rest);
      if (a) {
        anchor = a[1];
        rest = a[2];
      }
      let value: Yaml;
      if (rest === '' && i < lines.length && indentOf(lines[i].raw) > indent)
        value = block(indentOf(lines[i].raw));
      else value = inlineValue(rest, anchors);
      if (anchor) anchors.set(anchor, value);
      out[m[1]] = value;
    }
    if (i < lines.length && indentOf(lines[i].raw) > indent)
      throw new Error(`line ${lines[i].n}: unexpected indentation`);
    return out;
  }
  const doc = block(0);
  if (i < lines.length) throw new Error(`line ${lines[i].n}: unexpected indentation`);
  return doc;
}

export interface Compose {
  services: Record<string, Record<string, Yaml>>;
  volumes?: Record<string, Yaml>;
}

/** The README's Compose file, parsed. */
export function readCompose(readme?: string): Compose {
  const doc = parseYaml(composeBlock(readme)) as unknown as Compose;
  if (!doc?.services || typeof doc.services !== 'object') throw new Error('the Compose file has no services');
  return doc;
}

/** A service's environment as a map of strings. */
export function environmentOf(compose: Compose, service: string): Record<string, string> {
  const env = compose.services[service]?.environment;
  if (!env || typeof env !== 'object' || Array.isArray(env))
    throw new Error(`the Compose file's ${service} service has no environment map`);
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v ?? '')]));
}

/**
 * The n8n settings of the Compose file's main service for processes started here: its environment with the
 * services' host names and ports replaced by those of the Redis (Bull) and PostgreSQL running on this machine.
 * Throws when the file lacks a setting queue mode needs, so that the file cannot lose one unnoticed.
 */
export function n8nEnvFromCompose(
  local: { redisPort: number; database?: Record<string, string> },
  compose = readCompose(),
): Record<string, string> {
  const env = environmentOf(compose, 'n8n');
  const required = [
    'EXECUTIONS_MODE',
    'QUEUE_BULL_REDIS_HOST',
    'DB_TYPE',
    'DB_POSTGRESDB_HOST',
    'N8N_ENCRYPTION_KEY',
  ];
  const missing = required.filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`the Compose file's n8n environment lacks ${missing.join(', ')}`);
  if (!(env.QUEUE_BULL_REDIS_HOST in compose.services) || !(env.DB_POSTGRESDB_HOST in compose.services))
    throw new Error('the Compose file names a Redis or PostgreSQL host that is none of its services');
  const out: Record<string, string> = {
    ...env,
    QUEUE_BULL_REDIS_HOST: '127.0.0.1',
    QUEUE_BULL_REDIS_PORT: String(local.redisPort),
  };
  if (local.database) {
    for (const name of Object.keys(env).filter((k) => k.startsWith('DB_POSTGRESDB_'))) {
      if (local.database[name] === undefined) throw new Error(`no local value for ${name}`);
    }
    Object.assign(out, local.database);
  }
  return out;
}
