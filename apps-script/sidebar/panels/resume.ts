// The resume offer: a stored check is unfinished and nothing here drives it; Resume drives it, "Cancel it" ends it.
import type { Actions } from '../actions';
import { byId, formatCount, plural, setDisabled, setHidden, setText } from '../dom';
import type { PageState } from '../state';

export type ResumeView = Pick<PageState, 'resume' | 'busy' | 'loop'>;

export function render(state: ResumeView): void {
  const offered = state.resume;
  setHidden('resume', !offered);
  if (offered) {
    setText(
      'resume-text',
      `A check of ${offered.sheetName} · ${offered.a1} is unfinished: ${formatCount(offered.done)} of ` +
        `${plural(offered.total, 'row', 'rows')} done.`,
    );
  }
  const blocked = state.busy > 0 || state.loop.driving;
  setDisabled('resume-job', blocked);
  setDisabled('discard-job', blocked);
}

export function wire(actions: Actions): void {
  byId('resume-job').addEventListener('click', () => actions.resume());
  byId('discard-job').addEventListener('click', () => void actions.discard());
}
