// The =DAPA(urls, metrics, header) custom function: one check per range (duplicates sent once, blanks and
// non-text never leave the sheet), cached records first, and a deadline well inside the 30-second limit.
import { type DomainRecord, type Fatal, type Outcome, toEntry } from '../../../shared';
import { checkCells, SPENT_LATELY_MS } from './cell-check';
import { dailyLimitOf, now } from '../platform/gas';
import {
  currentSpreadsheet,
  dailyLimitMet,
  idOrUndefined,
  noteDailyLimit,
  tellDailyLimitTo,
} from '../stores/session';
import { lockWaitsEndBy } from '../stores/storage';
import { goesOnForCells, limitMetLately, noteLimitedForTheDay } from '../stores/background-store';
import {
  BUDGET_CELL,
  BUDGET_IN_BACKGROUND,
  dailyLimitCell,
  fetchRefused,
  formulaError,
  UNFINISHED_CELL,
  UNFINISHED_IN_BACKGROUND,
} from '../messages';
import { formulaSettings, requireApiKey } from '../stores/account';
import { readFormulaCopies } from '../stores/books';

/**
 * A custom function has 30 seconds in all, counted from before its code runs (loading the script is in them, and
 * Apps Script does not say when the execution began): the run stops by 23 s and never starts a request it cannot
 * finish.
 */
export const CUSTOM_FUNCTION_BUDGET_MS = 23_000;
/** No lock is waited for past this (the answer still has to be worded and returned within the 30 seconds). */
const LOCK_WAITS_END_MS = 25_000;

export type Metric = 'da' | 'pa' | 'mr' | 'spam' | 'domain';
type Cell = string | number;

const DEFAULT_METRICS: Metric[] = ['da', 'pa', 'mr', 'spam'];
const METRIC_NAMES: Record<string, Metric> = {
  da: 'da',
  pa: 'pa',
  mr: 'mr',
  spam: 'spam',
  spamscore: 'spam',
  spam_score: 'spam',
  ss: 'spam',
  domain: 'domain',
};
export const METRIC_HEADERS: Record<Metric, string> = {
  da: 'DA',
  pa: 'PA',
  mr: 'MR',
  spam: 'Spam Score',
  domain: 'Domain',
};

/** The cells of a range argument, row by row; a single cell is a one-cell range. */
export function cellsOf(urls: unknown): unknown[] {
  if (!Array.isArray(urls)) return [urls];
  const cells: unknown[] = [];
  for (const row of urls) {
    if (Array.isArray(row)) for (const cell of row) cells.push(cell);
    else cells.push(row);
  }
  return cells;
}

/** Parses the optional `metrics` argument ("da,pa", "spam da", a range of names); throws on an unknown name. */
export function parseMetrics(metrics: unknown): Metric[] {
  const parts = cellsOf(metrics)
    .filter((cell) => cell !== '' && cell !== null && cell !== undefined)
    .flatMap((cell) => String(cell).split(/[,;\s]+/))
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (parts.length === 0) return DEFAULT_METRICS.slice();
  return parts.map((name) => {
    const metric = METRIC_NAMES[name] ?? METRIC_NAMES[name.replace(/[\s-]/g, '')];
    if (!metric) {
      throw new Error(
        `Unknown metric "${name.slice(0, 40)}" in DAPA's second argument: use da, pa, mr, spam or domain, separated by commas (for example "da,pa").`,
      );
    }
    return metric;
  });
}

/** TRUE, "TRUE", 1 or "yes" add a header row; blank or FALSE do not. */
export function parseHeaderFlag(header: unknown): boolean {
  if (typeof header === 'boolean') return header;
  if (typeof header === 'number') return header !== 0;
  if (typeof header === 'string') return /^(true|yes|1)$/i.test(header.trim());
  return false;
}

/** The record's field each metric shows. */
const FIELD: Record<Metric, 'site_da' | 'site_pa' | 'site_mr' | 'spam_score' | 'domain'> = {
  da: 'site_da',
  pa: 'site_pa',
  mr: 'site_mr',
  spam: 'spam_score',
  domain: 'domain',
};

function metricValue(record: DomainRecord, metric: Metric): Cell {
  return record[FIELD[metric]] ?? '';
}

/** The row a cell's outcome shows: metrics for a record, the reason code first for anything else. */
export function rowOf(
  outcome: Outcome,
  metrics: readonly Metric[],
  unfinished = UNFINISHED_CELL,
  budget = BUDGET_CELL,
): Cell[] {
  const blankRow = (): Cell[] => metrics.map(() => '');
  if (outcome.kind === 'record') return metrics.map((m) => metricValue(outcome.record, m));
  const row = blankRow();
  if (outcome.kind === 'skip') {
    if (outcome.blank) return row;
    row[0] = outcome.reason === 'credit_budget' ? budget : outcome.reason;
  } else {
    row[0] = outcome.code === 'unfinished' ? unfinished : outcome.code;
  }
  return row;
}

/** The error a whole formula shows when no row can be checked: wrong key, expired plan, wrong base URL. */
function fatalError(fatal: Fatal | undefined): Error | undefined {
  return fatal && fatal.code !== 'server_error' ? new Error(formulaError(fatal)) : undefined;
}

/**
 * Domain Authority, Page Authority, MR and Spam Score for each URL. `urls`: a cell or a range (one result row per
 * cell, row by row). `metrics`: optional comma list of da, pa, mr, spam, domain. `header`: TRUE adds a header row.
 */
export function DAPA(urls: unknown, metrics?: unknown, header?: unknown): Cell[][] {
  const startedAt = now();
  if (urls === undefined) {
    throw new Error('DAPA needs a cell or a range of URLs, for example =DAPA(A2:A50).');
  }
  const columns = parseMetrics(metrics);
  const withHeader = parseHeaderFlag(header);
  const cells = cellsOf(urls);
  let rows: Cell[][];
  // Blank cells only (a formula dragged past the list): blank rows at once, without a store, cache or service call.
  if (cells.every((cell) => toEntry(cell).kind === 'blank'))
    rows = cells.map(() => columns.map((): Cell => ''));
  else rows = rowsOrDailyLimit(cells, columns, startedAt);
  return withHeader ? [columns.map((m) => METRIC_HEADERS[m]), ...rows] : rows;
}

/** The checked rows of a formula's cells, or, when Google refused a call for the day, that refusal in every row. */
function rowsOrDailyLimit(cells: unknown[], columns: Metric[], startedAt: number): Cell[][] {
  // Google's refusal for the day, the first time any call of this execution meets it (noteDailyLimit), is noted for
  // the cells beside this one at once: one note an execution, whoever met it.
  tellDailyLimitTo(noteLimitedForTheDay);
  try {
    return checkedRows(cells, columns, startedAt);
  } catch (error) {
    // Google refused a call for the day (its quota per account): every row says so, in the project's words.
    const limit = noteDailyLimit(error);
    if (!limit) throw error;
    const text = dailyLimitCell(limit);
    return cells.map((cell) => {
      const row: Cell[] = columns.map(() => '');
      if (cell !== '' && cell !== null && cell !== undefined) row[0] = text;
      return row;
    });
  } finally {
    tellDailyLimitTo(undefined);
  }
}

/** The rows of a formula's cells, checked (throws what the whole formula shows). */
function checkedRows(cells: unknown[], columns: Metric[], startedAt: number): Cell[][] {
  let key: string | undefined;
  let keyError: unknown;
  const apiKey = (): string => {
    try {
      return (key ??= requireApiKey());
    } catch (error) {
      keyError ??= error;
      throw error;
    }
  };
  readFormulaCopies();
  const settings = formulaSettings();
  const baseUrl = settings.baseUrl;
  lockWaitsEndBy(startedAt + LOCK_WAITS_END_MS, () => limitMetLately(SPENT_LATELY_MS));
  let answer;
  try {
    answer = checkCells(cells, {
      apiKey,
      hasKey: settings.hasKey,
      budget: settings.budget,
      baseUrl,
      startedAt,
      deadline: startedAt + CUSTOM_FUNCTION_BUDGET_MS,
    });
  } finally {
    lockWaitsEndBy(undefined);
  }
  // No key to send with (a cell whose answer is cached needs none): the whole formula says where to set it.
  if (keyError !== undefined && !dailyLimitOf(keyError)) throw keyError;
  if (answer.refused) throw new Error(fetchRefused());
  const error = fatalError(answer.fatal);
  if (error) throw error;
  let [unfinished, budget] = [UNFINISHED_CELL, BUDGET_CELL];
  const waiting = answer.outcomes.some(
    (o) =>
      (o.kind === 'error' && o.code === 'unfinished') || (o.kind === 'skip' && o.reason === 'credit_budget'),
  );
  const met = dailyLimitMet();
  const limit = waiting ? (met ?? limitMetLately(SPENT_LATELY_MS)) : undefined;
  if (limit) unfinished = dailyLimitCell(limit);
  else if (waiting) {
    const id = idOrUndefined(currentSpreadsheet());
    if (id && goesOnForCells(id)) [unfinished, budget] = [UNFINISHED_IN_BACKGROUND, BUDGET_IN_BACKGROUND];
  }
  return answer.outcomes.map((outcome) => rowOf(outcome, columns, unfinished, budget));
}
