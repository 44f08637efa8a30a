// The CDP log: every request the stock frontend sent got exactly one answer. The
// methods answered with an error are listed in the test output (what we do not
// support yet) and written to <artifacts>/cdp-log-summary.txt.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { artifactPath } from '../lib/artifacts.js';
import { formatAnalysis } from '../lib/proxy.js';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { FIXTURE_URL } from '../lib/worker.js';

const chrome = useChromium();

/**
 * Methods that must really work (what the stock frontend needs to attach, show the
 * Console and Sources, evaluate and resume): an error answer to any of these, when
 * the frontend sent it, fails the test.
 */
const MUST_SUCCEED = [
  'Runtime.enable', 'Debugger.enable', 'Page.enable', 'Page.getResourceTree',
  'Runtime.runIfWaitingForDebugger', 'Debugger.getScriptSource', 'Runtime.evaluate',
  'Debugger.resume', 'Runtime.getIsolateId', 'Runtime.getHeapUsage',
];

test('cdp log: every request the frontend sent was answered exactly once', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'cdp-log' });
  const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
  await h.run(async () => {
    // A short tour so the log holds attach, console, evaluation, sources, a pause and
    // the Network, Performance and Memory panels.
    // The log is checked even when the tour gets stuck: an unanswered request is
    // usually why, and that is what this test must name.
    /** @type {Error | null} */
    let tourError = null;
    const dt = await h.open();
    try {
      await dt.waitForConsoleText('e2e-host: started before any DevTools window');
      h.w.trigger('log', 'for the log');
      await dt.waitForConsoleText('e2e-host: on demand for the log');
      await dt.evaluateInConsole('6 * 7');
      await dt.page.locator('.console-user-command-result .console-message-text', { hasText: /^42$/ }).waitFor();
      await dt.openSource(FIXTURE_URL);
      h.w.trigger('pause', 'for the log');
      await dt.waitForPaused();
      await dt.page.keyboard.press('F8');
      await dt.waitForNotPaused();
      await dt.showPanel('console');
      await dt.waitForConsoleText('e2e-host: resumed after debugger for the log');
      t.diagnostic(`screenshot: ${await dt.screenshot('cdp-log-tour')}`);
      // The other panels a user clicks through ask for their own domains.
      for (const panel of ['network', 'timeline', 'heap-profiler']) {
        await dt.page.locator(`#tab-${panel}`).click();
        await dt.page.locator(`#tab-${panel}[aria-selected="true"]`).waitFor();
        t.diagnostic(`screenshot: ${await dt.screenshot(`panel-${panel}`)}`);
      }
    } catch (e) {
      tourError = /** @type {Error} */ (e);
    }

    const a = await proxy.settle({ timeoutMs: tourError ? 2000 : 15_000 });
    const summary = formatAnalysis(a);
    fs.writeFileSync(artifactPath('cdp-log-summary.txt'), summary + '\n');
    for (const line of summary.split('\n')) t.diagnostic(line);
    for (const line of dt.frontendConsole) t.diagnostic(`frontend console: ${line.slice(0, 300)}`);

    assert.ok(a.requests > 10, `the frontend sent its attach traffic (${a.requests} requests)`);
    assert.deepEqual(a.unanswered.map((r) => `${r.id} ${r.method}`), [], `unanswered requests\n${summary}`);
    assert.deepEqual(a.duplicateAnswers.map((r) => `${r.id} ${r.method}`), [], `requests answered twice\n${summary}`);
    assert.deepEqual(a.unsolicited, [], `answers to requests never sent\n${summary}`);
    assert.deepEqual(a.idless, [], `answers without an id\n${summary}`);
    const failedCore = MUST_SUCCEED.filter((m) => a.errors.has(m)).map((m) => `${m}: ${a.errors.get(m)?.message}`);
    assert.deepEqual(failedCore, [], `methods that must work were answered with an error\n${summary}`);
    if (tourError) throw tourError;
  });
});
