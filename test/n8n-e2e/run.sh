#!/usr/bin/env bash
# Real-n8n end-to-end suite (npm run test:e2e, after the build): installs the pinned n8n with `npm ci` from
# test/n8n-e2e/n8n-install/ into the git-ignored test/n8n-e2e/n8n/ (reused while the lock file matches), runs the
# official community-node lint when the root has `lint:n8n`, then the scenarios (e2e.ts) and the side-by-side
# benchmark (bench.ts, skipped with E2E_BENCH=0). `run.sh bench` installs and runs only the benchmark.
# The last line is the suite's `N passed, N failed`; the exit status is non-zero on any failure.
set -uo pipefail

MODE="${1:-all}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E="$ROOT/test/n8n-e2e"
MANIFEST="$E2E/n8n-install"
INSTALL="$E2E/n8n"
MARKER="$INSTALL/.installed-from.lock.json"
cd "$ROOT" || exit 1

install_n8n() {
  if [ -x "$INSTALL/node_modules/.bin/n8n" ] && cmp -s "$MANIFEST/package-lock.json" "$MARKER" &&
    cmp -s "$MANIFEST/package.json" "$INSTALL/package.json"; then
    echo "n8n: reusing $(cd "$INSTALL" && node_modules/.bin/n8n --version) in test/n8n-e2e/n8n (lock file unchanged)"
    return 0
  fi
  echo "n8n: installing the pinned version with npm ci into test/n8n-e2e/n8n (takes a few minutes, ~2.3 GB)"
  local started=$SECONDS
  rm -rf "$INSTALL"
  mkdir -p "$INSTALL"
  cp "$MANIFEST/package.json" "$MANIFEST/package-lock.json" "$INSTALL/"
  # SCARF_ANALYTICS: one dependency's postinstall would otherwise report the install to a third party.
  if ! (cd "$INSTALL" && SCARF_ANALYTICS=false npm ci --no-audit --no-fund --loglevel=error); then
    echo "n8n: npm ci failed"
    return 1
  fi
  cp "$MANIFEST/package-lock.json" "$MARKER"
  echo "n8n: installed $(cd "$INSTALL" && node_modules/.bin/n8n --version) in $((SECONDS - started)) s"
}

if ! install_n8n; then
  echo "0 passed, 1 failed"
  exit 1
fi

if [ "$MODE" = "bench" ]; then
  exec npx tsx "$E2E/bench.ts" --out "$E2E/BENCH.md"
fi

lint_status="absent"
if node -e 'process.exit(require("./package.json").scripts?.["lint:n8n"] ? 0 : 1)'; then
  echo "--- npm run lint:n8n"
  if npm run lint:n8n --silent; then lint_status="passed"; else lint_status="failed"; fi
fi

echo "--- end-to-end scenarios in n8n $("$INSTALL/node_modules/.bin/n8n" --version)"
mkdir -p "$E2E/work"
E2E_LINT_N8N="$lint_status" npx tsx "$E2E/e2e.ts" | tee "$E2E/work/e2e.log"
suite_status=${PIPESTATUS[0]}
summary="$(tail -n 1 "$E2E/work/e2e.log")"
if ! [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
  summary="0 passed, 1 failed" # the checker did not get to its summary
  suite_status=1
  echo "$summary"
fi

if [ "${E2E_BENCH:-1}" != "0" ]; then
  echo "--- side-by-side benchmark (E2E_BENCH=0 skips it; npm run bench:n8n writes test/n8n-e2e/BENCH.md)"
  if npx tsx "$E2E/bench.ts" --out "$E2E/work/BENCH.md"; then bench_ok=1; else bench_ok=0; fi
  # The benchmark counts as one more check in the summary line.
  [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]
  passed=${BASH_REMATCH[1]}
  failed=${BASH_REMATCH[2]}
  if [ "$bench_ok" = 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)) && suite_status=1; fi
  summary="$passed passed, $failed failed"
  echo "$summary"
fi
exit "$suite_status"
