// The "Background checks" panel: on or off, how this install runs them, what is left, why they stopped, the next
// step, "Check formulas again" with its estimate, how long results are kept, the scheduled refresh, credits saved.
/// <reference lib="dom" />
import type { Actions } from '../actions';
import type { BackgroundInfo, ScheduleEvery } from '../contract';
import { byId, clockTime, plural, setClass, setHidden, setText } from '../dom';
import { isRunning, type PageState } from '../state';

export type BackgroundView = Pick<PageState, 'background' | 'job' | 'checkStops' | 'estimates'>;

/** What the install mode implies for a closed sheet. */
function modeText(b: BackgroundInfo): string {
  if (b.mode === 'bound')
    return 'Installed as a script of this sheet: with it closed, steps come every minute.';
  if (b.cadence === 'minute')
    return 'Editor add-on: one trigger per document (Google’s rule); steps come at the plan’s pace.';
  return (
    'Editor add-on: Google allows its steps only hourly here, about 5 minutes of checks an hour. ' +
    'While this sidebar is open, it checks at the plan’s pace.'
  );
}

/**
 * What is left to check. The server counts a running check's unchecked rows and the formulas' unchecked domains;
 * beside a check that has stopped, only the formulas can be waiting, and figures asked for before it stopped are
 * not shown at all (fresh ones are on their way: see setJob in actions.ts).
 */
function leftText(b: BackgroundInfo, state: BackgroundView): string {
  const stoppedCheck = !!state.job && !isRunning(state.job);
  if (stoppedCheck && state.background.askedAt < state.checkStops) return '';
  const minutes =
    b.leftMs === undefined
      ? ''
      : `: about ${Math.max(1, Math.round(b.leftMs / 60_000))} min at the plan’s pace`;
  if (b.rowsLeft <= 0) return 'Nothing left to check.';
  if (stoppedCheck) return `DAPA formulas wait for ${plural(b.rowsLeft, 'domain', 'domains')}${minutes}.`;
  return `${plural(b.rowsLeft, 'row', 'rows')} left${minutes}.`;
}

function statusText(b: BackgroundInfo): string {
  let status = b.on ? 'On: unfinished formulas and checks go on with the sidebar closed.' : 'Off.';
  if (b.on && b.nextStepAt !== undefined) status += ` Next step at ${clockTime(b.nextStepAt)}.`;
  if (b.schedule)
    status += ` Refresh ${b.schedule.every} (${b.schedule.target === 'range' ? 'the last range' : 'formulas'}).`;
  return status;
}

/** The fields are the user's: the server's values are written into them when its figures arrive. */
function fillFields(b: BackgroundInfo): void {
  byId<HTMLInputElement>('keep-days').value = String(b.retentionDays);
  byId<HTMLSelectElement>('schedule-every').value = b.schedule?.every ?? '';
  if (b.schedule) byId<HTMLSelectElement>('schedule-target').value = b.schedule.target;
}

export function render(state: BackgroundView, previous?: BackgroundView): void {
  setText('again-estimate', state.estimates.formulas);
  const { info: b, error } = state.background;
  if (!b) {
    if (error !== undefined) setText('background-status', `Could not read: ${error}`);
    return;
  }
  setText('background-status', statusText(b));
  setText('background-mode', modeText(b));
  setText('background-left', leftText(b, state));
  setText('background-stopped', b.stopped ? `Stopped: ${b.stopped}` : '');
  setHidden('background-stopped', !b.stopped);
  // Scopes the user did not grant (granular consent) and spreadsheets the background dropped: said, never hidden.
  const notes = [
    ...(b.access && !b.stopped ? [b.access.message] : []),
    ...(b.dropped ?? []),
    ...(b.quota && !b.stopped ? [b.quota] : []),
  ];
  setText('background-access', notes.join(' '));
  setHidden('background-access', notes.length === 0);
  setText('background-toggle', b.on && !b.stopped ? 'Turn off' : 'Turn on');
  if (b !== previous?.background.info) fillFields(b);
  const forecast = b.schedule?.forecast;
  setText('schedule-forecast', forecast?.text ?? '');
  setClass('schedule-forecast', 'error', !!forecast?.over);
  setText(
    'saved-credits',
    `Background checks used ${plural(b.creditsUsed, 'credit', 'credits')} here; kept results saved you ` +
      `${plural(b.savedCredits, 'credit', 'credits')} here: each reused after the 6-hour cache had let it go, ` +
      `counted once (kept ${plural(b.retentionDays, 'day', 'days')}).`,
  );
}

export function wire(actions: Actions): void {
  byId('background-toggle').addEventListener('click', () => actions.toggleBackground());
  byId('check-again').addEventListener('click', () => actions.checkFormulasAgain());
  byId('estimate-again').addEventListener('click', () => void actions.estimateFormulasAgain());
  byId('save-keep').addEventListener('click', () =>
    actions.setKeepDays(Number(byId<HTMLInputElement>('keep-days').value)),
  );
  byId('save-schedule').addEventListener('click', () => {
    const every = byId<HTMLSelectElement>('schedule-every').value as ScheduleEvery | '';
    const target = byId<HTMLSelectElement>('schedule-target').value === 'range' ? 'range' : 'formulas';
    actions.setSchedule(every ? { every, target } : null);
  });
}
