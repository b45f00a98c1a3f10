// The "Check domains" panel: the selected range or a whole column, "Check again", the estimate and Start. The form
// is the user's; what it chose is read when Start or Estimate is pressed.
/// <reference lib="dom" />
import type { Actions } from '../actions';
import type { JobSource } from '../contract';
import { byId, plural, setClass, setDisabled, setText } from '../dom';
import { isRunning, type PageState } from '../state';

export type CheckView = Pick<PageState, 'selection' | 'estimates' | 'busy' | 'loop' | 'job' | 'key'>;

function selectionText(state: CheckView): { text: string; error: boolean } | undefined {
  const { info, error } = state.selection;
  if (error !== undefined) return { text: `Could not read the selection: ${error}`, error: true };
  if (!info) return undefined;
  const { sheetName, a1, rows, columns } = info;
  if (!a1 || rows < 1)
    return { text: `Nothing is selected in ${sheetName}: select the cells with the URLs.`, error: true };
  if (columns > 1)
    return {
      text:
        `${sheetName} · ${a1} has ${plural(columns, 'column', 'columns')}: ` +
        'select one column of URLs (the results go into the 5 columns to its right).',
      error: true,
    };
  return { text: `${sheetName} · ${a1} (${plural(rows, 'row', 'rows')})`, error: false };
}

export function render(state: CheckView): void {
  const selection = selectionText(state);
  if (selection) {
    setText('selection-info', selection.text);
    setClass('selection-info', 'error', selection.error);
  }
  setText('estimate', state.estimates.check);
  const busy = state.busy > 0;
  setDisabled('start', busy || state.loop.driving || isRunning(state.job));
  setDisabled('estimate-check', busy || !state.key.settings?.hasKey);
  setDisabled('refresh-selection', busy);
}

/** The check the form describes, or what is wrong with it. */
function chosenSource(): JobSource | string {
  const fresh = byId<HTMLInputElement>('fresh').checked;
  const checked = document.querySelector<HTMLInputElement>('input[name="source"]:checked');
  if (checked?.value !== 'column') return { source: 'selection', fresh };
  const typed = byId<HTMLInputElement>('column').value.trim();
  const column = typed.toUpperCase();
  if (!/^[A-Z]{1,3}$/.test(column)) {
    return typed
      ? `“${typed}” is not a column letter. Enter a letter such as B.`
      : 'Enter the letter of the column that holds the URLs, such as B.';
  }
  return { source: 'column', column, headerRow: byId<HTMLInputElement>('header-row').checked, fresh };
}

function choose(source: 'selection' | 'column'): void {
  const radio = document.querySelector<HTMLInputElement>(`input[name="source"][value="${source}"]`);
  if (radio) radio.checked = true;
}

export function wire(actions: Actions): void {
  byId('refresh-selection').addEventListener('click', () => {
    choose('selection');
    void actions.loadSelection();
  });
  byId('column').addEventListener('input', () => choose('column'));
  byId('start').addEventListener('click', () => void actions.start(chosenSource()));
  byId('estimate-check').addEventListener('click', () => void actions.estimate(chosenSource()));
}
