// The Network panel: the host's fetches and the page's, in the one DevTools window.
// The host is fixtures/network-host.js (it fetches its own API at start, once more on
// demand, and a refused address); its page fetches /api/page-items.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { TEST_MS, openPageTab, startHost, useChromium } from '../lib/setup.js';

const chrome = useChromium();
const NETWORK_HOST = fileURLToPath(new URL('../fixtures/network-host.js', import.meta.url));

/**
 * The row of the Network log whose name cell reads `name`.
 * @param {import('playwright-core').Page} page @param {string} name
 */
function row(page, name) {
  return page.locator('.network-log-grid tr.data-grid-data-grid-node', { has: page.locator('td.name-column', { hasText: name }) }).first();
}

/**
 * Opens the request's Response tab and waits for text in it.
 * @param {import('playwright-core').Page} page @param {string} name @param {string} text
 */
async function responseShows(page, name, text) {
  await row(page, name).locator('td.name-column').click();
  await page.locator('#tab-response').click();
  await page.locator('.cm-content', { hasText: text }).first().waitFor({ state: 'visible' });
}

test('network: the host\'s fetches and the page\'s are listed in one Network panel; a response body opens', { timeout: TEST_MS }, async (t) => {
  const name = 'network';
  const h = await startHost(t, { chrome, proxy: true, name, fixture: NETWORK_HOST });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-network-host: stock host-marker-3c (at start)');
    await dt.showPanel('network');
    // Made before the window opened: replayed by Network.enable.
    await row(dt.page, 'host-stock').waitFor({ state: 'visible' });
    await row(dt.page, 'refused').waitFor({ state: 'visible' });
    // Made while it is open: live.
    h.w.trigger('log', 'fetch');
    await dt.page.locator('.network-log-grid td.name-column', { hasText: 'host-stock' }).nth(1).waitFor({ state: 'visible' });
    // The page's own fetch, from a tab of the same browser.
    await openPageTab(t, chrome, pageURL, dt);
    await row(dt.page, 'page-items').waitFor({ state: 'visible' });
    // The Initiator column links the calling script, host and page alike.
    await row(dt.page, 'host-stock').locator('td.initiator-column', { hasText: 'network-host.js:' }).waitFor({ state: 'visible' });
    await row(dt.page, 'page-items').locator('td.initiator-column', { hasText: 'app.js:' }).waitFor({ state: 'visible' });
    t.diagnostic(`screenshot: ${await dt.screenshot('list')}`);

    await responseShows(dt.page, 'page-items', 'page-marker-7f');
    t.diagnostic(`screenshot: ${await dt.screenshot('page-response')}`);
    await dt.page.keyboard.press('Escape');
    await responseShows(dt.page, 'host-stock', 'host-marker-3c');
    t.diagnostic(`screenshot: ${await dt.screenshot('host-response')}`);

    const a = await proxy.settle({ timeoutMs: 15_000 });
    assert.deepEqual(a.unanswered.map((r) => `${r.id} ${r.method}`), [], 'unanswered requests');
    assert.deepEqual(a.duplicateAnswers.map((r) => `${r.id} ${r.method}`), [], 'requests answered twice');
  });
});
