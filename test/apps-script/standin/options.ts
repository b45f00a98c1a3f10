// The options of loadAppsScript (test/apps-script/harness.ts): what the stand-in models where Google is silent or
// several readings exist, each with its default; standin/README.md has the tables and Google's words behind them.
import fs from 'node:fs';
import path from 'node:path';
import type { ClockMode } from '../../sandbox/virtual';
import { manifestAllowlist } from './allowlist';
import type { CacheEviction } from './cache';
import type { QuotaReset } from './daily-quota';
import { CACHE_MAX_EXPIRATION_S } from './limits';
import { KNOWN_SCOPES, manifestScopes, ScopeTable } from './scopes';
import type { InstallAs, TriggerRecord } from './script-app';
import type { World } from './world';

export interface LoadOptions {
  /** 'real' (default): Utilities.sleep waits. 'virtual': it moves the clock at once (fetches still take real time). */
  clock?: ClockMode;
  /** The spreadsheet's owner: custom functions use this user's properties. Default owner@example.com. */
  owner?: string;
  /** Who runs run() calls. Default: the owner. */
  user?: string;
  /** Where Code.js and the .html files are. Default apps-script/dist. */
  projectDir?: string;
  /** Script source to load instead of Code.js (to test the stand-in itself). */
  code?: string;
  /**
   * Virtual clock only: stand-in milliseconds each fetch takes on top of its real time (a slow network): a number, or
   * a function drawn per request (`uniformLatency(seed, 300, 900)` of test/sandbox/virtual.ts; fetchAll takes the
   * slowest of its requests).
   */
  virtualLatencyMs?: number | (() => number);
  /** Virtual clock only: stand-in ms each service call takes (Apps Script's per-call overhead). Default 0. */
  serviceCallMs?: number;
  /**
   * How late a time-driven trigger fires after it is due (ms; a number or a function per firing). Default: varying
   * uniformly between 0 and 60 s, seeded (`triggerLatenessSeed`), so a run repeats exactly.
   */
  triggerDelayMs?: number | ((trigger: TriggerRecord) => number);
  /** Seed of the default varying lateness (default 1). */
  triggerLatenessSeed?: number;
  /**
   * 'script' (default): bound to the spreadsheet (clasp or copy-paste), ScriptApp.getInstallationSource() is NONE.
   * 'addon' (WEB_STORE_ADD_ON) or 'domain-addon' (APPS_MARKETPLACE_DOMAIN_ADD_ON): an Editor add-on, with Google's
   * add-on trigger rules (one trigger of each type per user per document, nothing more often than hourly).
   */
  installAs?: InstallAs;
  /**
   * Add-on only, not documented by Google: may a one-off after()/at() be due in under an hour? 'refused' (default)
   * throws the recurrence error; 'allowed' creates it (the one-trigger-per-type rule still applies).
   */
  addOnShortAfter?: 'allowed' | 'refused';
  /**
   * "Sheets keeps a custom function's result for identical arguments": a formula written again with the same text
   * (setFormula with the identical text, clear and write back) while its arguments read the same values shows its
   * last result without running. A change of text or of a value it reads still recalculates. Default false.
   */
  keepsIdenticalResults?: boolean;
  /**
   * Time-driven triggers that come due while another of the user's executions runs fire beside it (Google: "Simultaneous
   * executions per user: 30"; nothing waits for a running trigger), instead of after it (the default, simpler to read
   * in a test: one trigger's execution at a time).
   */
  overlappingTriggers?: boolean;
  /** The daily trigger runtime quota: 'consumer' (90 min, default) or 'workspace' (6 h). */
  account?: 'consumer' | 'workspace';
  /** A daily trigger runtime quota of this many ms instead (to test what happens when it runs out). */
  triggerQuotaMs?: number;
  /**
   * When a user's daily quotas (Properties calls, URL fetches, trigger runtime) come back: `'first-request'` (default,
   * Google's quotas page: "Quotas are per user and reset 24 hours after the first request") or `'utc-day'` (the
   * other reading users report: at a fixed time of day, here midnight UTC). Set before the first use.
   */
  quotaReset?: QuotaReset;
  /**
   * The scopes the project declares, instead of the manifest's oauthScopes (appsscript.json beside Code.js; a
   * manifest without oauthScopes declares every scope the stand-in knows, as Apps Script detects them).
   */
  oauthScopes?: string[];
  /**
   * What the owner and every user granted at first (granular consent); default: every declared scope. Change it
   * per user with gas.grantScopes / gas.revokeScopes.
   */
  grantedScopes?: string[];
  /**
   * Add-on only, Google's "one trigger of each type, per user, per document" read for time-driven triggers:
   * 'user' (default, the stricter: one per user across all documents of the add-on) or 'document'. Edit triggers
   * are counted per user per document either way.
   */
  addOnClockTriggersPer?: 'user' | 'document';
  /**
   * Not documented: does ScriptApp.getUserTriggers(spreadsheet) list the user's time-driven triggers created in
   * that spreadsheet ('document', default) or only the spreadsheet's own (onEdit) triggers ('none')?
   */
  userTriggersListClock?: 'document' | 'none';
  /**
   * Google's custom-function guide: "getUserProperties() only gets the properties of the spreadsheet owner.
   * Spreadsheet editors can't set user properties in a custom function." Whether the owner's own recalculation may
   * set them is not said: 'owner' (default, the earlier behaviour) lets it, 'nobody' refuses every custom function.
   */
  customFunctionsSetUserProperties?: 'owner' | 'nobody';
  /**
   * Google's custom-function guide lists Cache as working and says custom functions read the owner's user properties;
   * whose user cache an editor's recalculation gets is not said: 'owner' (default: the custom function runs as the
   * owner) or 'editor' (the user the formula recalculates for, whose cache the owner's executions never read).
   */
  customFunctionUserCache?: 'owner' | 'editor';
  /**
   * How many formula cells Sheets recalculates side by side, each its own custom-function execution ("Each time a
   * custom function is used in a spreadsheet, Sheets makes a separate call to the Apps Script server"). Google does
   * not document the number; default 4. At most the per-user limit below can run.
   */
  customFunctionsAtOnce?: number;
  /**
   * Worker threads to start at load, before any execution (default none: each starts with the first execution that
   * needs it). Benches that count execution-seconds set it, so that no execution counts the start of a Node worker
   * thread (the stand-in's cost, not Apps Script's; see WorkerPool.warm).
   */
  warmWorkers?: number;
  /**
   * Not documented: with granular consent, is a custom function's UrlFetchApp call refused when the owner did not
   * grant "Connect to an external service"? 'free' (default): custom functions fetch on their own terms; 'needs-grant':
   * refused with Google's permission error, as users of per-cell fetch formulas report.
   */
  customFunctionFetch?: 'free' | 'needs-grant';
  /**
   * "Simultaneous executions per user: 30" (quotas page): one more execution of that user (a formula, a trigger, a
   * server call) is refused with "There are too many scripts running simultaneously for this Google user account."
   */
  simultaneousExecutions?: number;
  /**
   * "Simultaneous executions per script: 1,000" (quotas page): every user's executions together; one more is refused
   * (issue 46). Default 1,000.
   */
  scriptSimultaneousExecutions?: number;
  /**
   * The manifest's urlFetchWhitelist as Google applies it: 'test-deployment' (default) enforces none ("optional when
   * you install a test deployment"); 'manifest' enforces the one of appsscript.json beside Code.js, as a versioned
   * deployment does; a list enforces those prefixes (allowlist.ts).
   */
  urlFetchAllowlist?: 'test-deployment' | 'manifest' | string[];
  /**
   * Other users of the published add-on (issue 30), from the moment the stand-in loads: "A published Editor add-on is
   * one script for all its users". Default: none.
   */
  otherUsers?: OtherUsers;
  /**
   * What a cache (script, document and user alike) does past its 1,000 items: 'observed' (default, the earlier
   * model: the oldest-written ~10 % go when a write finds it full) or 'documented' (Cache reference: "If more than
   * 1,000 items are written, the cache stores the 900 items farthest from expiration").
   */
  cacheEviction?: CacheEviction;
}

/** Other users of the same published add-on, as this user's executions meet them (standin/README.md). */
export interface OtherUsers {
  /**
   * Share of the time (0..1) their executions hold the SCRIPT lock: getScriptLock "prevents any user from
   * concurrently running a section of code". Document and user locks are not affected.
   */
  scriptLockBusy: number;
  /** How long each of their sections holds it (ms), e.g. 100. */
  sectionMs: number;
  /** Items a minute they write into the SCRIPT cache ("common to all users of the script"), e.g. 3,000. */
  scriptCacheItemsPerMinute: number;
  /** How long each of their items is kept (s); default 21,600 (the most Google allows). */
  itemSeconds?: number;
}

/** Sets the options that belong to the world (scopes, network and service-call times, trigger rules). */
export function configureWorld(world: World, options: LoadOptions, projectDir: string): void {
  const declared = options.oauthScopes ?? manifestScopes(projectDir) ?? KNOWN_SCOPES;
  world.scopes = new ScopeTable(declared, options.grantedScopes ?? declared);
  world.scopes.customFunctionFetchNeedsGrant = options.customFunctionFetch === 'needs-grant';
  world.extraLatencyMs = options.virtualLatencyMs ?? 0;
  world.serviceCallMs = options.serviceCallMs ?? 0;
  const allowlist = options.urlFetchAllowlist ?? 'test-deployment';
  if (allowlist === 'manifest')
    world.urlFetchAllowlist =
      manifestAllowlist(fs.readFileSync(path.join(projectDir, 'appsscript.json'), 'utf8')) ?? [];
  else if (Array.isArray(allowlist)) world.urlFetchAllowlist = allowlist;
  world.cacheRules.eviction = options.cacheEviction ?? 'observed';
  world.propertyQuota.reset = world.fetchQuota.reset = options.quotaReset ?? 'first-request';
  if (options.otherUsers) {
    const others = options.otherUsers;
    world.locks.heldByOthers(others.scriptLockBusy, others.sectionMs);
    world.scriptCache.writtenByOthers(
      others.scriptCacheItemsPerMinute,
      others.itemSeconds ?? CACHE_MAX_EXPIRATION_S,
    );
  }
  world.triggers.rules = {
    installAs: options.installAs ?? 'script',
    addOnShortAfter: options.addOnShortAfter ?? 'refused',
    addOnClockTriggersPer: options.addOnClockTriggersPer ?? 'user',
    userTriggersListClock: options.userTriggersListClock ?? 'document',
  };
}
