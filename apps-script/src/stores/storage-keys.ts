// Every key the add-on stores under, in one place. The user's own PropertiesService store holds the key, the
// settings, the learned plan, the plan's recent sends, the sidebar's job and the background state (per spreadsheet,
// which is also the list of spreadsheets the dispatcher opens, and the user's one trigger); the spreadsheet's own
// developer metadata holds what belongs to the spreadsheet (retention, schedule, credits saved) and the output
// columns' marks; results live in the
// caches for 6 hours and in the hidden sheet STORE_SHEET for the retention (with the claims, such as the background
// step's lease), and the formulas' version slots in the hidden sheet VERSIONS_SHEET.

/** UserProperties keys. The API key is stored here and nowhere else. */
export const USER_PROPERTY = {
  apiKey: 'dapa.apiKey',
  /** A random salt of this user's, the key of every cache-key digest of a secret (account.ts). */
  digestSalt: 'dapa.digestSalt',
  environment: 'dapa.environment',
  customBaseUrl: 'dapa.customBaseUrl',
  /** + sha256(base URL): the plan limits learned against that service with the current key. */
  planPrefix: 'dapa.plan.',
  /** + sha256(base URL): when the last minute's requests went and how many URLs each processed. */
  windowPrefix: 'dapa.window.',
  /** + spreadsheet id: the sidebar's current or last job in that spreadsheet. */
  jobPrefix: 'dapa.job.',
  /** + spreadsheet id: which rows of that job ended for a reason that can change (a bitmap, see background-store.ts). */
  retryRowsPrefix: 'dapa.retry.',
  /**
   * + spreadsheet id: background checks there (on/off, when its next step is wanted, why it stopped). These keys
   * are the list of spreadsheets the background dispatcher opens by id.
   */
  backgroundPrefix: 'dapa.bg.',
  /** The monthly credit budget the user set (credits; absent: none). */
  creditBudget: 'dapa.creditBudget',
  /** + spreadsheet id: which kept results saved this user a credit there (results.ts). */
  savedPrefix: 'dapa.saved.',
  /** Credits billed this calendar month and what running checks hold (account.ts). */
  credits: 'dapa.credits',
  /** The user's one background trigger (its id, when it is due, hourly or not, runtime today, lateness, notes). */
  dispatcher: 'dapa.dispatcher',
} as const;

/**
 * The spreadsheet's keys (developer metadata of the spreadsheet, visible to this project only; DocumentProperties
 * in earlier versions): shared by everyone who uses the spreadsheet; never a key or a URL.
 */
export const DOCUMENT_PROPERTY = {
  /** Days a result is kept in the result store (default 30). */
  retentionDays: 'dapa.retentionDays',
  /**
   * Earlier versions' count of kept results reused after the 6-hour cache had let them go (read, no longer written:
   * each user's count is in their own properties now, USER_PROPERTY.savedPrefix).
   */
  savedCredits: 'dapa.savedCredits',
  /** The same earlier count from the dispatcher's turns, kept in the metadata (read, no longer written). */
  savedCreditsAway: 'dapa.savedCreditsAway',
  /** The scheduled refresh: what, how often, when next, where it stands. */
  schedule: 'dapa.schedule',
} as const;

/**
 * The key of our mark on each output column a sidebar check writes: developer metadata on the whole column (so it moves
 * with the column when columns are inserted or deleted, and stays through sorts): its place among the five and the
 * rows written, "0 1 600". About 20 characters a column and one mark a column (a new one replaces it): far within the
 * 30,000 characters a sheet's metadata may hold (storage.ts keeps it, job-run.ts says what it means).
 */
export const OUTPUT_MARK = 'dapa-output';

/**
 * The hidden sheet of kept results and claims, an append-only log of 4 columns (store-sheet.ts): batches of results
 * ('*' | service id | {"k":[keys],"r":[records]} | checked-at ms), results of earlier versions (domain key | service
 * id | record JSON | checked-at ms), claims (claimed-at ms | "claim:" name | holder | until ms).
 */
export const STORE_SHEET = '_dapa_results';

/** The visible sheet "Try with sample data" writes (sample.ts), and "Remove DAPA" deletes (remove-all.ts). */
export const SAMPLE_SHEET = 'DAPA sample';

/** The hidden sheet of the formulas' version slots: one column, a fixed number of rows (formulas.ts). */
export const VERSIONS_SHEET = '_dapa_versions';

/**
 * Cache keys: this prefix + the service's short id (12 characters of sha256(base URL)) + ':' + the domain key (a
 * sha256 of both when that is too long); never the API key. Values are one record as JSON.
 */
export const CACHE_PREFIX = 'dapa1:';

/** How long a fetched record stays cached: the most CacheService allows (6 hours). */
export const CACHE_SECONDS = 21_600;
