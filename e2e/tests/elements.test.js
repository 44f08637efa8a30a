// Elements: the DOM of every connected page in the one window. Two tabs load the
// page served by fixtures/page-host.js; the stock Elements panel shows the host's
// empty document with one <iframe> per page, and expanding a page's frame shows its
// document, live from the page.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { formatAnalysis } from '../lib/proxy.js';
import { artifactPath } from '../lib/artifacts.js';
import { STEP_MS } from '../lib/devtools.js';
import { TEST_MS, openPageTab, startHost, useChromium } from '../lib/setup.js';

const chrome = useChromium();
const PAGE_HOST = fileURLToPath(new URL('../fixtures/page-host.js', import.meta.url));

/**
 * The tree element of the Elements panel whose opening tag shows text.
 * @param {import('playwright-core').Page} page
 * @param {string|RegExp} text
 */
function treeItem(page, text) {
  return page.locator('#elements-content li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: text }) });
}

/**
 * Expands a collapsed tree element (select it, ArrowRight) and waits for it to be
 * open.
 * @param {import('playwright-core').Locator} item
 */
async function expand(item) {
  await item.scrollIntoViewIfNeeded();
  await item.locator('.selection').first().click({ force: true }).catch(() => item.click());
  if ((await item.getAttribute('aria-expanded')) !== 'true') await item.press('ArrowRight');
  await assert.doesNotReject(async () => {
    const deadline = Date.now() + STEP_MS;
    while ((await item.getAttribute('aria-expanded')) !== 'true') {
      if (Date.now() > deadline) throw new Error('did not expand');
      await item.page().waitForTimeout(100);
    }
  });
}

test('elements: two pages in one tree; expanding a page shows its live DOM; a logged node reveals in it; Ctrl-F finds by selector; an attribute edited in the tree changes the page; inspect mode picks by click', { timeout: TEST_MS }, async (t) => {
  const name = 'elements';
  const h = await startHost(t, { chrome, proxy: true, name, fixture: PAGE_HOST });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-page-host: started before any DevTools window');
    const tabs = [await openPageTab(t, chrome, pageURL, dt), await openPageTab(t, chrome, pageURL + '?second', dt)];
    await dt.waitForConsoleText('shop-page: loaded, load 2');

    const { page } = dt;
    await page.locator('#tab-elements').click();
    await page.locator('#tab-elements[aria-selected="true"]').waitFor();
    // One <iframe> per page in the host's <body>, src naming the page.
    const frames = treeItem(page, /^<iframe/);
    for (const [i, src] of [pageURL, pageURL + '?second'].entries()) {
      await frames.filter({ hasText: src }).first().waitFor({ state: 'visible' });
      t.diagnostic(`frame owner ${i + 1}: ${(await frames.filter({ hasText: src }).first().innerText()).split('\n')[0]}`);
    }
    assert.equal(await frames.count(), 2, 'two frame owners, one per page');

    // Expand each page: iframe → #document → <html> → <body>: its <h1>.
    /** @param {import('playwright-core').Locator} owner */
    const expandPage = async (owner) => {
      await expand(owner);
      const group = owner.locator('xpath=following-sibling::ol[1]');
      await expand(group.locator('li[role=treeitem]').first()); // #document
      await expand(group.locator('li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: /^<html/ }) }).first());
      await expand(group.locator('li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: /^<body/ }) }).first());
      const h1 = group.locator('li[role=treeitem]', { hasText: 'Shop page' }).filter({ has: page.locator('.webkit-html-tag', { hasText: /^<h1/ }) }).first();
      await h1.waitFor({ state: 'visible' });
      return { group, h1 };
    };
    await expandPage(frames.filter({ hasNotText: '?second' }).first());
    const { group, h1 } = await expandPage(frames.filter({ hasText: '?second' }).first());

    // Live: the page changes its heading; the tree shows it without a reload.
    await tabs[1].evaluate(() => {
      const h = /** @type {HTMLElement} */ (document.querySelector('h1'));
      h.textContent = 'Shop page, live';
      h.setAttribute('data-live', 'yes');
    });
    await group.locator('li[role=treeitem]', { hasText: 'Shop page, live' }).first().waitFor({ state: 'visible' });
    await group.locator('.webkit-html-attribute-name', { hasText: 'data-live' }).first().waitFor({ state: 'visible' });
    await dt.page.bringToFront();
    await h1.locator('.selection').first().click({ force: true }).catch(() => h1.click());
    const shot = await dt.screenshot('tree');
    t.diagnostic(`screenshot: ${shot}`);

    // Hovering the <h1> in the tree highlights it in its page (the worker's overlay
    // element there), and the selected <h1> is $0 in its page's Console context.
    await h1.locator('.selection').first().hover({ force: true });
    await tabs[1].waitForFunction(() => document.querySelectorAll('inspector-worker-overlay').length === 1, null, { timeout: STEP_MS });
    const pageShot = artifactPath(`${name}-page-highlight.png`);
    await tabs[1].screenshot({ path: pageShot });
    t.diagnostic(`screenshot of the page: ${pageShot}`);
    await dt.evaluateInConsole('$0.textContent');
    await page.locator('.console-user-command-result .console-message-text', { hasText: "'Shop page, live'" }).first().waitFor({ state: 'visible' });
    t.diagnostic(`screenshot: ${await dt.screenshot('dollar-zero')}`);
    await tabs[1].waitForFunction(() => document.querySelectorAll('inspector-worker-overlay').length === 0, null, { timeout: STEP_MS });

    // Console → Elements: a node the first page logs renders as a node in the
    // Console, and "Open in Elements panel" (older: "Reveal …") selects it in the tree.
    await dt.showPanel('console');
    await tabs[0].evaluate(() => console.log('e2e node', document.querySelector('h1')));
    const logged = page.locator('.console-message-wrapper', { hasText: 'e2e node' }).first();
    const node = logged.locator('.webkit-html-tag-name', { hasText: 'h1' }).first();
    await node.waitFor({ state: 'visible' });
    await node.click({ button: 'right' });
    await page.getByText(/^(Reveal in|Open in) Elements panel$/).first().click();
    await page.locator('#tab-elements[aria-selected="true"]').waitFor();
    const selected = page.locator('#elements-content li[role=treeitem].selected');
    await selected.filter({ hasText: 'Shop page' }).first().waitFor({ state: 'visible' });
    const revealed = (await selected.first().innerText()).replace(/\u200b/g, '').split('\n')[0];
    t.diagnostic(`revealed: ${revealed}`);
    assert.match(revealed, /^<h1>.*Shop page<\/h1>/, 'the first page\'s <h1> is selected');
    t.diagnostic(`screenshot: ${await dt.screenshot('revealed')}`);

    // Ctrl-F in Elements: a CSS selector finds the <h1> of both pages.
    await h1.locator('.selection').first().click({ force: true }).catch(() => h1.click());
    await page.keyboard.press('Control+F');
    await page.keyboard.type('body > h1');
    await page.keyboard.press('Enter');
    const matches = page.locator('.search-results-matches');
    await matches.filter({ hasText: /of 2/ }).first().waitFor({ state: 'visible' });
    t.diagnostic(`search: ${await matches.first().innerText()}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('search')}`);
    await page.keyboard.press('Escape');

    // Editing an attribute in the tree changes the page's DOM: double-click the
    // second page's data-live value, replace the attribute's text, Enter.
    const attr = group.locator('.webkit-html-attribute-value', { hasText: 'yes' }).first();
    await attr.scrollIntoViewIfNeeded();
    await attr.dblclick();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('data-live="edited"');
    await page.keyboard.press('Enter');
    await tabs[1].waitForFunction(() => document.querySelector('h1')?.getAttribute('data-live') === 'edited', null, { timeout: STEP_MS });
    await group.locator('.webkit-html-attribute-value', { hasText: 'edited' }).first().waitFor({ state: 'visible' });
    t.diagnostic(`screenshot: ${await dt.screenshot('attribute-edited')}`);

    // Inspect mode: the toolbar's picker, then a real click on the first page's
    // <h1> selects it in the tree, and the page's own click handler never runs.
    await tabs[0].evaluate(() => {
      const w = /** @type {any} */ (window);
      w.e2eClicks = 0;
      document.querySelector('h1')?.addEventListener('click', () => { w.e2eClicks++; });
    });
    await page.locator('[aria-label^="Select an element in the page to inspect it"]').first().click();
    const box = await tabs[0].locator('h1').boundingBox();
    assert.ok(box, 'the first page has an <h1> to click');
    await tabs[0].mouse.move(box.x + 5, box.y + box.height / 2);
    await tabs[0].waitForFunction(() => document.querySelectorAll('inspector-worker-overlay').length === 1, null, { timeout: STEP_MS });
    await tabs[0].mouse.click(box.x + 5, box.y + box.height / 2);
    const picked = page.locator('#elements-content li[role=treeitem].selected');
    await picked.filter({ hasText: /Shop page/ }).filter({ hasNotText: 'live' }).first().waitFor({ state: 'visible' });
    const pickedText = (await picked.first().innerText()).replace(/\u200b/g, '').split('\n')[0];
    t.diagnostic(`picked: ${pickedText}`);
    assert.match(pickedText, /^<h1>.*Shop page<\/h1>/, 'the clicked <h1> of the first page is selected');
    assert.equal(await tabs[0].evaluate(() => /** @type {any} */ (window).e2eClicks), 0, 'the page\'s click handler did not see the inspect click');
    t.diagnostic(`screenshot: ${await dt.screenshot('inspect-picked')}`);

    // The conversation: every request answered once; the DOM methods the panel
    // used are not errors.
    const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
    const a = await proxy.settle({ timeoutMs: 15_000 });
    const summary = formatAnalysis(a);
    for (const line of summary.split('\n')) t.diagnostic(line);
    assert.deepEqual(a.unanswered.map((r) => `${r.id} ${r.method}`), [], `unanswered requests\n${summary}`);
    assert.deepEqual(a.duplicateAnswers.map((r) => `${r.id} ${r.method}`), [], `requests answered twice\n${summary}`);
    const domErrors = errorMethods(proxy.frames).filter((m) => /^DOM\.(getDocument|requestChildNodes|getFrameOwner|enable|requestNode|pushNodesByBackendIdsToFrontend|describeNode|performSearch|getSearchResults|getBoxModel|setInspectedNode)\b|^Overlay\.(highlightNode|hideHighlight)\b/.test(m));
    assert.deepEqual(domErrors, [], 'DOM methods the tree needs answered without error');
    assert.deepEqual(dt.frontendConsole.filter((l) => /DOM\./.test(l)), [], 'no frontend errors about DOM requests');
  });
});

/**
 * `method [code] message` of every request answered with an error.
 * @param {Array<{conn: number, dir: string, text: string}>} frames
 */
function errorMethods(frames) {
  /** @type {Map<string, string>} */
  const sent = new Map();
  const out = new Set();
  for (const f of frames) {
    let msg;
    try { msg = JSON.parse(f.text); } catch { continue; }
    const key = `${f.conn}/${msg.sessionId || ''}/${msg.id}`;
    if (f.dir === '>' && typeof msg.method === 'string') sent.set(key, msg.method);
    else if (f.dir === '<' && msg.id !== undefined && msg.error) out.add(`${sent.get(key)} [${msg.error.code}] ${msg.error.message}`);
  }
  return [...out].sort();
}
