// Where the DAPA checker API lives and how a request to it is shaped. Both surfaces read these constants;
// nothing else in the project spells a base address or the path.

/**
 * The service's public address (the spec's `{base_url}`). No staging address is public, so `staging` is an
 * environment whose address the user types, like `custom`; nothing here invents a host.
 */
export const BASE_URLS = {
  production: 'https://www.dapachecker.org',
} as const;

export type Environment = 'production' | 'staging' | 'custom';

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

/** The base URL for an environment choice; `staging` and `custom` take the address the user typed. */
export function baseUrlFor(environment: Environment, typedUrl?: string): string {
  if (environment === 'production') return BASE_URLS.production;
  const url = (typedUrl ?? '').trim();
  if (!/^https?:\/\/[^\s/]+/i.test(url)) {
    throw new Error(
      `The ${environment} base URL must start with http:// or https://, for example ${
        environment === 'staging' ? 'the staging address your provider gave you' : 'http://127.0.0.1:8787'
      }`,
    );
  }
  return url.replace(/\/+$/, '');
}
