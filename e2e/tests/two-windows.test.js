// Two DevTools windows on the one target at the same time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { formatAnalysis } from '../lib/proxy.js';

const chrome = useChromium();

test('two windows: both show the console; a pause in one shows in both; resuming from the other works', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'two-windows' });
  await h.run(async () => {
    const a = await h.open('two-windows-a');
    const b = await h.open('two-windows-b');
    for (const dt of [a, b]) await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    h.w.trigger('log', 'seen by both');
    for (const dt of [a, b]) await dt.waitForConsoleText('e2e-host: on demand seen by both');

    // Pause from window A's console: the evaluation stays pending until resumed.
    await a.page.bringToFront();
    await a.evaluateInConsole("pauseHere('from window a')");
    for (const dt of [a, b]) {
      await dt.page.bringToFront();
      assert.match(await dt.waitForPaused(), /paused/i, `window ${dt.name} shows the pause`);
      assert.match((await dt.callStack())[0] ?? '', /^pauseHere host\.js:\d+$/, `window ${dt.name} shows the call stack`);
      t.diagnostic(`screenshot: ${await dt.screenshot('paused')}`);
    }

    await b.page.bringToFront();
    await b.clickResume();
    for (const dt of [b, a]) {
      await dt.page.bringToFront();
      await dt.waitForNotPaused();
      await dt.showPanel('console');
      await dt.waitForConsoleText('e2e-host: resumed after debugger from window a');
      t.diagnostic(`screenshot: ${await dt.screenshot('resumed')}`);
    }

    // No cross-talk: each window got answers only to its own requests, once each.
    const analysis = await /** @type {NonNullable<typeof h.proxy>} */ (h.proxy).settle();
    assert.equal(h.proxy?.conns.size, 2, 'two DevTools connections went through the proxy');
    assert.deepEqual(analysis.unsolicited, [], `a window got an answer to a request it never sent\n${formatAnalysis(analysis)}`);
    assert.deepEqual(analysis.duplicateAnswers, [], `a request was answered twice\n${formatAnalysis(analysis)}`);
  });
});
