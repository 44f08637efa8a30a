// Elements: the trees beside a page's document in the stock frontend. A tab of
// fixtures/page-host.js's page gets an open and a closed shadow root, a <template>
// and a same-origin frame; expanding the page shows each as Chrome's Elements panel
// does: `#shadow-root (open)`, `#shadow-root (closed)`, the template's
// `#document-fragment` and the frame's `#document`, with their content.
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
 * Expands a collapsed tree element (select it, ArrowRight) and waits for it to be
 * open.
 * @param {import('playwright-core').Locator} item
 */
async function expand(item) {
  await item.scrollIntoViewIfNeeded();
  await item.locator('.selection').first().click({ force: true }).catch(() => item.click());
  if ((await item.getAttribute('aria-expanded')) !== 'true') await item.press('ArrowRight');
  const deadline = Date.now() + STEP_MS;
  while ((await item.getAttribute('aria-expanded')) !== 'true') {
    if (Date.now() > deadline) throw new Error('did not expand: ' + (await item.innerText()).split('\n')[0]);
    await item.page().waitForTimeout(100);
  }
}

test('elements: shadow roots, a template and a same-origin frame show in the tree as in Chrome', { timeout: TEST_MS }, async (t) => {
  const name = 'elements-trees';
  const h = await startHost(t, { chrome, proxy: true, name, fixture: PAGE_HOST });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-page-host: started before any DevTools window');
    const tab = await openPageTab(t, chrome, pageURL, dt);
    await dt.waitForConsoleText('shop-page: loaded, load 1');
    await tab.evaluate(() => new Promise((done) => {
      const open = document.createElement('section');
      open.attachShadow({ mode: 'open' }).innerHTML = '<span>inside-open-root</span>';
      const closed = document.createElement('aside');
      closed.attachShadow({ mode: 'closed' }).innerHTML = '<em>inside-closed-root</em>';
      const tpl = document.createElement('template');
      tpl.innerHTML = '<b>inside-template</b>';
      const frame = document.createElement('iframe');
      frame.srcdoc = '<p>inside-frame</p>';
      frame.onload = () => done(1);
      document.body.append(open, closed, tpl, frame);
    }));

    const { page } = dt;
    await page.locator('#tab-elements').click();
    await page.locator('#tab-elements[aria-selected="true"]').waitFor();
    const item = (/** @type {string|RegExp} */ text) => page.locator('#elements-content li[role=treeitem]', { hasText: text }).last();
    const tag = (/** @type {RegExp} */ re) => page.locator('#elements-content li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: re }) });
    const owner = tag(/^<iframe/).filter({ hasText: pageURL }).first();
    await owner.waitFor({ state: 'visible' });
    await expand(owner);
    const group = owner.locator('xpath=following-sibling::ol[1]');
    await expand(group.locator('li[role=treeitem]').first()); // #document
    await expand(group.locator('li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: /^<html/ }) }).first());
    await expand(group.locator('li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: /^<body/ }) }).first());

    // Each host: its root first, as Chrome lists it.
    for (const [host, root, inside] of [[/^<section/, '#shadow-root (open)', 'inside-open-root'], [/^<aside/, '#shadow-root (closed)', 'inside-closed-root']]) {
      await expand(tag(host).first());
      await expand(item(root));
      await item(inside).waitFor({ state: 'visible' });
      t.diagnostic(`${root}: ${(await item(inside).innerText()).split('\n')[0]}`);
    }
    await expand(tag(/^<template/).first());
    await expand(item('#document-fragment'));
    await item('inside-template').waitFor({ state: 'visible' });
    // The frame: its #document, <html>, <body>, <p>.
    const inner = tag(/^<iframe/).filter({ hasText: 'srcdoc' }).first();
    await expand(inner);
    const innerGroup = inner.locator('xpath=following-sibling::ol[1]');
    await expand(innerGroup.locator('li[role=treeitem]').first());
    await expand(innerGroup.locator('li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: /^<html/ }) }).first());
    await expand(innerGroup.locator('li[role=treeitem]', { has: page.locator('.webkit-html-tag', { hasText: /^<body/ }) }).first());
    await innerGroup.locator('li[role=treeitem]', { hasText: 'inside-frame' }).first().waitFor({ state: 'visible' });
    // Live inside the open root.
    await tab.evaluate(() => {
      const r = /** @type {ShadowRoot} */ (/** @type {Element} */ (document.querySelector('section')).shadowRoot);
      r.appendChild(document.createElement('u')).textContent = 'added-live-in-root';
    });
    await item('added-live-in-root').waitFor({ state: 'visible' });
    t.diagnostic(`screenshot: ${await dt.screenshot('trees')}`);

    const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
    const a = await proxy.settle({ timeoutMs: 15_000 });
    const summary = formatAnalysis(a);
    for (const line of summary.split('\n')) t.diagnostic(line);
    assert.deepEqual(a.unanswered.map((r) => `${r.id} ${r.method}`), [], `unanswered requests\n${summary}`);
    assert.deepEqual(dt.frontendConsole.filter((l) => /DOM\./.test(l)), [], 'no frontend errors about DOM requests');
    assert.doesNotMatch(summary, /Overlay\.highlightNode/, 'hovering the roots, the fragment and the frame\'s document highlights without an error');
  });
});
