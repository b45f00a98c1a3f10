// Which execution is running a background step in a spreadsheet, until when: a lease in the spreadsheet's own
// metadata, taken and given back under the shared lock, so two users' steps (or the dispatcher and an open sidebar)
// never work one spreadsheet at once, with or without a document lock. An execution Google ended leaves a lease that
// runs out by itself.
import { now } from '../platform/gas';
import { finite, isRecord, locked, readValue, writeValue } from './storage';
import { DOCUMENT_PROPERTY } from './storage-keys';

interface Lease {
  holder: string;
  until: number;
}

const parseLease = (raw: unknown): Lease | undefined =>
  isRecord(raw) && typeof raw.holder === 'string' && finite(raw.until) !== undefined
    ? (raw as unknown as Lease)
    : undefined;

/** Takes the current spreadsheet's step lease until `until`; answers its holder id, or undefined when it is held. */
export function takeStepLease(until: number): string | undefined {
  return locked('document', () => {
    const held = readValue('document', DOCUMENT_PROPERTY.stepLease, parseLease);
    if (held && held.until > now()) return undefined;
    const holder = `${now()}-${Math.random().toString(36).slice(2)}`;
    writeValue('document', DOCUMENT_PROPERTY.stepLease, { holder, until });
    return holder;
  });
}

/** Gives the lease back (only when it is still this holder's). */
export function returnStepLease(holder: string): void {
  locked('document', () => {
    const held = readValue('document', DOCUMENT_PROPERTY.stepLease, parseLease);
    if (held?.holder === holder) writeValue('document', DOCUMENT_PROPERTY.stepLease, undefined);
  });
}
