// The "Progress" panel of the check: its range, a progress bar, the counts, Cancel, "Retry skipped rows" and the
// summary (requests, credits, cache, skips by reason).
/// <reference lib="dom" />
import type { Actions } from '../actions';
import type { JobState } from '../contract';
import { byId, formatCount, plural, setAttribute, setDisabled, setHidden, setText } from '../dom';
import { isRunning, type PageState } from '../state';

export type JobView = Pick<PageState, 'job' | 'loop' | 'busy'>;

const STATUS_TITLES: Record<JobState['status'], string> = {
  running: 'Checking…',
  done: 'Finished',
  cancelled: 'Cancelled',
  error: 'Stopped by an error',
};

/** Rows that "Retry skipped rows" checks again, as the server counts them from the stored job. */
function retryableRows(job: JobState): number {
  return job.counts.retryable ?? 0;
}

export function render(state: JobView, previous?: JobView): void {
  const { job, loop } = state;
  setHidden('job', !job);
  renderControls(state);
  if (!job) return;
  const { total, done, status, counts } = job;
  const fraction = total > 0 ? Math.min(1, Math.max(0, done / total)) : status === 'done' ? 1 : 0;
  const percent = Math.floor(fraction * 100);

  const stopping = loop.stopRequested && status === 'running';
  const waiting = status === 'running' && !loop.driving;
  setText('job-title', stopping ? 'Stopping…' : waiting ? 'Paused' : (STATUS_TITLES[status] ?? status));
  setText('job-range', `${job.sheetName} · ${job.a1}`);

  const bar = byId('progress-bar');
  setAttribute(bar, 'aria-valuemax', String(total));
  setAttribute(bar, 'aria-valuenow', String(done));
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
  setText('job-message', job.message ?? '');
  message.hidden = !job.message;
  message.classList.toggle('error', status === 'error');

  setText('sum-requests', formatCount(counts.requests));
  setText('sum-billed', formatCount(counts.billed));
  setText('sum-cached', formatCount(counts.cached));
  setText('sum-retryable', formatCount(retryableRows(job)));
  if (job !== previous?.job) renderSkipReasons(job.skippedByReason ?? {});
  setText('retry-skipped', `Retry ${plural(retryableRows(job), 'skipped row', 'skipped rows')}`);
}

function renderControls({ job, loop, busy }: JobView): void {
  const running = isRunning(job);
  setHidden('cancel-job', !running);
  setDisabled('cancel-job', busy > 0 || loop.stopRequested);
  setHidden('retry-skipped', running || !job || retryableRows(job) <= 0);
  setDisabled('retry-skipped', busy > 0 || loop.driving);
}

function renderSkipReasons(byReason: Record<string, number>): void {
  const rows = Object.entries(byReason)
    .filter(([, count]) => typeof count === 'number' && count > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  byId('skip-reasons').replaceChildren(
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
  setHidden('no-skips', rows.length > 0);
}

export function wire(actions: Actions): void {
  byId('cancel-job').addEventListener('click', () => actions.cancel());
  byId('retry-skipped').addEventListener('click', () => void actions.retrySkipped());
}
