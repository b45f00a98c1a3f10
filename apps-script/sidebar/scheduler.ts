// The page's one timer. The state's `wanted` table says when each timed server call is wanted next (the job loop's
// next step, the background drive); the scheduler waits for the earliest entry and runs what is due then.
/// <reference lib="dom" />
import type { Wanted } from './state';
import type { Store } from './store';

export type Task = keyof Wanted;

const TASKS: readonly Task[] = ['step', 'drive'];

function dueAt(wanted: Wanted): number | undefined {
  const times = TASKS.map((task) => wanted[task]).filter((at): at is number => at !== undefined);
  return times.length > 0 ? Math.min(...times) : undefined;
}

/** Follows the store's `wanted` table with one timeout; a due task leaves the table before it runs. */
export function startScheduler(store: Store, run: Record<Task, () => void>): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (wanted: Wanted): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const at = dueAt(wanted);
    if (at !== undefined) timer = setTimeout(fire, Math.max(0, at - Date.now()));
  };
  const fire = (): void => {
    timer = undefined;
    const now = Date.now();
    const due = TASKS.filter((task) => (store.state.wanted[task] ?? Infinity) <= now);
    if (due.length === 0) return arm(store.state.wanted);
    store.update((state) => {
      const wanted = { ...state.wanted };
      for (const task of due) delete wanted[task];
      return { ...state, wanted };
    });
    for (const task of due) run[task]();
  };
  store.subscribe((state, previous) => {
    if (state.wanted !== previous.wanted) arm(state.wanted);
  });
  arm(store.state.wanted);
}
