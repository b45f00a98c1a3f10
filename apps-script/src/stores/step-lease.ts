// Which execution is running a background step in a spreadsheet, until when: a claim on the spreadsheet's store log
// (claims.ts), taken and given back without a lock, so two users' steps (or the dispatcher, which has no document
// lock, and an open sidebar, which has one) never work one spreadsheet at once. An execution Google ended leaves a
// lease that runs out by itself.
import { claim, releaseClaim } from './claims';

/** The claim's name in the store's log. */
export const STEP_CLAIM = 'step';

/** Takes the current spreadsheet's step lease until `until`; answers its holder id, or undefined when it is held. */
export function takeStepLease(until: number): string | undefined {
  return claim(STEP_CLAIM, until);
}

/** Gives the lease back (only when it is still this holder's: anyone else's release changes nothing). */
export function returnStepLease(holder: string): void {
  releaseClaim(STEP_CLAIM, holder);
}
