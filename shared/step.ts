// What a run and its driver say to each other: the step the run asks for (send, wait, receive, done), the request
// it hands over, and the network failure a driver saw instead of an answer.
import { JSON_HEADERS } from './endpoints';

export interface HttpRequest {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * What the driver does next: send a request (and it may ask again before the answer, up to `inFlight` requests);
 * wait; hand back the answers of the requests in flight first (`receive`: nothing more may go before them); or stop.
 */
export type Step =
  | { type: 'send'; id: number; urls: string[]; request: HttpRequest }
  | { type: 'wait'; ms: number }
  | { type: 'receive' }
  | { type: 'done' };

/** A transport failure the driver saw instead of an HTTP answer. */
export interface NetworkFailure {
  error: string;
}

/** The request that asks the service about `urls` at `endpoint` (each shell adds `Authorization`, never the core). */
export function checkRequest(endpoint: string, urls: string[]): HttpRequest {
  return { method: 'POST', url: endpoint, headers: { ...JSON_HEADERS }, body: JSON.stringify({ urls }) };
}
