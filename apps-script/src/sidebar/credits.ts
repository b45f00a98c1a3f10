// The sidebar's server functions for credits: the user's monthly budget and what was used this month (getCredits,
// setCreditBudget: a raise fills the cells that waited for it), what a check or "Check formulas again" will cost
// before it runs, and a schedule's monthly forecast (getBackground shows it).
import type { CreditInfo, Estimate, Forecast, JobSource, ScheduleEvery } from '../../sidebar/contract';
import { distinctKeys, reuseOf } from '../checks/check';
import { estimateKeys } from '../checks/estimate';
import { dapaFormulaCells, formulaKeys, refreshFormulas, upToDate } from '../checks/formulas';
import { chooseTarget, inputValues, sheetOf } from '../checks/job-run';
import { now } from '../platform/gas';
import { activeSpreadsheet, idOf } from '../stores/session';
import { goesOn, listGoingOn, loadDispatcher, loadStatus, type Schedule } from '../stores/background-store';
import {
  creditBudget,
  creditView,
  currentBaseUrl,
  requireApiKey,
  setCreditBudget as saveBudget,
  storedApiKey,
} from '../stores/account';
import { wakeBackground } from '../background/dispatcher';
import { creditsText, ENTRY_PLAN_CREDITS, forecastText } from '../messages';

export function getCredits(): CreditInfo {
  const view = creditView(storedApiKey(), true);
  return { ...view, text: creditsText(view.used, view.budget, view.month) };
}

/**
 * Sets the monthly budget (null: none). Raised or removed, the cells that waited for it fill in: background steps
 * wake where background checks are on, and this spreadsheet's formulas that are not up to date recalculate (they
 * check within it).
 */
export function setCreditBudget(budget: number | null): CreditInfo {
  const before = creditBudget();
  const after = saveBudget(budget);
  if (before !== undefined && (after === undefined || after > before)) {
    const spreadsheet = activeSpreadsheet();
    for (const { id } of listGoingOn(loadDispatcher())) wakeBackground(id, now());
    if (!goesOn(loadStatus(idOf(spreadsheet))))
      refreshFormulas(
        spreadsheet,
        dapaFormulaCells(spreadsheet).filter((c) => !upToDate(spreadsheet, c)),
        false,
      );
  }
  return getCredits();
}

/** A sidebar check of the selection or a column, before it starts. */
export function estimateJob(source: JobSource): Estimate {
  const apiKey = requireApiKey();
  const target = chooseTarget(activeSpreadsheet(), source);
  const values = inputValues(target.sheet, target);
  return estimateKeys(
    values.length,
    distinctKeys(values),
    currentBaseUrl(),
    apiKey,
    reuseOf(source?.fresh === true),
  );
}

/** "Check formulas again": every formula's domains, none reused (only results checked from now on). */
export function estimateFormulasAgain(): Estimate {
  const cells = dapaFormulaCells(activeSpreadsheet());
  const keys = formulaKeys(cells);
  const rows = cells.reduce((n, c) => n + (c.rows ?? 0), 0);
  return estimateKeys(rows, keys, currentBaseUrl(), requireApiKey(), { kind: 'since', at: now() });
}

const RUNS_A_MONTH: Record<ScheduleEvery, number> = { daily: 30, weekly: 4, monthly: 1 };

/** A schedule's forecast: each refresh bills its distinct domains again (it reuses only what it checked itself). */
export function forecastOf(schedule: Schedule): Forecast {
  const spreadsheet = activeSpreadsheet();
  const r = schedule.target === 'range' ? schedule.range : undefined;
  const keys = r
    ? distinctKeys(inputValues(sheetOf(spreadsheet, r), r))
    : formulaKeys(dapaFormulaCells(spreadsheet));
  const runs = RUNS_A_MONTH[schedule.every];
  const credits = keys.length * runs;
  const budget = creditBudget();
  const over =
    budget !== undefined && credits > budget ? 'budget' : credits > ENTRY_PLAN_CREDITS ? 'plan' : undefined;
  const forecast: Forecast = {
    perRun: keys.length,
    runs,
    credits,
    text: forecastText(keys.length, runs, over, budget),
  };
  if (over) forecast.over = over;
  return forecast;
}
