// The Sheets sidebar's browser code: settings, a bulk check driven as many short continueJob() calls, progress,
// cancel / resume / retry and a summary. Here the page is put together: one store, one render, one scheduler.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { createActions } from './actions';
import { byId } from './dom';
import { render, wire } from './page';
import { startScheduler } from './scheduler';
import { scriptRun } from './server';
import { initialState } from './state';
import { createStore } from './store';

function boot(): void {
  if (!scriptRun()) {
    const notice = byId('boot-error');
    notice.textContent =
      'This page talks to the add-on through google.script.run, which is missing: open it from the DAPA menu in Google Sheets.';
    notice.hidden = false;
    return;
  }
  const store = createStore(initialState);
  store.subscribe(render);
  const actions = createActions(store);
  startScheduler(store, { step: () => void actions.step(), drive: actions.driveBackground });
  wire(actions);
  render(store.state);
  actions.open();
}

boot();
