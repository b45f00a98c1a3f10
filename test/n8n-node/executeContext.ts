// A test double of n8n's IExecuteFunctions for the DAPA Checker node: items, parameters, the stored credential,
// continue-on-fail, the cancel signal, the node's workflow static data and per-execution context, and `httpRequestWithAuthentication` doing real HTTP (Node's fetch) with the
// credential's own `authenticate` header, the way n8n 2.8 applies it. Everything the node sends is recorded.
import type {
  IBinaryKeyData,
  ICredentialDataDecryptedObject,
  IDataObject,
  IExecuteFunctions,
  IHttpRequestOptions,
  INode,
  INodeExecutionData,
  INodeType,
  NodeExecutionHint,
} from 'n8n-workflow';
import { DapaCheckerApi } from '../../n8n-node/credentials/DapaCheckerApi.credentials';
import { forgetRememberedWindows } from '../../n8n-node/nodes/DapaChecker/planWindow';
import { forgetShares } from '../../n8n-node/nodes/DapaChecker/sharing/registry';
import { DEFAULT_CONFIG } from '../sandbox/handler';
import { startSandbox, type RunningSandbox } from '../sandbox/server';

export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What a transport answers: the status, the headers and the body text. */
export interface TransportAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Carries a request instead of Node's fetch (a test on virtual time: no socket, no real wait). */
export type Transport = (request: SentRequest) => Promise<TransportAnswer>;

export interface ContextSetup {
  /** Input items, as their `json`. */
  items: IDataObject[];
  /** Binary data of some input items, by index. */
  binaries?: Record<number, IBinaryKeyData>;
  credentials: ICredentialDataDecryptedObject;
  /** What the URL parameter gives for an item; default: like `={{ $json.url }}`. */
  url?: (json: IDataObject, index: number) => unknown;
  options?: IDataObject;
  continueOnFail?: boolean;
  onError?: INode['onError'];
  cancelSignal?: AbortSignal;
  /** Told of each answer as the node is about to get it (its status and body text), in order. */
  onAnswer?: (status: number, text: string) => void;
  /** The node's workflow static data; pass the same object to two executions to share it as n8n does. */
  staticData?: IDataObject;
  /**
   * The node's per-execution context (`getContext('node')`); pass the same object to two runs of the node to make
   * them runs of one execution, as n8n does in a loop. `null`: a host without `getContext`.
   */
  nodeContext?: IDataObject | null;
  /** Hand the body over as n8n does without `encoding: 'text'` (parsed JSON), to check the node re-reads it. */
  parsedBodies?: boolean;
  /** Share Across Workers, and the DAPA Shared State API credential it uses (absent: none stored). */
  shareAcrossWorkers?: boolean;
  sharedState?: ICredentialDataDecryptedObject;
  /** The node's type as n8n names it; `n8n-nodes-dapa-checker.dapaCheckerTool` when an AI agent uses it as a tool. */
  nodeType?: string;
  /** Carries every request (the service's and the store's) instead of real HTTP. */
  transport?: Transport;
}

export interface ExecuteContext {
  context: IExecuteFunctions;
  sent: SentRequest[];
  /** What the node sent to the shared store (webdis), apart from `sent`. */
  storeSent: SentRequest[];
  hints: NodeExecutionHint[];
}

/** The Authorization header the credential's `authenticate` block produces for this credential data. */
function authenticationHeaders(credentials: ICredentialDataDecryptedObject): Record<string, string> {
  const generic = new DapaCheckerApi().authenticate;
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(generic.properties.headers ?? {})) {
    out[name] = String(template)
      .replace(/^=/, '')
      .replace(/\{\{\s*\$credentials\.(\w+)\s*\}\}/g, (_m, field: string) =>
        String(credentials[field] ?? ''),
      );
  }
  return out;
}

async function fetched(
  options: IHttpRequestOptions,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<TransportAnswer> {
  const signals = [options.abortSignal, options.timeout ? AbortSignal.timeout(options.timeout) : undefined];
  const response = await fetch(options.url, {
    method: options.method ?? 'GET',
    headers,
    body,
    signal: AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined)),
  });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers.entries()),
    text: await response.text(),
  };
}

/** A transport's answer, or n8n's timeout error once `timeout` ms have passed (on whatever timers are in force). */
async function timed(answer: Promise<TransportAnswer>, timeout?: number): Promise<TransportAnswer> {
  if (!timeout) return await answer;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timeout of ${timeout}ms exceeded`)), timeout);
  });
  try {
    return await Promise.race([answer, expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function realHttp(
  options: IHttpRequestOptions,
  sent: SentRequest[],
  parsedBodies: boolean,
  onAnswer?: (status: number, text: string) => void,
  transport?: Transport,
) {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name] = String(value);
  const body =
    options.body === undefined || typeof options.body === 'string'
      ? (options.body as string | undefined)
      : JSON.stringify(options.body);
  const request: SentRequest = {
    method: options.method ?? 'GET',
    url: options.url,
    headers,
    body: body ?? '',
  };
  sent.push(request);
  const response = transport
    ? await timed(transport(request), options.timeout)
    : await fetched(options, headers, body);
  const text = response.text;
  onAnswer?.(response.status, text);
  if (!options.ignoreHttpStatusErrors && response.status >= 400) {
    throw new Error(`Request failed with status code ${response.status}`);
  }
  const isJson = (response.headers['content-type'] ?? '').includes('json');
  let parsed: unknown = text;
  if (options.encoding !== 'text' || parsedBodies) {
    try {
      parsed = isJson ? JSON.parse(text) : text;
    } catch {
      parsed = text;
    }
  }
  if (!options.returnFullResponse) return parsed;
  return {
    body: parsed,
    headers: response.headers,
    statusCode: response.status,
    statusMessage: '',
  };
}

export function createExecuteContext(setup: ContextSetup): ExecuteContext {
  const sent: SentRequest[] = [];
  const storeSent: SentRequest[] = [];
  const hints: NodeExecutionHint[] = [];
  const items: INodeExecutionData[] = setup.items.map((json, i) =>
    setup.binaries?.[i] ? { json, binary: setup.binaries[i] } : { json },
  );
  const node: INode = {
    id: 'dapa-checker-under-test',
    name: 'DAPA Checker',
    type: setup.nodeType ?? 'n8n-nodes-dapa-checker.dapaChecker',
    typeVersion: 1,
    position: [0, 0],
    parameters: {},
    onError: setup.onError,
  };
  const staticData = setup.staticData ?? {};
  const nodeContext = setup.nodeContext === undefined ? {} : setup.nodeContext;
  const urlOf = setup.url ?? ((json: IDataObject) => json.url);

  const context = {
    getInputData: () => items,
    getNode: () => node,
    continueOnFail: () => setup.continueOnFail ?? false,
    getExecutionCancelSignal: () => setup.cancelSignal,
    getWorkflowStaticData(type: string) {
      if (type !== 'node') throw new Error(`The double keeps only the node's static data, not "${type}"`);
      return staticData;
    },
    ...(nodeContext
      ? {
          getContext(type: string) {
            if (type !== 'node') throw new Error(`The double keeps only the node's context, not "${type}"`);
            return nodeContext;
          },
        }
      : {}),
    addExecutionHints: (...added: NodeExecutionHint[]) => hints.push(...added),
    getNodeParameter(name: string, itemIndex: number, fallback?: unknown) {
      if (name === 'url') return urlOf(items[itemIndex].json, itemIndex);
      if (name === 'options') return setup.options ?? fallback ?? {};
      if (name === 'shareAcrossWorkers') return setup.shareAcrossWorkers ?? false;
      throw new Error(`The double has no parameter "${name}"`);
    },
    async getCredentials(type: string) {
      if (type === 'dapaSharedStateApi' && setup.sharedState) return { ...setup.sharedState };
      if (type !== 'dapaCheckerApi') throw new Error(`Node does not have any credentials set for "${type}"`);
      return { ...setup.credentials };
    },
    helpers: {
      // Plain HTTP (the shared store's webdis): recorded apart from the service's requests.
      async httpRequest(options: IHttpRequestOptions) {
        return await realHttp(options, storeSent, false, undefined, setup.transport);
      },
      async httpRequestWithAuthentication(type: string, options: IHttpRequestOptions) {
        if (type !== 'dapaCheckerApi') throw new Error(`Unknown credential type ${type}`);
        const withAuth: IHttpRequestOptions = {
          ...options,
          headers: { ...options.headers, ...authenticationHeaders(setup.credentials) },
          // n8n 2.8 ties every authenticated request to the execution's cancel signal.
          abortSignal: setup.cancelSignal,
        };
        return await realHttp(withAuth, sent, setup.parsedBodies ?? false, setup.onAnswer, setup.transport);
      },
    },
  };
  return { context: context as unknown as IExecuteFunctions, sent, storeSent, hints };
}

/**
 * One sandbox server for a suite, started before it and closed after it; before each test its config is reset and the
 * node forgets the windows it remembered, as in a fresh n8n process.
 */
export function useSandboxServer(started: (server: RunningSandbox) => void): void {
  let server: RunningSandbox | undefined;
  beforeAll(async () => {
    server = await startSandbox({ port: 0 });
    started(server);
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    server?.sandbox.configure(DEFAULT_CONFIG);
    forgetRememberedWindows();
    forgetShares();
  });
}

/** The node class as another n8n worker loads it: its own copy of every module, so nothing in memory is shared. */
export function anotherWorker(): new () => INodeType {
  let loaded: (new () => INodeType) | undefined;
  const path = '../../n8n-node/nodes/DapaChecker/DapaChecker.node';
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded = (require(path) as { DapaChecker: new () => INodeType }).DapaChecker;
  });
  return loaded!;
}
