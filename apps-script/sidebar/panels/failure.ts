// The failure notice: what went wrong, with Retry where doing it again can help, and Dismiss.
import type { Actions } from '../actions';
import { byId, setHidden, setText } from '../dom';
import type { PageState } from '../state';

export type FailureView = Pick<PageState, 'failure'>;

export function render(state: FailureView): void {
  const { failure } = state;
  setHidden('failure', !failure);
  if (!failure) return;
  setText('failure-text', failure.text);
  setHidden('failure-retry', !failure.retry);
}

export function wire(actions: Actions): void {
  byId('failure-retry').addEventListener('click', () => actions.retryFailure());
  byId('failure-dismiss').addEventListener('click', () => actions.dismissFailure());
}
