// OAuth scopes as Apps Script applies them: the project declares its scopes (the manifest's oauthScopes), each
// user grants some or all of them (granular consent), and a service call whose scope the user did not grant fails
// with "You do not have permission to call X. Required permissions: <scope>". ScriptApp.requireScopes ends an
// execution with an authorization prompt, recorded here for tests.
import fs from 'node:fs';
import path from 'node:path';
import { AppsScriptException } from './errors';
import type { Execution } from './execution';

const AUTH = 'https://www.googleapis.com/auth/';
export const SCOPES = {
  externalRequest: `${AUTH}script.external_request`,
  scriptApp: `${AUTH}script.scriptapp`,
  containerUi: `${AUTH}script.container.ui`,
  spreadsheets: `${AUTH}spreadsheets`,
  spreadsheetsCurrentOnly: `${AUTH}spreadsheets.currentonly`,
} as const;

/** Every scope the stand-in knows: a manifest without oauthScopes declares them all (Apps Script's detection). */
export const KNOWN_SCOPES: string[] = Object.values(SCOPES);

/** The message Apps Script throws for a call the user did not authorize (format as users report it). */
export function missingScopeMessage(what: string, scopes: string[]): string {
  return `You do not have permission to call ${what}. Required permissions: ${scopes.join(', ')}`;
}

/** The message an execution ends with when requireScopes/requireAllScopes asks for consent. */
export const AUTHORIZATION_REQUIRED_MESSAGE = 'Authorization is required to perform that action.';

/** An authorization prompt Apps Script rendered (requireScopes / requireAllScopes with scopes missing). */
export interface AuthorizationPrompt {
  user: string;
  /** The scopes the prompt asks for (the missing ones). */
  scopes: string[];
  /** Which execution asked: a menu item or sidebar call ('server'), a trigger, ... */
  kind: string;
  functionName: string;
  /** The spreadsheet the prompt appeared in (null: no document, e.g. an add-on's time-driven trigger). */
  spreadsheetId: string | null;
  at: number;
}

/** The oauthScopes of the pushed manifest (appsscript.json beside Code.js); undefined when it names none. */
export function manifestScopes(projectDir: string): string[] | undefined {
  const file = path.join(projectDir, 'appsscript.json');
  if (!fs.existsSync(file)) return undefined;
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { oauthScopes?: unknown };
  return Array.isArray(manifest.oauthScopes) ? manifest.oauthScopes.map(String) : undefined;
}

export class ScopeTable {
  /** Per user: what they granted (a user not listed granted `defaultGrant`). */
  private readonly granted = new Map<string, Set<string>>();
  readonly prompts: AuthorizationPrompt[] = [];

  constructor(
    /** The project's scopes (the manifest's oauthScopes). */
    readonly declared: string[],
    /** What every user granted unless set per user (default: everything declared). */
    private readonly defaultGrant: string[] = declared,
  ) {}

  grantedTo(user: string): Set<string> {
    let set = this.granted.get(user);
    if (!set)
      this.granted.set(user, (set = new Set(this.defaultGrant.filter((s) => this.declared.includes(s)))));
    return set;
  }

  grant(user: string, scopes: string[]): void {
    const set = this.grantedTo(user);
    for (const scope of scopes) if (this.declared.includes(scope)) set.add(scope);
  }

  revoke(user: string, scopes: string[]): void {
    const set = this.grantedTo(user);
    for (const scope of scopes) set.delete(scope);
  }

  /**
   * Not documented: does a custom function's UrlFetchApp call need the owner's grant of "Connect to an external
   * service" under granular consent? false (default, the earlier reading): no; true: it is refused like any call.
   */
  customFunctionFetchNeedsGrant = false;

  /** Declared and granted to the user. */
  has(user: string, scope: string): boolean {
    return this.declared.includes(scope) && this.grantedTo(user).has(scope);
  }

  /**
   * Throws Apps Script's permission error unless the execution's user granted one of `anyOf` (the first is named
   * in the message). Custom functions run without the user's authorization and are not checked here (their
   * services refuse what they may not do on their own terms), except where `inCustomFunctions` says the scope is
   * still the user's to grant: a custom function's UrlFetchApp call when the owner left "Connect to an external
   * service" ungranted (granular consent; what users of per-cell fetch formulas report).
   */
  require(execution: Execution, what: string, anyOf: string[], inCustomFunctions = false): void {
    if (execution.isCustomFunction && !(inCustomFunctions && this.customFunctionFetchNeedsGrant)) return;
    if (anyOf.some((scope) => this.has(execution.user, scope))) return;
    throw new AppsScriptException(missingScopeMessage(what, [anyOf[0]]));
  }
}
