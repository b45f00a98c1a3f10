// The retention PRIVACY.md promises (30 days by default) holds on every path that writes the result store: a sidebar
// check with background checks never turned on, turned off, or stopped by the service (a lapsed plan), in a bound
// script and in a published add-on, and formulas refreshed from the menu; with nobody opening the spreadsheet for 32
// days, nothing older than the retention is kept a day past it, and once nothing is left to keep the trigger that
// kept the promise is gone too.
import { type AppsScriptStandIn, type LoadOptions } from './harness';
import {
  domains,
  ENTRY_CONFIG,
  ENTRY_KEY as KEY,
  entryPlanSuite,
  keptTimes,
  sidebarCheck,
  storedKeys,
} from './support';

jest.setTimeout(600_000);

const DAY = 86_400_000;
const HOUR = 3_600_000;

const suite = entryPlanSuite();
let gas: AppsScriptStandIn;
// The lapsed plan of one test is not the next test's.
afterEach(() => suite.sandbox().sandbox.configure(ENTRY_CONFIG));

/** Trigger executions that failed (Google e-mails the user each one; an add-on's say nothing). */
const failedTriggers = () => gas.executions.filter((e) => e.kind === 'trigger' && e.status !== 'ok');
const timeDriven = () => gas.triggers.filter((t) => t.kind === 'CLOCK' && !t.spent);

type Path = 'never on' | 'turned off' | 'stopped by the service' | 'formulas, Refresh from the menu';

/** Writes results to the store by `path`, as the owner, in the open spreadsheet. */
async function writeBy(path: Path): Promise<void> {
  const list = domains(120, 'kept');
  if (path === 'formulas, Refresh from the menu') {
    gas.sheet.setValues(
      'A2:A121',
      list.map((d) => [d]),
    );
    await gas.edit('B2', '=DAPA(A2:A121)');
    // The formula fills what its 25 s allow; Refresh finishes the rest and keeps what it fetched.
    for (let i = 0; i < 6; i++) {
      await gas.runTriggers({ until: gas.clock.now() + 70_000 });
      await gas.run('refreshDapaFormulas');
    }
    return;
  }
  if (path !== 'never on') await gas.run('startBackground');
  await sidebarCheck(gas, undefined, 'A', list);
  // With background checks on, the job is theirs: its steps finish it.
  await gas.runTriggers({
    until: gas.clock.now() + 3 * HOUR,
    stop: () => storedKeys(gas).size >= list.length,
  });
  expect(storedKeys(gas).size).toBe(list.length);
  if (path === 'turned off') await gas.run('stopBackground');
  if (path === 'stopped by the service') {
    suite.sandbox().sandbox.configure({ keys: { [KEY]: { ...ENTRY_CONFIG.keys[KEY], expired: true } } });
    gas.sheet.setValues('H1:H3', [['new-one.com'], ['new-two.com'], ['new-three.com']]);
    await gas.edit('I1', '=DAPA(H1:H3)');
    await gas.runTriggers({ until: gas.clock.now() + 2 * HOUR });
    const info = await gas.run<{ stopped?: string }>('getBackground');
    expect(info.stopped).toBeDefined();
  }
}

describe.each([
  ['a bound script', { installAs: 'script' }],
  ['a published add-on', { installAs: 'addon' }],
] as Array<[string, LoadOptions]>)(
  'the retention in %s, with nobody opening the spreadsheet',
  (_, options) => {
    it.each([
      'never on',
      'turned off',
      'stopped by the service',
      'formulas, Refresh from the menu',
    ] as Path[])(
      'keeps nothing past 30 days after results were kept with background checks %s',
      async (path) => {
        gas = await suite.open(options);
        const t0 = gas.clock.now();
        await writeBy(path);
        const kept = keptTimes(gas);
        // Every path keeps results (a Refresh keeps what the caches hold, as of when it was fetched).
        expect(kept.length).toBeGreaterThan(0);
        const newest = Math.max(...kept);
        // Nobody from here on: no menu, no sidebar, no recalculation; only the triggers run. A day past the retention of
        // the newest result, none is kept; then to the 32nd day.
        await gas.runTriggers({ until: newest + 31 * DAY });
        const left = keptTimes(gas);
        await gas.runTriggers({ until: t0 + 32 * DAY });
        console.log(
          `${options.installAs}, background ${path}: ${kept.length} result rows kept, a day past the retention ` +
            `${left.length}, after 32 days ${keptTimes(gas).length}; ` +
            `${gas.executions.filter((e) => e.kind === 'trigger').length} trigger executions, ` +
            `${timeDriven().length} time-driven trigger(s) left`,
        );
        expect(left).toEqual([]);
        expect(keptTimes(gas)).toEqual([]);
        expect(failedTriggers()).toEqual([]);
        // Nothing left to keep and background checks not going on: no time-driven trigger of ours is left behind.
        expect(timeDriven()).toEqual([]);
      },
    );
  },
);
