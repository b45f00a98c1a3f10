// Why a probe above an inferred limit goes or waits: one named case per rule of decideProbe, each on its own facts,
// and the window's plan carrying the decision out.
import { decideProbe, PlanWindow, type Limit, type ProbeCase } from '../../shared/window';

const T = 1_000_000;
const guess = (value: number, extra: Partial<Limit> = {}): Limit => ({
  value,
  exact: false,
  at: T,
  ...extra,
});
/** A full URL window: a guess of 60, calm since long ago, sliding in 30 s, 200 URLs left, learned by this run. */
const full = (c: Partial<ProbeCase> = {}): ProbeCase => ({
  kind: 'urls',
  limit: guess(60),
  start: T,
  slideAt: T + 30_000,
  dueAt: -Infinity,
  left: 200,
  rising: false,
  inherited: false,
  ...c,
});

describe('a probe above an inferred limit', () => {
  test('exact: a limit the server or the user stated is never probed', () => {
    expect(decideProbe(full({ limit: { value: 60, exact: true, at: T }, dueAt: Infinity }))).toEqual({
      go: false,
      because: 'exact',
      at: T + 30_000,
    });
  });

  test('not_calm: the calm after the last pushback ends after the window slides, so the slide comes first', () => {
    expect(decideProbe(full({ dueAt: T + 30_000 }))).toMatchObject({ go: false, because: 'not_calm' });
    // Due before the slide: the probe goes when it is due, not at once.
    expect(decideProbe(full({ dueAt: T + 10_000 }))).toEqual({ go: true, because: 'worth', at: T + 10_000 });
  });

  test('calm / not_calm for a request limit: it goes only when its calm is over now', () => {
    const requests = full({ kind: 'requests', left: 1 });
    expect(decideProbe({ ...requests, dueAt: T })).toMatchObject({ go: true, because: 'calm' });
    expect(decideProbe({ ...requests, dueAt: T + 1 })).toMatchObject({ go: false, because: 'not_calm' });
  });

  test('rising: a guess that rose within the last minute was low, so probing goes on whatever is left', () => {
    expect(decideProbe(full({ rising: true, left: 1 }))).toMatchObject({ go: true, because: 'rising' });
  });

  test('shared: a guess from a minute shared with other runs is a share of the plan, probed for any work', () => {
    expect(decideProbe(full({ limit: guess(60, { shared: true }), left: 1 }))).toMatchObject({
      go: true,
      because: 'shared',
    });
  });

  test('worth: work that would take more than a minute and a half at the guess is worth a probe', () => {
    expect(decideProbe(full({ left: 91 }))).toMatchObject({ go: true, because: 'worth' });
    expect(decideProbe(full({ left: 90 }))).toMatchObject({ go: false, because: 'trusted' });
  });

  test('trusted: a guess this run learned alone, with little work left, waits for the slide', () => {
    expect(decideProbe(full({ left: 5 }))).toEqual({ go: false, because: 'trusted', at: T + 30_000 });
  });

  test('inherited / slide_near: an earlier run’s guess is probed for little work when that saves 15 s or more', () => {
    expect(decideProbe(full({ left: 5, inherited: true }))).toEqual({
      go: true,
      because: 'inherited',
      at: T,
    });
    expect(decideProbe(full({ left: 5, inherited: true, slideAt: T + 14_999 }))).toMatchObject({
      go: false,
      because: 'slide_near',
    });
  });

  test("the window's plan carries the decision out: a probe's whole batch, or the wait for the slide", () => {
    const window = (learnedAt: number) =>
      new PlanWindow({
        v: 1,
        at: T,
        sends: [[T - 30_000, 60]],
        limits: { urlsPerMinute: { value: 60, exact: false, at: learnedAt } },
        pressure: { urls: T - 70_000 },
      });
    const learnedHere = window(T - 70_000);
    learnedHere.observedSince = T - 80_000;
    expect(learnedHere.plan(T, 5, 5)).toEqual({ at: T + 30_001, urls: 5, probe: false }); // trusted
    expect(learnedHere.plan(T, 5, 500)).toEqual({ at: T, urls: 5, probe: true }); // worth
    const inherited = window(T - 70_000);
    inherited.observedSince = T;
    expect(inherited.plan(T, 5, 5)).toEqual({ at: T, urls: 5, probe: true }); // inherited, saves 30 s
  });
});
