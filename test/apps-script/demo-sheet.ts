// The Sheets part of `npm run demo`: the built bundle in the Apps Script stand-in, a sample column of URLs
// (duplicates, mixed spellings, blanks, an invalid entry, a number) and =DAPA(A2:A21, "da,pa,mr,spam", TRUE) in B1.
import { loadAppsScript } from './harness';
import { sheetsAddress } from './support';

export const SAMPLE_COLUMN: Array<string | number> = [
  'example.com',
  'https://www.Example.com/pricing',
  'moz.com',
  'EXAMPLE.COM',
  '',
  'github.com',
  'http://github.com/anthropics',
  'not a url',
  'wikipedia.org',
  'https://en.wikipedia.org/wiki/Domain',
  42,
  'news.ycombinator.com',
  '   ',
  'stackoverflow.com/questions',
  'www.moz.com',
  'nodejs.org',
  'example',
  'developer.mozilla.org',
  'npmjs.com',
  'example.com/',
];

/** Runs the sample through the real bundle against a DAPA API at `sandboxUrl`; returns the sheet as a text table. */
export async function demoSheet(sandboxUrl: string, apiKey: string): Promise<string> {
  const gas = await loadAppsScript({ clock: 'real' });
  try {
    await gas.run('saveSettings', { apiKey, environment: 'custom', baseUrl: sheetsAddress(sandboxUrl) });
    gas.sheet.setValues('A1:A21', [['URL'], ...SAMPLE_COLUMN.map((value) => [value])]);
    const started = Date.now();
    await gas.runCustomFunction('=DAPA(A2:A21, "da,pa,mr,spam", TRUE)', { cell: 'B1' });
    const ms = Date.now() - started;
    const requests = gas.fetches.length;
    // The same formula again, as a recalculation or a reopened sheet would run it: answered from the cache.
    await gas.runCustomFunction('=DAPA(A2:A21, "da,pa,mr,spam", TRUE)', { cell: 'B1' });
    const again = gas.fetches.length - requests;
    const table = gas.sheet.print('A1:E21');
    return (
      `${table}\n\n` +
      `B1 holds =DAPA(A2:A21, "da,pa,mr,spam", TRUE): ${requests} request(s) for 20 cells in ${ms} ms; ` +
      `recalculated: ${again} request(s) (cache).`
    );
  } finally {
    await gas.close();
  }
}
