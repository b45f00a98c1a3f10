// The core's public surface: everything a shell (Apps Script, n8n, Node) needs, and nothing that does I/O.
export { BASE_URLS, DAPA_PATH, JSON_HEADERS, baseUrlFor, endpointUrl, type Environment } from './endpoints';
export { toEntry, keyOfDomain, hostOf, type Entry } from './inputs';
export { CheckRun, DEFAULT_BATCH_SIZE } from './run';
export type { Step, HttpRequest, NetworkFailure } from './step';
export type { RunOptions } from './run-options';
export { matchRecords } from './pairing';
export { runSync, runSyncAll, runAsync, type SyncIo, type SyncAllIo, type AsyncIo } from './drivers';
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
export type {
  Outcome,
  OutcomeDetail,
  Fatal,
  InputProblem,
  StopCause,
  Report,
  Totals,
  Learned,
  ErrorCode,
  SkipReason,
} from './outcome';
export {
  PLAN_MEMORY_MS,
  WINDOW_MS,
  roomIn,
  type Limit,
  type Pace,
  type PlanLimits,
  type Room,
} from './window';
export { mergeWindows, restoreWindow, type WindowSnapshot } from './window-snapshot';
export type { Hold } from './holds';
export type { ProbeCase, ProbeDecision, ProbeReason } from './probe';
export { outcomeText, networkBlockedMessage, seconds } from './wording';
