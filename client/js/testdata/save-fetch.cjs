'use strict';
// Loaded with --require BEFORE preload.cjs by scripts/fetch-capture-bench.mjs:
// keeps Node's own fetch so the bench app can time it against the wrapped one.
globalThis.__plainFetch = globalThis.fetch;
