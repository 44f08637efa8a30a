#!/usr/bin/env bash
# The one command that runs every test (README, .ci/run). On a fresh machine it
# installs what it needs itself, or stops with a message that says what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "test.sh: '$1' is required: $2" >&2; exit 2; }; }
need go "install Go 1.26 (https://go.dev/dl) and put it on PATH"
need node "install Node.js >= 20 (the host runtime and the e2e runner)"

export PATH="$PATH:$(go env GOPATH)/bin"
if ! command -v staticcheck >/dev/null 2>&1; then
  echo "test.sh: installing staticcheck (honnef.co/go/tools v0.8.2)" >&2
  go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi

echo "== gofmt, go vet, staticcheck"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-formatted:"; echo "$unformatted"; exit 1; fi
go vet ./...
staticcheck ./...

# Debian's chromium: the client-page tests (Go) and the e2e suite drive it.
export E2E_CHROMIUM=${E2E_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$E2E_CHROMIUM" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing Debian's chromium (apt-get update && apt-get install -y chromium)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
if [ ! -x "$E2E_CHROMIUM" ]; then
  echo "test.sh: no chromium at $E2E_CHROMIUM: run 'sudo apt-get install -y chromium' (tests that need it fail in CI and say SKIPPED elsewhere)" >&2
fi

echo "== node --test client/js/"
node --test client/js/

# The cmd tests start real Express and Vite apps from e2e/node_modules.
bash scripts/e2e-deps.sh

echo "== go test -race ./..."
go test -race -count=1 -timeout 40m ./...

if [ -f e2e/package.json ]; then
  echo "== e2e (stock DevTools frontend in headless Chromium)"
  bash scripts/e2e.sh
fi
