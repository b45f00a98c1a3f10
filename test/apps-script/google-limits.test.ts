// Google's limits at any size (issue 45): 20 triggers per user per script, an add-on's too, at any number of
// spreadsheets with background checks; the user's per-spreadsheet state forgotten once a spreadsheet has been quiet
// past the retention. Through the built bundle in the stand-in (which refuses a 21st trigger with Google's text).
import { type AppsScriptStandIn } from './harness';
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
