'use strict';
// A host app for preload.test.mjs, run as `node --require ../preload.cjs app.cjs`.
// OBS: observations to log at start; HOLD: ms to stay alive at most (0 =
// exit at once); the app also exits early once everything queued is acked.
// It prints one JSON line on exit: {loopMs, stats, env, snippet, api}.
const util = require('node:util');
const iw = globalThis.inspectorWorker;
const OBS = Number(process.env.OBS || 0);
const HOLD = Number(process.env.HOLD || 0);

const t0 = process.hrtime.bigint();
for (let i = 0; i < OBS; i++) iw.observe('obs', { i });
const loopMs = Number(process.hrtime.bigint() - t0) / 1e6;
const extra = process.env.EXTRA === '1';
if (extra) {
  iw.observe('weird name!', 1n);
  const cyc = { a: 1 }; cyc.self = cyc;
  iw.observe('cyclic', cyc);
  iw.observe('big', 'x'.repeat(300000));
  iw.observe('nodata');
}

process.on('exit', () => {
  process.stdout.write(JSON.stringify({
    loopMs,
    stats: iw.stats(),
    fdEnv: process.env.INSPECTOR_WORKER_FD === undefined ? null : process.env.INSPECTOR_WORKER_FD,
    snippet: iw.bootstrapSnippet(),
    inspected: util.inspect(iw, { showHidden: true, depth: 5 }),
    same: require(process.env.PRELOAD_PATH) === iw,
    observeAfter: iw.observe('after', 1),
  }) + '\n');
});

if (HOLD > 0) {
  const until = Date.now() + HOLD;
  const timer = setInterval(() => {
    const s = iw.stats();
    const drained = process.env.EXIT_WHEN_DRAINED === '1' && s.queued === 0 && s.sent > 0 && s.acked === s.sent;
    if (drained || Date.now() > until) clearInterval(timer);
  }, 20);
}
