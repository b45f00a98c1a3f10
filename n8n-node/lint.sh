#!/usr/bin/env bash
# The official n8n lint of the community package: `n8n-node lint` from @n8n/node-cli (strict mode, untouched default
# eslint.config.mjs) on the sources, then n8n's package scanner on the packed tarball (dist/**/*.js) and the sources.
# Both see package.json as released (pack.mjs fills in repository, homepage, bugs and the author's e-mail).
# N8N_NODE_TARBALL=<file.tgz> scans that tarball (the release's, the e2e suite's) instead of packing one.
# Run from anywhere: `npm run lint:n8n`. The tools live in their own install, n8n-node/.lint/ (locked, scripts off).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$here/.lint"

# 1. The lint tools: installed once at the versions of the lock file, again only when the lock file changes.
#    (`npm install --no-save` rather than `npm ci`: the lock lacks some platform-only optional packages of
#    unrs-resolver that the registry mirror used here does not serve, which `npm ci` refuses; the lock is not written.)
if [ ! -f "$tools/node_modules/.package-lock.json" ] || [ "$tools/package-lock.json" -nt "$tools/node_modules/.package-lock.json" ]; then
  echo "lint:n8n: installing @n8n/node-cli and the package scanner into n8n-node/.lint (scripts off)"
  (cd "$tools" && npm install --ignore-scripts --no-save --no-audit --no-fund --loglevel=error)
fi

# 2. A current build: the scanner reads dist/.
node "$here/build.mjs"

# 3. A copy of the package outside the repository, next to a copy of the shared core it imports, with the tools as
#    its node_modules. (A node_modules inside n8n-node/ would change what the root tsc and jest resolve.)
stage="$(mktemp -d "${TMPDIR:-/tmp}/n8n-node-lint.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/n8n-node" "$stage/pack"
cp -R "$here/package.json" "$here/eslint.config.mjs" "$here/README.md" "$here/nodes" "$here/credentials" "$stage/n8n-node/"
cp -R "$here/../shared" "$stage/shared"
ln -s "$tools/node_modules" "$stage/n8n-node/node_modules"
node "$here/pack.mjs" --fill "$stage/n8n-node/package.json"

echo "lint:n8n: n8n-node lint (@n8n/node-cli $(node -p "require('$tools/node_modules/@n8n/node-cli/package.json').version"), strict)"
status=0
(cd "$stage/n8n-node" && node "$tools/node_modules/@n8n/node-cli/bin/n8n-node.mjs" lint) 2>&1 | tee "$stage/lint.log" || status=$?
summary="$(sed 's/\x1b\[[0-9;]*m//g' "$stage/lint.log" | grep -Eo '[0-9]+ problems? \([0-9]+ errors?, [0-9]+ warnings?\)' | tail -1 || true)"
echo "lint:n8n: n8n-node lint: ${summary:-0 problems (0 errors, 0 warnings)}"

# 4. n8n's package scanner on the tarball npm would publish, and on the sources.
tarball="${N8N_NODE_TARBALL:-}"
[ -n "$tarball" ] || tarball="$(node "$here/pack.mjs" --out "$stage/pack")"
echo "lint:n8n: scanning $(basename "$tarball")"
tar -xzf "$tarball" -C "$stage/pack"
(cd "$tools" && TMPDIR="$stage" node scan.mjs "$stage/pack/package" "$stage/n8n-node") || status=$?

if [ "$status" -ne 0 ]; then
  echo "lint:n8n: FAILED"
  exit "$status"
fi
echo "lint:n8n: passed"
