// What earlier executions of this user sent and learned against a service: the core's WindowSnapshot (the last
// minute's sends, the plan's limits labelled exact or inferred), kept in the user's properties per base URL, so every
// execution (formula, sidebar, background step) starts from the same window. The core's keeping rule applies
// (restoreWindow: sends older than a minute and limits older than 7 days are dropped, inferred limits are probed up
// again), the same rule as the n8n node's; this module stores the snapshot as it is and never recounts it.
import { mergeWindows, restoreWindow, type WindowSnapshot } from '../../../shared';
import { now } from '../platform/gas';
import { digestOf } from './session';
import { deleteKeys, readValue, updateValue } from './storage';
import { USER_PROPERTY } from './storage-keys';

function propertyName(baseUrl: string): string {
  return USER_PROPERTY.windowPrefix + digestOf(baseUrl);
}

const parse = (raw: unknown) => restoreWindow(raw, now());

/** The window every execution against this service starts from (undefined: nothing known). */
export function loadWindow(baseUrl: string): WindowSnapshot | undefined {
  return readValue('user', propertyName(baseUrl), parse);
}

/** Merges a run's window into the stored one (under the user lock: executions run side by side). */
export function saveWindow(baseUrl: string, window: WindowSnapshot | undefined): void {
  if (!window) return;
  updateValue('user', propertyName(baseUrl), parse, (stored) => mergeWindows(stored, window));
}

/** A new key or another service starts afresh. */
export function forgetLearnedPlans(): void {
  deleteKeys('user', USER_PROPERTY.windowPrefix);
  deleteKeys('user', USER_PROPERTY.planPrefix);
}
