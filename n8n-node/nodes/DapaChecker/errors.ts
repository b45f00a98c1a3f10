// The errors that stop a check (wrong key, expired plan, wrong address, a service that keeps failing), worded for
// an n8n user from the core's code: the message says which, the description says what to do. The core's default
// sentence for the same code and detail (`outcomeText`) is added as detail; no text is ever read back for a code.
import { NodeApiError, NodeOperationError, type INode, type JsonObject } from 'n8n-workflow';
import { outcomeText, type ErrorCode, type Fatal } from '../../../shared/index';

interface Wording {
  message: string;
  description: string;
  httpCode?: string;
}

const WORDING: Partial<Record<ErrorCode, Wording>> = {
  bad_key: {
    message: 'Wrong API key: the DAPA service does not accept the key in the DAPA Checker API credential',
    description: 'Open the credential, paste the correct API key of your plan and use "Test" to check it.',
    httpCode: '401',
  },
  not_premium: {
    message:
      'Plan expired: the DAPA service accepts the key, but its plan has expired or does not allow this request',
    description:
      'Renew or upgrade the plan, or put a key with an active plan in the DAPA Checker API credential.',
    httpCode: '401',
  },
  network_blocked: {
    message:
      "Network blocked: the DAPA service refused requests from this n8n server's network (HTTP 403); this is not your API key",
    description:
      "The service blocks some datacenter addresses, where hosted n8n runs. Run the workflow on a self-hosted n8n or from another network, or ask DAPA checker support to allow this server's address. Retrying from the same network does not help.",
    httpCode: '403',
  },
  validation: {
    message: 'The DAPA service refused the request as invalid (Validation Error)',
    description: "Check that the credential's environment and base URL point at the DAPA checker API.",
    httpCode: '422',
  },
  not_found: {
    message: 'The base URL of the DAPA Checker API credential does not serve the DAPA checker',
    description: 'Open the credential and check the environment and, for Custom, the base URL.',
  },
  plan_limit: {
    message: 'The plan accepts no URL per request (422 Limit Exceeded for a single URL)',
    description: 'Check the plan of this API key with the provider.',
    httpCode: '422',
  },
  server_error: {
    message: 'The DAPA service kept failing, so the node stopped before checking everything',
    description: 'Nothing was billed for the URLs that were not checked. Run the workflow again later.',
  },
};

/** The node's words for why a run stopped: its own for the codes it knows, else the core's sentence. */
export function stoppedRunWords(fatal: Fatal): Wording {
  return WORDING[fatal.code] ?? { message: outcomeText(fatal), description: '' };
}

/** The error for a stopped run, pointing at the first item it concerns. */
export function stoppedRunError(node: INode, fatal: Fatal, itemIndex: number): NodeApiError {
  const wording = stoppedRunWords(fatal);
  const detail: JsonObject = { code: fatal.code, message: outcomeText(fatal) };
  if (fatal.serverText !== undefined) detail.serverText = fatal.serverText;
  return new NodeApiError(node, detail, {
    message: wording.message,
    description: `${wording.description} Detail: ${outcomeText(fatal)}`.trim(),
    httpCode: wording.httpCode,
    itemIndex,
  });
}

/** A settings or input problem found before anything was sent. */
export function settingError(
  node: INode,
  problem: { message: string; description: string },
  itemIndex: number,
): NodeOperationError {
  return new NodeOperationError(node, problem.message, { description: problem.description, itemIndex });
}
