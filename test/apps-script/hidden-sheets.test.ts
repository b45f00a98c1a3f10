// What the add-on adds to a spreadsheet stays small and bounded, in the stand-in through the built bundle: 5,000
// results kept in a few dozen appended rows of 4 cells; =DAPA(A2) dragged over 1,000 rows refreshed through 128
// version cells at most (one a block of 50 rows, never one a formula); a formula copied with its version argument
// still refreshes; an earlier version's per-formula version columns migrated and given back; and a published add-on's
// dispatcher (no document lock) appending while an editor's execution compacts the store loses nothing.
import { createHash } from 'node:crypto';
import { metricsFor, type SandboxConfig } from '../sandbox/handler';
import type { VirtualSandbox } from '../sandbox/virtual';
import type { AppsScriptStandIn, LoadOptions } from './harness';
import {
  domains,
  metricRows,
  metricsRow,
  sheetsAddress,
  sidebarCheck,
  storedKeys,
  useVirtualSandbox,
  virtualStandIn,
} from './support';

jest.setTimeout(180_000);

const BULK = 'hidden-bulk'; // no rate limit: thousands of rows in a few requests
const ENTRY = 'hidden-entry'; // the entry plan: 5 URLs a request, 60 a minute
const CONFIG: SandboxConfig = {
  keys: {
    [BULK]: { maxUrlsPerRequest: 1000 },
    [ENTRY]: { maxUrlsPerRequest: 5, urlsPerMinute: 60, requestsPerMinute: 60 },
  },
};
const MINUTE = 60_000;
const DAY = 86_400_000;
const EDITOR = 'editor@example.com';
const STORE = '_dapa_results';
const VERSIONS = '_dapa_versions';

let sandbox: VirtualSandbox;
let gas: AppsScriptStandIn | undefined;
useVirtualSandbox(CONFIG, (s) => (sandbox = s));
afterEach(async () => {
  await gas?.close();
  gas = undefined;
});

async function open(key: string, options: LoadOptions = {}): Promise<AppsScriptStandIn> {
  gas = await virtualStandIn(sandbox, key, CONFIG, { virtualLatencyMs: 300, ...options });
  return gas;
}

const billed = (key: string) => sandbox.sandbox.stats()[key]?.billed ?? 0;

/** Cells of a sheet's grid (filled or not: what counts against the spreadsheet's 10 million). */
const cells = (g: AppsScriptStandIn, name: string) => g.sheet.maxRows(name) * g.sheet.maxColumns(name);

/** The service id the store files results under (what the product derives from the base URL). */
const serviceOf = () =>
  's' + createHash('sha256').update(sheetsAddress(sandbox.url)).digest('base64url').slice(0, 12);

/** A record as the store keeps it. */
const recordOf = (domain: string) => ({ domain, ...metricsFor(domain) });

async function sidebarJob(g: AppsScriptStandIn, column: string, user?: string): Promise<string> {
  let state = await g.runWith<{ status: string }>({ user }, 'startJob', {
    source: 'column',
    column,
    headerRow: false,
  });
  for (let i = 0; i < 200 && state.status === 'running'; i++)
    state = await g.runWith<{ status: string }>({ user }, 'continueJob');
  return state.status;
}

/** The slot (1-based row of _dapa_versions) a =DAPA formula's 4th argument reads, or undefined. */
function slotOf(formula: string): number | undefined {
  const m = /,'_dapa_versions'!\$A\$(\d+)\)$/.exec(formula);
  return m ? Number(m[1]) : undefined;
}

describe('the result store: an append log of 4 columns', () => {
  it('keeps 5,000 results of a sidebar check in a few dozen appended rows, and reads them back for the next check', async () => {
    const g = await open(BULK);
    const list = domains(5_000, 'kept');
    g.sheet.addSheet('Big', 5_100, 26);
    g.sheet.activate('Big');
    g.sheet.setValues(
      'Big!A1:A5000',
      list.map((d) => [d]),
    );
    expect(await sidebarJob(g, 'A')).toBe('done');
    const kept = storedKeys(g);
    expect(list.filter((d) => !kept.has(d))).toEqual([]);
    // A header and one appended row per few hundred results; the grid is exactly those rows, 4 columns, hidden.
    const rows = g.sheet.lastRow(STORE);
    console.log(`5,000 results: ${rows} rows in the store, ${cells(g, STORE)} cells`);
    expect(rows).toBeLessThanOrEqual(1 + 30);
    expect([g.sheet.maxRows(STORE), g.sheet.maxColumns(STORE)]).toEqual([rows, 4]);
    expect(g.sheet.isHidden(STORE)).toBe(true);
    expect(g.sheet.getValues(`'${STORE}'!A1:D1`)).toEqual([
      ['domain', 'service', 'record', 'checked at (ms)'],
    ]);
    // The same rows checked again are read from the store: nothing billed, nothing appended.
    const before = billed(BULK);
    g.sheet.setValues(
      'Big!H1:H5000',
      list.map((d) => [d]),
    );
    expect(await sidebarJob(g, 'H')).toBe('done');
    expect(billed(BULK)).toBe(before);
    expect(g.sheet.lastRow(STORE)).toBe(rows);
  });
});

describe('version slots: 128 cells whatever the number of formulas', () => {
  /** =DAPA(A{r}) beside each domain from row 2, entered as one drag. */
  async function dragDown(g: AppsScriptStandIn, list: readonly string[]): Promise<void> {
    g.sheet.setValues(
      `A2:A${list.length + 1}`,
      list.map((d) => [d]),
    );
    for (let r = 3; r <= list.length + 1; r++) g.sheet.setFormula(`B${r}`, `=DAPA(A${r})`);
    await g.edit('B2', '=DAPA(A2)');
  }

  it('900 per-cell formulas take one slot a block of 50 rows; once refreshed, the next refresh recalculates nothing', async () => {
    const g = await open(BULK, { customFunctionsAtOnce: 30 });
    const list = domains(900, 'slot');
    g.sheet.addSheet('Cells', 1_100, 8);
    g.sheet.activate('Cells');
    await dragDown(g, list);
    // The cells that ran beside the sender answered at once; the refresh shows them from the caches.
    expect(await g.run('refreshDapaFormulas')).toEqual({ formulas: 900, refreshed: 900 });
    const formulas = g.sheet.getFormulas('B2:B901').map(([f]) => f);
    const slots = formulas.map(slotOf);
    expect(formulas[0]).toMatch(/^=DAPA\(A2,,,'_dapa_versions'!\$A\$\d+\)$/);
    expect(slots.every((s) => s !== undefined && s >= 1 && s <= 128)).toBe(true);
    // Rows 2-50 share a slot, rows 51-100 the next, ...: 19 slots for rows 2-901. (900 formulas: the document's
    // cache holds 1,000 items, one of them the formulas' queue, and a record it let go is refreshed as older than it.)
    expect(new Set(slots).size).toBe(19);
    expect(slots[0]).toBe(slots[48]);
    expect(slots[49]).not.toBe(slots[48]);
    expect([g.sheet.maxRows(VERSIONS), g.sheet.maxColumns(VERSIONS)]).toEqual([128, 1]);
    expect(g.sheet.isHidden(VERSIONS)).toBe(true);
    expect(metricRows(g, 'B2:B901')).toBe(900);
    // All up to date now: the next refresh rewrites nothing and recalculates nothing.
    const executions = g.executions.length;
    expect(await g.run('refreshDapaFormulas')).toEqual({ formulas: 900, refreshed: 0 });
    expect(g.executions.length).toBe(executions + 1);
    // Nothing the add-on added grows with the formulas: 128 version cells, and the store the refresh kept the cached
    // results in (a row a batch, not a row a formula).
    expect(g.sheet.sheetNames()).toEqual(['Sheet1', 'Cells', '_dapa_results', VERSIONS]);
    expect(cells(g, VERSIONS)).toBe(128);
    expect(cells(g, '_dapa_results')).toBeLessThan(900);
  });

  it('a formula copied with its version argument to another block still refreshes: through its own block’s slot', async () => {
    const g = await open(ENTRY, { customFunctionsAtOnce: 10 });
    const list = domains(20, 'copy');
    await dragDown(g, list);
    await g.run('refreshDapaFormulas');
    expect(metricRows(g, 'B2:B21')).toBe(20);
    const original = g.sheet.getFormulas('B2')[0][0];
    // Copied to row 300 (Sheets moves the relative reference, not the absolute version cell) while the network is
    // blocked: the copy cannot show its domain yet.
    g.sheet.setValues('A300', [['copied.example.org']]);
    sandbox.sandbox.configure({ ...CONFIG, faults: { blockNetwork: true } });
    await g.edit('B300', original.replace('(A2,', '(A300,'));
    expect(metricRows(g, 'B300')).toBe(0);
    sandbox.sandbox.configure(CONFIG);
    g.clock.advance(MINUTE);
    // Its argument is not its place's slot: the refresh counts it and gives it its own, and it recalculates.
    expect(await g.run('refreshDapaFormulas')).toEqual({ formulas: 21, refreshed: 1 });
    const copy = g.sheet.getFormulas('B300')[0][0];
    expect(slotOf(copy)).toBeDefined();
    expect(slotOf(copy)).not.toBe(slotOf(original));
    expect(g.sheet.getValues('B300:E300')).toEqual([metricsRow('copied.example.org')]);
    // The refresh's own step checked its domain and marked its slot up to date: nothing is left to refresh, and
    // nothing is sent.
    const sent = g.fetches.length;
    expect(await g.run('refreshDapaFormulas')).toEqual({ formulas: 21, refreshed: 0 });
    expect(g.fetches.length).toBe(sent);
  });

  it("an earlier version's per-formula version columns: formulas move to slots, the columns are given back, kept results still read", async () => {
    const g = await open(ENTRY);
    const left = domains(5, 'legacy-left');
    const right = domains(5, 'legacy-right');
    g.sheet.setValues(
      'A2:A6',
      left.map((d) => [d]),
    );
    g.sheet.setValues(
      'G2:G6',
      right.map((d) => [d]),
    );
    // The store as an earlier version left it: one result a row, and row 1 holding the version cells F1 and G1 of
    // two formulas (their columns across every row of the sheet).
    const kept = [...left, ...right];
    g.sheet.addSheet(STORE, 1 + kept.length, 26);
    g.sheet.setValues(`'${STORE}'!A1:G1`, [
      ['domain', 'service', 'record', 'checked at (ms)', '', 'v1.1', 'v2.1'],
    ]);
    g.sheet.setValues(
      `'${STORE}'!A2:D${1 + kept.length}`,
      kept.map((d) => [d, serviceOf(), JSON.stringify(recordOf(d)), g.clock.now() - DAY]),
    );
    g.sheet.setFormula('B2', `=DAPA(A2:A6,,,'${STORE}'!$F$1)`);
    await g.edit('H2', `=DAPA(G2:G6,,,'${STORE}'!$G$1)`);
    expect(g.sheet.getValues('B2:E6')).toEqual(left.map(metricsRow));
    expect(g.sheet.getValues('H2:K6')).toEqual(right.map(metricsRow));
    expect(g.fetches.length).toBe(0); // read from the kept results, a day old (the 6-hour cache had none)
    expect(await g.run('refreshDapaFormulas')).toEqual({ formulas: 2, refreshed: 2 });
    expect(slotOf(g.sheet.getFormulas('B2')[0][0])).toBeDefined();
    expect(slotOf(g.sheet.getFormulas('H2')[0][0])).toBeDefined();
    expect(g.sheet.maxColumns(STORE)).toBe(4);
    expect(g.sheet.getValues('B2:E6')).toEqual(left.map(metricsRow));
    expect(g.sheet.getValues('H2:K6')).toEqual(right.map(metricsRow));
    expect(g.fetches.length).toBe(0);
    expect([...storedKeys(g)].sort()).toEqual([...kept].sort());
  });
});

describe('a published add-on: the dispatcher appends while an editor compacts', () => {
  it('loses none of the rows the lock-less dispatcher appends while an editor’s checks compact the store', async () => {
    const g = await open(ENTRY, { installAs: 'addon', triggerDelayMs: 0, serviceCallMs: 50 });
    await g.runWith({ user: EDITOR }, 'saveSettings', {
      apiKey: ENTRY,
      environment: 'custom',
      baseUrl: sheetsAddress(sandbox.url),
    });
    await g.run('startBackground');
    // A store with 400 dead rows (checked 40 days ago) between live ones: each compaction has work for longer than
    // its 2 seconds.
    const service = serviceOf();
    const old = domains(400, 'expired');
    const live = domains(400, 'live');
    g.sheet.addSheet(STORE, 801, 4);
    g.sheet.setValues(`'${STORE}'!A1:D801`, [
      ['domain', 'service', 'record', 'checked at (ms)'],
      ...old.flatMap((d, i) => [
        ['*', service, JSON.stringify({ k: [d], r: [recordOf(d)] }), g.clock.now() - 40 * DAY],
        ['*', service, JSON.stringify({ k: [live[i]], r: [recordOf(live[i])] }), g.clock.now() - DAY],
      ]),
    ]);
    // The owner's formulas, entered without an edit trigger: the dispatcher (no document) checks them.
    const owners = domains(120, 'owner');
    g.sheet.setValues(
      'A2:A121',
      owners.map((d) => [d]),
    );
    g.sheet.setFormula('B2', '=DAPA(A2:A121)');
    await g.recalculate();
    const due = Math.min(...g.triggers.filter((t) => t.kind === 'CLOCK').map((t) => t.dueAt ?? Infinity));
    // An editor checks a few rows from the sidebar again and again while the dispatcher's step works: each check
    // keeps its results and, having the document lock, compacts the store (2 seconds at most each time).
    const columns = ['A', 'G', 'M', 'S', 'Y', 'AE', 'AK', 'AQ', 'AW', 'BC']; // each with its 5 result columns
    g.sheet.addSheet('Editor', 100, 60);
    g.sheet.activate('Editor');
    const theirs = columns.map((c) => domains(5, `editor-${c.toLowerCase()}`));
    const editorChecks = async () => {
      for (const [k, column] of columns.entries())
        expect(await sidebarCheck(g, EDITOR, column, theirs[k], due + k * 3_000)).toMatchObject({
          status: 'done',
        });
    };
    await Promise.all([g.runTriggers({ until: due + 10 * MINUTE }), editorChecks()]);
    await g.runTriggers({
      until: g.clock.now() + 4 * 60 * MINUTE,
      stop: () => metricRows(g, 'Sheet1!B2:B121') === 120,
    });
    expect(metricRows(g, 'Sheet1!B2:B121')).toBe(120);

    const dispatcher = g.executions.filter((e) => e.kind === 'trigger' && e.spreadsheetId === null);
    const editor = g.executions.filter((e) => e.user === EDITOR && e.functionName === 'continueJob');
    expect(dispatcher.length).toBeGreaterThan(0);
    // The dispatcher's own rows (its step lease claims, its owners' results): their times fall inside the editor's
    // executions, each of which compacted the store, so they were appended while the editor was at work.
    const last = g.sheet.lastRow(STORE);
    const rows = g.sheet.getValues(`'${STORE}'!A1:D${last}`);
    const dispatcherTimes = rows.flatMap(([a, b, payload, at]) =>
      b === 'claim:step' ? [Number(a)] : a === '*' && String(payload).includes('owner-') ? [Number(at)] : [],
    );
    const during = dispatcherTimes.filter((t) =>
      editor.some((e) => e.startedAt <= t && t <= e.startedAt + (e.elapsedMs ?? 0)),
    );
    console.log(
      `compaction beside the dispatcher: ${editor.length} editor steps, ${dispatcherTimes.length} dispatcher rows, ${during.length} appended during one; store ${last} rows`,
    );
    expect(during.length).toBeGreaterThan(0);
    // Nothing lost: every owner's and live domain is kept; the expired ones were compacted away.
    const kept = storedKeys(g);
    expect([...owners, ...live, ...theirs.flat()].filter((d) => !kept.has(d))).toEqual([]);
    expect(old.filter((d) => kept.has(d)).length).toBeLessThan(old.length);
    expect(g.executions.filter((e) => e.status !== 'ok')).toEqual([]);
  });
});
