// Input normalization: what each cell or item becomes before anything is sent. Blanks, non-text values and
// entries that cannot be a domain are decided here, locally; everything else gets a normalized domain key so that
// spellings of one domain (`Example.com`, ` HTTPS://www.example.com/a?b `, `example.com/`, `bücher.de` and
// `xn--bcher-kva.de`) cost one query. Internationalized domains are sent in their `xn--` form.
import type { InputProblem } from './outcome';
import { toAsciiHost } from './punycode';

/** What one input position is, before any request. */
export type Entry =
  | { kind: 'blank' }
  | { kind: 'rejected'; reason: 'invalid_url_format'; problem: InputProblem; value: string }
  | { kind: 'candidate'; key: string };

/** Longest entry worth sending: a URL this long is not a domain lookup. */
export const MAX_ENTRY_LENGTH = 2048;
export const MAX_HOST_LENGTH = 253;
export const MAX_LABEL_LENGTH = 63;

// Hosts are letters (any script, for IDNs), digits, hyphens and underscores, separated by dots.
const LABEL = /^[\p{L}\p{N}\p{M}_](?:[\p{L}\p{N}\p{M}_-]*[\p{L}\p{N}\p{M}_])?$/u;
const TLD = /^(?:\p{L}[\p{L}\p{M}]+|xn--[a-z0-9-]+)$/u;
/**
 * A host that hostOf, toAsciiHost and hostProblem leave as it is and accept: lowercase ASCII labels of at most 63
 * characters (LABEL's letters, digits, hyphens inside and underscores), and an extension TLD accepts.
 */
const PLAIN_HOST =
  /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{0,57}[a-z0-9])$/;

/** What a non-text value is, for the shells' wording: 'date', 'list', 'number 5', 'boolean TRUE', 'object'. */
function kindOf(value: unknown): string {
  if (value instanceof Date) return 'date';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'number') return `number ${String(value)}`;
  if (typeof value === 'boolean') return `boolean ${String(value).toUpperCase()}`;
  return typeof value;
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
function hostProblem(host: string): InputProblem | undefined {
  if (host === '') return 'no_domain';
  if (host.length > MAX_HOST_LENGTH) return 'host_too_long';
  const labels = host.split('.');
  if (labels.length < 2) return 'no_extension';
  for (const label of labels) {
    if (label.length === 0) return 'empty_label';
    if (label.length > MAX_LABEL_LENGTH) return 'label_too_long';
    if (!LABEL.test(label)) return 'bad_characters';
  }
  if (!TLD.test(labels[labels.length - 1])) return 'bad_extension';
  return undefined;
}

/** Classifies one input value. Never throws, whatever the value. */
export function toEntry(value: unknown): Entry {
  if (value === null || value === undefined || value === '') return { kind: 'blank' };
  if (typeof value !== 'string') {
    return { kind: 'rejected', reason: 'invalid_url_format', problem: 'not_text', value: kindOf(value) };
  }
  const text = value.trim();
  if (text === '') return { kind: 'blank' };
  if (text.length > MAX_ENTRY_LENGTH) {
    return {
      kind: 'rejected',
      reason: 'invalid_url_format',
      problem: 'too_long',
      value: String(text.length),
    };
  }
  // The usual spelling, a plain lowercase ASCII host, is already what the steps below make of it: its key at once
  // (a 50,000-row range is read this way at every look).
  if (text.length <= MAX_HOST_LENGTH && PLAIN_HOST.test(text))
    return { kind: 'candidate', key: keyOfHost(text) };
  const host = toAsciiHost(hostOf(text));
  const problem = hostProblem(host);
  if (problem) return { kind: 'rejected', reason: 'invalid_url_format', problem, value: clip(text) };
  return { kind: 'candidate', key: keyOfHost(host) };
}

/** The key a domain spelled by the server maps to (the same normalization as the inputs). */
export function keyOfDomain(domain: string): string {
  return keyOfHost(toAsciiHost(hostOf(domain)));
}

function clip(text: string): string {
  return text.length > 60 ? text.slice(0, 57) + '...' : text;
}
