// Console: what a user sees in the Console panel of a stock DevTools window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { fixtureLine } from '../lib/worker.js';

const chrome = useChromium();

test('console: a host message logged before the window opened and one logged after are both visible', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'console' });
  await h.run(async () => {
    // startHost returns once the host has logged its first line: the window opens later.
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    h.w.trigger('log', 'after the window opened');
    await dt.waitForConsoleText('e2e-host: on demand after the window opened');
    const texts = await dt.consoleTexts();
    const before = texts.indexOf('e2e-host: started before any DevTools window');
    const afterIdx = texts.indexOf('e2e-host: on demand after the window opened');
    assert.ok(before >= 0 && afterIdx > before, `both messages, in order, once each: ${JSON.stringify(texts)}`);
    assert.equal(texts.filter((x) => x.includes('started before any DevTools window')).length, 1, `the early message is shown once: ${JSON.stringify(texts)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('console')}`);
  });
});

test("console: a message's source link opens the host script in Sources", { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'console-link' });
  await h.run(async () => {
    const dt = await h.open();
    h.w.trigger('log', 'with a source link');
    await dt.waitForConsoleText('e2e-host: on demand with a source link');
    t.diagnostic(`screenshot: ${await dt.screenshot('console-link')}`);
    // Both links work: the one of the message replayed from before the window
    // opened, and the live one.
    const cases = [
      ['e2e-host: started before any DevTools window', fixtureLine("console.log('e2e-host: started before any DevTools window')")],
      ['e2e-host: on demand with a source link', fixtureLine("console.log('e2e-host: on demand '")],
    ];
    for (const [text, line] of /** @type {Array<[string, number]>} */ (cases)) {
      await dt.showPanel('console');
      const link = dt.consoleLinkFor(text);
      assert.equal((await link.innerText()).trim(), `host.js:${line}`, `the link of "${text}" names the host script and its console.log line`);
      await link.click();
      await dt.page.locator('#tab-sources[aria-selected="true"]').waitFor();
      await dt.page.locator('#sources-panel-sources-view .tabbed-pane-header-tab[aria-selected="true"]', { hasText: 'host.js' }).waitFor();
      // The editor's status bar shows the revealed position.
      await dt.page.getByText(new RegExp(`^Line ${line}, column \\d+$`)).waitFor();
      const lines = await dt.editorLines();
      assert.ok(lines.some((l) => l.includes("console.log('e2e-host: on demand ' + text);")), `the editor shows the host script: ${JSON.stringify(lines.slice(0, 5))}`);
    }
    t.diagnostic(`screenshot: ${await dt.screenshot('sources-from-link')}`);
  });
});
