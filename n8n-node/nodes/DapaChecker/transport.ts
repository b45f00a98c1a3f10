// The node's only HTTP: one core request sent through n8n's `httpRequestWithAuthentication`, which adds the
// credential's Bearer header. Every HTTP status comes back as an answer (the core decides what it means).
import type { IDataObject, IExecuteFunctions, IN8nHttpFullResponse } from 'n8n-workflow';
import type { HttpAnswer, HttpRequest } from '../../../shared/index';
import { removeKeyFromAnswer, removeKeyFromError } from '../../../shared/redact';
import { CREDENTIAL_NAME } from './description';

/** Longest single request; a slower answer counts as a network failure (and is retried like one). */
export const REQUEST_TIMEOUT_MS = 120_000;
const SHORTEST_TIMEOUT_MS = 5_000;

/** The response body as the text the server sent; n8n may hand over parsed JSON or a Buffer instead. */
export function bodyText(body: unknown): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
  return JSON.stringify(body);
}

/** Response headers as plain strings (axios may hand over an AxiosHeaders object with numbers). */
export function plainHeaders(headers: IDataObject | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value === 'string') out[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
    else if (Array.isArray(value)) out[name] = value.map(String);
  }
  return out;
}

export function toHttpAnswer(response: IN8nHttpFullResponse): HttpAnswer {
  return {
    status: response.statusCode,
    headers: plainHeaders(response.headers),
    body: bodyText(response.body),
  };
}

/**
 * A `send` for the core's driver; `msLeft` says how long the run may still take, to bound each request. The answer
 * (and a transport failure's message) reaches the core with the credential's key removed: a server may repeat it.
 */
export function sendWithCredential(
  context: IExecuteFunctions,
  msLeft: () => number,
  apiKey: string,
): (request: HttpRequest) => Promise<HttpAnswer> {
  return async (request) => {
    const timeout = Math.max(SHORTEST_TIMEOUT_MS, Math.min(REQUEST_TIMEOUT_MS, msLeft()));
    let response: IN8nHttpFullResponse;
    try {
      response = (await context.helpers.httpRequestWithAuthentication.call(context, CREDENTIAL_NAME, {
        method: request.method,
        url: request.url,
        headers: { ...request.headers },
        body: request.body,
        encoding: 'text',
        json: false,
        returnFullResponse: true,
        ignoreHttpStatusErrors: true,
        timeout,
      })) as IN8nHttpFullResponse;
    } catch (error) {
      throw removeKeyFromError(error, apiKey);
    }
    return removeKeyFromAnswer(toHttpAnswer(response), apiKey);
  };
}
