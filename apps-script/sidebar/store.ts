// The page's one store: the state, replaced whole by each change, and those who follow it (the render, the
// scheduler), told the new state and the one before after every change.
import type { PageState } from './state';

export type Listener = (state: PageState, previous: PageState) => void;

export interface Store {
  readonly state: PageState;
  /** Replaces the state by `change(state)`; listeners hear of it unless the same state comes back. */
  update(change: (state: PageState) => PageState): void;
  subscribe(listener: Listener): void;
}

export function createStore(initial: PageState): Store {
  let state = initial;
  const listeners: Listener[] = [];
  return {
    get state() {
      return state;
    },
    update(change) {
      const previous = state;
      state = change(previous);
      if (state !== previous) for (const listener of listeners) listener(state, previous);
    },
    subscribe(listener) {
      listeners.push(listener);
    },
  };
}
