// The stand-in's clock, shared by every thread through a SharedArrayBuffer: real time plus an offset. A virtual
// clock makes Utilities.sleep advance the offset at once instead of waiting; `advance` moves time in both modes.

export type ClockMode = 'real' | 'virtual';

export class Clock {
  readonly offset = new Float64Array(new SharedArrayBuffer(8));

  constructor(readonly mode: ClockMode) {}

  now(): number {
    return Date.now() + this.offset[0];
  }

  advance(ms: number): void {
    if (ms > 0) this.offset[0] += ms;
  }

  /** Waits `ms` of stand-in time: really (real clock) or by moving the clock (virtual clock). */
  async sleep(ms: number): Promise<void> {
    if (ms <= 0) return;
    if (this.mode === 'virtual') this.advance(ms);
    else await new Promise((resolve) => setTimeout(resolve, ms));
  }
}
