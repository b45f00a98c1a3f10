// The key stays its owner's in n8n: a server that repeats the request's Authorization header in its 401s (the
// sandbox's `echoKey`) never gets the key into the node's error (message, description, anything serialised), an
// item's error with Continue On Fail, or the credential test's answer.
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';
import { DapaChecker } from '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import type { RunningSandbox } from '../sandbox/server';
import { createExecuteContext, useSandboxServer } from './executeContext';

let server: RunningSandbox;
useSandboxServer((started) => (server = started));

const LAPSED = 'lapsed-Secret/Key+0123456789';
const UNKNOWN = 'unknown-Secret-Key-9876543210';
const REMOVED = '[API key removed]';
const holdsKey = (text: string, key: string) =>
  [key, key.replace(/\//g, '\\/'), encodeURIComponent(key)].some((form) => text.includes(form));

beforeEach(() =>
  server.sandbox.configure({
    ...DEFAULT_CONFIG,
    keys: { ...DEFAULT_CONFIG.keys, [LAPSED]: { expired: true } },
    faults: { echoKey: true },
  }),
);

const credentials = (apiKey: string): ICredentialDataDecryptedObject => ({
  apiKey,
  environment: 'custom',
  baseUrl: server.url,
});

describe.each([
  ['a lapsed plan', LAPSED],
  ['a wrong key', UNKNOWN],
])('%s, from a server that repeats the key', (_, key) => {
  test("the node's error keeps the server's words without the key", async () => {
    const double = createExecuteContext({ items: [{ url: 'example.com' }], credentials: credentials(key) });
    const error = (await new DapaChecker().execute.call(double.context).catch((e: unknown) => e)) as Error & {
      description?: string;
    };
    expect(error).toBeInstanceOf(Error);
    const everything = `${error.message}\n${error.description ?? ''}\n${JSON.stringify(error)}`;
    expect(everything).toContain(REMOVED);
    expect(holdsKey(everything, key)).toBe(false);
  });

  test("with Continue On Fail, each item's error holds no key", async () => {
    const double = createExecuteContext({
      items: [{ url: 'example.com' }, { url: 'example.org' }],
      credentials: credentials(key),
      continueOnFail: true,
    });
    const outputs = await new DapaChecker().execute.call(double.context);
    const text = JSON.stringify(outputs);
    expect(text).toContain(REMOVED);
    expect(holdsKey(text, key)).toBe(false);
  });

  test("the credential's Test answers without the key", async () => {
    const credentialTest = new DapaChecker().methods.credentialTest.dapaCheckerApiTest;
    const result = await credentialTest.call({ helpers: {} } as never, {
      id: '1',
      name: 'DAPA',
      type: 'dapaCheckerApi',
      data: credentials(key),
    });
    expect(result.status).toBe('Error');
    expect(holdsKey(result.message, key)).toBe(false);
  });
});
