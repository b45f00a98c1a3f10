// An open sidebar's page calling the server (google.script.run) on a timer: each call its own server execution
// (6-minute limit, not trigger runtime), the next one `everyMs` after it returned or when its answer says.
import type { SharedClock } from '../../sandbox/virtual';
import type { SpreadsheetDocument } from './document';
import type { Executions } from './executions';
import type { Recalculation } from './recalculation';
import type { Session } from './session';

/** An open sidebar's page calling the server (google.script.run) on a timer. */
export interface SidebarOptions {
  /** The server function the page calls. */
  call: string;
  args?: unknown[];
  /** ms after a call returned until the next, unless `next` names a time. */
  everyMs: number;
  /** When the page calls again, from the call's answer (ms since epoch; undefined: `everyMs` later). */
  next?: (answer: unknown, now: number) => number | undefined;
  /** Whose sidebar (default: the current user). */
  user?: string;
}

export interface SidebarCall {
  at: number;
  name: string;
  ok: boolean;
  error?: string;
  elapsedMs: number;
}

export class SidebarTimer {
  private state?: SidebarOptions & {
    args: unknown[];
    user: string;
    nextAt: number;
    doc: SpreadsheetDocument;
  };
  /** Every call the open sidebar made (google.script.run), with how it ended. */
  readonly calls: SidebarCall[] = [];

  constructor(
    private readonly session: Session,
    private readonly executions: Executions,
    private readonly recalculation: Recalculation,
  ) {}

  private get clock(): SharedClock {
    return this.session.clock;
  }

  /** The sidebar opens for `user` (default: the current user) in the current spreadsheet; its first call is now. */
  open(options: SidebarOptions): void {
    this.state = {
      ...options,
      args: options.args ?? [],
      user: options.user ?? this.session.user,
      nextAt: this.clock.now(),
      doc: this.session.doc,
    };
  }

  close(): void {
    this.state = undefined;
  }

  get isOpen(): boolean {
    return this.state !== undefined;
  }

  /** When the open sidebar calls next (Infinity: it is closed). */
  get nextAt(): number {
    return this.state?.nextAt ?? Infinity;
  }

  /** One call of the open sidebar, now; the next is due `everyMs` after it returns. */
  async runCall(): Promise<void> {
    const state = this.state;
    if (!state) throw new Error('The sidebar is not open: call openSidebar() first');
    const at = this.clock.now();
    const {
      ok,
      value: answer,
      error,
      record,
    } = await this.executions.settle({
      functionName: state.call,
      args: state.args,
      kind: 'server',
      authMode: 'FULL',
      user: state.user,
      document: state.doc,
    });
    this.calls.push({
      at,
      name: state.call,
      ok,
      error,
      elapsedMs: record?.elapsedMs ?? this.clock.now() - at,
    });
    if (this.state === state) {
      const now = this.clock.now();
      const asked = ok && state.next ? state.next(answer, now) : undefined;
      state.nextAt =
        asked === undefined || !Number.isFinite(asked) ? now + state.everyMs : Math.max(now, asked);
    }
    await this.recalculation.recalculate();
  }
}
