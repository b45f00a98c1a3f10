// Sandbox config as a wire shape: the zod schema used by the CLI (`--config file.json`) and
// `POST /__sandbox/config`, so that a typo in a fault name fails loudly instead of being ignored.
import { z } from 'zod';
import { DEFAULT_CONFIG, type SandboxConfig } from './handler';

const count = z.number().int().nonnegative();
const rate = z.number().min(0).max(1);

const PlanSchema = z.strictObject({
  maxUrlsPerRequest: count.optional(),
  requestsPerMinute: count.optional(),
  urlsPerMinute: count.optional(),
  expired: z.boolean().optional(),
  monthlyCredits: count.optional(),
});

const FaultSchema = z.strictObject({
  lookupFailedRate: rate.optional(),
  serverErrorRate: rate.optional(),
  html502Rate: rate.optional(),
  latencyMs: z.tuple([count, count]).optional(),
  seed: z.number().int().optional(),
  retryAfter: z.enum(['seconds', 'date', 'none']).optional(),
  limitMessageWithNumber: z.boolean().optional(),
  shuffleData: z.boolean().optional(),
  domainSpelling: z.enum(['host', 'www', 'upper', 'mixed']).optional(),
  numericStrings: z.boolean().optional(),
  rateLimitHeaders: z.boolean().optional(),
  blockNetwork: z.boolean().optional(),
  echoKey: z.boolean().optional(),
  echoKeySpellings: z.boolean().optional(),
  noDataRate: rate.optional(),
});

const ConfigSchema = z.strictObject({
  $comment: z.string().optional(),
  keys: z.record(z.string().min(1), PlanSchema).optional(),
  faults: FaultSchema.optional(),
});

/**
 * Parses a config document (throws a readable Error when it is invalid). `keys` is merged over the
 * built-in keys when `mergeKeys` is set (the CLI); otherwise it replaces them, and defaults to them if absent.
 */
export function parseSandboxConfig(input: unknown, mergeKeys = false): SandboxConfig {
  const result = ConfigSchema.safeParse(input);
  if (!result.success) throw new Error(`invalid sandbox config: ${z.prettifyError(result.error)}`);
  const { keys, faults } = result.data;
  const merged = mergeKeys || !keys ? { ...DEFAULT_CONFIG.keys, ...keys } : keys;
  return faults ? { keys: merged, faults: faults as SandboxConfig['faults'] } : { keys: merged };
}
