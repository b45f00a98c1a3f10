// The key's minute shared by workers through the store, on a skipping clock (the node's waits move Date.now()
// forward instead of passing, for the node, the sandbox and the webdis stand-in alike): a worker that starts right
// after another filled the minute knows the plan and the minute's sends from the store, and sends nothing into it.
import type { INodeType } from 'n8n-workflow';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { forgetRememberedWindows } from '../../n8n-node/nodes/DapaChecker/planWindow';
import { forgetShares } from '../../n8n-node/nodes/DapaChecker/sharing/registry';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import { startSandbox, type RunningSandbox } from '../sandbox/server';
import { anotherWorker, createExecuteContext } from './executeContext';
import { startFakeWebdis, type FakeWebdis } from './fakeWebdis';

let skipped = 0;
jest.mock('n8n-workflow', () => {
  const actual = jest.requireActual<typeof import('n8n-workflow')>('n8n-workflow');
  const skip = async (ms: number) => {
    skipped += Math.max(0, ms);
    await Promise.resolve();
  };
  return { ...actual, sleep: skip, sleepWithAbort: skip };
});

const realNow = Date.now.bind(Date);
const KEY = 'twenty-per-minute';
let server: RunningSandbox;
let webdis: FakeWebdis;

beforeAll(async () => {
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skipped);
  server = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await server.close();
  jest.restoreAllMocks();
});
beforeEach(async () => {
  server.sandbox.configure({
    ...DEFAULT_CONFIG,
    keys: { ...DEFAULT_CONFIG.keys, [KEY]: { maxUrlsPerRequest: 5, urlsPerMinute: 20 } },
  });
  webdis = await startFakeWebdis();
  forgetRememberedWindows();
  forgetShares();
});
afterEach(async () => {
  await webdis.close();
});

type NodeClass = new () => INodeType;

async function execute(Node: NodeClass, tag: string, count: number, shareAcrossWorkers: boolean) {
  const double = createExecuteContext({
    items: Array.from({ length: count }, (_v, i) => ({ url: `${tag}${i}.org` })),
    credentials: { apiKey: KEY, environment: 'custom', baseUrl: server.url },
    shareAcrossWorkers,
    sharedState: { url: webdis.url },
  });
  const [results, skippedItems] = (await new Node().execute!.call(
    double.context,
  )) as unknown as INodeType[][];
  return { results, skipped: skippedItems };
}

describe('the key’s minute across workers', () => {
  test.each([[true, 0]])(
    'with the store (%s): a worker right after another filled the minute has %i URLs refused',
    async (share, refused) => {
      // The first worker learns the plan (one refusal of 5 URLs) and ends with a full minute of 20 URLs, the last 5
      // sent as soon as the minute let them (within a minute of the refusal: no probe is due).
      const first = await execute(DapaChecker, 'first', 25, share);
      expect(first.results).toHaveLength(25);
      const sentBefore = server.sandbox.stats()[KEY].urlsSubmitted;
      const second = await execute(anotherWorker(), 'second', 5, share);
      expect(second.results).toHaveLength(5);
      // URLs the service refused for the minute (sent, not billed: it answers them rate_limit_reached).
      expect(server.sandbox.stats()[KEY].urlsSubmitted - sentBefore - 5).toBe(refused);
      expect(server.sandbox.stats()[KEY].billed).toBe(30);
    },
  );
});
