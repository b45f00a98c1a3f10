// The one table of features × Google's consent boxes, and what each feature does when a box it uses is unticked: the
// user guide and apps-script/publishing/SCOPES.md show it as it is (the consent test holds them, and the menu, to it).
// Documentation as data: no runtime code imports it, so it stays out of the Apps Script bundle.
import type { Box } from './gas';

/** One row of the consent table: a feature as users name it, the boxes it uses, and what happens without one. */
export interface FeatureConsent {
  feature: string;
  uses: readonly Box[];
  /** What DAPA does when a box it uses is unticked (the texts are in docs/troubleshooting.md). */
  unticked: string;
}

/** "an alert says `<item> needs your permission: ...`, then Google's screen comes back" (messages.ts permissionNeeded). */
const ASKS = (item: string) =>
  `an alert says \`${item} needs your permission: ...\`, then Google's screen comes back for the missing box`;

/** Every menu item is in a row (the consent test holds it to the menu that onOpen builds). */
export const CONSENT: readonly FeatureConsent[] = [
  {
    feature: '`=DAPA` formulas',
    uses: [],
    unticked:
      'none asked: Google runs a formula without a screen. Where Google still refuses its request ("Connect to an external service" unticked), the cell says `Google did not let DAPA reach the DAPA service: ...`',
  },
  {
    feature: '**Open sidebar**, **Check selection**',
    uses: ['request', 'sheets', 'ui'],
    unticked:
      'the sidebar says `Checks from the sidebar need your permission to ...`; **Start** and **Check selection**: ' +
      ASKS('A check from the sidebar or Check selection'),
  },
  {
    feature: '**Set API key**, **Test key**',
    uses: ['request', 'ui'],
    unticked: `${ASKS('The key test')}. Spreadsheets unticked: the key is saved, and the message says DAPA could not check who can edit this spreadsheet`,
  },
  {
    feature: '**Try with sample data**',
    uses: ['sheets'],
    unticked: ASKS('Try with sample data'),
  },
  {
    feature: '**Refresh DAPA formulas**, **Check DAPA formulas again**',
    uses: ['sheets'],
    unticked: ASKS('<the item>'),
  },
  {
    feature: '**Turn on background checks**, scheduled **Refresh**',
    uses: ['request', 'sheets', 'triggers'],
    unticked: `the sidebar says \`Background checks need your permission to ...\`; **Turn on**: ${ASKS('Turn on background checks')}`,
  },
  {
    feature: '**Turn off background checks**',
    uses: ['sheets'],
    unticked: `${ASKS('Turn off background checks')} (the triggers' box is used when ticked)`,
  },
  {
    feature: '**Remove DAPA from this spreadsheet**',
    uses: ['sheets', 'ui'],
    unticked: `before it asks you to confirm, ${ASKS('Remove DAPA from this spreadsheet')} (the triggers' box is used when ticked)`,
  },
  {
    feature: '**Help**, and every menu item that opens the sidebar or a dialog',
    uses: ['ui'],
    unticked:
      "a notice in the spreadsheet says `DAPA cannot open its sidebar or dialogs: ...`, and Google's screen comes back for that box",
  },
];
