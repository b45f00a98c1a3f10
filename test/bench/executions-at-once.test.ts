// The sweep that counts executions held at once (executions-at-once.ts), on hand-made execution lists.
import { executionsAtOnce, type ExecutionSpan } from './executions-at-once';

const A = 'a@example.com';
const B = 'b@example.com';
const run = (startedAt: number, elapsedMs: number | undefined, user = A): ExecutionSpan => ({
  startedAt,
  elapsedMs,
  user,
});

describe('executionsAtOnce', () => {
  test('overlapping executions: the most at one moment, and the average over the window', () => {
    // 0–10, 2–6, 4–8: three at once in 4–6; 10 + 4 + 4 = 18 ms over 20 ms.
    const list = [run(0, 10), run(2, 4), run(4, 4)];
    expect(executionsAtOnce(list, { from: 0, to: 20 })).toEqual({ average: 0.9, most: 3, busyMs: 18 });
  });

  test('one ending when another starts is not two at once', () => {
    const list = [run(0, 5), run(5, 5), run(10, 5)];
    expect(executionsAtOnce(list, { from: 0, to: 15 })).toEqual({ average: 1, most: 1, busyMs: 15 });
  });

  test('an execution of 0 ms counts at its moment, beside those running then', () => {
    const list = [run(0, 10), run(3, 0), run(3, 0)];
    expect(executionsAtOnce(list, { from: 0, to: 10 })).toMatchObject({ most: 3, busyMs: 10 });
    expect(executionsAtOnce([run(5, 0)], { from: 0, to: 10 })).toMatchObject({ most: 1, average: 0 });
  });

  test('clipped to the window; one still running counts until its end', () => {
    // Before the window (0–4), across its start (5–15 → 10–15), still running from 18 (→ 18–20), after it (20–).
    const list = [run(0, 4), run(5, 10), run(18, undefined), run(20, 3)];
    expect(executionsAtOnce(list, { from: 10, to: 20 })).toEqual({ average: 0.7, most: 1, busyMs: 7 });
    // One that ended exactly when the window opened is not in it.
    expect(executionsAtOnce([run(0, 10)], { from: 10, to: 20 })).toEqual({ average: 0, most: 0, busyMs: 0 });
  });

  test("one user's executions, or everyone's", () => {
    const list = [run(0, 10, A), run(0, 10, B), run(5, 10, B)];
    expect(executionsAtOnce(list, { from: 0, to: 20, user: A })).toEqual({
      average: 0.5,
      most: 1,
      busyMs: 10,
    });
    expect(executionsAtOnce(list, { from: 0, to: 20, user: B })).toEqual({ average: 1, most: 2, busyMs: 20 });
    expect(executionsAtOnce(list, { from: 0, to: 20 })).toEqual({ average: 1.5, most: 3, busyMs: 30 });
  });

  test('an empty window or list holds nothing', () => {
    expect(executionsAtOnce([], { from: 0, to: 10 })).toEqual({ average: 0, most: 0, busyMs: 0 });
    expect(executionsAtOnce([run(0, 10)], { from: 5, to: 5 })).toEqual({ average: 0, most: 0, busyMs: 0 });
  });
});
