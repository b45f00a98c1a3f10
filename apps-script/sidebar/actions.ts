// What the page does, as the small set of actions its events call: each talks to the server and changes the state
// through the store. None touches the markup (the panels draw the state) or sets a timer (the scheduler does).
import type {
  BackgroundInfo,
  CreditInfo,
  Estimate,
  JobSource,
  JobState,
  ScheduleChange,
  SettingsChange,
} from './contract';
import { createJobLoop } from './job-loop';
import { errorMessage, isJobState, jobCalls, server } from './server';
import { backgroundArrived, isRunning, jobArrived, type PageState, type Retry, type Wanted } from './state';
import type { Store } from './store';

/** The page's own job loop is checking: one loop per page, so the background drive waits for it to end. */
const DRIVE_BESIDE_LOOP_MS = 5_000;
/** A drive that failed (a network hiccup) is tried again later, whatever the figures shown said. */
const DRIVE_AFTER_FAILURE_MS = 30_000;

export type Actions = ReturnType<typeof createActions>;

export function createActions(store: Store) {
  const set = (patch: Partial<PageState>) => store.update((state) => ({ ...state, ...patch }));
  const setKey = (patch: Partial<PageState['key']>) => set({ key: { ...store.state.key, ...patch } });
  const want = (task: keyof Wanted, at: number | undefined) =>
    store.update((state) => ({ ...state, wanted: { ...state.wanted, [task]: at } }));
  const fail = (text: string, retry?: Retry) => set({ failure: { text, retry } });
  const hideFailure = () => set({ failure: null });

  async function whileBusy<T>(work: () => Promise<T>): Promise<T> {
    store.update((state) => ({ ...state, busy: state.busy + 1 }));
    try {
      return await work();
    } finally {
      store.update((state) => ({ ...state, busy: state.busy - 1 }));
    }
  }

  // ---- answers that other calls follow --------------------------------------------------------------------

  /** A job answer; once the check stops, the background figures and the credits are read again. */
  function setJob(next: JobState | null): void {
    const stops = store.state.checkStops;
    store.update((state) => jobArrived(state, next));
    if (store.state.checkStops === stops) return;
    refreshBackground();
    void loadCredits();
  }

  /** Background figures read again beside other work (a failure shows nothing: the next reading corrects it). */
  function refreshBackground(): void {
    void updateBackground(() => server('getBackground')).catch(() => undefined);
  }

  /** Runs a server call that answers the background figures, and keeps them with the moment they were asked for. */
  async function updateBackground(call: () => Promise<BackgroundInfo>): Promise<void> {
    const askedAt = store.state.checkStops;
    const info = await call();
    store.update((state) => backgroundArrived(state, info, askedAt, Date.now()));
  }

  async function backgroundCall(call: () => Promise<BackgroundInfo>): Promise<void> {
    try {
      await updateBackground(() => whileBusy(call));
    } catch (error) {
      fail(errorMessage(error));
    }
  }

  /** The month's credits and the budget beside them (read again after each check). */
  async function loadCredits(call: () => Promise<CreditInfo> = () => server('getCredits')): Promise<void> {
    try {
      set({ credits: await call() });
    } catch (error) {
      fail(`Could not read the credits: ${errorMessage(error)}`);
    }
  }

  async function estimateText(call: () => Promise<Estimate>): Promise<string> {
    try {
      return (await whileBusy(call)).text;
    } catch (error) {
      return `Could not estimate: ${errorMessage(error)}`;
    }
  }

  async function loadSettings(): Promise<void> {
    try {
      const settings = await server('getSettings');
      // Others can reach the key saved in this bound copy (or DAPA could not check): said as the sidebar opens.
      const warning = settings.sharedKeyWarning;
      setKey(
        warning
          ? { settings, saved: false, message: { text: warning, kind: 'error' } }
          : { settings, saved: false },
      );
    } catch (error) {
      setKey({ error: errorMessage(error) });
    }
  }

  async function loadSelection(): Promise<void> {
    try {
      set({ selection: { info: await server('getSelection') } });
    } catch (error) {
      set({ selection: { ...store.state.selection, error: errorMessage(error) } });
    }
  }

  async function loadJob(): Promise<void> {
    let stored: unknown;
    try {
      stored = await server('getJob');
    } catch (error) {
      fail(`Could not read the last check: ${errorMessage(error)}`, 'loadJob');
      return;
    }
    if (!isJobState(stored)) return setJob(null);
    setJob(stored);
    if (isRunning(stored) && !store.state.loop.driving) set({ resume: stored });
  }

  const { drive, step, cancel, discard, retrySkipped } = createJobLoop({
    store,
    setJob,
    refreshBackground,
    fail,
    hideFailure,
    whileBusy,
  });

  const retries: Record<Retry, () => void> = {
    resume: drive,
    discard: () => void discard(),
    retrySkipped: () => void retrySkipped(),
    loadJob: () => void loadJob(),
  };

  return {
    /** What the page reads when it opens, in this order. */
    open(): void {
      void updateBackground(() => server('getBackground')).catch((error: unknown) =>
        set({ background: { ...store.state.background, error: errorMessage(error) } }),
      );
      void loadSettings();
      void loadSelection();
      void loadJob();
      void loadCredits();
    },

    /** Saves the key or the server; a string is what the form found wrong, said instead. */
    async saveSettings(change: SettingsChange | string, done: string): Promise<void> {
      if (typeof change === 'string') return setKey({ message: { text: change, kind: 'error' } });
      setKey({ message: { text: '', kind: 'info' } });
      try {
        const settings = await whileBusy(() => server('saveSettings', change));
        const warning = settings.sharedKeyWarning;
        setKey({
          settings,
          saved: true,
          message: warning ? { text: `${done} ${warning}`, kind: 'error' } : { text: done, kind: 'ok' },
        });
      } catch (error) {
        setKey({ message: { text: errorMessage(error), kind: 'error' } });
      }
    },

    async testKey(): Promise<void> {
      setKey({ message: { text: 'Testing the key (no query is billed)…', kind: 'info' } });
      try {
        const result = await whileBusy(() => server('testKey'));
        const text = `${result.ok ? '✓' : '✗'} ${result.message}`;
        setKey({ message: { text, kind: result.ok ? 'ok' : 'error' } });
      } catch (error) {
        setKey({ message: { text: `The key test failed: ${errorMessage(error)}`, kind: 'error' } });
      }
    },

    loadSelection,

    /** Starts a check of the chosen source (a string: what the form found wrong) and drives it. */
    async start(source: JobSource | string): Promise<void> {
      if (typeof source === 'string') return fail(source);
      hideFailure();
      try {
        setJob(await whileBusy(() => jobCalls.start(source)));
      } catch (error) {
        fail(`Could not start: ${errorMessage(error)}`);
        return;
      }
      void loadSelection();
      drive();
    },

    /** What the chosen check will cost, before it starts. */
    async estimate(source: JobSource | string): Promise<void> {
      if (typeof source === 'string') return fail(source);
      const check = await estimateText(() => server('estimateJob', source));
      set({ estimates: { ...store.state.estimates, check } });
    },

    async estimateFormulasAgain(): Promise<void> {
      const formulas = await estimateText(() => server('estimateFormulasAgain'));
      set({ estimates: { ...store.state.estimates, formulas } });
    },

    // The job loop's (job-loop.ts): Resume, "Cancel it", "Retry skipped rows", Cancel.
    resume: drive,
    discard,
    retrySkipped,
    cancel,

    saveBudget(budget: number | null): void {
      void loadCredits(() => whileBusy(() => server('setCreditBudget', budget)));
    },

    toggleBackground(): void {
      const info = store.state.background.info;
      const on = info?.on && !info.stopped;
      void backgroundCall(() => server(on ? 'stopBackground' : 'startBackground'));
    },
    checkFormulasAgain: () => void backgroundCall(() => server('checkFormulasAgain')),
    setKeepDays: (days: number) => void backgroundCall(() => server('setKeepDays', days)),
    setSchedule: (change: ScheduleChange | null) => void backgroundCall(() => server('setSchedule', change)),

    /** Retry in the failure notice: does again what failed. */
    retryFailure(): void {
      const retry = store.state.failure?.retry;
      hideFailure();
      if (retry) retries[retry]();
    },
    dismissFailure: hideFailure,

    // ---- what the scheduler runs ----
    step,
    /** While the sidebar is open, it drives unfinished formulas and checks itself, when the plan's window frees. */
    driveBackground(): void {
      if (store.state.loop.driving) return want('drive', Date.now() + DRIVE_BESIDE_LOOP_MS);
      void updateBackground(() => server('driveBackground')).catch(() =>
        want('drive', Date.now() + DRIVE_AFTER_FAILURE_MS),
      );
    },
  };
}
