// The probe rules: whether a run held back by an inferred limit alone sends one batch above it, and why, as one
// decision with a named case per rule (the window gathers the facts, decideProbe decides).
import type { Limit } from './window';

/**
 * A URL probe goes only for a run whose work left would take more than PROBE_WORTH_MINUTES at the guessed rate (a
 * short run gains little from a higher rate and would pay the probe).
 */
const PROBE_WORTH_MINUTES = 1.5;
/** A guess from an earlier run is probed for any work left when that saves waiting this long for a slide. */
const PROBE_WORTH_WAIT_MS = 15_000;
/** For a guess from a window seen shared with other runs (likely a share of the plan), any work left is worth it. */
const SHARED_PROBE_WORTH_MINUTES = 0;

/** The facts a probe above an inferred limit is decided on. */
export interface ProbeCase {
  /** Which limit is full: the URLs of the minute, or its requests. */
  kind: 'urls' | 'requests';
  limit: Limit;
  /** When the window is full (the time asked about). */
  start: number;
  /** When the window slides enough to send without a probe. */
  slideAt: number;
  /** When the calm after the last pushback is over (-Infinity: no pushback yet; Infinity: exact limit). */
  dueAt: number;
  /** URLs left in the work. */
  left: number;
  /** The guess rose within the last minute. */
  rising: boolean;
  /** The guess was learned before this run began to send (an earlier run's). */
  inherited: boolean;
}

/**
 * Why a probe goes or waits, one case per rule: `exact`, an exact limit is never probed; `not_calm`, the calm after
 * the last pushback ends after the slide (for a request limit: not now); `calm`, a request limit's calm is over;
 * `rising`, the guess rose within the last minute (it was low); `shared`, a guess from a minute shared with other
 * runs (a share of the plan) is probed for any work; `worth`, the work left takes longer than PROBE_WORTH_MINUTES at
 * the guess; `inherited`, an earlier run's guess is probed when that saves PROBE_WORTH_WAIT_MS of waiting for the
 * slide; `slide_near`, it would save less; `trusted`, a guess this run learned alone, with little work left.
 */
export type ProbeReason =
  'exact' | 'not_calm' | 'calm' | 'rising' | 'shared' | 'worth' | 'inherited' | 'slide_near' | 'trusted';

export interface ProbeDecision {
  go: boolean;
  because: ProbeReason;
  /** When the probe goes (go), or when the window slides (wait). */
  at: number;
}

/** Whether a probe above an inferred limit goes, and why: the first rule that applies decides. */
export function decideProbe(c: ProbeCase): ProbeDecision {
  const at = Math.max(c.start, c.dueAt);
  const go = (because: ProbeReason): ProbeDecision => ({ go: true, because, at });
  const wait = (because: ProbeReason): ProbeDecision => ({ go: false, because, at: c.slideAt });
  if (c.limit.exact) return wait('exact');
  if (c.kind === 'requests') return c.dueAt <= c.start ? go('calm') : wait('not_calm');
  if (c.dueAt >= c.slideAt) return wait('not_calm');
  if (c.rising) return go('rising');
  if (c.limit.shared && c.left > SHARED_PROBE_WORTH_MINUTES * c.limit.value) return go('shared');
  if (c.left > PROBE_WORTH_MINUTES * c.limit.value) return go('worth');
  if (!c.inherited) return wait('trusted');
  return c.slideAt - at >= PROBE_WORTH_WAIT_MS ? go('inherited') : wait('slide_near');
}
