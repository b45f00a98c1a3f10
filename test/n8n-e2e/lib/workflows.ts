// Builders for the workflow and credential JSON that the e2e suite and the benchmark import into n8n: a Manual
// Trigger, a Code node that emits the test items, the DAPA Checker node, pairing probes and HTTP Request baselines.
import type { CredentialJson, NodeJson, WorkflowJson } from './n8n';

/** The node type of the community node as published: the package's name and the node's (n8n's nodes folder). */
export const DAPA_NODE_TYPE = 'n8n-nodes-dapa-checker.dapaChecker';
export const DAPA_CREDENTIAL_TYPE = 'dapaCheckerApi';
export const API_PATH = '/api/user/dapa-checker';

/** One connection: from node (and its output index) to node. */
export type Link = [from: string, to: string, fromOutput?: number, toInput?: number];

export function workflow(id: string, name: string, nodes: NodeJson[], links: Link[]): WorkflowJson {
  if (id.length > 21) throw new Error(`workflow id "${id}" is longer than the 21 characters n8n accepts`);
  const connections: WorkflowJson['connections'] = {};
  for (const [from, to, fromOutput = 0, toInput = 0] of links) {
    const outputs = (connections[from] ??= { main: [] }).main;
    while (outputs.length <= fromOutput) outputs.push([]);
    outputs[fromOutput].push({ node: to, type: 'main', index: toInput });
  }
  const placed = nodes.map((node, i) => ({ ...node, position: [i * 220, 0] as [number, number] }));
  return { id, name, active: false, nodes: placed, connections, settings: { executionOrder: 'v1' } };
}

let nodeCounter = 0;
function nodeId(): string {
  nodeCounter += 1;
  return `e2e-node-${String(nodeCounter).padStart(4, '0')}`;
}

function node(
  name: string,
  type: string,
  typeVersion: number,
  parameters: Record<string, unknown>,
  extra: Partial<NodeJson> = {},
): NodeJson {
  return { id: nodeId(), name, type, typeVersion, position: [0, 0], parameters, ...extra };
}

export function manualTrigger(name = 'Start'): NodeJson {
  return node(name, 'n8n-nodes-base.manualTrigger', 1, {});
}

/** A Code node that emits exactly these items (their JSON is embedded in the code). */
export function sourceItems(items: Array<Record<string, unknown>>, name = 'Source'): NodeJson {
  return node(name, 'n8n-nodes-base.code', 2, {
    mode: 'runOnceForAllItems',
    jsCode: `return ${JSON.stringify(items)}.map((json) => ({ json }));`,
  });
}

export interface DapaNodeOptions {
  /** Node options (the `options` collection); omitted means the node's defaults. */
  options?: Record<string, unknown>;
  /** The URL parameter; omitted means the node's default (`={{ $json.url }}`). */
  url?: string;
  onError?: NodeJson['onError'];
}

export function dapaChecker(name: string, credential: CredentialJson, opts: DapaNodeOptions = {}): NodeJson {
  const parameters: Record<string, unknown> = { options: opts.options ?? {} };
  if (opts.url !== undefined) parameters.url = opts.url;
  return node(name, DAPA_NODE_TYPE, 1, parameters, {
    credentials: { [DAPA_CREDENTIAL_TYPE]: { id: credential.id, name: credential.name } },
    ...(opts.onError ? { onError: opts.onError } : {}),
  });
}

/**
 * A Set node that reads the paired item of `sourceName` through n8n's own pairing (`$('Source').item`): it fails
 * the execution when an item's pairing is missing or wrong, and it copies the source row into `sourceRow`.
 */
export function pairingProbe(name: string, sourceName = 'Source'): NodeJson {
  return node(name, 'n8n-nodes-base.set', 3.4, {
    mode: 'manual',
    assignments: {
      assignments: [
        {
          id: `${name}-row`,
          name: 'sourceRow',
          value: `={{ $('${sourceName}').item.json.row }}`,
          type: 'number',
        },
        {
          id: `${name}-url`,
          name: 'sourceUrl',
          value: `={{ $('${sourceName}').item.json.url }}`,
          type: 'string',
        },
      ],
    },
    includeOtherFields: true,
    options: {},
  });
}

export interface HttpBaselineOptions {
  /** The HTTP Request node's Batching option; omitted means one request per item, all at once. */
  batching?: { batchSize: number; batchInterval: number };
  onError?: NodeJson['onError'];
  retryOnFail?: { maxTries: number; waitBetweenTries: number };
}

/** The HTTP Request node posting `{"urls":[<url>]}` for each item, with a header credential (the baseline). */
export function httpRequestDapa(
  name: string,
  baseUrl: string,
  credential: CredentialJson,
  opts: HttpBaselineOptions = {},
): NodeJson {
  const options: Record<string, unknown> = {};
  if (opts.batching) options.batching = { batch: opts.batching };
  return node(
    name,
    'n8n-nodes-base.httpRequest',
    4.2,
    {
      method: 'POST',
      url: baseUrl + API_PATH,
      authentication: 'genericCredentialType',
      genericAuthType: 'httpHeaderAuth',
      sendBody: true,
      specifyBody: 'json',
      jsonBody: '={{ JSON.stringify({ urls: [$json.url] }) }}',
      options,
    },
    {
      credentials: { httpHeaderAuth: { id: credential.id, name: credential.name } },
      ...(opts.onError ? { onError: opts.onError } : {}),
      ...(opts.retryOnFail
        ? {
            retryOnFail: true,
            maxTries: opts.retryOnFail.maxTries,
            waitBetweenTries: opts.retryOnFail.waitBetweenTries,
          }
        : {}),
    },
  );
}

export function dapaCredential(id: string, name: string, apiKey: string, baseUrl: string): CredentialJson {
  return { id, name, type: DAPA_CREDENTIAL_TYPE, data: { apiKey, environment: 'custom', baseUrl } };
}

export function bearerHeaderCredential(id: string, name: string, apiKey: string): CredentialJson {
  return { id, name, type: 'httpHeaderAuth', data: { name: 'Authorization', value: `Bearer ${apiKey}` } };
}

/**
 * A production Webhook trigger (POST /webhook/<path>) that answers with every item of the last node once the
 * execution has finished; in queue mode the main process enqueues the execution and a worker runs it.
 */
export function webhookTrigger(name: string, webhookPath: string): NodeJson {
  return node(
    name,
    'n8n-nodes-base.webhook',
    2,
    {
      httpMethod: 'POST',
      path: webhookPath,
      responseMode: 'lastNode',
      responseData: 'allEntries',
      options: {},
    },
    { webhookId: `e2e-webhook-${webhookPath}` },
  );
}

/** A Code node that emits the items the webhook request carried in its body (`{"items": [...]}`). */
export function itemsFromWebhookBody(name = 'Source'): NodeJson {
  return node(name, 'n8n-nodes-base.code', 2, {
    mode: 'runOnceForAllItems',
    jsCode: 'return $input.first().json.body.items.map((json) => ({ json }));',
  });
}

/** A Merge node appending its two inputs (the pairing probes after Results and Skipped). */
export function appendMerge(name: string): NodeJson {
  return node(name, 'n8n-nodes-base.merge', 3, { mode: 'append' });
}
