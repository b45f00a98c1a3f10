// The core's default English wording of outcomes: outcomes carry codes and data, and this turns them into a sentence
// that says what happened and what to do. A shell uses it as it is or words its own from the same fields.
import { MAX_HOST_LENGTH, MAX_LABEL_LENGTH } from './inputs';
import type { Fatal, InputProblem, Outcome, OutcomeDetail } from './outcome';

const ASK = 'Enter a domain or URL with a domain extension, such as example.com.';

const INPUT: Record<InputProblem, string> = {
  not_text: '',
  too_long: '',
  no_domain: 'has no domain',
  host_too_long: `has a domain longer than ${MAX_HOST_LENGTH} characters`,
  no_extension: 'has no domain extension (such as .com)',
  empty_label: 'has an empty part between dots',
  label_too_long: `has a part longer than ${MAX_LABEL_LENGTH} characters`,
  bad_characters: 'contains characters a domain cannot have',
  bad_extension: 'does not end in a valid domain extension (such as .com)',
};

/** "the number 5", "a date", ... from the kind a rejected non-text value was given. */
function valueWords(kind = ''): string {
  const [type, ...rest] = kind.split(' ');
  if (type === 'date' || type === 'list') return `a ${type}`;
  if (type === 'number') return `the number ${rest.join(' ')}`;
  if (type === 'boolean') return `the value ${rest.join(' ')}`;
  return `a value of type ${kind}`;
}

function inputWords(problem: InputProblem, value = ''): string {
  if (problem === 'not_text') return `Not a text value (got ${valueWords(value)}). ${ASK}`;
  if (problem === 'too_long') return `Too long to be a URL (${value} characters). ${ASK}`;
  return `"${value}" ${INPUT[problem]}. ${ASK}`;
}

export function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.ceil(ms / 1000)} s`;
}

/** A 403 that is not the spec's auth answer: the service (its nginx) refused this server's network. */
export function networkBlockedMessage(status = 403): string {
  return (
    `The DAPA service refused requests from this server's network (HTTP ${status}): not your API key. ` +
    "It blocks some datacenters, such as Google's (where Apps Script runs) and hosted n8n's: ask DAPA checker " +
    'support to allow them, or use a self-hosted n8n.'
  );
}

function skipWords(reason: string, serverText: string | undefined, detail: OutcomeDetail = {}): string {
  if (detail.input) return inputWords(detail.input, detail.value);
  if (reason === 'rate_limit_reached' && detail.why === 'waiting_off')
    return `Not sent: the plan's per-minute limit was reached and waiting for it is off (it frees in ${seconds(detail.waitMs ?? 0)}). Run again later.`;
  if (reason === 'rate_limit_reached' && detail.why === 'request_limit')
    return "The plan's request rate limit was reached (429 Too Many Requests). Run again later.";
  if (serverText) return serverText;
  switch (reason) {
    case 'invalid_url_format':
      return 'Not a valid URL: enter a domain with an extension, such as example.com.';
    case 'empty_url':
      return 'Empty: nothing to check.';
    case 'lookup_failed':
      return 'No data could be fetched this time. Run again later.';
    case 'rate_limit_reached':
      return "The plan's per-minute URL limit was reached. Run again later.";
    case 'credit_budget':
      return `Not checked: the credit budget (${detail.budget ?? 0}) is spent. Raise it, or run again when it allows.`;
    default:
      return `Skipped by the service (${reason}).`;
  }
}

function unfinishedWords(detail: OutcomeDetail = {}): string {
  const wait = detail.waitMs === undefined ? '' : seconds(detail.waitMs);
  switch (detail.why) {
    case 'deadline':
      return wait
        ? `Not checked yet: the next request could only go in ${wait}, after this run's time limit. Run again to finish.`
        : "Not checked yet: this run's time limit was reached. Run again to finish.";
    case 'wait_budget':
      return `Not checked yet: waiting ${wait} more for the plan's rate limit would pass the maximum total wait. Run again to finish.`;
    default:
      return 'Not checked yet: the run has not finished. Run again to finish.';
  }
}

function errorWords(code: string, serverText: string | undefined, detail: OutcomeDetail = {}): string {
  switch (code) {
    case 'bad_key':
      return `Incorrect API key: the DAPA service answered "${serverText ?? ''}". Check the API key in your settings.`;
    case 'not_premium':
      return `Your plan does not allow this request, has expired or has spent its monthly credits: the DAPA service answered "${serverText ?? ''}". Renew or upgrade the plan, or use another key.`;
    case 'network_blocked':
      return networkBlockedMessage(detail.status);
    case 'validation':
      return `The DAPA service rejected the request as invalid (${serverText || 'Validation Error'}). Check that the base URL points at the DAPA checker API.`;
    case 'not_found':
      return `The base URL does not serve the DAPA checker (HTTP ${detail.status ?? 404} for POST /api/user/dapa-checker). Check the base URL in your settings.`;
    case 'plan_limit':
      return 'The plan accepts no URL per request (422 Limit Exceeded for a single URL). Check the plan.';
    case 'server_error':
      return `The DAPA service kept failing (${detail.cause ?? 'no answer'}, ${detail.failures ?? 0} times in a row). Try again later.`;
    case 'unmatched': {
      const seen = (detail.seen ?? []).map((d) => `"${d}"`).join(', ') || 'records without a domain';
      return `The service answered with data (${seen}) that could not be matched to this domain; it was not sent again so that it is not billed twice.`;
    }
    case 'missing':
      return 'The service answered without a result or a reason for this domain, several times. Try again later.';
    case 'unfinished':
      return unfinishedWords(detail);
    case 'cancelled':
      return 'Not checked: the run was cancelled.';
    default:
      return `Not checked (${code}).`;
  }
}

/** The core's default sentence for an outcome (a record has none) or for the reason a run stopped. */
export function outcomeText(outcome: Outcome | Fatal): string {
  if (!('kind' in outcome)) return errorWords(outcome.code, outcome.serverText, outcome.detail);
  if (outcome.kind === 'record') return '';
  if (outcome.kind === 'skip') return skipWords(outcome.reason, outcome.serverText, outcome.detail);
  return errorWords(outcome.code, outcome.serverText, outcome.detail);
}
