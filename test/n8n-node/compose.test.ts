// The Docker Compose file of n8n-node/README.md runs queue mode as n8n needs it: one PostgreSQL shared by the main
// instance and the workers, one encryption key, n8n's queue on its own Redis and DAPA's store on another, the node's
// nodes folder mounted in main and in every worker, named volumes for the data. The e2e clusters take their n8n
// settings from the same file (test/n8n-e2e/lib/compose.ts); this test reads it with the same reader.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  environmentOf,
  n8nEnvFromCompose,
  parseYaml,
  readCompose,
  type Compose,
} from '../n8n-e2e/lib/compose';

const README = readFileSync(path.join(__dirname, '..', '..', 'n8n-node', 'README.md'), 'utf8');
const compose: Compose = readCompose(README);
const services = compose.services;
const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

describe("the README's Compose file", () => {
  test('has PostgreSQL, the queue Redis, DAPA’s own Redis, webdis, n8n and its workers', () => {
    expect(Object.keys(services).sort()).toEqual([
      'dapa-redis',
      'n8n',
      'postgres',
      'redis',
      'webdis',
      'worker',
    ]);
  });

  test('main and workers share one environment: queue mode, the same PostgreSQL database and encryption key', () => {
    const main = environmentOf(compose, 'n8n');
    expect(environmentOf(compose, 'worker')).toEqual(main);
    expect(main.EXECUTIONS_MODE).toBe('queue');
    expect(main.N8N_ENCRYPTION_KEY).toBeTruthy();
    expect(main.DB_TYPE).toBe('postgresdb');
    const pg = environmentOf(compose, main.DB_POSTGRESDB_HOST);
    expect(String(services[main.DB_POSTGRESDB_HOST].image)).toMatch(/^postgres:/);
    expect([main.DB_POSTGRESDB_DATABASE, main.DB_POSTGRESDB_USER, main.DB_POSTGRESDB_PASSWORD]).toEqual([
      pg.POSTGRES_DB,
      pg.POSTGRES_USER,
      pg.POSTGRES_PASSWORD,
    ]);
    expect(main.DB_POSTGRESDB_PORT).toBe('5432');
  });

  test("n8n's queue and DAPA's store are two Redis: webdis reaches only dapa-redis, bounded, no persistence", () => {
    const queueRedis = environmentOf(compose, 'n8n').QUEUE_BULL_REDIS_HOST;
    expect(String(services[queueRedis].image)).toMatch(/^redis:/);
    expect(queueRedis).not.toBe('dapa-redis');
    expect(list(services.webdis.depends_on)).toEqual(['dapa-redis']);
    expect(list(services.webdis.volumes)).toContain('./webdis.json:/etc/webdis.prod.json:ro');
    const command = String(services['dapa-redis'].command);
    expect(command).toMatch(/--maxmemory \d+mb/);
    expect(command).toContain('--maxmemory-policy allkeys-lru');
    expect(command).toContain("--save ''");
    expect(command).toContain('--appendonly no');
  });

  test('the node is installed in main and in every worker (./n8n-nodes as ~/.n8n/nodes), n8n’s data in a volume', () => {
    const folder = /node n8n-node\/install\.mjs (\.\/[\w-]+)\n/.exec(README)?.[1];
    expect(folder).toBe('./n8n-nodes');
    for (const service of ['n8n', 'worker']) {
      expect(list(services[service].volumes)).toEqual([
        'n8n_data:/home/node/.n8n',
        `${folder}:/home/node/.n8n/nodes`,
      ]);
    }
    expect(Object.keys(compose.volumes ?? {}).sort()).toEqual(['n8n_data', 'postgres_data']);
    expect(String(services.worker.command)).toMatch(/^worker --concurrency=\d+$/);
  });

  test('the e2e clusters get its settings with their own hosts and ports', () => {
    const database = {
      DB_TYPE: 'postgresdb',
      DB_POSTGRESDB_HOST: '127.0.0.1',
      DB_POSTGRESDB_PORT: '25432',
      DB_POSTGRESDB_DATABASE: 'n8n_x',
      DB_POSTGRESDB_USER: 'postgres',
      DB_POSTGRESDB_PASSWORD: '',
    };
    const env = n8nEnvFromCompose({ redisPort: 26379, database }, compose);
    expect(env).toEqual({
      ...environmentOf(compose, 'n8n'),
      ...database,
      QUEUE_BULL_REDIS_HOST: '127.0.0.1',
      QUEUE_BULL_REDIS_PORT: '26379',
    });
  });
});

describe('the Compose reader', () => {
  test('reads anchors, aliases, flow sequences and mappings, quoted scalars', () => {
    expect(
      parseYaml("a: &x\n  k: 'v w'\n  n: 2\nb: *x\nc: [p, 'q r', \"\"]\nd: { replicas: 2 }\ne:\n"),
    ).toEqual({
      a: { k: 'v w', n: '2' },
      b: { k: 'v w', n: '2' },
      c: ['p', 'q r', ''],
      d: { replicas: '2' },
      e: null,
    });
  });

  test('refuses what it does not read, by line', () => {
    expect(() => parseYaml('a:\n  - b\n')).toThrow('line 2: not in the subset read here: - b');
    expect(() => parseYaml('a: *nope\n')).toThrow('unknown alias *nope');
    expect(() => parseYaml('a: 1\n  b: 2\n')).toThrow('line 2: unexpected indentation');
  });

  test('a Compose file without PostgreSQL settings is refused for the clusters', () => {
    const bare = parseYaml(
      'services:\n  redis:\n    image: redis:7\n  n8n:\n    environment:\n      EXECUTIONS_MODE: queue\n      QUEUE_BULL_REDIS_HOST: redis\n      N8N_ENCRYPTION_KEY: k\n',
    ) as unknown as Compose;
    expect(() => n8nEnvFromCompose({ redisPort: 1 }, bare)).toThrow('lacks DB_TYPE, DB_POSTGRESDB_HOST');
  });
});
