// The page drawn from its state: one render that hands every panel the state (each reads its own slice), and the
// wiring of every panel's events to the actions.
import type { Actions } from './actions';
import * as background from './panels/background';
import * as check from './panels/check';
import * as credits from './panels/credits';
import * as failure from './panels/failure';
import * as job from './panels/job';
import * as key from './panels/key';
import * as resume from './panels/resume';
import type { PageState } from './state';

interface Panel {
  render(state: PageState, previous?: PageState): void;
  wire(actions: Actions): void;
}

/** In the markup's order. */
const PANELS: readonly Panel[] = [key, credits, resume, check, background, job, failure];

/** Draws the page from the state; `previous` (absent on the first draw) tells which server answers are new. */
export function render(state: PageState, previous?: PageState): void {
  for (const panel of PANELS) panel.render(state, previous);
}

export function wire(actions: Actions): void {
  for (const panel of PANELS) panel.wire(actions);
}
