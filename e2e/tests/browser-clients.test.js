// Browser automation clients from their registries against the worker's browser
// endpoint (/json/version's webSocketDebuggerUrl): they connect as to a browser and
// find the worker's targets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import puppeteer from 'puppeteer-core';
import { alive, step } from '../lib/procs.js';
import { TEST_MS, startHost } from '../lib/setup.js';

test('puppeteer-core: connect({browserURL}) lists the combined target, evaluates in the host; disconnect() leaves the app running', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { name: 'puppeteer' });
  await h.run(async () => {
    const browserURL = `http://127.0.0.1:${h.w.port}`;
    const browser = await step(puppeteer.connect({ browserURL, defaultViewport: null }), 'puppeteer.connect');
    t.after(() => browser.disconnect().catch(() => {}));
    assert.match(await step(browser.version(), 'browser.version()'), /^inspector-worker\//);
    const pages = await step(browser.pages(), 'browser.pages()');
    const combined = pages.find((p) => p.target()._targetId === h.w.target.id);
    assert.ok(combined, `pages() lists the combined target ${h.w.target.id}: ${pages.map((p) => p.url())}`);
    assert.equal(combined.target().url(), h.w.target.url);
    const pid = await step(combined.evaluate(() => process.pid), 'page.evaluate(() => process.pid)');
    assert.equal(pid, h.w.hostPid, 'evaluated in the node host');

    await step(browser.disconnect(), 'browser.disconnect()');
    assert.ok(alive(h.w.hostPid), 'the host runs on after disconnect()');
    // The worker serves the next client.
    const again = await step(puppeteer.connect({ browserURL, defaultViewport: null }), 'puppeteer.connect again');
    t.after(() => again.disconnect().catch(() => {}));
    const [first] = (await step(again.pages(), 'pages() again')).filter((p) => p.target()._targetId === h.w.target.id);
    assert.equal(await step(first.evaluate(() => 6 * 7), 'evaluate again'), 42);
  });
});
