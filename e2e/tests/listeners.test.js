// Event Listeners: the Elements sidebar's pane for a page's element, in the stock
// frontend. The Shop page's app.js (fixtures/page-host.js) adds a click listener to
// its <h1> after client.js loaded; selecting the <h1> and opening the pane lists it,
// linked to its line in app.js.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { formatAnalysis } from '../lib/proxy.js';
import { STEP_MS } from '../lib/devtools.js';
import { TEST_MS, openPageTab, startHost, useChromium } from '../lib/setup.js';

const chrome = useChromium();
const PAGE_HOST = fileURLToPath(new URL('../fixtures/page-host.js', import.meta.url));

/**
 * The tree element of the Elements panel whose opening tag shows text.
 * @param {import('playwright-core').Page|import('playwright-core').Locator} scope
 * @param {import('playwright-core').Page} page
 * @param {string|RegExp} text
 */
function treeItem(scope, page, text) {
  return scope.locator('li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: text }) }).first();
}

/**
 * Expands a collapsed tree element (select it, ArrowRight) and waits for it to be open.
 * @param {import('playwright-core').Locator} item
 */
async function expand(item) {
  await item.scrollIntoViewIfNeeded();
  await item.locator('.selection').first().click({ force: true }).catch(() => item.click());
  if ((await item.getAttribute('aria-expanded')) !== 'true') await item.press('ArrowRight');
  const deadline = Date.now() + STEP_MS;
  while ((await item.getAttribute('aria-expanded')) !== 'true') {
    if (Date.now() > deadline) throw new Error('did not expand');
    await item.page().waitForTimeout(100);
  }
}

test('event listeners: the pane lists the click listener of a selected page element, linked to app.js', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'listeners', fixture: PAGE_HOST });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-page-host: started before any DevTools window');
    await openPageTab(t, chrome, pageURL, dt);
    await dt.waitForConsoleText('shop-page: loaded');

    const { page } = dt;
    await page.locator('#tab-elements').click();
    await page.locator('#tab-elements[aria-selected="true"]').waitFor();
    const owner = treeItem(page.locator('#elements-content'), page, /^<iframe/);
    await owner.waitFor({ state: 'visible' });
    await expand(owner);
    const group = owner.locator('xpath=following-sibling::ol[1]');
    await expand(group.locator('li[role=treeitem]').first()); // #document
    await expand(treeItem(group, page, /^<html/));
    await expand(treeItem(group, page, /^<body/));
    const h1 = group.locator('li[role=treeitem]', { hasText: 'Shop page' }).filter({ has: page.locator('.webkit-html-tag', { hasText: /^<h1/ }) }).first();
    await h1.waitFor({ state: 'visible' });
    await dt.page.bringToFront();
    await h1.locator('.selection').first().click({ force: true }).catch(() => h1.click());

    // The sidebar's Event Listeners tab (in the overflow menu when the sidebar is narrow).
    const tab = page.locator('.tabbed-pane-header-tab', { hasText: /^Event Listeners$/ }).first();
    if (await tab.isVisible()) await tab.click();
    else {
      await page.locator('.tabbed-pane-header-tabs-drop-down-container').first().click();
      await page.getByText(/^Event Listeners$/).last().click();
    }
    const pane = page.locator('.event-listener-tree, .event-listeners-view').first();
    const click = pane.locator('li[role=treeitem]', { hasText: /^click$/ }).first();
    await click.waitFor({ state: 'visible', timeout: STEP_MS });
    if ((await click.getAttribute('aria-expanded')) !== 'true') await click.click();
    const listener = pane.locator('li[role=treeitem]', { hasText: 'app.js' }).first();
    await listener.waitFor({ state: 'visible', timeout: STEP_MS });
    const text = (await listener.innerText()).replace(/\s+/g, ' ');
    t.diagnostic(`listener: ${text}`);
    assert.match(text, /h1/, 'the listener is on the <h1>');
    assert.match(text, /app\.js:\d+/, 'linked to its line in app.js');
    t.diagnostic(`screenshot: ${await dt.screenshot('event-listeners')}`);

    const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
    const a = await proxy.settle({ timeoutMs: 15_000 });
    const summary = formatAnalysis(a);
    for (const line of summary.split('\n')) t.diagnostic(line);
    assert.deepEqual(a.unanswered.map((r) => `${r.id} ${r.method}`), [], `unanswered requests\n${summary}`);
    assert.deepEqual(a.duplicateAnswers.map((r) => `${r.id} ${r.method}`), [], `requests answered twice\n${summary}`);
    assert.equal(a.errors.get('DOMDebugger.getEventListeners'), undefined, 'DOMDebugger.getEventListeners is never an error');
  });
});
