// Issue 46: many users of one published add-on filling at once, each in a spreadsheet of their own with their own
// key of the entry plan, `=DAPA(A2)` dragged down, background checks on, triggers late 0–60 s. A published add-on is
// one script for all its users: Google gives it about 1,000 executions at once across all of them (30 per user).
// The row prints the script's executions at once (all users) and each user's, execution-seconds per filled cell, rows
// filled and lost, domains billed twice. Run it alone: npx tsx test/bench/sheets-many-users.ts [users] [rows] [seconds the edits spread over].
import { DEFAULT_CONFIG, type SandboxConfig } from '../sandbox/handler';
import { type AppsScriptStandIn, loadAppsScript, uniformLateness } from '../apps-script/harness';
import { domains, sheetsAddress } from '../apps-script/support';
import { startVirtualSandbox, uniformLatency, type VirtualSandbox } from '../sandbox/virtual';
import { type AtOnce, executionsAtOnce } from './executions-at-once';

const MINUTE = 60_000;
/** Google's quotas page: "Simultaneous executions per script: 1,000". */
export const SCRIPT_SIMULTANEOUS = 1_000;

export interface ManyUsersSetup {
  users: number;
  /** Domains in A2:A(rows+1) of each user's sheet, one `=DAPA(A{r})` beside each. */
  rows: number;
  /** The users' edits come one after another, evenly over this long (ms; 0: all at the same moment). */
  spreadMs: number;
  /** Give up after this long (ms after the first edit). */
  limitMs: number;
}

export interface ManyUsersResult {
  setup: ManyUsersSetup;
  cells: number;
  filled: number;
  /** Cells not filled at the end, and cells that showed an error at the end. */
  lost: number;
  errorCells: number;
  requests: number;
  billed: number;
  billedTwice: number;
  /** From the first edit until every cell of every user was filled (Infinity: not all). */
  tookMs: number;
  /** Every user's executions together, from the first edit until all were filled. */
  script: AtOnce;
  /**
   * Each user's own, from their edit until their sheet was filled: the mean of their averages, and the most any one
   * user held.
   */
  userAverage: number;
  userMost: number;
  executionSecondsPerFilled: number;
  /** Executions Apps Script refused (too many at once) and stopped at their limit. */
  refused: number;
  killed: number;
  /** What was refused and what the error cells say, counted (numbers replaced by N). */
  why: Array<[string, number]>;
  realMs: number;
}

/** The row of `npm run bench:sheets`: 50 users × 100 rows, their edits over the first minute (about 40 s of real time). */
export const MANY_USERS: ManyUsersSetup = { users: 50, rows: 100, spreadMs: MINUTE, limitMs: 60 * MINUTE };

const userOf = (k: number) => `user${k + 1}@example.com`;
const keyOf = (k: number) => `sandbox-basic-user${k + 1}`;

/** Runs `read` with the harness in spreadsheet `id` and gives the current one back. */
function inSpreadsheet<T>(gas: AppsScriptStandIn, id: string, read: () => T): T {
  const before = gas.spreadsheetId;
  gas.useSpreadsheet(id);
  try {
    return read();
  } finally {
    gas.useSpreadsheet(before);
  }
}

function statsOf(sandbox: VirtualSandbox, keys: string[]) {
  const all = sandbox.sandbox.stats();
  let requests = 0;
  let billed = 0;
  let billedTwice = 0;
  for (const key of keys) {
    const s = all[key];
    requests += s?.requests ?? 0;
    billed += s?.billed ?? 0;
    billedTwice += Object.values(s?.billedByDomain ?? {}).filter((n) => n > 1).length;
  }
  return { requests, billed, billedTwice };
}

/** Runs the row; whatever the product does, the figures come back. */
export async function manyUsersScenario(setup: ManyUsersSetup): Promise<ManyUsersResult> {
  const realStart = Date.now();
  const { users, rows } = setup;
  const keys = Array.from({ length: users }, (_, k) => keyOf(k));
  const plan = DEFAULT_CONFIG.keys['sandbox-basic'];
  const config: SandboxConfig = {
    keys: { ...DEFAULT_CONFIG.keys, ...Object.fromEntries(keys.map((key) => [key, { ...plan }])) },
  };
  const sandbox = await startVirtualSandbox(config);
  const gas = await loadAppsScript({
    clock: 'virtual',
    virtualLatencyMs: uniformLatency(11, 300, 900),
    serviceCallMs: 15,
    customFunctionsAtOnce: 30,
    // Workers started before the clock counts, as many as the script ran at once in earlier runs (107–134).
    warmWorkers: 140,
    triggerDelayMs: uniformLateness(7),
    installAs: 'addon',
    // Each user's triggers run on their own: one user's long background run does not hold back another's.
    overlappingTriggers: true,
  });
  try {
    sandbox.useClock(gas.clock);
    const last = rows + 1;
    const ids: string[] = [];
    for (let k = 0; k < users; k++) {
      const user = userOf(k);
      const id = gas.addSpreadsheet(`Domains of ${user}`, { owner: user });
      ids.push(id);
      gas.useSpreadsheet(id).asUser(user);
      gas.sheet.addSheet('Cells', Math.max(1000, last), 26);
      gas.sheet.setValues(
        `Cells!A2:A${last}`,
        domains(rows, `u${k + 1}`).map((d) => [d]),
      );
      gas.sheet.activate('Cells');
      await gas.runWith({ user, spreadsheetId: id }, 'saveSettings', {
        apiKey: keyOf(k),
        environment: 'custom',
        baseUrl: sheetsAddress(sandbox.url),
      });
      await gas.runWith({ user, spreadsheetId: id }, 'startBackground');
    }
    const numbers = (id: string) =>
      inSpreadsheet(
        gas,
        id,
        () => gas.sheet.getValues(`Cells!B2:B${last}`).filter((row) => typeof row[0] === 'number').length,
      );
    const cells = users * rows;
    const filledNow = () => ids.reduce((n, id) => n + numbers(id), 0);
    let filledAt: number | undefined;
    // When each user's edit came, and when their sheet was first seen filled (after each edit and trigger firing).
    const editedAt: number[] = [];
    const userFilledAt: Array<number | undefined> = [];
    const done = () => {
      ids.forEach((id, k) => {
        if (editedAt[k] !== undefined && userFilledAt[k] === undefined && numbers(id) === rows)
          userFilledAt[k] = gas.clock.now();
      });
      if (filledAt === undefined && userFilledAt.filter((t) => t !== undefined).length === users)
        filledAt = gas.clock.now();
      return filledAt !== undefined;
    };
    const t0 = gas.clock.now();
    // Each user drags =DAPA(A2) down (the formulas below B2, then the edit of B2), one user after another.
    const edits = ids.map(async (id, k) => {
      await gas.waitUntil(t0 + (users > 1 ? (k * setup.spreadMs) / (users - 1) : 0));
      gas.useSpreadsheet(id).asUser(userOf(k));
      editedAt[k] = gas.clock.now();
      for (let r = 3; r <= last; r++) gas.sheet.setFormula(`Cells!B${r}`, `=DAPA(A${r})`);
      await gas.edit('B2', '=DAPA(A2)');
      done();
    });
    await Promise.all([...edits, gas.runTriggers({ until: t0 + setup.limitMs, stop: done })]);
    done();
    const end = filledAt ?? gas.clock.now();
    const filled = filledNow();
    const errorCells = ids.reduce(
      (n, id) =>
        n +
        inSpreadsheet(
          gas,
          id,
          () =>
            gas.sheet.getValues(`Cells!B2:B${last}`).filter((row) => String(row[0]).startsWith('#')).length,
        ),
      0,
    );
    const why = new Map<string, number>();
    const count = (text: string) => why.set(text, (why.get(text) ?? 0) + 1);
    for (const r of gas.tooManySimultaneous) count(`refused ${r.kind} ${r.functionName}`);
    for (const id of ids)
      inSpreadsheet(gas, id, () =>
        gas.sheet.getValues(`Cells!B2:B${last}`).forEach((row, i) => {
          if (String(row[0]).startsWith('#'))
            count(`${String(row[0])} ${gas.sheet.getNote(`Cells!B${i + 2}`)}`.replace(/\d+/g, 'N'));
        }),
      );
    const list = gas.executions;
    // Each user from their edit until their sheet was filled (or the row ended).
    const perUser = ids.map((_, k) =>
      executionsAtOnce(list, { from: editedAt[k] ?? t0, to: userFilledAt[k] ?? end, user: userOf(k) }),
    );
    return {
      setup,
      cells,
      filled,
      lost: cells - filled,
      errorCells,
      ...statsOf(sandbox, keys),
      tookMs: filledAt === undefined ? Infinity : filledAt - t0,
      script: executionsAtOnce(list, { from: t0, to: end }),
      userAverage: perUser.reduce((sum, u) => sum + u.average, 0) / users,
      userMost: Math.max(...perUser.map((u) => u.most)),
      executionSecondsPerFilled:
        list.reduce((sum, e) => sum + (e.elapsedMs ?? 0), 0) / 1000 / Math.max(1, filled),
      refused: gas.tooManySimultaneous.length,
      killed: list.filter((e) => e.status === 'killed').length,
      why: [...why],
      realMs: Date.now() - realStart,
    };
  } finally {
    await gas.close();
    await sandbox.close();
  }
}

/** What the row is, in words. */
export function manyUsersLabel(s: ManyUsersSetup): string {
  return (
    `${s.users} users of one published add-on, each ${s.rows} cells of =DAPA(A2) in a spreadsheet of their own, ` +
    `their own key (sandbox-basic), 30 side by side, background on, fetches 0.3–0.9 s, edits ` +
    (s.spreadMs ? `one after another over ${s.spreadMs / 1000} s` : 'at the same moment')
  );
}

/**
 * How many users filling at once the script's 1,000 carry: 1,000 / what one user holds on average while filling
 * (the most, 30, is held only in the first seconds of a user's drag: Sheets' first recalculation).
 */
export function usersCarried(r: ManyUsersResult): number {
  return Math.floor(SCRIPT_SIMULTANEOUS / Math.max(r.userAverage, 1e-9));
}

export function manyUsersLine(r: ManyUsersResult): string {
  const took = Number.isFinite(r.tookMs)
    ? `all filled in ${(r.tookMs / MINUTE).toFixed(2)} min`
    : `${r.filled} of ${r.cells} filled`;
  return (
    `${manyUsersLabel(r.setup)}: ${took}, ${r.lost} rows lost, ${r.errorCells} errors at the end, ` +
    `${r.billedTwice} billed twice, ${r.requests} requests / ${r.billed} billed; the script's executions at once ` +
    `${r.script.average.toFixed(2)} on average, ${r.script.most} at most (of ${SCRIPT_SIMULTANEOUS.toLocaleString('en-US')}); ` +
    `one user's, from their edit until their sheet was filled, ${r.userAverage.toFixed(2)} on average, ${r.userMost} at most (of 30); ` +
    `${r.executionSecondsPerFilled.toFixed(2)} execution-seconds per filled cell; ${r.refused} refused, ${r.killed} killed; ` +
    `the script's ${SCRIPT_SIMULTANEOUS.toLocaleString('en-US')} carry ${usersCarried(r).toLocaleString('en-US')} users filling at once`
  );
}

if (require.main === module) {
  const [users, rows, spread] = process.argv.slice(2);
  void manyUsersScenario({
    ...MANY_USERS,
    ...(users ? { users: Number(users) } : {}),
    ...(rows ? { rows: Number(rows) } : {}),
    ...(spread ? { spreadMs: Number(spread) * 1000 } : {}),
  })
    .then((r) => {
      console.log(manyUsersLine(r));
      console.log(`real time: ${(r.realMs / 1000).toFixed(1)} s`);
      for (const [text, n] of r.why) console.log(`${n} × ${text}`);
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}
