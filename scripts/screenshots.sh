#!/usr/bin/env bash
# Regenerates docs/screenshots/ (used by the README) from a passing e2e run: one
# screenshot per panel, exactly as the stock DevTools frontend showed it.
#   console.png  Console: a message from before the window opened and one after
#   sources.png  Sources: the host script under file:// in the navigator, opened
#   paused.png   Sources while paused on a `debugger;` statement (status, call stack)
#   client-console.png  Console with a client page's context selected: the page's
#                messages (app.js links) next to the host's
#   threads-console.png  Console: a worker thread's message ([worker eval] link)
#                between the host's
#   thread-paused.png  Sources paused on a gutter breakpoint in a worker thread's
#                script: the Threads pane shows that thread paused, the host running
#   elements.png Elements: two pages' documents under their frames in the host's
#                empty document, one <h1> just changed by the page
#   elements-search.png Elements: Ctrl-F with a CSS selector, a match in each page
#   realms-console.png  Console: messages of the host, a worker thread and a forked
#                child, each linked to its own script
#   elements-styles.png  Styles of a page's <h1>: a rule inside @media
#   elements-styles-hover.png  Styles with :hover forced (:hov): the page's h1:hover
#                rule, and the color toggled off, struck through
set -euo pipefail
cd "$(dirname "$0")/.."
export E2E_ARTIFACTS=$(mktemp -d "${TMPDIR:-/tmp}/inspector-worker-screens.XXXXXX")
bash scripts/e2e.sh tests/console.test.js tests/sources.test.js tests/debugging.test.js tests/client-pages.test.js tests/threads.test.js tests/elements.test.js tests/realms.test.js tests/styles.test.js
mkdir -p docs/screenshots
copy() {
  [ -f "$E2E_ARTIFACTS/$1" ] || { echo "screenshots.sh: the suite did not write $1" >&2; exit 1; }
  cp "$E2E_ARTIFACTS/$1" "docs/screenshots/$2"
  echo "docs/screenshots/$2  <-  $1"
}
copy console-01-console.png console.png
copy sources-01-sources.png sources.png
copy debugger-statement-01-paused.png paused.png
copy client-console-02-console-page-context.png client-console.png
copy threads-01-threads-console.png threads-console.png
copy thread-breakpoint-01-thread-paused.png thread-paused.png
copy elements-01-tree.png elements.png
copy elements-03-search.png elements-search.png
copy realms-01-console.png realms-console.png
copy styles-01-styles.png elements-styles.png
copy styles-04-styles-hover.png elements-styles-hover.png
rm -rf "$E2E_ARTIFACTS"
