// The publisher checklist of the Sheets add-on: who publishes it and where its pages live, in one file
// (publisher.json), which the repository leaves unfilled for the maintainer. Google asks for "a website on a verified
// domain hosting publicly-accessible information about your app and privacy policy" (Apps Script, OAuth client
// verification): the home page, the privacy policy and the terms must be https addresses on the domain the publisher
// verified. `npm run push -- --version` refuses while anything is unfilled, and so does the rendering of the policies.
//
//   node apps-script/publishing/publisher.mjs              report what is unfilled (exit 1) or that all is filled
//   node apps-script/publishing/publisher.mjs --out <dir>  write PRIVACY.md and TERMS.md with the publisher filled in,
//                                                          ready to publish at the addresses of publisher.json
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Each field of publisher.json and what it must hold. */
export const FIELDS = {
  name: 'the person or organisation that publishes the add-on (as on the Marketplace listing)',
  email: 'a contact address users and Google can reach (the consent screen’s support e-mail)',
  verifiedDomain: 'the domain you verified in Google Search Console (such as dapa-addon.org)',
  homePage: 'an https address on that domain describing the add-on (the user guide can be its text)',
  privacyPolicy: 'the https address on that domain where the rendered PRIVACY.md is published',
  termsOfService: 'the https address on that domain where the rendered TERMS.md is published',
  support: 'an https address where users ask for help (an issues page or a support form)',
};

/** The pages that name the publisher, each through `{{publisher.<field>}}` placeholders. */
export const PAGES = ['PRIVACY.md', 'TERMS.md'];

export function readPublisher(file = join(here, 'publisher.json')) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

function hostOf(url) {
  const match = /^https:\/\/([^/?#:]+)(?::\d+)?(?:[/?#]|$)/i.exec(url);
  return match ? match[1].toLowerCase() : undefined;
}

function onDomain(host, domain) {
  return host === domain || host.endsWith(`.${domain}`);
}

/** What is unfilled or wrong in a publisher.json: one line per field, empty when the checklist is complete. */
export function publisherProblems(publisher) {
  const problems = [];
  const value = (field) => (typeof publisher?.[field] === 'string' ? publisher[field].trim() : '');
  for (const [field, what] of Object.entries(FIELDS)) {
    if (!value(field)) problems.push(`${field}: unfilled: ${what}`);
  }
  for (const field of Object.keys(publisher ?? {}))
    if (!(field in FIELDS)) problems.push(`${field}: not a field of the checklist`);
  const email = value('email');
  if (email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    problems.push(`email: "${email}" is not an e-mail address`);
  const domain = value('verifiedDomain').toLowerCase();
  if (domain && !/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain))
    problems.push(`verifiedDomain: "${domain}" is not a domain name (no scheme, no path)`);
  for (const field of ['homePage', 'privacyPolicy', 'termsOfService', 'support']) {
    const url = value(field);
    if (!url) continue;
    const host = hostOf(url);
    if (!host) problems.push(`${field}: "${url}" is not an https address`);
    else if (field !== 'support' && domain && !onDomain(host, domain))
      problems.push(`${field}: "${url}" is not on the verified domain ${domain}`);
  }
  return problems;
}

/** A page with its `{{publisher.<field>}}` placeholders filled in; an unknown placeholder is an error. */
export function renderPage(text, publisher) {
  return text.replace(/\{\{publisher\.(\w+)\}\}/g, (whole, field) => {
    if (!(field in FIELDS)) throw new Error(`unknown placeholder ${whole}`);
    return publisher[field].trim();
  });
}

function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
    const end = lines.findIndex((l) => !l.startsWith('//'));
    const header = lines.slice(0, end).map((l) => l.replace(/^\/\/ ?/, ''));
    console.log(`Usage (apps-script/publishing/publisher.mjs):\n${header.join('\n')}`);
    return;
  }
  const publisher = readPublisher();
  const problems = publisherProblems(publisher);
  if (problems.length > 0) {
    console.error(
      `publisher checklist: ${problems.length} to fill in apps-script/publishing/publisher.json ` +
        `(PUBLISHING.md, step 7):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    process.exit(1);
  }
  const at = argv.indexOf('--out');
  if (at < 0) {
    console.log('publisher checklist: complete');
    return;
  }
  const out = argv[at + 1];
  if (!out) throw new Error('--out needs a folder');
  mkdirSync(out, { recursive: true });
  for (const page of PAGES) {
    writeFileSync(join(out, page), renderPage(readFileSync(join(here, page), 'utf8'), publisher));
    console.log(join(out, page));
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
