// The Sheets add-on as Google publishes it (issue 19), in the stand-in that follows Google: a standalone project
// whose time-driven trigger has no active spreadsheet (the dispatcher opens each spreadsheet with work by id),
// several spreadsheets of one user, users who grant only some scopes, and two people writing one sheet at once.
// Entry plan: 5 URLs per request, 60 URLs a minute; triggers late by 0–60 s.
import type { JobState } from '../../apps-script/sidebar/contract';
import { type AppsScriptStandIn, DEFAULT_SPREADSHEET_ID, type LoadOptions, SCOPES } from './harness';
import {
  domains,
  ENTRY_KEY as KEY,
  entryPlanSuite,
  metricRows,
  metricsRow,
  sheetsAddress,
  sidebarCheck,
  storedKeys as keptKeys,
} from './support';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const EDITOR = 'editor@example.com';
const OWNER = 'owner@example.com';

const suite = entryPlanSuite();
let gas: AppsScriptStandIn;

async function open(options: LoadOptions = {}): Promise<void> {
  gas = await suite.open(options);
}

function filled(a1: string): number {
  return metricRows(gas, a1);
}

async function formula(list: readonly string[], column = 'A', output = 'B'): Promise<string> {
  const last = list.length + 1;
  gas.sheet.setValues(
    `${column}2:${column}${last}`,
    list.map((d) => [d]),
  );
  await gas.edit(`${output}2`, `=DAPA(${column}2:${column}${last})`);
  return `${output}2:${String.fromCharCode(output.charCodeAt(0) + 3)}${last}`;
}

const billedOnce = (count: number) => suite.billedOnce(count);

/** Trigger executions that failed (Google e-mails the user each one). */
function failedTriggers(): unknown[] {
  return gas.executions.filter((e) => e.kind === 'trigger' && e.status !== 'ok');
}

/** The domain keys kept in a spreadsheet's result store. */
function storedKeys(spreadsheetId = gas.spreadsheetId): Set<string> {
  const before = gas.spreadsheetId;
  gas.useSpreadsheet(spreadsheetId);
  const keys = keptKeys(gas);
  gas.useSpreadsheet(before);
  return keys;
}

describe('a published add-on: its time-driven trigger has no active spreadsheet', () => {
  it('fills a 500-domain =DAPA range with the sidebar closed within 2 hours: no trigger failure, one trigger', async () => {
    await open({ installAs: 'addon' });
    await gas.run('startBackground');
    const t0 = gas.clock.now();
    const list = domains(500, 'pub');
    const range = await formula(list);
    await gas.runTriggers({ until: t0 + 3 * HOUR, stop: () => filled(range) === 500 });
    expect(gas.sheet.getValues(range)).toEqual(list.map(metricsRow));
    expect(gas.clock.now() - t0).toBeLessThanOrEqual(2 * HOUR);
    // The dispatcher did run with no document, and opened the spreadsheet by id.
    expect(
      gas.executions.some((e) => e.functionName === 'dapaBackgroundStep' && e.spreadsheetId === null),
    ).toBe(true);
    expect(failedTriggers()).toEqual([]);
    expect(gas.maxClockTriggers).toBeLessThanOrEqual(1);
    billedOnce(500);
  });

  it.each(['user', 'document'] as const)(
    'serves two spreadsheets of one user with one time-driven trigger (counted per %s), both filled within 2 hours',
    async (addOnClockTriggersPer) => {
      await open({ installAs: 'addon', addOnClockTriggersPer });
      const list = domains(500, 'two');
      const second = gas.addSpreadsheet('Copy of the list');
      const t0 = gas.clock.now();
      await gas.run('startBackground');
      const range = await formula(list);
      gas.useSpreadsheet(second);
      await gas.run('startBackground');
      await formula(list);
      const both = () => {
        gas.useSpreadsheet(DEFAULT_SPREADSHEET_ID);
        const a = filled(range);
        gas.useSpreadsheet(second);
        return a + filled(range);
      };
      await gas.runTriggers({ until: t0 + 3 * HOUR, stop: () => both() === 1000 });
      for (const id of [DEFAULT_SPREADSHEET_ID, second]) {
        gas.useSpreadsheet(id);
        expect(gas.sheet.getValues(range)).toEqual(list.map(metricsRow));
        expect(storedKeys(id).size).toBe(500);
      }
      expect(gas.clock.now() - t0).toBeLessThanOrEqual(2 * HOUR);
      expect(failedTriggers()).toEqual([]);
      expect(gas.maxClockTriggers).toBeLessThanOrEqual(1);
      expect(
        gas.refusedTriggerCreations.filter((r) => r.kind === 'CLOCK' && !/recurrence/i.test(r.message)),
      ).toEqual([]);
      billedOnce(500); // the same list in two spreadsheets is paid for once
    },
  );

  it.each(['deleted', 'access lost'] as const)(
    'drops a spreadsheet (%s) from its list with a note, and never tries it again',
    async (how) => {
      await open({ installAs: 'addon', triggerDelayMs: 0 });
      const gone = gas.addSpreadsheet('Old list');
      gas.useSpreadsheet(gone);
      await gas.run('startBackground');
      await formula(domains(20, 'gone'));
      await gas.run('setSchedule', { every: 'daily', target: 'formulas' }); // work for the dispatcher tomorrow
      gas.useSpreadsheet(DEFAULT_SPREADSHEET_ID);
      await gas.run('startBackground');
      if (how === 'deleted') gas.deleteSpreadsheet(gone);
      else gas.revokeAccess(gone, OWNER);
      const range = await formula(domains(100, 'kept'));
      await gas.runTriggers({ until: gas.clock.now() + 26 * HOUR });
      expect(filled(range)).toBe(100);
      expect(failedTriggers()).toEqual([]);
      const info = await gas.run<{ dropped?: string[] }>('getBackground');
      expect(info.dropped).toEqual([expect.stringMatching(/"Old list" was taken off background checks/)]);
      expect(Object.keys(gas.properties.user(OWNER)).filter((k) => k.includes(gone))).toEqual([]);
      const steps = () => gas.executions.filter((e) => e.functionName === 'dapaBackgroundStep').length;
      const before = steps();
      await gas.runTriggers({ until: gas.clock.now() + 3 * HOUR });
      expect(steps() - before).toBeLessThanOrEqual(3); // only the idle hourly dispatcher, nothing retried
      expect(failedTriggers()).toEqual([]);
    },
  );
});

describe('a published add-on left alone', () => {
  /** The result store's rows: [checked at (ms), is a claim] for each row under the header. */
  function storeRows(): Array<{ at: number; claim: boolean }> {
    const last = gas.sheet.lastRow('_dapa_results');
    const rows = last > 1 ? gas.sheet.getValues(`'_dapa_results'!A2:D${last}`) : [];
    return rows.map(([, service, , at]) => ({ at: Number(at), claim: String(service).startsWith('claim:') }));
  }

  it('keeps nothing past the 30 days the privacy policy states, and its hidden sheet stays small, with nobody opening it', async () => {
    await open({ installAs: 'addon' });
    await gas.run('startBackground');
    const t0 = gas.clock.now();
    const range = await formula(domains(100, 'alone'));
    await gas.runTriggers({ until: t0 + 3 * HOUR, stop: () => filled(range) === 100 });
    expect(filled(range)).toBe(100);
    const kept = storeRows().filter((r) => !r.claim);
    expect(kept.length).toBeGreaterThan(0);
    // 35 days of the hourly dispatcher and nobody: no menu, no sidebar, no formula recalculated.
    const day = 86_400_000;
    await gas.runTriggers({ until: t0 + 35 * day });
    const rows = storeRows();
    const results = rows.filter((r) => !r.claim);
    console.log(
      `left alone 35 days: ${rows.length} rows in the store (${results.length} results, ` +
        `${rows.length - results.length} claims); ${kept.length} result rows on the first day`,
    );
    expect(results.filter((r) => r.at < gas.clock.now() - 30 * day)).toEqual([]);
    // The grid still shows what the retention let go, which no cache can date any more: the document is asked about it
    // at most every 4 hours (an ask and the answer's clearing: two recalculations), never at every step.
    const asks = gas.executions.filter((e) => e.functionName === 'DAPA_CACHE').length;
    console.log(`left alone 35 days: ${asks} recalculations of the relay cell`);
    expect(asks).toBeLessThanOrEqual(2 * 6 * 35);
    expect(rows.length).toBeLessThan(50);
    expect(failedTriggers()).toEqual([]);
  });
});

describe("an editor's formulas in a published add-on", () => {
  /** When each kept domain was checked, as the result store says (its rows' times). */
  function keptAt(): Map<string, number> {
    const last = gas.sheet.lastRow('_dapa_results');
    const rows = last > 0 ? gas.sheet.getValues(`'_dapa_results'!A1:D${last}`) : [];
    const at = new Map<string, number>();
    for (const [a, service, payload, time] of rows) {
      if (typeof time !== 'number' || String(service).startsWith('claim:') || a === '') continue;
      const keys = a === '*' ? (JSON.parse(String(payload)) as { k: string[] }).k : [String(a)];
      for (const key of keys) at.set(key, time);
    }
    return at;
  }

  // Google does not say whose user cache an editor's recalculation gets: the owner's (the dispatcher reads it) or the
  // editor's (only the document's cache, which the dispatcher cannot read, holds the records where the owner can).
  it.each(['editor', 'owner'] as const)(
    "keeps what an editor's cells fetched, as of when they fetched it, so the owner's background never pays for it again (custom functions get the %s's user cache)",
    async (customFunctionUserCache) => {
      await open({ installAs: 'addon', customFunctionUserCache });
      await gas.run('startBackground');
      await gas.edit('B2', '=DAPA(A2:A21)'); // the owner's formula, over cells still empty
      const range = 'B2:E21';
      // The editor pastes the domains: not an edit of a DAPA formula, so the step it wakes is the hourly dispatcher's,
      // and the editor's recalculation of the formula fetches them itself.
      gas.asUser(EDITOR);
      const list = domains(20, 'editor');
      const fetchedFrom = gas.clock.now();
      gas.sheet.setValues(
        'A2:A20',
        list.slice(0, 19).map((d) => [d]),
      );
      await gas.edit('A21', list[19]);
      expect(gas.sheet.getValues(range)).toEqual(list.map(metricsRow));
      const fetchedBy = gas.clock.now();
      billedOnce(20);
      // The editor's formula cached its records in the document's cache and the editor's own; the owner's dispatcher,
      // with no document, reads neither: what it keeps, it learned from the relay cell it asks the document through.
      expect(list.filter((d) => storedKeys().has(d))).toEqual([]);
      gas.asUser(OWNER);
      await gas.runTriggers({
        until: fetchedBy + 4 * HOUR,
        stop: () => list.every((d) => storedKeys().has(d)),
      });
      expect(list.filter((d) => !storedKeys().has(d))).toEqual([]);
      // Kept as of the hour they were fetched, never later (the retention the privacy policy states is not stretched).
      for (const d of list) {
        const at = keptAt().get(d) as number;
        expect(at).toBeLessThanOrEqual(fetchedBy);
        expect(at).toBeGreaterThan(fetchedFrom - HOUR);
      }
      // Through the editor's cache only the relay cell could tell the owner's dispatcher (a formula it wrote, run in the
      // document); through the owner's, the dispatcher read them itself.
      expect(
        gas.executions.some((e) => e.functionName === 'DAPA_CACHE' && e.kind === 'custom-function'),
      ).toBe(customFunctionUserCache === 'editor');
      expect(failedTriggers()).toEqual([]);
      // Past the caches' 6 hours the owner's own formula over the same domains reads them from the store: nothing billed.
      await gas.runTriggers({ until: fetchedBy + 8 * HOUR });
      const again = await formula(list, 'G', 'H');
      await gas.runTriggers({ until: gas.clock.now() + 2 * HOUR, stop: () => filled(again) === 20 });
      expect(gas.sheet.getValues(again)).toEqual(list.map(metricsRow));
      billedOnce(20);
      // Once answered, the relay cell keeps only when it last asked: no domains, no metrics in the hidden sheet.
      const relay = gas.sheet.getFormulas(`'_dapa_versions'!A129`)[0][0];
      if (customFunctionUserCache === 'owner') expect(relay).toBe('');
      else expect(relay).toMatch(/^=DAPA_CACHE\("[^"]+", "", \d+\)$/);
      if (relay) expect(gas.sheet.getValues(`'_dapa_versions'!A129`)[0][0]).toBe('[]');
    },
  );
});

describe('two people writing one sheet at once', () => {
  async function editorChecks(list: readonly string[], column: string, at: number): Promise<JobState> {
    await gas.runWith({ user: EDITOR, at }, 'saveSettings', {
      apiKey: KEY,
      environment: 'custom',
      baseUrl: sheetsAddress(suite.sandbox().url),
    });
    return sidebarCheck(gas, EDITOR, column, list);
  }

  it("keeps every domain in the store when the owner's background step and an editor's sidebar check overlap", async () => {
    // Requests of 3 s: the owner's steps (a window each) are at work long enough to overlap the editor's check.
    await open({ triggerDelayMs: 0, virtualLatencyMs: 3_000 });
    await gas.run('startBackground');
    const t0 = gas.clock.now();
    const owners = domains(300, 'owner');
    const editors = domains(60, 'editor');
    const range = await formula(owners);
    const [, editorState] = await Promise.all([
      gas.runTriggers({ until: t0 + 60 * MINUTE, stop: () => filled(range) === 300 }),
      editorChecks(editors, 'H', t0 + 60_000),
    ]);
    expect(editorState.status).toBe('done');
    await gas.runTriggers({ until: gas.clock.now() + 30 * MINUTE, stop: () => filled(range) === 300 });
    expect(filled(range)).toBe(300);
    // The two overlapped: the editor's check ran while the owner's steps were at work.
    const steps = gas.executions.filter((e) => e.functionName === 'dapaBackgroundStep');
    const editorRuns = gas.executions.filter((e) => e.user === EDITOR && e.functionName === 'continueJob');
    const end = (e: (typeof steps)[number]) => e.startedAt + (e.elapsedMs ?? 0);
    const overlapping = editorRuns.some((r) =>
      steps.some((s) => s.startedAt < end(r) && r.startedAt < end(s)),
    );
    expect(overlapping).toBe(true);
    const kept = storedKeys();
    expect([...owners, ...editors].filter((d) => !kept.has(d))).toEqual([]);
    billedOnce(360);
  });

  it("keeps both users' sidebar checks when they run at the same moment", async () => {
    await open({ triggerDelayMs: 0 });
    await gas.runWith({ user: EDITOR }, 'saveSettings', {
      apiKey: KEY,
      environment: 'custom',
      baseUrl: sheetsAddress(suite.sandbox().url),
    });
    const a = domains(40, 'left');
    const b = domains(40, 'right');
    const [ownerState, editorState] = await Promise.all([
      sidebarCheck(gas, OWNER, 'A', a),
      sidebarCheck(gas, EDITOR, 'H', b),
    ]);
    expect([ownerState.status, editorState.status]).toEqual(['done', 'done']);
    const kept = storedKeys();
    expect([...a, ...b].filter((d) => !kept.has(d))).toEqual([]);
    billedOnce(80);
  });
});

describe('a user who granted only some scopes', () => {
  it('without triggers: formulas and sidebar checks work, background checks say what to grant', async () => {
    const granted = [SCOPES.externalRequest, SCOPES.spreadsheets, SCOPES.containerUi];
    await open({ installAs: 'addon', triggerDelayMs: 0, grantedScopes: granted });
    const range = await formula(domains(20, 'partial'));
    expect(filled(range)).toBe(20);
    gas.sheet.setValues(
      'H1:H10',
      domains(10, 'side').map((d) => [d]),
    );
    gas.sheet.select('H1:H10');
    let state = await gas.run<JobState>('startJob', { source: 'selection' });
    for (let i = 0; i < 20 && state.status === 'running'; i++) state = await gas.run<JobState>('continueJob');
    expect(state.status).toBe('done');
    const info = await gas.run<{ on: boolean; access?: { missing: string[]; message: string } }>(
      'getBackground',
    );
    expect(info.on).toBe(false);
    expect(info.access?.missing).toEqual([SCOPES.scriptApp]);
    expect(info.access?.message).toMatch(
      /run in the background.*formulas still work, and so do checks from the sidebar/s,
    );
    // Turning background checks on asks Google for just what is missing, never a raw permission error.
    await gas.run('startBackground').catch(() => undefined);
    expect(gas.authorizationPrompts).toEqual([expect.objectContaining({ scopes: [SCOPES.scriptApp] })]);
    expect(gas.executions.some((e) => /You do not have permission/.test(e.error ?? ''))).toBe(false);
    gas.grantScopes(OWNER, [SCOPES.scriptApp]);
    const on = await gas.run<{ on: boolean; access?: unknown }>('startBackground');
    expect(on.on).toBe(true);
    expect(on.access).toBeUndefined();
  });

  it('without external requests: formulas still work; a sidebar check asks for it instead of failing', async () => {
    await open({
      triggerDelayMs: 0,
      grantedScopes: [SCOPES.spreadsheets, SCOPES.containerUi, SCOPES.scriptApp],
    });
    const range = await formula(domains(10, 'nofetch'));
    expect(filled(range)).toBe(10);
    gas.sheet.setValues('H1:H3', [['a.example.com'], ['b.example.com'], ['c.example.com']]);
    gas.sheet.select('H1:H3');
    await gas.run('startJob', { source: 'selection' }).catch(() => undefined);
    expect(gas.authorizationPrompts).toEqual([expect.objectContaining({ scopes: [SCOPES.externalRequest] })]);
    expect(gas.executions.some((e) => /You do not have permission/.test(e.error ?? ''))).toBe(false);
    const info = await gas.run<{ access?: { missing: string[]; message: string } }>('getBackground');
    expect(info.access?.missing).toEqual([SCOPES.externalRequest]);
  });
});
