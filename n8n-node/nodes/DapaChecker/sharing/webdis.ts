// Redis over HTTP: one Redis command as a webdis URL (`/SET/key/value/NX/PX/30000.json`, every argument URL-encoded)
// and its JSON answer read back (`{"SET":[true,"OK"]}`, `{"GET":null}`, `{"SET":[false,"ERR ..."]}`). The HTTP itself
// is the caller's (n8n's `helpers.httpRequest` at run time, fetch in the credential test), so this module does no I/O.
// Every failure comes back as a `StoreProblem` that says which: unreachable, auth refused, command refused, not webdis.

/** One HTTP answer of webdis (or of whatever answers at its address). */
export interface StoreAnswer {
  status: number;
  body: string;
}

/** Sends a GET to a URL and answers; a rejection is a network failure. */
export type StoreHttp = (url: string) => Promise<StoreAnswer>;

export type StoreProblemKind = 'unreachable' | 'auth' | 'refused' | 'unexpected';

/** Why the shared store could not be used, in words that say which setting to look at. */
export interface StoreProblem {
  problem: StoreProblemKind;
  message: string;
}

function storeProblem(problem: StoreProblemKind, message: string): StoreProblem {
  return { problem, message };
}

export function isStoreProblem(value: unknown): value is StoreProblem {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'problem' in value;
}

/** A Redis reply as webdis writes it in JSON. */
export type Reply = string | number | boolean | null | Reply[];

/** The webdis URL of a command: the address, then each argument URL-encoded, `.json` last (the answer's format). */
export function commandUrl(base: string, args: ReadonlyArray<string | number>): string {
  const path = args.map((a) => encodeURIComponent(String(a))).join('/');
  return `${base.replace(/\/+$/, '')}/${path}.json`;
}

/** Why the network failed, with its cause (`ECONNREFUSED`) rather than only "fetch failed". */
export function networkCause(error: unknown): string {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    code?: unknown;
    cause?: { code?: unknown; message?: unknown };
  };
  const message = typeof failure.message === 'string' ? failure.message : String(error);
  const code = failure.cause?.code ?? failure.code;
  return typeof code === 'string' && !message.includes(code) ? `${message}: ${code}` : message;
}

/** Runs one command; the reply, or a StoreProblem saying what went wrong. */
export async function runCommand(
  http: StoreHttp,
  base: string,
  args: ReadonlyArray<string | number>,
): Promise<Reply | StoreProblem> {
  const command = String(args[0]).toUpperCase();
  let answer: StoreAnswer;
  try {
    answer = await http(commandUrl(base, args));
  } catch (error) {
    return storeProblem(
      'unreachable',
      `The shared store (webdis) at ${base} could not be reached (${networkCause(error).slice(0, 160)})`,
    );
  }
  if (answer.status === 401)
    return storeProblem(
      'auth',
      `The shared store (webdis) at ${base} refused the user or password of the DAPA Shared State API credential (HTTP 401)`,
    );
  if (answer.status === 403)
    return storeProblem(
      'refused',
      `The shared store (webdis) at ${base} refused the command ${command} (HTTP 403): webdis answers 403 when the User or Password of the DAPA Shared State API credential is wrong, and when its ACL disables the command`,
    );
  if (answer.status === 503)
    return storeProblem(
      'unreachable',
      `The shared store (webdis) at ${base} answered 503 to ${command}: webdis runs but cannot reach its Redis`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    parsed = undefined;
  }
  const reply = (parsed as Record<string, Reply> | undefined)?.[command];
  if (answer.status !== 200 || typeof parsed !== 'object' || parsed === null || !(command in parsed))
    return storeProblem(
      'unexpected',
      `The address ${base} did not answer like webdis (HTTP ${answer.status} to ${command}); check the Webdis URL of the DAPA Shared State API credential`,
    );
  if (Array.isArray(reply) && reply[0] === false && typeof reply[1] === 'string')
    return storeProblem(
      'refused',
      `The shared store refused the command ${command}: ${reply[1].slice(0, 160)}`,
    );
  return reply ?? null;
}
