// Google's daily quotas (Properties calls, URL fetches, trigger runtime) spent: every =DAPA cell, the sidebar and the
// menu say so in the project's words (never Google's text, never #ERROR!), and the work goes on by itself after
// Google's reset: cells filled, nothing billed twice. Through the built bundle on a virtual clock, under both readings
// of when a quota comes back (24 hours after the first use, Google's words; or at a fixed time of day).
import type { SandboxConfig } from '../sandbox/handler';
import type { VirtualSandbox } from '../sandbox/virtual';
import type { AppsScriptStandIn, LoadOptions } from './harness';
import type { QuotaReset } from './standin/daily-quota';
import { domains, metricRows, useVirtualSandbox, virtualStandIn } from './support';

jest.setTimeout(600_000);

const KEY = 'quotas-entry'; // the entry plan: 5 URLs a request, 60 URLs a minute
const CONFIG: SandboxConfig = { keys: { [KEY]: { maxUrlsPerRequest: 5, urlsPerMinute: 60 } } };
const HOUR = 3_600_000;
const GOOGLE_TEXT = /Service invoked too many times|too much computer time|Exception/;

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn | undefined;
useVirtualSandbox(CONFIG, (s) => (sandbox = s));
afterEach(async () => {
  await gas?.close();
  gas = undefined;
});

async function open(options: LoadOptions): Promise<AppsScriptStandIn> {
  gas = await virtualStandIn(sandbox, KEY, CONFIG, {
    virtualLatencyMs: 300,
    serviceCallMs: 15,
    customFunctionsAtOnce: 30,
    ...options,
  });
  return gas;
}

const stats = () => sandbox.sandbox.stats()[KEY];
const billedTwice = () => Object.values(stats()?.billedByDomain ?? {}).filter((n) => n > 1).length;

/** What every cell of B2:B(n+1) shows: its value, and the #ERROR! note when there is one. */
function shown(g: AppsScriptStandIn, n: number): string[] {
  return g.sheet
    .getValues(`B2:B${n + 1}`)
    .map((row, i) =>
      String(row[0]).startsWith('#') ? `${row[0]} ${g.sheet.getNote(`B${i + 2}`)}` : String(row[0]),
    );
}

/** Domains in A2:A(n+1) and =DAPA(A{r}) beside each, entered as one drag. */
async function dragDown(g: AppsScriptStandIn, list: readonly string[]): Promise<void> {
  g.sheet.setValues(
    `A2:A${list.length + 1}`,
    list.map((d) => [d]),
  );
  for (let r = 3; r <= list.length + 1; r++) g.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
  await g.edit('B2', '=DAPA(A2)');
}

describe.each(['first-request', 'utc-day'] as QuotaReset[])(
  "Google's Properties quota spent on other sheets (%s)",
  (quotaReset) => {
    it("500 per-cell cells with background checks on: no cell shows Google's text, all fill after the reset, each billed once", async () => {
      const g = await open({ quotaReset });
      const n = 500;
      await g.run('startBackground');
      // The owner's other spreadsheets used 49,990 of the day's 50,000 calls (a cell that waits for another's round
      // or for the background spends none; the first 30 side by side read the owner's settings once each).
      g.spendDailyQuota(g.owner, 'properties', 49_990);
      const resetsAt = g.dailyQuotaOf(g.owner, 'properties').resetsAt as number;
      await dragDown(g, domains(n, `quota-${quotaReset}`));
      const first = shown(g, n);
      expect(first.filter((v) => GOOGLE_TEXT.test(v) || v.startsWith('#'))).toEqual([]);
      const waiting = first.filter((v) => /daily limit/.test(v));
      expect(waiting.length).toBeGreaterThan(0);
      expect(waiting[0]).toMatch(/by itself/);
      // Triggers run until every cell is filled, at most 30 hours.
      await g.runTriggers({
        until: g.clock.now() + 30 * HOUR,
        stop: () => metricRows(g, `B2:B${n + 1}`) === n,
      });
      const last = shown(g, n);
      expect(last.filter((v) => GOOGLE_TEXT.test(v) || v.startsWith('#'))).toEqual([]);
      expect(metricRows(g, `B2:B${n + 1}`)).toBe(n);
      expect(g.clock.now()).toBeGreaterThan(resetsAt);
      expect(stats()?.billed).toBe(n);
      expect(billedTwice()).toBe(0);
    });
  },
);

describe("Google's URL Fetch quota spent", () => {
  it("50 cells say so in the project's words, and fill after the reset, each billed once", async () => {
    const g = await open({});
    const n = 50;
    await g.run('startBackground');
    g.spendDailyQuota(g.owner, 'urlfetch', 20_000);
    const resetsAt = g.dailyQuotaOf(g.owner, 'urlfetch').resetsAt as number;
    await dragDown(g, domains(n, 'fetch'));
    const first = shown(g, n);
    expect(first.filter((v) => GOOGLE_TEXT.test(v) || v.startsWith('#'))).toEqual([]);
    // Cells that ended before a sender met the refusal (the first 30 side by side answer at once, and the sender's
    // own wording may come first) say they go on in the background; every later one says why.
    const limited = first.filter((v) => /daily limit on requests to outside services/.test(v)).length;
    expect(limited).toBeGreaterThanOrEqual(n - 31);
    expect(first.filter((v) => /^unfinished: checking in the background/.test(v))).toHaveLength(n - limited);
    await g.runTriggers({
      until: g.clock.now() + 30 * HOUR,
      stop: () => metricRows(g, `B2:B${n + 1}`) === n,
    });
    expect(shown(g, n).filter((v) => GOOGLE_TEXT.test(v) || v.startsWith('#'))).toEqual([]);
    expect(metricRows(g, `B2:B${n + 1}`)).toBe(n);
    expect(g.clock.now()).toBeGreaterThan(resetsAt);
    expect(stats()?.billed).toBe(n);
    expect(billedTwice()).toBe(0);
  });
});

describe("the menu and the sidebar with Google's Properties quota spent", () => {
  it("say what is used up and that DAPA goes on by itself, never Google's text", async () => {
    const g = await open({});
    g.spendDailyQuota(g.owner, 'properties', 50_000);
    for (const call of ['getBackground', 'getSettings', 'refreshDapaFormulas', 'getCredits']) {
      const error = await g.run(call).then(
        () => undefined,
        (e: Error) => e.message,
      );
      expect({ call, error }).toEqual({ call, error: expect.stringMatching(/daily limit on DAPA's calls/) });
      expect(error).toMatch(/goes on/);
      expect(error).not.toMatch(GOOGLE_TEXT);
    }
  });
});

describe("background checks turned on with Google's Properties quota already spent", () => {
  it('turn on, say when the work resumes, and fill every cell after the reset; a cell meeting the spent quota answers within 2 s', async () => {
    const g = await open({});
    const n = 500;
    // The owner's other spreadsheets used 49,950 of the day's 50,000 calls; the drag spends the rest.
    g.spendDailyQuota(g.owner, 'properties', 49_950);
    const resetsAt = g.dailyQuotaOf(g.owner, 'properties').resetsAt as number;
    await dragDown(g, domains(n, 'before-on'));
    expect(g.dailyQuotaOf(g.owner, 'properties').used).toBe(50_000);
    const first = shown(g, n);
    expect(first.filter((v) => GOOGLE_TEXT.test(v) || v.startsWith('#'))).toEqual([]);
    // The first 30 side by side spend the last 50 calls and meet the refusal as they go; every later cell meets it
    // spent (its round cannot come) and answers at once.
    const cells = g.executions.filter((e) => e.kind === 'custom-function');
    const firstWave = cells.filter((e) => e.startedAt <= cells[0].startedAt + 1_000);
    const later = cells.filter((e) => !firstWave.includes(e));
    const slowest = (list: typeof cells) => Math.max(...list.map((e) => e.elapsedMs ?? 0));
    // A first-wave cell meets the spent quota when Google first refuses a call (before it, the quota was not spent):
    // from then to its answer.
    const refusedAt = g.dailyQuotaOf(g.owner, 'properties').firstRefusedAt as number;
    const metIt = firstWave.filter((e) => e.startedAt + (e.elapsedMs ?? 0) >= refusedAt);
    const afterRefusal = Math.max(
      ...metIt.map((e) => e.startedAt + (e.elapsedMs ?? 0) - Math.max(refusedAt, e.startedAt)),
    );
    const limited = first.filter((v) => /daily limit/.test(v)).length;
    console.log(
      `spent quota: ${limited} of ${n} cells say the daily limit; ${cells.length} cell executions, ` +
        `${(cells.reduce((t, e) => t + (e.elapsedMs ?? 0), 0) / 1000).toFixed(0)} execution-seconds; ` +
        `the first ${firstWave.length} at once: slowest ${(slowest(firstWave) / 1000).toFixed(2)} s, ` +
        `${metIt.length} of them answered ${(afterRefusal / 1000).toFixed(2)} s at most after Google's first refusal; ` +
        `the ${later.length} after them: slowest ${(slowest(later) / 1000).toFixed(2)} s`,
    );
    expect(limited).toBeGreaterThan(0);
    // Turning background checks on needs no Properties call to install the trigger: it is on, and it says when.
    const info = await g.run<{ on: boolean; quota?: string }>('startBackground');
    expect(info.on).toBe(true);
    expect(info.quota).toMatch(/daily limit/);
    expect(info.quota).toMatch(/resume/);
    expect(g.triggers.some((t) => t.kind === 'CLOCK')).toBe(true);
    await g.runTriggers({
      until: g.clock.now() + 30 * HOUR,
      stop: () => metricRows(g, `B2:B${n + 1}`) === n,
    });
    expect(metricRows(g, `B2:B${n + 1}`)).toBe(n);
    expect(g.clock.now()).toBeGreaterThan(resetsAt);
    console.log(
      `spent quota: all ${n} filled ${((g.clock.now() - resetsAt) / 60_000).toFixed(1)} min after the reset`,
    );
    expect(shown(g, n).filter((v) => GOOGLE_TEXT.test(v) || v.startsWith('#'))).toEqual([]);
    expect(stats()?.billed).toBe(n);
    expect(billedTwice()).toBe(0);
    // Every cell that met the spent quota answered within 2 s of stand-in time (before: about 20 s each).
    expect(later.length).toBeGreaterThan(400);
    expect(slowest(later)).toBeLessThanOrEqual(2_000);
    // And every cell of the first wave, from Google's first refusal (the moment the quota was spent) to its answer.
    expect(metIt.length).toBeGreaterThan(0);
    expect(afterRefusal).toBeLessThanOrEqual(2_000);
    expect(cells.reduce((t, e) => t + (e.elapsedMs ?? 0), 0)).toBeLessThan(n * 2_000);
  });
});
