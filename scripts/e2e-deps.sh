#!/usr/bin/env bash
# Installs e2e/'s npm packages (Playwright's client, Express, Vite …) with
# `npm ci` when missing or when the lock changed. Run by scripts/test.sh
# before `go test` (the cmd tests start real Express and Vite apps from
# e2e/node_modules) and by scripts/e2e.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
lock_sum=$(sha256sum e2e/package-lock.json e2e/package.json | sha256sum | cut -d' ' -f1)
if [ ! -d e2e/node_modules ] || [ "$(cat e2e/node_modules/.e2e-lock-sum 2>/dev/null)" != "$lock_sum" ]; then
  echo "e2e-deps.sh: npm ci in e2e/"
  (cd e2e && npm ci --no-audit --no-fund)
  echo "$lock_sum" > e2e/node_modules/.e2e-lock-sum
fi
