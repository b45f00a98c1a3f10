// A spreadsheet's table of "wanted at": why its next background step is wanted and by when. Its earliest entry is
// the one answer to "when next", for the user's trigger and the open sidebar alike. Plain data, no I/O.

/**
 * Why a spreadsheet wants its next step: `window`, the plan's window frees; `work`, work is waiting (a start, an edit,
 * a check, rows left); `retry`, after a failed step; `month`, the month's turn frees the credit budget; `schedule`, a
 * scheduled refresh is due; `upkeep`, the oldest result kept passes the retention (the store's upkeep deletes it,
 * whether anyone opens the spreadsheet or not); `kept`, the relay cell asked the document what its formulas fetched and
 * the next step keeps its answer (checks/shown-relay.ts).
 */
export type WantCause = 'window' | 'work' | 'retry' | 'month' | 'schedule' | 'upkeep' | 'kept';
export type Wanted = Partial<Record<WantCause, number>>;

/** The earliest entry of a wanted table (undefined: nothing is wanted). */
export function earliest(wanted: Wanted): { at: number; cause: WantCause } | undefined {
  let first: { at: number; cause: WantCause } | undefined;
  for (const [cause, at] of Object.entries(wanted) as Array<[WantCause, number | undefined]>)
    if (at !== undefined && Number.isFinite(at) && (!first || at < first.at)) first = { at, cause };
  return first;
}
