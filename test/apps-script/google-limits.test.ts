// Google's limits at any size (issue 45): 20 triggers per user per script, an add-on's too, at any number of
// spreadsheets with background checks; the user's per-spreadsheet state forgotten once a spreadsheet has been quiet
// past the retention; every stored value and the formulas' queue capped by bytes. Through the built bundle in the stand-in (which refuses a 21st trigger with Google's text).
import { byteParts, utf8Bytes } from '../../apps-script/src/stores/storage';
import { fitQueue, type FormulaQueue, MAX_QUEUE_BYTES } from '../../apps-script/src/stores/books';
import type { AppsScriptStandIn } from './harness';
import { domains, entryPlanSuite, sidebarCheck } from './support';

jest.setTimeout(600_000);

const DAY = 86_400_000;
const suite = entryPlanSuite();
let gas: AppsScriptStandIn;

describe('triggers within 20 per user', () => {
  it('background checks go on in 25 spreadsheets of one add-on user, with at most 20 triggers and none refused', async () => {
    gas = await suite.open({ installAs: 'addon' });
    let most = 0;
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const id = i === 0 ? gas.spreadsheetId : gas.addSpreadsheet(`List ${i}`);
      gas.useSpreadsheet(id);
      ids.push(id);
      const info = await gas.run<{ on: boolean }>('startBackground');
      expect(info.on).toBe(true);
      most = Math.max(most, gas.triggers.filter((t) => t.user === gas.owner).length);
    }
    const edits = gas.triggers.filter((t) => t.kind === 'ON_EDIT').length;
    console.log(
      `25 spreadsheets with background checks: at most ${most} triggers at once (${edits} edit triggers), ` +
        `${gas.refusedTriggerCreations.length} creations refused`,
    );
    expect(most).toBeLessThanOrEqual(20);
    expect(most).toBeLessThanOrEqual(16); // 15 edit triggers (MAX_EDIT_TRIGGERS) and the one time-driven trigger
    expect(gas.refusedTriggerCreations.filter((r) => /too many triggers/.test(r.message))).toEqual([]);
    // Every one of them still goes on (the edit trigger only hastens a step after an edit).
    for (const id of ids) {
      gas.useSpreadsheet(id);
      const info = await gas.run<{ on: boolean; stopped?: string }>('getBackground');
      expect({ id, on: info.on, stopped: info.stopped }).toEqual({ id, on: true, stopped: undefined });
    }
  });
});

describe("the user's per-spreadsheet state", () => {
  it('is forgotten once a spreadsheet has been quiet past the retention', async () => {
    gas = await suite.open({ installAs: 'addon' });
    await sidebarCheck(gas, undefined, 'A', domains(20, 'quiet'));
    await gas.run('startBackground');
    await gas.run('stopBackground');
    const mine = () =>
      Object.keys(gas.properties.user(gas.owner)).filter((k) => k.includes(gas.spreadsheetId));
    expect(mine().length).toBeGreaterThan(0);
    await gas.runTriggers({ until: gas.clock.now() + 32 * DAY });
    console.log(
      `quiet 32 days: ${mine().length} user properties of the spreadsheet left (${mine().join(', ')})`,
    );
    expect(mine()).toEqual([]);
  });
});

describe('every stored value capped by bytes, as Google counts them', () => {
  const mixed = 'aü€😀'.repeat(3_000) + 'x';

  it('measures UTF-8 bytes and cuts a text into parts under a byte cap, never inside a character', () => {
    expect(utf8Bytes(mixed)).toBe(Buffer.byteLength(mixed, 'utf8'));
    const parts = byteParts(mixed, 8_000);
    expect(parts.join('')).toBe(mixed);
    expect(Math.max(...parts.map((p) => Buffer.byteLength(p, 'utf8')))).toBeLessThanOrEqual(8_000);
    expect(parts.every((p) => !/[\uD800-\uDBFF]$/.test(p))).toBe(true);
  });

  it("caps the formulas' queue by its bytes (a cache value holds 100 KB), keeping the longest-waiting domains", () => {
    const wanted: Record<string, number> = {};
    for (let i = 0; i < 6_000; i++) wanted[`a-rather-long-domain-name-${i}.example.com`] = 1_000 + i;
    const ended: FormulaQueue['ended'] = {};
    for (let i = 0; i < 500; i++)
      ended[`gone-${i}.example.com`] = {
        outcome: { kind: 'skip', reason: 'lookup_failed', retryable: true } as never,
        at: i,
      };
    const fitted = fitQueue({ wanted, ended });
    const bytes = Buffer.byteLength(JSON.stringify(fitted), 'utf8');
    const kept = Object.values(fitted.wanted);
    console.log(`queue of 6,000 domains: ${kept.length} kept in ${bytes} bytes (cap ${MAX_QUEUE_BYTES})`);
    expect(bytes).toBeLessThanOrEqual(MAX_QUEUE_BYTES);
    // The former cap of 2,000 entries would have made a value Google refuses whole (over 100 KB) with names this long.
    const byCount = { wanted: Object.fromEntries(Object.entries(wanted).slice(0, 2_000)), ended };
    expect(Buffer.byteLength(JSON.stringify(byCount), 'utf8')).toBeGreaterThan(100 * 1024);
    // Short names: more than 2,000 fit.
    const short = fitQueue({
      wanted: Object.fromEntries([...Array(8_000).keys()].map((i) => [`d${i}.io`, i])),
      ended: {},
    });
    expect(Object.keys(short.wanted).length).toBeGreaterThan(4_000);
    expect(Math.max(...kept)).toBeLessThan(
      Math.min(...Object.values(wanted).filter((t) => !kept.includes(t))),
    );
    // A queue that fits is kept as it is.
    const small = { wanted: { 'a.com': 1 }, ended: {} };
    expect(fitQueue(small)).toBe(small);
  });

  it('keeps a property value under 9 KB when its characters are many bytes each (a spreadsheet named in €)', async () => {
    gas = await suite.open({ installAs: 'addon' });
    const id = gas.addSpreadsheet('€'.repeat(4_000)); // 4,000 characters, 12,000 bytes
    gas.useSpreadsheet(id);
    const info = await gas.run<{ on: boolean }>('startBackground');
    expect(info.on).toBe(true);
    const values = Object.values(gas.properties.user(gas.owner));
    expect(Math.max(...values.map((v) => Buffer.byteLength(v, 'utf8')))).toBeLessThanOrEqual(9 * 1024);
  });
});
