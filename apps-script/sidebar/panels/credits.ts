// The "Credits this month" panel: what the month's checks were billed, beside the monthly budget the user sets.
/// <reference lib="dom" />
import type { Actions } from '../actions';
import { byId, setText } from '../dom';
import type { PageState } from '../state';

export type CreditsView = Pick<PageState, 'credits'>;

export function render(state: CreditsView, previous?: CreditsView): void {
  const { credits } = state;
  if (!credits) return;
  setText('credits-used', credits.text);
  // The budget field is the user's: the server's budget is written into it when it arrives.
  if (credits !== previous?.credits)
    byId<HTMLInputElement>('credit-budget').value =
      credits.budget === undefined ? '' : String(credits.budget);
}

export function wire(actions: Actions): void {
  byId('save-budget').addEventListener('click', () => {
    const typed = byId<HTMLInputElement>('credit-budget').value.trim();
    actions.saveBudget(typed === '' ? null : Number(typed));
  });
}
