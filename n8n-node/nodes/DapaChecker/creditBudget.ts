// The Credit Budget is per execution, not per run of the node: n8n runs a node more than once in one execution
// when it sits in a loop (Loop Over Items), when several branches feed its input, or when an AI agent calls it as a
// tool again. What the earlier runs of this node billed in this execution is kept in n8n's per-execution node
// context (`getContext('node')`, the store Loop Over Items keeps its own state in), which n8n saves with the execution
// and restores when a waiting execution resumes, also on another queue-mode worker. Each run gets the core the
// credits still left (`RunOptions.creditBudget`), so that all runs together bill at most the budget. Each DAPA
// Checker node in a workflow has its own budget. Without that context (an older host), a run counts only its own
// credits.
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

const KEY = 'dapaCreditBudget';

/** What this node's earlier runs in the execution spent, and how many items they skipped for the budget. */
export interface BudgetUse {
  billed: number;
  skipped: number;
}

function store(context: IExecuteFunctions): IDataObject | undefined {
  try {
    return typeof context.getContext === 'function' ? (context.getContext('node') as IDataObject) : undefined;
  } catch {
    return undefined;
  }
}

function useIn(stored: IDataObject | undefined): BudgetUse {
  const kept = stored?.[KEY] as Partial<BudgetUse> | undefined;
  const count = (value: unknown) => (typeof value === 'number' && value >= 0 ? value : 0);
  return { billed: count(kept?.billed), skipped: count(kept?.skipped) };
}

/** What the earlier runs of this node in this execution used of the budget (zero for the first run). */
export function budgetUsed(context: IExecuteFunctions): BudgetUse {
  return useIn(store(context));
}

/** Adds a run's billed credits and budget skips to the execution's count; returns the execution's totals. */
export function addBudgetUse(context: IExecuteFunctions, run: BudgetUse): BudgetUse {
  const stored = store(context);
  const before = useIn(stored);
  const after = { billed: before.billed + run.billed, skipped: before.skipped + run.skipped };
  if (stored) stored[KEY] = { ...after };
  return after;
}
