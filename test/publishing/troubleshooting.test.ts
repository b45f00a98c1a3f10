// docs/troubleshooting.md has an entry for every text the product can show and every code a row can end with: the
// table is built from the code (message-table.ts: every module of shared/, the Sheets shell with its sidebar, the n8n
// node), so a message added later without an entry fails here, naming the file and line it is written at. An entry
// quotes every fixed part of the text whole (a few of its words are not enough) and says what it means and what to do.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeTable, type Message, messageTable, partsOf, quoteOf, SOURCES } from './message-table';

const root = join(__dirname, '../..');
const PAGE = 'docs/troubleshooting.md';
const page = readFileSync(join(root, PAGE), 'utf8');
const flat = (text: string) => text.replace(/\s+/g, ' ');

/** The page's entries (### sections), each as one line of text. */
const entries = page
  .split(/^### /m)
  .slice(1)
  .map((entry) => flat(`### ${entry}`));

/** Whether one of the entries quotes every fixed part of the message whole and says what it means and what to do. */
function hasEntry(parts: string[], among = entries): boolean {
  return among.some(
    (entry) =>
      parts.every((part) => entry.includes(part)) &&
      entry.includes('What it means') &&
      entry.includes('What to do'),
  );
}

function missing(table: Message[], among = entries): string[] {
  return table
    .filter((m) => !hasEntry(m.parts, among))
    .map((m) => `${m.at}: "${m.quote}" (whole text: ${m.text})`);
}

describe('troubleshooting: every message has an entry', () => {
  const table = messageTable();

  test('the table holds the messages of every surface (built from the code, not copied)', () => {
    expect(table.length).toBeGreaterThan(100);
    const from = (prefix: string) => table.filter((m) => m.at.startsWith(prefix)).length;
    for (const source of [
      'apps-script/src/messages.ts',
      'apps-script/src/stores/',
      'apps-script/sidebar/',
      'n8n-node/nodes/',
      'shared/wording.ts',
      'shared/keyprobe.ts',
    ])
      expect({ source, found: from(source) > 0 }).toEqual({ source, found: true });
    // Every module of the core, the Sheets shell (its sidebar too) and the n8n node is read.
    for (const dir of [
      'shared/',
      'apps-script/src/',
      'apps-script/sidebar/',
      'n8n-node/nodes/',
      'n8n-node/credentials/',
    ])
      expect({ dir, read: SOURCES.filter((f) => f.startsWith(dir)).length > 0 }).toEqual({ dir, read: true });
    expect(SOURCES).toEqual(
      expect.arrayContaining(['shared/run.ts', 'shared/redact.ts', 'shared/drivers.ts']),
    );
    // What the brief names, found by the walk: a cell's unfinished text, a sidebar stop, an n8n error, a 401.
    for (const quote of [
      'unfinished: refresh to finish (Extensions → DAPA → Refresh DAPA formulas)',
      'Background checks paused after repeated failures:',
      'Wrong API key: the DAPA service does not accept the key in the DAPA Checker API credential',
      'Incorrect API key: the service answered "incorrect API key provided".',
      // a note (the job's target), an n8n error's description, a text built in a function's own variable
      'No header row: the selection starts at row 1.',
      'Open the credential, paste the correct API key of your plan and use "Test" to check it.',
      'Saved, but the key test failed:',
    ])
      expect({ quote, inTable: table.some((m) => m.quote === quote) }).toEqual({ quote, inTable: true });
  });

  test(`every message the product can show has an entry in ${PAGE}`, () => {
    expect(missing(table)).toEqual([]);
  });

  test(`every code a row or a run can end with has an entry in ${PAGE}`, () => {
    const absent = codeTable()
      .filter(
        ({ code }) => !entries.some((entry) => entry.includes(`\`${code}\``) && entry.includes('What to do')),
      )
      .map(({ code, at }) => `${code} (${at})`);
    expect(absent).toEqual([]);
    // The answers table names every code of an error that stops a run.
    const table = page.slice(page.indexOf("## What the service's answers mean"));
    for (const code of [
      'bad_key',
      'not_premium',
      'network_blocked',
      'not_found',
      'validation',
      'server_error',
    ])
      expect({ code, inTable: table.includes(`\`${code}\``) }).toEqual({ code, inTable: true });
  });

  test('a message added to messages.ts later, without an entry, fails (a constant and a function alike)', () => {
    const source = readFileSync(join(root, 'apps-script/src/messages.ts'), 'utf8');
    const added =
      `${source}\nexport const DAILY_QUOTA_SPENT = 'Google’s daily quota of trigger runtime is spent: checks go on tomorrow.';\n` +
      'export function nextDayText(day: string): string {\n  return `Paused until ${day}: the day’s URL fetches are spent.`;\n}\n';
    const grown = messageTable({ messagesSource: added });
    expect(grown.length).toBe(table.length + 2);
    expect(missing(grown)).toEqual([
      expect.stringContaining('(DAILY_QUOTA_SPENT): "Google’s daily quota of trigger runtime is spent'),
      expect.stringContaining('(nextDayText): ": the day’s URL fetches are spent."'),
    ]);
  });

  test('an entry must quote every fixed part whole: a few of its words, or one part of two, is not an entry', () => {
    const message: Message = {
      at: 'x.ts:1',
      quote: 'The script answered',
      parts: partsOf('The script answered \u0000 after \u0000 retries: try again later.'),
      text: 'The script answered … after … retries: try again later.',
    };
    expect(message.parts).toEqual(['The script answered', 'after', 'retries: try again later.']);
    const entry = (quoted: string) => `### x You see: ${quoted} **What it means:** a. **What to do:** b.`;
    expect(missing([message], [entry('`The script answered ...`')])).toHaveLength(1);
    expect(missing([message], [entry('`The script answered <n> after <m> retries`')])).toHaveLength(1);
    expect(
      missing([message], [entry('`The script answered <n> after <m> retries: try again later.`')]),
    ).toEqual([]);
  });

  test('a message is named by its opening words, or its longest fixed part when it opens with what varies', () => {
    expect(quoteOf('Could not read the credits: \u0000')).toBe('Could not read the credits:');
    expect(quoteOf('\u0000 was taken off background checks: it could not be opened (\u0000).')).toBe(
      'was taken off background checks: it could not be opened (',
    );
    expect(quoteOf('\u0000: \u0000')).toBeUndefined();
  });
});
