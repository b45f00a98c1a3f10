// The Sheets sidebar's browser code: settings, a bulk check driven as many short continueJob() calls, progress,
// cancel / resume / retry and a summary. Every server string reaches the page through textContent only.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type {
  BackgroundInfo,
  CreditInfo,
  Environment,
  ScheduleEvery,
  JobSource,
  JobState,
  ServerFunctionName,
  ServerFunctions,
  SelectionInfo,
  Settings,
  SettingsChange,
} from './contract';

interface ScriptRun {
  withSuccessHandler(handler: (value: unknown) => void): ScriptRun;
  withFailureHandler(handler: (error: unknown) => void): ScriptRun;
}

interface ScriptHost {
  google?: { script?: { run?: ScriptRun } };
}

const ENVIRONMENT_LABELS: Record<Environment, string> = {
  production: 'Production',
  staging: 'Staging',
  custom: 'Custom',
};

const STATUS_TITLES: Record<JobState['status'], string> = {
  running: 'Checking…',
  done: 'Finished',
  cancelled: 'Cancelled',
  error: 'Stopped by an error',
};

function scriptRun(): ScriptRun | undefined {
  return (window as unknown as ScriptHost).google?.script?.run;
}

/** A readable message from whatever a failure handler received (Apps Script passes an Error, sometimes a string). */
function errorMessage(error: unknown): string {
  if (typeof error === 'string' && error.trim()) return error;
  if (error && typeof (error as { message?: unknown }).message === 'string') {
    const message = (error as { message: string }).message.trim();
    if (message) return message;
  }
  return 'The call to the script failed without a message. Check your connection and try again.';
}

/** Calls one server function through google.script.run as a Promise. */
function server<N extends ServerFunctionName>(
  name: N,
  ...args: Parameters<ServerFunctions[N]>
): Promise<ReturnType<ServerFunctions[N]>> {
  return new Promise((resolve, reject) => {
    const run = scriptRun();
    if (!run) {
      reject(
        new Error('google.script.run is not available: open this sidebar from the add-on menu in Sheets.'),
      );
      return;
    }
    const runner = run
      .withSuccessHandler((value) => resolve(value as ReturnType<ServerFunctions[N]>))
      .withFailureHandler((error) => reject(new Error(errorMessage(error))));
    const call = (runner as unknown as Record<string, (...callArgs: unknown[]) => void>)[name];
    if (typeof call !== 'function') {
      reject(new Error(`The script has no server function ${name}(); the add-on may be out of date.`));
      return;
    }
    call.apply(runner, args);
  });
}

function isJobState(value: unknown): value is JobState {
  const job = value as JobState | null;
  return (
    !!job &&
    typeof job === 'object' &&
    typeof job.total === 'number' &&
    typeof job.done === 'number' &&
    typeof job.status === 'string' &&
    !!job.counts &&
    typeof job.counts === 'object'
  );
}

/** Server job answers are checked before use, so a malformed one gives a message instead of a broken page. */
async function checkedJob(name: ServerFunctionName, answer: Promise<unknown>): Promise<JobState> {
  const value = await answer;
  if (!isJobState(value)) throw new Error(`The script answered ${name}() with something that is not a job.`);
  return value;
}

const jobCalls = {
  start: (source: JobSource) => checkedJob('startJob', server('startJob', source)),
  continue: () => checkedJob('continueJob', server('continueJob')),
  cancel: () => checkedJob('cancelJob', server('cancelJob')),
  retrySkipped: () => checkedJob('retrySkipped', server('retrySkipped')),
};

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The sidebar markup lacks #${id}.`);
  return element as T;
}

function formatCount(value: number | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toLocaleString('en-US') : '0';
}

function plural(count: number, one: string, many: string): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

function setText(id: string, text: string): void {
  byId(id).textContent = text;
}

function showMessage(id: string, text: string, kind: 'ok' | 'error' | 'info'): void {
  const element = byId(id);
  element.textContent = text;
  element.classList.toggle('ok', kind === 'ok');
  element.classList.toggle('error', kind === 'error');
  element.hidden = text === '';
}

// ---- state -----------------------------------------------------------------------------------------------

let settings: Settings | null = null;
let selection: SelectionInfo | null = null;
let job: JobState | null = null;
/** A continueJob() loop is active. */
let driving = false;
/** The user pressed Cancel while a step was in flight: the loop stops (and cancels, if the server has not). */
let stopRequested = false;
/** Server calls in flight other than the loop (settings, start, retry). */
let busyCalls = 0;

async function whileBusy<T>(work: () => Promise<T>): Promise<T> {
  busyCalls++;
  refreshControls();
  try {
    return await work();
  } finally {
    busyCalls--;
    refreshControls();
  }
}

// ---- settings --------------------------------------------------------------------------------------------

function chosenEnvironment(): Environment {
  const checked = document.querySelector<HTMLInputElement>('input[name="environment"]:checked');
  const value = checked?.value;
  return value === 'staging' || value === 'custom' ? value : 'production';
}

function showCustomUrlRow(): void {
  byId('custom-url-row').hidden = chosenEnvironment() === 'production';
}

/** Opens the settings form while no key is saved; it folds away once one is. */
function renderSettings(): void {
  if (!settings) return;
  if (!settings.hasKey) byId<HTMLDetailsElement>('settings-details').open = true;
  setText('key-status', settings.hasKey ? `Key saved: ${settings.keyHint}` : 'No API key saved yet.');
  byId('key-status').classList.toggle('error', !settings.hasKey);
  setText(
    'server-status',
    `Server: ${ENVIRONMENT_LABELS[settings.environment] ?? settings.environment} (${settings.baseUrl})`,
  );
  const keyInput = byId<HTMLInputElement>('api-key');
  keyInput.placeholder = settings.hasKey ? 'Paste a new key to replace it' : 'Paste your API key';
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="environment"]')) {
    radio.checked = radio.value === settings.environment;
  }
  const baseUrl = byId<HTMLInputElement>('base-url');
  baseUrl.value = settings.environment === 'production' ? '' : settings.baseUrl;
  showCustomUrlRow();
  byId('remove-key').hidden = !settings.hasKey;
  refreshControls();
}

async function loadSettings(): Promise<void> {
  try {
    settings = await server('getSettings');
    renderSettings();
  } catch (error) {
    setText('key-status', `Could not read the settings: ${errorMessage(error)}`);
    byId('key-status').classList.add('error');
  }
  refreshControls();
}

async function saveSettings(change: SettingsChange, done: string): Promise<void> {
  showMessage('settings-message', '', 'info');
  try {
    settings = await whileBusy(() => server('saveSettings', change));
    byId<HTMLInputElement>('api-key').value = '';
    if (settings.hasKey) byId<HTMLDetailsElement>('settings-details').open = false;
    renderSettings();
    showMessage('settings-message', done, 'ok');
  } catch (error) {
    showMessage('settings-message', errorMessage(error), 'error');
  }
}

function onSaveSettings(event: Event): void {
  event.preventDefault();
  const change: SettingsChange = { environment: chosenEnvironment() };
  const keyInput = byId<HTMLInputElement>('api-key');
  const key = keyInput.value.trim();
  if (key) change.apiKey = key;
  if (change.environment !== 'production') {
    const url = byId<HTMLInputElement>('base-url').value.trim();
    if (!url) {
      showMessage(
        'settings-message',
        change.environment === 'staging'
          ? 'Enter the staging address your provider gave you (there is no built-in one).'
          : 'Enter the custom base URL, for example https://api.example.com',
        'error',
      );
      return;
    }
    change.baseUrl = url;
  }
  void saveSettings(change, key ? 'Key and server saved.' : 'Server saved.');
}

function onRemoveKey(): void {
  void saveSettings({ apiKey: '' }, 'Key removed.');
}

async function onTestKey(): Promise<void> {
  showMessage('settings-message', 'Testing the key (no query is billed)…', 'info');
  try {
    const result = await whileBusy(() => server('testKey'));
    showMessage('settings-message', `${result.ok ? '✓' : '✗'} ${result.message}`, result.ok ? 'ok' : 'error');
  } catch (error) {
    showMessage('settings-message', `The key test failed: ${errorMessage(error)}`, 'error');
  }
}

// ---- selection and start ---------------------------------------------------------------------------------

function renderSelection(): void {
  if (!selection) return;
  const { sheetName, a1, rows, columns } = selection;
  const info = byId('selection-info');
  if (!a1 || rows < 1) {
    info.textContent = `Nothing is selected in ${sheetName}: select the cells with the URLs.`;
  } else if (columns > 1) {
    info.textContent =
      `${sheetName} · ${a1} has ${plural(columns, 'column', 'columns')}: ` +
      'select one column of URLs (the results go into the 5 columns to its right).';
  } else {
    info.textContent = `${sheetName} · ${a1} (${plural(rows, 'row', 'rows')})`;
  }
  info.classList.toggle('error', !a1 || rows < 1 || columns > 1);
}

async function loadSelection(): Promise<void> {
  try {
    selection = await server('getSelection');
    renderSelection();
  } catch (error) {
    setText('selection-info', `Could not read the selection: ${errorMessage(error)}`);
    byId('selection-info').classList.add('error');
  }
}

function chosenSource(): JobSource | string {
  const checked = document.querySelector<HTMLInputElement>('input[name="source"]:checked');
  if (checked?.value !== 'column')
    return { source: 'selection', fresh: byId<HTMLInputElement>('fresh').checked };
  const typed = byId<HTMLInputElement>('column').value.trim();
  const column = typed.toUpperCase();
  if (!/^[A-Z]{1,3}$/.test(column)) {
    return typed
      ? `“${typed}” is not a column letter. Enter a letter such as B.`
      : 'Enter the letter of the column that holds the URLs, such as B.';
  }
  return {
    source: 'column',
    column,
    headerRow: byId<HTMLInputElement>('header-row').checked,
    fresh: byId<HTMLInputElement>('fresh').checked,
  };
}

async function onStart(): Promise<void> {
  const source = chosenSource();
  if (typeof source === 'string') {
    showFailure(source);
    return;
  }
  hideFailure();
  try {
    setJob(await whileBusy(() => jobCalls.start(source)));
  } catch (error) {
    showFailure(`Could not start: ${errorMessage(error)}`);
    return;
  }
  void loadSelection();
  await drive();
}

// ---- credits ---------------------------------------------------------------------------------------------

/** The month's credits and the budget beside them (refreshed after each check). */
async function loadCredits(call: () => Promise<CreditInfo> = () => server('getCredits')): Promise<void> {
  try {
    const credits = await call();
    setText('credits-used', credits.text);
    byId<HTMLInputElement>('credit-budget').value =
      credits.budget === undefined ? '' : String(credits.budget);
  } catch (error) {
    showFailure(`Could not read the credits: ${errorMessage(error)}`);
  }
}

function onSaveBudget(): void {
  const typed = byId<HTMLInputElement>('credit-budget').value.trim();
  void loadCredits(() => whileBusy(() => server('setCreditBudget', typed === '' ? null : Number(typed))));
}

/** What the chosen check will cost, before it starts. */
async function onEstimate(): Promise<void> {
  const source = chosenSource();
  if (typeof source === 'string') return showFailure(source);
  try {
    setText('estimate', (await whileBusy(() => server('estimateJob', source))).text);
  } catch (error) {
    setText('estimate', `Could not estimate: ${errorMessage(error)}`);
  }
}

async function onEstimateAgain(): Promise<void> {
  try {
    setText('again-estimate', (await whileBusy(() => server('estimateFormulasAgain'))).text);
  } catch (error) {
    setText('again-estimate', `Could not estimate: ${errorMessage(error)}`);
  }
}

// ---- background checks and kept results -------------------------------------------------------------------

let background: BackgroundInfo | null = null;
/** How many times a check shown here stopped running (finished, cancelled or stopped by an error). */
let checkStops = 0;
/**
 * `checkStops` when the shown background figures were asked for. Figures asked for while a check ran count its
 * unchecked rows as left; once it has stopped they are out of date and never shown beside it.
 */
let backgroundAskedAt = 0;

/** Runs a server call that answers the background figures, and shows them with the moment they were asked for. */
async function updateBackground(call: () => Promise<BackgroundInfo>): Promise<void> {
  const askedAt = checkStops;
  const info = await call();
  // An answer asked for before the figures shown (calls side by side) is older than them.
  if (askedAt < backgroundAskedAt) return;
  background = info;
  backgroundAskedAt = askedAt;
  renderBackground();
}

function clockTime(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

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

function renderBackground(): void {
  if (!background) return;
  const b = background;
  let status = b.on ? 'On: unfinished formulas and checks go on with the sidebar closed.' : 'Off.';
  if (b.on && b.nextStepAt !== undefined) status += ` Next step at ${clockTime(b.nextStepAt)}.`;
  if (b.schedule)
    status += ` Refresh ${b.schedule.every} (${b.schedule.target === 'range' ? 'the last range' : 'formulas'}).`;
  setText('background-status', status);
  setText('background-mode', modeText(b));
  setText('background-left', leftText(b));
  const stopped = byId('background-stopped');
  stopped.textContent = b.stopped ? `Stopped: ${b.stopped}` : '';
  stopped.hidden = !b.stopped;
  // Scopes the user did not grant (granular consent) and spreadsheets the background dropped: said, never hidden.
  const notes = [...(b.access && !b.stopped ? [b.access.message] : []), ...(b.dropped ?? [])];
  const access = byId('background-access');
  access.textContent = notes.join(' ');
  access.hidden = notes.length === 0;
  setText('background-toggle', b.on && !b.stopped ? 'Turn off' : 'Turn on');
  byId<HTMLInputElement>('keep-days').value = String(b.retentionDays);
  byId<HTMLSelectElement>('schedule-every').value = b.schedule?.every ?? '';
  if (b.schedule) byId<HTMLSelectElement>('schedule-target').value = b.schedule.target;
  const forecast = b.schedule?.forecast;
  setText('schedule-forecast', forecast?.text ?? '');
  byId('schedule-forecast').classList.toggle('error', !!forecast?.over);
  setText(
    'saved-credits',
    `Background checks used ${plural(b.creditsUsed, 'credit', 'credits')} here; this sheet saved ` +
      `${plural(b.savedCredits, 'credit', 'credits')}: kept results reused after the 6-hour cache had let them go ` +
      `(kept ${plural(b.retentionDays, 'day', 'days')}).`,
  );
  driveSoon(b.driveAt ?? (b.rowsLeft > 0 ? Date.now() : undefined));
}

/**
 * What is left to check. The server counts a running check's unchecked rows and the formulas' unchecked domains;
 * beside a check that has stopped, only the formulas can be waiting, and figures asked for before it stopped are
 * not shown at all (fresh ones are on their way: see setJob).
 */
function leftText(b: BackgroundInfo): string {
  const stoppedCheck = !!job && job.status !== 'running';
  if (stoppedCheck && backgroundAskedAt < checkStops) return '';
  const minutes =
    b.leftMs === undefined
      ? ''
      : `: about ${Math.max(1, Math.round(b.leftMs / 60_000))} min at the plan’s pace`;
  if (b.rowsLeft <= 0) return 'Nothing left to check.';
  if (stoppedCheck) return `DAPA formulas wait for ${plural(b.rowsLeft, 'domain', 'domains')}${minutes}.`;
  return `${plural(b.rowsLeft, 'row', 'rows')} left${minutes}.`;
}

let driveTimer: ReturnType<typeof setTimeout> | undefined;

/** While the sidebar is open, it drives unfinished formulas and checks itself, when the plan's window frees. */
function driveSoon(at: number | undefined): void {
  if (driveTimer !== undefined) clearTimeout(driveTimer);
  driveTimer = undefined;
  if (at === undefined) return;
  driveTimer = setTimeout(
    () => {
      driveTimer = undefined;
      // The page's own job loop is checking: one loop per page, so the drive waits for it to end.
      if (driving) return driveSoon(Date.now() + 5_000);
      void updateBackground(() => server('driveBackground')).catch(() => driveSoon(Date.now() + 30_000));
    },
    Math.max(0, at - Date.now()),
  );
}

async function backgroundCall(call: () => Promise<BackgroundInfo>): Promise<void> {
  try {
    await updateBackground(() => whileBusy(call));
  } catch (error) {
    showFailure(errorMessage(error));
  }
}

function onBackgroundToggle(): void {
  const on = background?.on && !background.stopped;
  void backgroundCall(() => server(on ? 'stopBackground' : 'startBackground'));
}

function onSaveSchedule(): void {
  const every = byId<HTMLSelectElement>('schedule-every').value as ScheduleEvery | '';
  const target = byId<HTMLSelectElement>('schedule-target').value === 'range' ? 'range' : 'formulas';
  void backgroundCall(() => server('setSchedule', every ? { every, target } : null));
}

// ---- the job loop ----------------------------------------------------------------------------------------

function setJob(next: JobState | null): void {
  // Answers of calls side by side (a step, the background drive, a poll) may arrive out of order: a running job's
  // older state (fewer rows done, or still running once it ended) never replaces a newer one.
  const older =
    next?.status === 'running' && job?.id === next.id && (job.status !== 'running' || next.done < job.done);
  if (older) return;
  const stopped = job?.status === 'running' && next?.status !== 'running';
  job = next;
  if (!job || job.status !== 'running') byId('resume').hidden = true;
  renderJob();
  refreshControls();
  // The background figures shown counted this check's rows as left: hide them and ask for fresh ones.
  if (stopped) checkStops++;
  if (background) setText('background-left', leftText(background));
  if (stopped) void updateBackground(() => server('getBackground')).catch(() => undefined);
  if (stopped) void loadCredits();
}

/** After a step that moved nothing (a rate limit, another step holding the job), wait before the next one. */
const IDLE_PAUSE_MS = [1_000, 2_000, 4_000, 8_000];

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Calls continueJob() until the job is no longer running; each call is one short server execution. */
async function drive(): Promise<void> {
  if (driving) return;
  driving = true;
  byId('resume').hidden = true;
  hideFailure();
  refreshControls();
  let idleSteps = 0;
  try {
    while (job && job.status === 'running') {
      if (stopRequested) {
        setJob(await jobCalls.cancel());
        break;
      }
      const before = job.done;
      setJob(await jobCalls.continue());
      if (idleSteps > 0) void updateBackground(() => server('getBackground')).catch(() => undefined);
      idleSteps = job.done > before ? 0 : idleSteps + 1;
      if (idleSteps > 0 && job.status === 'running' && !stopRequested) {
        await pause(IDLE_PAUSE_MS[Math.min(idleSteps, IDLE_PAUSE_MS.length) - 1]);
      }
    }
  } catch (error) {
    if (stopRequested) {
      showFailure(`Could not cancel: ${errorMessage(error)}`, () => void cancelNow());
    } else {
      showFailure(`The check paused: ${errorMessage(error)}`, () => void drive());
    }
  } finally {
    driving = false;
    stopRequested = false;
    renderJob();
    refreshControls();
  }
}

async function cancelNow(): Promise<void> {
  hideFailure();
  try {
    setJob(await whileBusy(() => jobCalls.cancel()));
  } catch (error) {
    showFailure(`Could not cancel: ${errorMessage(error)}`, () => void cancelNow());
  }
}

/**
 * Cancel asks the server at once (a running step polls the stored job and stops early); should that call fail
 * or the server not stop the step, the loop cancels after the step in flight returns.
 */
function onCancel(): void {
  if (!driving) {
    void cancelNow();
    return;
  }
  stopRequested = true;
  renderJob();
  refreshControls();
  // The answer is not shown: the step in flight returns the cancelled job. A failure is covered by the loop.
  jobCalls.cancel().catch(() => undefined);
}

async function onRetrySkipped(): Promise<void> {
  hideFailure();
  try {
    setJob(await whileBusy(() => jobCalls.retrySkipped()));
  } catch (error) {
    showFailure(`Could not retry: ${errorMessage(error)}`, () => void onRetrySkipped());
    return;
  }
  await drive();
}

async function loadJob(): Promise<void> {
  let stored: unknown;
  try {
    stored = await server('getJob');
  } catch (error) {
    showFailure(`Could not read the last check: ${errorMessage(error)}`, () => void loadJob());
    return;
  }
  if (!isJobState(stored)) {
    setJob(null);
    return;
  }
  setJob(stored);
  if (stored.status === 'running' && !driving) {
    setText(
      'resume-text',
      `A check of ${stored.sheetName} · ${stored.a1} is unfinished: ${formatCount(stored.done)} of ` +
        `${plural(stored.total, 'row', 'rows')} done.`,
    );
    byId('resume').hidden = false;
  }
}

// ---- rendering -------------------------------------------------------------------------------------------

/** Rows that "Retry skipped rows" checks again, as the server counts them from the stored job. */
function retryableRows(state: JobState): number {
  return state.counts.retryable ?? 0;
}

function renderJob(): void {
  const section = byId('job');
  section.hidden = !job;
  if (!job) return;
  const { total, done, status, counts } = job;
  const fraction = total > 0 ? Math.min(1, Math.max(0, done / total)) : status === 'done' ? 1 : 0;
  const percent = Math.floor(fraction * 100);

  const stopping = stopRequested && status === 'running';
  const waiting = status === 'running' && !driving;
  setText('job-title', stopping ? 'Stopping…' : waiting ? 'Paused' : (STATUS_TITLES[status] ?? status));
  setText('job-range', `${job.sheetName} · ${job.a1}`);

  const bar = byId('progress-bar');
  bar.setAttribute('aria-valuemax', String(total));
  bar.setAttribute('aria-valuenow', String(done));
  bar.classList.toggle('finished', status === 'done');
  bar.classList.toggle('stopped', status === 'cancelled' || status === 'error');
  byId('progress-fill').style.width = `${fraction * 100}%`;

  let progress = `${formatCount(done)} of ${plural(total, 'row', 'rows')} (${percent}%)`;
  if (stopping) progress += ' · stopping after the current step';
  setText('progress-text', progress);

  setText('count-records', formatCount(counts.records));
  setText('count-skipped', formatCount(counts.skipped));
  setText('count-errors', formatCount(counts.errors));

  const message = byId('job-message');
  message.textContent = job.message ?? '';
  message.hidden = !job.message;
  message.classList.toggle('error', status === 'error');

  setText('sum-requests', formatCount(counts.requests));
  setText('sum-billed', formatCount(counts.billed));
  setText('sum-cached', formatCount(counts.cached));
  setText('sum-retryable', formatCount(retryableRows(job)));
  renderSkipReasons(job.skippedByReason ?? {});

  const retry = byId('retry-skipped');
  retry.textContent = `Retry ${plural(retryableRows(job), 'skipped row', 'skipped rows')}`;
}

function renderSkipReasons(byReason: Record<string, number>): void {
  const body = byId('skip-reasons');
  const rows = Object.entries(byReason)
    .filter(([, count]) => typeof count === 'number' && count > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  body.replaceChildren(
    ...rows.map(([reason, count]) => {
      const row = document.createElement('tr');
      const name = document.createElement('th');
      name.scope = 'row';
      name.textContent = reason;
      const value = document.createElement('td');
      value.textContent = formatCount(count);
      row.append(name, value);
      return row;
    }),
  );
  byId('no-skips').hidden = rows.length > 0;
}

function showFailure(text: string, retry?: () => void): void {
  setText('failure-text', text);
  const retryButton = byId<HTMLButtonElement>('failure-retry');
  retryButton.hidden = !retry;
  retryButton.onclick = retry
    ? () => {
        hideFailure();
        retry();
      }
    : null;
  byId('failure').hidden = false;
}

function hideFailure(): void {
  byId('failure').hidden = true;
}

/** Enables exactly the buttons that make sense now. */
function refreshControls(): void {
  const busy = busyCalls > 0;
  const running = job?.status === 'running';
  const hasKey = settings?.hasKey ?? false;
  byId<HTMLButtonElement>('save-settings').disabled = busy;
  byId<HTMLButtonElement>('remove-key').disabled = busy;
  byId<HTMLButtonElement>('test-key').disabled = busy || !hasKey;
  byId<HTMLButtonElement>('start').disabled = busy || driving || running;
  byId<HTMLButtonElement>('estimate-check').disabled = busy || !hasKey;
  byId<HTMLButtonElement>('refresh-selection').disabled = busy;
  const cancel = byId<HTMLButtonElement>('cancel-job');
  cancel.hidden = !running;
  cancel.disabled = busy || stopRequested;
  const retry = byId<HTMLButtonElement>('retry-skipped');
  retry.hidden = running || !job || retryableRows(job) <= 0;
  retry.disabled = busy || driving;
  byId<HTMLButtonElement>('resume-job').disabled = busy || driving;
  byId<HTMLButtonElement>('discard-job').disabled = busy || driving;
}

// ---- wiring ----------------------------------------------------------------------------------------------

function wire(): void {
  byId('settings-form').addEventListener('submit', onSaveSettings);
  byId('remove-key').addEventListener('click', onRemoveKey);
  byId('test-key').addEventListener('click', () => void onTestKey());
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="environment"]')) {
    radio.addEventListener('change', showCustomUrlRow);
  }
  byId('refresh-selection').addEventListener('click', () => {
    const selectionRadio = document.querySelector<HTMLInputElement>(
      'input[name="source"][value="selection"]',
    );
    if (selectionRadio) selectionRadio.checked = true;
    void loadSelection();
  });
  byId('column').addEventListener('input', () => {
    const columnRadio = document.querySelector<HTMLInputElement>('input[name="source"][value="column"]');
    if (columnRadio) columnRadio.checked = true;
  });
  byId('start').addEventListener('click', () => void onStart());
  byId('cancel-job').addEventListener('click', onCancel);
  byId('retry-skipped').addEventListener('click', () => void onRetrySkipped());
  byId('resume-job').addEventListener('click', () => void drive());
  byId('discard-job').addEventListener('click', () => void cancelNow());
  byId('failure-dismiss').addEventListener('click', hideFailure);
  byId('background-toggle').addEventListener('click', onBackgroundToggle);
  byId('check-again').addEventListener(
    'click',
    () => void backgroundCall(() => server('checkFormulasAgain')),
  );
  byId('save-keep').addEventListener('click', () => {
    const days = Number(byId<HTMLInputElement>('keep-days').value);
    void backgroundCall(() => server('setKeepDays', days));
  });
  byId('save-schedule').addEventListener('click', onSaveSchedule);
  byId('save-budget').addEventListener('click', onSaveBudget);
  byId('estimate-check').addEventListener('click', () => void onEstimate());
  byId('estimate-again').addEventListener('click', () => void onEstimateAgain());
  void updateBackground(() => server('getBackground')).catch((error: unknown) =>
    setText('background-status', `Could not read: ${errorMessage(error)}`),
  );
}

function boot(): void {
  if (!scriptRun()) {
    const notice = byId('boot-error');
    notice.textContent =
      'This page talks to the add-on through google.script.run, which is missing: open it from the DAPA menu in Google Sheets.';
    notice.hidden = false;
    return;
  }
  wire();
  refreshControls();
  void loadSettings();
  void loadSelection();
  void loadJob();
  void loadCredits();
}

boot();
