#!/usr/bin/env bash
# The official n8n lint of the community package: `n8n-node lint` from @n8n/node-cli (strict mode, untouched default
# eslint.config.mjs) on the sources. It lints a staged copy whose package.json carries a stand-in publisher identity
# (test/n8n-e2e/test-identity.json, reserved .test names): the identity is the maintainer's to set in
# n8n-node/package.json, and n8n's scanner checks it where n8n does, on the committed tree (test/n8n-e2e/scanner.mjs:
# its source leg reports the unset fields, the release refuses them, its tarball leg lints the packed package).
# Run from anywhere: `npm run lint:n8n`. The tools live in their own install, n8n-node/.lint/ (locked, scripts off).
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  # This file's header comment is its usage; nothing is installed or linted.
  echo "Usage: npm run lint:n8n (bash n8n-node/lint.sh)"
  sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$here/.lint"

# 1. The lint tools: installed once at the versions of the lock file, again only when the lock file changes.
#    (`npm install --no-save` rather than `npm ci`: the lock lacks some platform-only optional packages of
#    unrs-resolver that the registry mirror used here does not serve, which `npm ci` refuses; the lock is not written.)
if [ ! -f "$tools/node_modules/.package-lock.json" ] || [ "$tools/package-lock.json" -nt "$tools/node_modules/.package-lock.json" ]; then
  echo "lint:n8n: installing @n8n/node-cli into n8n-node/.lint (scripts off)"
  (cd "$tools" && npm install --ignore-scripts --no-save --no-audit --no-fund --loglevel=error)
fi

# 2. A copy of the package outside the repository, next to a copy of the shared core it imports, with the tools as
#    its node_modules. (A node_modules inside n8n-node/ would change what the root tsc and jest resolve.)
stage="$(mktemp -d "${TMPDIR:-/tmp}/n8n-node-lint.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/n8n-node"
cp -R "$here/package.json" "$here/eslint.config.mjs" "$here/README.md" "$here/nodes" "$here/credentials" "$stage/n8n-node/"
cp -R "$here/../shared" "$stage/shared"
ln -s "$tools/node_modules" "$stage/n8n-node/node_modules"
node -e '
  const fs = require("fs");
  const [file, identity] = process.argv.slice(1);
  const manifest = { ...JSON.parse(fs.readFileSync(file, "utf8")), ...JSON.parse(fs.readFileSync(identity, "utf8")) };
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2) + "\n");
' "$stage/n8n-node/package.json" "$here/../test/n8n-e2e/test-identity.json"

echo "lint:n8n: n8n-node lint (@n8n/node-cli $(node -p "require('$tools/node_modules/@n8n/node-cli/package.json').version"), strict; stand-in publisher identity)"
status=0
(cd "$stage/n8n-node" && node "$tools/node_modules/@n8n/node-cli/bin/n8n-node.mjs" lint) 2>&1 | tee "$stage/lint.log" || status=$?
summary="$(sed 's/\x1b\[[0-9;]*m//g' "$stage/lint.log" | grep -Eo '[0-9]+ problems? \([0-9]+ errors?, [0-9]+ warnings?\)' | tail -1 || true)"
echo "lint:n8n: n8n-node lint: ${summary:-0 problems (0 errors, 0 warnings)}"

if [ "$status" -ne 0 ]; then
  echo "lint:n8n: FAILED"
  exit "$status"
fi
echo "lint:n8n: passed (n8n's package scanner, both legs: test/n8n-e2e/scanner.mjs, run by npm run test:e2e)"
