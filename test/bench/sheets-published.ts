// Issue 19's scenarios for `npm run bench:sheets`: the add-on as Google publishes it (a standalone project whose
// time-driven trigger has no active spreadsheet) with =DAPA in two spreadsheets of one user, and two people writing
// one sheet at once. Each returns its figures whatever the product does; a scenario that fails is reported.
import { DEFAULT_SPREADSHEET_ID } from '../apps-script/harness';
import type { AppsScriptStandIn } from '../apps-script/harness';
import { domains, metricRows, sidebarCheck, storedKeys } from '../apps-script/support';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const EDITOR = 'editor@example.com';

export interface PublishedWorld {
  gas: AppsScriptStandIn;
  key: string;
  baseUrl: string;
  stats(): { requests: number; billed: number; billedTwice: number };
}

function failedTriggers(gas: AppsScriptStandIn): number {
  return gas.executions.filter((e) => e.kind === 'trigger' && e.status !== 'ok').length;
}

async function formula(gas: AppsScriptStandIn, list: readonly string[]): Promise<string> {
  gas.sheet.setValues(
    `A2:A${list.length + 1}`,
    list.map((d) => [d]),
  );
  await gas.edit('B2', `=DAPA(A2:A${list.length + 1})`);
  return `B2:E${list.length + 1}`;
}

/** Two spreadsheets of one user, each with a =DAPA range and background checks on, the sidebar closed. */
export async function twoSpreadsheets(w: PublishedWorld, lists: [string[], string[]]): Promise<string> {
  const { gas } = w;
  const second = gas.addSpreadsheet('Second list');
  const ids = [DEFAULT_SPREADSHEET_ID, second];
  const t0 = gas.clock.now();
  const ranges: string[] = [];
  for (const [i, id] of ids.entries()) {
    gas.useSpreadsheet(id);
    await gas.run('startBackground');
    ranges.push(await formula(gas, lists[i]));
  }
  const total = lists[0].length + lists[1].length;
  const filled = () =>
    ids.reduce((sum, id, i) => {
      gas.useSpreadsheet(id);
      return sum + metricRows(gas, ranges[i]);
    }, 0);
  await gas.runTriggers({ until: t0 + 3 * HOUR, stop: () => filled() === total });
  const took = (gas.clock.now() - t0) / MINUTE;
  const distinct = new Set([...lists[0], ...lists[1]]).size;
  const s = w.stats();
  const met = filled() === total && took <= 120 && failedTriggers(gas) === 0 && gas.maxClockTriggers <= 1;
  return (
    `${filled()} of ${total} rows filled in ${took.toFixed(1)} min (target ≤ 120), ${s.billed} credits for ` +
    `${distinct} distinct domains, billed twice ${s.billedTwice}, failed trigger runs ${failedTriggers(gas)}, at most ` +
    `${gas.maxClockTriggers} time-driven trigger(s) at once: ${met ? 'met' : 'MISSED'}`
  );
}

/** An owner's background step on a 300-domain formula while an editor checks 60 others from the sidebar. */
export async function stepBesideSidebar(w: PublishedWorld): Promise<string> {
  const { gas } = w;
  await gas.runWith({ user: EDITOR }, 'saveSettings', {
    apiKey: w.key,
    environment: 'custom',
    baseUrl: w.baseUrl,
  });
  await gas.run('startBackground');
  const t0 = gas.clock.now();
  const owners = domains(300, 'owner');
  const editors = domains(60, 'editor');
  const range = await formula(gas, owners);
  await Promise.all([
    gas.runTriggers({ until: t0 + HOUR, stop: () => metricRows(gas, range) === 300 }),
    sidebarCheck(gas, EDITOR, 'H', editors, t0 + MINUTE),
  ]);
  await gas.runTriggers({ until: gas.clock.now() + HOUR, stop: () => metricRows(gas, range) === 300 });
  return keptLine(w, [...owners, ...editors]);
}

/** Two users' sidebar checks started at the same moment. */
export async function twoSidebars(w: PublishedWorld): Promise<string> {
  const { gas } = w;
  await gas.runWith({ user: EDITOR }, 'saveSettings', {
    apiKey: w.key,
    environment: 'custom',
    baseUrl: w.baseUrl,
  });
  const a = domains(60, 'left');
  const b = domains(60, 'right');
  await Promise.all([sidebarCheck(gas, 'owner@example.com', 'A', a), sidebarCheck(gas, EDITOR, 'H', b)]);
  return keptLine(w, [...a, ...b]);
}

function keptLine(w: PublishedWorld, checked: readonly string[]): string {
  const kept = storedKeys(w.gas);
  const missing = checked.filter((d) => !kept.has(d)).length;
  const s = w.stats();
  return (
    `${checked.length - missing} of ${checked.length} checked domains in the result store afterwards, ` +
    `${s.billed} credits, billed twice ${s.billedTwice}: ${missing === 0 && s.billedTwice === 0 ? 'met' : 'MISSED'}`
  );
}
