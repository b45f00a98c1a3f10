// Every key the add-on stores under, in one place. All live in the user's own PropertiesService store (the key,
// the settings, the learned plan, the sidebar's job); fetched records live in the document cache for 6 hours.

/** UserProperties keys. The API key is stored here and nowhere else. */
export const USER_PROPERTY = {
  apiKey: 'dapa.apiKey',
  environment: 'dapa.environment',
  customBaseUrl: 'dapa.customBaseUrl',
  /** + sha256(base URL): the plan limits learned against that service with the current key. */
  planPrefix: 'dapa.plan.',
  /** + spreadsheet id: the sidebar's current or last job in that spreadsheet. */
  jobPrefix: 'dapa.job.',
} as const;

/** Cache keys: this prefix + sha256(base URL + domain key); never the API key. Values are one record as JSON. */
export const CACHE_PREFIX = 'dapa1:';

/** How long a fetched record stays cached: the most CacheService allows (6 hours). */
export const CACHE_SECONDS = 21_600;
