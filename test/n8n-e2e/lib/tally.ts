// Named pass/fail checks with the values that made them fail, printed as they happen; the run ends with the
// line `N passed, N failed`.

export class Tally {
  passed = 0;
  failed = 0;
  readonly failures: string[] = [];

  constructor(private readonly print: (line: string) => void = (line) => console.log(line)) {}

  /** Records one check; `detail` (shown on failure) should name the values that were wrong. */
  check(scenario: string, name: string, ok: boolean, detail = ''): boolean {
    if (ok) {
      this.passed += 1;
      this.print(`  ok    ${scenario}: ${name}`);
    } else {
      this.failed += 1;
      const line = `${scenario}: ${name}${detail ? ` -- ${detail}` : ''}`;
      this.failures.push(line);
      this.print(`  FAIL  ${line}`);
    }
    return ok;
  }

  equal(scenario: string, name: string, actual: unknown, expected: unknown): boolean {
    const ok = JSON.stringify(actual) === JSON.stringify(expected);
    return this.check(scenario, name, ok, `got ${clip(actual)}, expected ${clip(expected)}`);
  }

  summary(): string {
    return `${this.passed} passed, ${this.failed} failed`;
  }
}

/** A short rendering of a value for a failure message. */
export function clip(value: unknown, max = 300): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/**
 * Runs a suite's `main` and exits with its status. A crash prints its stack and, when `countsAsFailure`, the line
 * `0 passed, 1 failed` that run.sh adds up, so a suite that dies still counts as failed.
 */
export function runSuite(main: () => Promise<number>, countsAsFailure = true): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error((error as Error).stack ?? String(error));
      if (countsAsFailure) console.log('0 passed, 1 failed');
      process.exit(1);
    },
  );
}
