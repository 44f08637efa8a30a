#!/usr/bin/env bash
# Flake check: runs the process-heavy packages (real node hosts, real sockets,
# Chromium) FLAKE_COUNT times (default 10) under -race and fails on any
# failure. Not part of scripts/test.sh (it takes ~30 min on 2 cores); run it
# before claiming a change to process or socket handling is done:
#
#   bash scripts/flakecheck.sh            # -count=10
#   FLAKE_COUNT=3 bash scripts/flakecheck.sh
set -uo pipefail
cd "$(dirname "$0")/.."
count=${FLAKE_COUNT:-10}
pkgs=(./hostnode/ ./cmd/... ./cdpserver/ ./trace/)
export E2E_CHROMIUM=${E2E_CHROMIUM:-/usr/bin/chromium}
log=$(mktemp -t flakecheck.XXXXXX.log)
echo "flakecheck: go test -race -count=$count ${pkgs[*]} (log: $log)"
start=$(date +%s)
go test -race -count="$count" -timeout 120m -v "${pkgs[@]}" >"$log" 2>&1
rc=$?
passed=$(grep -c -- '^--- PASS' "$log" || true)
failed=$(grep -c -- '^--- FAIL' "$log" || true)
grep -E -- '^(--- FAIL|FAIL|ok|panic:)' "$log" || true
echo "flakecheck: $(( $(date +%s) - start )) s; top-level tests: $passed passed, $failed failed (count=$count)"
if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
  echo "flakecheck: FAILED; see $log" >&2
  exit 1
fi
