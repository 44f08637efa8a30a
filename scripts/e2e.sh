#!/usr/bin/env bash
# End-to-end suite: the stock Chrome DevTools frontend (Debian's chromium serves it
# itself) against the real inspector-worker built from this checkout. Run by
# scripts/test.sh; runs alone too: `bash scripts/e2e.sh [test files…]`.
#
# Installs what is missing when it can (root: apt-get install chromium; npm ci in
# e2e/), otherwise says exactly what to run and exits 2. With CI=true a missing
# browser is a failure, never a skip.
#
# Environment: E2E_ARTIFACTS (screenshots and CDP logs; default a new temp folder,
# printed), E2E_CHROMIUM (default /usr/bin/chromium), INSPECTOR_WORKER_BIN (skip the
# build and test this binary instead).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

die() { echo "e2e.sh: $1" >&2; exit "${2:-1}"; }
command -v go >/dev/null 2>&1 || die "'go' is required: install Go 1.26 (https://go.dev/dl) and put it on PATH" 2
command -v node >/dev/null 2>&1 || die "'node' is required: install Node.js >= 20" 2
command -v npm >/dev/null 2>&1 || die "'npm' is required: it comes with Node.js (Debian: apt-get install -y npm)" 2
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "Node.js >= 20 is required (node --test, --test-concurrency); found $(node --version)" 2

# 1. The worker, built from this checkout.
if [ -z "${INSPECTOR_WORKER_BIN:-}" ]; then
  mkdir -p e2e/.bin
  echo "e2e.sh: go build -o e2e/.bin/inspector-worker ./cmd/inspector-worker"
  go build -o e2e/.bin/inspector-worker ./cmd/inspector-worker
  export INSPECTOR_WORKER_BIN=$root/e2e/.bin/inspector-worker
fi

# 2. The browser: Debian's chromium, which serves its own built DevTools frontend.
export E2E_CHROMIUM=${E2E_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$E2E_CHROMIUM" ]; then
  if [ "$E2E_CHROMIUM" = /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "e2e.sh: $E2E_CHROMIUM is missing; installing Debian's chromium (apt-get update && apt-get install -y chromium)"
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
  fi
  if [ ! -x "$E2E_CHROMIUM" ]; then
    msg="no browser at $E2E_CHROMIUM. Install Debian's chromium: sudo apt-get update && sudo apt-get install -y chromium (or set E2E_CHROMIUM to a chromium binary)"
    if [ "${CI:-}" = true ]; then die "$msg [CI=true: a missing browser fails the run]" 1; fi
    die "$msg" 2
  fi
fi

# 3. npm packages, exactly as locked; never a browser download.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
bash scripts/e2e-deps.sh

# 4. The suite, one file at a time (each starts its own chromium and workers).
export E2E_ARTIFACTS=${E2E_ARTIFACTS:-$(mktemp -d "${TMPDIR:-/tmp}/inspector-worker-e2e.XXXXXX")}
mkdir -p "$E2E_ARTIFACTS"
echo "e2e.sh: screenshots and CDP logs go to $E2E_ARTIFACTS"
cd e2e
if [ "$#" -gt 0 ]; then files=("$@"); else files=(tests/*.test.js); fi
status=0
node --test --test-concurrency=1 --test-timeout=600000 --test-reporter=spec "${files[@]}" || status=$?
echo "e2e.sh: screenshots and CDP logs: $E2E_ARTIFACTS"
exit "$status"
