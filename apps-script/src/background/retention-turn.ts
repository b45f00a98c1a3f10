// The dispatcher's turn for the retention: the result store's upkeep in every spreadsheet of the user whose oldest
// result passed it, whatever its background checks' status, and the user's state of a spreadsheet that has been quiet
// past it forgotten. The promise of PRIVACY.md needs nobody to open the spreadsheet.
/// <reference types="google-apps-script" />
import { dailyLimitOf, now } from '../platform/gas';
import { inSpreadsheet } from '../stores/session';
import {
  type BackgroundState,
  type listBackgrounds,
  listUpkeep,
  setUpkeepDue,
} from '../stores/background-store';
import { forgetJob, loadJob } from '../stores/job-store';
import { forgetSaved } from '../stores/saved-credits';
import { stepUpkeep } from '../stores/store-compaction';
import type { Turn } from './step';

type Spreadsheet = GoogleAppsScript.Spreadsheet.Spreadsheet;

/** A spreadsheet whose upkeep is wanted this soon is served in this turn. */
const DUE_SLACK_MS = 60_000;

/**
 * The store's upkeep in every spreadsheet whose oldest result passed the retention and which no step served in this
 * turn: background checks off (never on, turned off), stopped by the service, or a bound script's (its steps leave the
 * upkeep to the hourly watch). What is left to keep sets the next upkeep; a store that keeps nothing more wants none.
 */
export function keepTheRetention(
  turn: Turn,
  served: ReadonlySet<string>,
  open: (id: string, state: BackgroundState) => Spreadsheet | undefined,
  all: ReturnType<typeof listBackgrounds>,
): void {
  const at = turn.executionStartedAt;
  for (const { id, state, at: due } of listUpkeep(all)) {
    if (served.has(id) || due > at + DUE_SLACK_MS || now() >= turn.endsAt) continue;
    const spreadsheet = open(id, state);
    if (!spreadsheet) continue;
    try {
      const { dueAt } = inSpreadsheet(spreadsheet, () => stepUpkeep(spreadsheet, {}));
      if (dueAt === undefined) forgetQuiet(id);
      setUpkeepDue(id, dueAt); // the user's trigger is set at the turn's end
    } catch (error) {
      if (dailyLimitOf(error)) throw error;
      console.warn(`DAPA: results not compacted (${error instanceof Error ? error.message : String(error)})`);
    }
  }
}

/**
 * A spreadsheet whose store keeps nothing any more has been quiet past the retention (nothing was checked there since):
 * this user's state of it goes too, its finished sidebar check and the rows to retry, and its saved-credit marks (its
 * background state goes with its upkeep entry when its checks are off: setUpkeepDue).
 */
function forgetQuiet(id: string): void {
  if (loadJob(id)?.status !== 'running') forgetJob(id);
  forgetSaved(id);
}
