// The manifest's URL allowlist (`urlFetchWhitelist`) as Google states it, for the stand-in's UrlFetchApp and for the
// test that holds apps-script/appsscript.json to Google's rules. Source: developers.google.com/apps-script/manifest/
// allowlist-url ("This field is optional when you install a test deployment, but is required when you create a
// versioned deployment"). What a prefix must be, in Google's words:
//   "Each prefix must be a valid URL." "Each prefix must use https://, not http://." "Each prefix must have a full
//   domain." "Each prefix must have a non-empty path. For example, https://www.google.com/ is valid but
//   https://www.google.com is not." "You can use a single wildcard (*) as a leading prefix to match subdomains."
// How a URL matches: "Path matching is case-sensitive." "If the prefix is identical to the URL, it is a match."
// "If the URL is the same or a child of the prefix, it is a match." (the prefix https://example.com/foo matches
// .../foo, .../foo/, .../foo/bar, .../foo?bar).
// The refusal's text is the one Apps Script users report ("Exception: Request to https://api3.binance.com/api/v3/
// ticker/price? failed because the URL has not been whitelisted in the script manifest.", issue #82 of
// diegomanuel/binance-to-google-sheets; the same words in grahamearley/FirestoreGoogleAppsScript#135).

/** Why `prefix` breaks Google's rules for an allowlist prefix, or undefined when it keeps them. */
export function prefixProblem(prefix: string): string | undefined {
  if (!/^https:\/\//i.test(prefix)) return `"${prefix}" does not use https://`;
  const rest = prefix.slice('https://'.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return `"${prefix}" has no path (end the domain with "/" at least)`;
  const host = rest.slice(0, slash);
  const bare = host.startsWith('*.') ? host.slice(2) : host;
  if (host.includes('*') && !host.startsWith('*.')) return `"${prefix}" has a wildcard that is not leading`;
  if (bare.includes('*')) return `"${prefix}" has more than one wildcard`;
  // A full domain: labels of letters, digits and hyphens, at least two, the last not numeric (no bare host name).
  const labels = bare.replace(/:\d+$/, '').split('.');
  const fullDomain =
    labels.length >= 2 &&
    labels.every((l) => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/i.test(l)) &&
    !/^\d+$/.test(labels[labels.length - 1]);
  if (!fullDomain) return `"${prefix}" has no full domain`;
  try {
    new URL(prefix.replace('*.', 'wildcard.'));
  } catch {
    return `"${prefix}" is not a valid URL`;
  }
  return undefined;
}

/** Whether `url` is the same as `prefix` or a child of it (scheme and host case-insensitive, path case-sensitive). */
export function matchesPrefix(url: string, prefix: string): boolean {
  const split = (text: string) => {
    const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/i.exec(text);
    return m ? { scheme: m[1].toLowerCase(), host: m[2].toLowerCase(), rest: m[3] } : undefined;
  };
  const u = split(url);
  const p = split(prefix);
  if (!u || !p || u.scheme !== p.scheme) return false;
  const hostMatches = p.host.startsWith('*.')
    ? u.host.endsWith(p.host.slice(1)) && u.host.length > p.host.length - 1
    : u.host === p.host;
  if (!hostMatches || !u.rest.startsWith(p.rest)) return false;
  if (p.rest.endsWith('/')) return true;
  const after = u.rest.slice(p.rest.length);
  return after === '' || /^[/?#]/.test(after);
}

/** Google's refusal of a fetch outside the allowlist, or undefined when it is allowed (or nothing is enforced). */
export function allowlistRefusal(url: string, allowlist: readonly string[] | undefined): string | undefined {
  if (allowlist === undefined) return undefined;
  if (allowlist.some((prefix) => matchesPrefix(url, prefix))) return undefined;
  return `Request to ${url} failed because the URL has not been whitelisted in the script manifest.`;
}

/** The urlFetchWhitelist of a manifest's text; undefined when it has none. */
export function manifestAllowlist(manifestText: string): string[] | undefined {
  const manifest = JSON.parse(manifestText) as { urlFetchWhitelist?: unknown };
  return Array.isArray(manifest.urlFetchWhitelist) ? manifest.urlFetchWhitelist.map(String) : undefined;
}
