// The core's public surface: everything a shell (Apps Script, n8n, Node) needs, and nothing that does I/O.
export { BASE_URLS, DAPA_PATH, JSON_HEADERS, baseUrlFor, endpointUrl, type Environment } from './endpoints';
export { toEntry, keyOfDomain, hostOf, type Entry } from './inputs';
export {
  CheckRun,
  DEFAULT_BATCH_SIZE,
  networkBlockedMessage,
  matchRecords,
  type RunOptions,
  type Step,
  type HttpRequest,
  type NetworkFailure,
} from './run';
export { runSync, runAsync, type SyncIo, type AsyncIo } from './drivers';
export { keyProbeRequest, readKeyProbe, type KeyProbeResult } from './keyprobe';
export {
  classify,
  parseRetryAfter,
  readServerRate,
  METRICS,
  type Metric,
  type ServerRate,
  type DomainRecord,
  type HttpAnswer,
  type Answer,
  type SkippedEntry,
} from './wire';
export type { Outcome, Report, Totals, Learned, ErrorCode, SkipReason } from './outcome';
export type { Pace } from './pacer';
