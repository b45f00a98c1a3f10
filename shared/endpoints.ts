// Where the DAPA checker API lives and how a request to it is shaped. Both surfaces read these constants;
// nothing else in the project spells a base address or the path.

/**
 * Base addresses of the service. The spec names them only `{base_url}` and `{staging_url}`; the values here are
 * reserved `.invalid` placeholders until the provider publishes them, so every surface also takes a custom base URL.
 */
export const BASE_URLS = {
  production: 'https://api.dapa-checker.invalid',
  staging: 'https://staging.dapa-checker.invalid',
} as const;

export type Environment = keyof typeof BASE_URLS | 'custom';

export const DAPA_PATH = '/api/user/dapa-checker';

/** Headers every request carries, except `Authorization`, which each shell adds from the user's stored key. */
export const JSON_HEADERS: Readonly<Record<string, string>> = {
  Accept: 'application/json',
  'Content-Type': 'application/json',
};

/** The full endpoint address for a base URL (a trailing slash or a pasted full endpoint path is tolerated). */
export function endpointUrl(baseUrl: string): string {
  let base = baseUrl.trim().replace(/\/+$/, '');
  if (base.endsWith(DAPA_PATH)) base = base.slice(0, -DAPA_PATH.length);
  return base + DAPA_PATH;
}

/** The base URL for an environment choice; `custom` takes the user's own address. */
export function baseUrlFor(environment: Environment, customUrl?: string): string {
  if (environment === 'custom') {
    const url = (customUrl ?? '').trim();
    if (!/^https?:\/\/[^\s/]+/i.test(url)) {
      throw new Error(
        'The custom base URL must start with http:// or https://, for example http://127.0.0.1:8787',
      );
    }
    return url.replace(/\/+$/, '');
  }
  return BASE_URLS[environment];
}
