// Sample mode: the add-on at work with no key and no request. =DAPA_SAMPLE(...) runs the same core as =DAPA (one
// outcome per cell, duplicates once, blanks and non-domains skipped) against an answerer inside the script, whose
// made-up metrics are shown as text ("SAMPLE 37") so that no cell can pass for, or be summed as, a real metric. It
// never calls UrlFetchApp, reads no key, and writes no cache, store, window or credit count.
import {
  CheckRun,
  type DomainRecord,
  hostOf,
  type HttpAnswer,
  type HttpRequest,
  runSync,
} from '../../../shared';
import {
  cellsOf,
  CUSTOM_FUNCTION_BUDGET_MS,
  type Metric,
  METRIC_HEADERS,
  parseHeaderFlag,
  parseMetrics,
  rowOf,
} from '../formula/dapa';
import { SAMPLE_PATH, SET_KEY_PATH } from '../messages';
import { allowedFor, now } from '../platform/gas';
import { activeSpreadsheet } from '../stores/session';
import { SAMPLE_SHEET } from '../stores/storage-keys';

/** Where the sample's requests would go: a name no network resolves, so nothing could ever be sent there. */
export const SAMPLE_BASE_URL = 'https://sample.dapa-checker.invalid';
/** What every made-up metric cell starts with. */
export const SAMPLE_MARK = 'SAMPLE';
/** The sheet "Try with sample data" writes (its own, rewritten each time). */
export { SAMPLE_SHEET };

/** A list as users keep one: full URLs, a re-spelled duplicate, a blank and an entry that is no domain. */
export const SAMPLE_URLS = [
  'https://www.wikipedia.org/',
  'github.com',
  'https://developer.mozilla.org/en-US/docs/Web',
  'GitHub.com/features',
  '',
  'not a domain',
  'https://www.w3.org/',
  'npmjs.com',
];

export const SAMPLE_NOTE =
  'SAMPLE DATA: made up by the add-on itself, not DAPA metrics. No request was sent and nothing was billed. ' +
  `For real metrics: ${SET_KEY_PATH} (the key of a paid DAPA plan), then =DAPA(A2:A9). ` +
  `Try it again: ${SAMPLE_PATH}.`;

/** A number from 0 to `span - 1` that a domain always gets (FNV-1a), so the sample repeats. */
function draw(domain: string, salt: string, span: number): number {
  let h = 0x811c9dc5;
  for (const ch of salt + domain) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h % span;
}

function sampleRecord(url: string): DomainRecord {
  const domain = hostOf(url).replace(/^www\./, '');
  return {
    domain,
    site_da: 1 + draw(domain, 'da', 99),
    site_pa: 1 + draw(domain, 'pa', 99),
    site_mr: draw(domain, 'mr', 100) / 10,
    spam_score: draw(domain, 'spam', 18),
  };
}

/** The answer the sample gives a request of the core: every URL processed, as the spec's envelope says. */
export function sampleAnswer(request: HttpRequest): HttpAnswer {
  const urls = (JSON.parse(request.body) as { urls: string[] }).urls;
  const data = urls.map(sampleRecord);
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      status: 200,
      message: 'Sample data (made up inside the add-on)',
      data,
      summary: { submitted: urls.length, processed: urls.length, skipped: 0 },
      skipped: [],
    }),
  };
}

type Cell = string | number;

function sampleCell(record: DomainRecord, metric: Metric): Cell {
  if (metric === 'domain') return record.domain;
  const value = { da: record.site_da, pa: record.site_pa, mr: record.site_mr, spam: record.spam_score }[
    metric
  ];
  return value === null || value === undefined ? '' : `${SAMPLE_MARK} ${value}`;
}

/**
 * Made-up DA, PA, MR and Spam Score for each URL, to try the add-on without a key: the same arguments as DAPA,
 * every value marked SAMPLE, no request, no credit.
 */
export function DAPA_SAMPLE(urls: unknown, metrics?: unknown, header?: unknown): Cell[][] {
  if (urls === undefined)
    throw new Error('DAPA_SAMPLE needs a cell or a range of URLs, for example =DAPA_SAMPLE(A2:A9).');
  const columns = parseMetrics(metrics);
  const run = new CheckRun(cellsOf(urls), {
    baseUrl: SAMPLE_BASE_URL,
    deadline: now() + CUSTOM_FUNCTION_BUDGET_MS,
    retries: 0,
  });
  const report = runSync(run, { send: sampleAnswer, sleep: () => undefined, now });
  const rows = report.outcomes.map((outcome) =>
    outcome.kind === 'record' ? columns.map((m) => sampleCell(outcome.record, m)) : rowOf(outcome, columns),
  );
  return parseHeaderFlag(header)
    ? [columns.map((m) => `${METRIC_HEADERS[m]} (${SAMPLE_MARK.toLowerCase()})`), ...rows]
    : rows;
}

/** The menu's "Try with sample data": a sheet of its own with sample URLs, =DAPA_SAMPLE beside them and a note. */
export function trySampleData(): void {
  allowedFor('sheet', 'Try with sample data');
  const spreadsheet = activeSpreadsheet();
  const sheet = spreadsheet.getSheetByName(SAMPLE_SHEET) ?? spreadsheet.insertSheet(SAMPLE_SHEET);
  sheet.getDataRange().clear();
  const last = SAMPLE_URLS.length + 1;
  sheet.getRange(`A1:A${last}`).setValues([['URL'], ...SAMPLE_URLS.map((url) => [url])]);
  sheet.getRange('B1').setFormula(`=DAPA_SAMPLE(A2:A${last}, "da,pa,mr,spam", TRUE)`);
  sheet.getRange(`A${last + 2}`).setValue(SAMPLE_NOTE);
  sheet.activate();
}
