// The core's public surface: everything a shell (Apps Script, n8n, Node) needs, and nothing that does I/O.
export { BASE_URLS, DAPA_PATH, JSON_HEADERS, baseUrlFor, endpointUrl, type Environment } from './endpoints';
export { toEntry, keyOfDomain, hostOf, type Entry } from './inputs';
export {
  CheckRun,
  DEFAULT_BATCH_SIZE,
  matchRecords,
  type RunOptions,
  type Step,
  type HttpRequest,
  type NetworkFailure,
} from './run';
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
  mergeWindows,
  restoreWindow,
  roomIn,
  type Hold,
  type Limit,
  type Pace,
  type ProbeCase,
  type ProbeDecision,
  type ProbeReason,
  type PlanLimits,
  type Room,
  type WindowSnapshot,
} from './window';
export { outcomeText, networkBlockedMessage, seconds } from './wording';
