// Input normalization: what each cell or item becomes before anything is sent. Blanks, non-text values and
// entries that cannot be a domain are decided here, locally; everything else gets a normalized domain key so that
// spellings of one domain (`Example.com`, ` HTTPS://www.example.com/a?b `, `example.com/`, `bücher.de` and
// `xn--bcher-kva.de`) cost one query. Internationalized domains are sent in their `xn--` form.
import { toAsciiHost } from './punycode';

/** What one input position is, before any request. */
export type Entry =
  | { kind: 'blank' }
  | { kind: 'rejected'; reason: 'invalid_url_format' | 'empty_url'; message: string }
  | { kind: 'candidate'; key: string };

/** Longest entry worth sending: a URL this long is not a domain lookup. */
export const MAX_ENTRY_LENGTH = 2048;
const MAX_HOST_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

// Hosts are letters (any script, for IDNs), digits, hyphens and underscores, separated by dots.
const LABEL = /^[\p{L}\p{N}\p{M}_](?:[\p{L}\p{N}\p{M}_-]*[\p{L}\p{N}\p{M}_])?$/u;
const TLD = /^(?:\p{L}[\p{L}\p{M}]+|xn--[a-z0-9-]+)$/u;

function describe(value: unknown): string {
  if (value instanceof Date) return 'a date';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return `the number ${String(value)}`;
  if (typeof value === 'boolean') return `the value ${String(value).toUpperCase()}`;
  return `a value of type ${typeof value}`;
}

/** Extracts the host part of a URL or domain, lowercased; no `URL` class (Apps Script has none). */
export function hostOf(text: string): string {
  let s = text.trim().toLowerCase();
  s = s.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^\/\//, '');
  s = s.split(/[/?#\\]/, 1)[0];
  const at = s.lastIndexOf('@');
  if (at >= 0) s = s.slice(at + 1);
  s = s.replace(/:\d*$/, '').replace(/\.+$/, '');
  return s;
}

/** The de-duplication key of a host: lowercased, without a leading `www.` (when a domain remains). */
export function keyOfHost(host: string): string {
  return host.startsWith('www.') && host.indexOf('.', 4) > 0 ? host.slice(4) : host;
}

/** Why a host cannot be a domain with an extension, or undefined when it can. */
function hostProblem(host: string): string | undefined {
  if (host === '') return 'has no domain';
  if (host.length > MAX_HOST_LENGTH) return `has a domain longer than ${MAX_HOST_LENGTH} characters`;
  const labels = host.split('.');
  if (labels.length < 2) return 'has no domain extension (such as .com)';
  for (const label of labels) {
    if (label.length === 0) return 'has an empty part between dots';
    if (label.length > MAX_LABEL_LENGTH) return `has a part longer than ${MAX_LABEL_LENGTH} characters`;
    if (!LABEL.test(label)) return 'contains characters a domain cannot have';
  }
  if (!TLD.test(labels[labels.length - 1])) return 'does not end in a valid domain extension (such as .com)';
  return undefined;
}

const ASK = 'Enter a domain or URL with a domain extension, such as example.com.';

/** Classifies one input value. Never throws, whatever the value. */
export function toEntry(value: unknown): Entry {
  if (value === null || value === undefined || value === '') return { kind: 'blank' };
  if (typeof value !== 'string') {
    return {
      kind: 'rejected',
      reason: 'invalid_url_format',
      message: `Not a text value (got ${describe(value)}). ${ASK}`,
    };
  }
  const text = value.trim();
  if (text === '') return { kind: 'blank' };
  if (text.length > MAX_ENTRY_LENGTH) {
    return {
      kind: 'rejected',
      reason: 'invalid_url_format',
      message: `Too long to be a URL (${text.length} characters). ${ASK}`,
    };
  }
  const host = toAsciiHost(hostOf(text));
  const problem = hostProblem(host);
  if (problem)
    return { kind: 'rejected', reason: 'invalid_url_format', message: `"${clip(text)}" ${problem}. ${ASK}` };
  return { kind: 'candidate', key: keyOfHost(host) };
}

/** The key a domain spelled by the server maps to (the same normalization as the inputs). */
export function keyOfDomain(domain: string): string {
  return keyOfHost(toAsciiHost(hostOf(domain)));
}

function clip(text: string): string {
  return text.length > 60 ? text.slice(0, 57) + '...' : text;
}
