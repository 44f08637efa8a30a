// Styles: the Elements panel's Styles pane for a page's element. A tab loads the
// page served by fixtures/page-host.js, which gets a style sheet with a rule inside
// @media; selecting the page's <h1> in the tree shows that rule with its media
// condition, editing its value in the pane changes the page's computed style, and
// toggling the property off keeps it shown, disabled; forcing :hover (:hov) applies
// and shows the page's h1:hover rule.
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

test('styles: a page element\'s @media rule shows in Styles; editing its value changes the page', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'styles', fixture: PAGE_HOST });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-page-host: started before any DevTools window');
    const tab = await openPageTab(t, chrome, pageURL, dt);
    await dt.waitForConsoleText('shop-page: loaded');
    await tab.evaluate(() => {
      const s = document.createElement('style');
      s.textContent = 'h1 { font-weight: 700; }\n@media (min-width: 1px) { h1 { color: rgb(0, 128, 0); } }\nh1:hover { background-color: rgb(255, 255, 0); }';
      document.head.append(s);
    });

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

    // The Styles pane: the rule inside @media, with its condition and value.
    const section = page.locator('.styles-section', { hasText: 'color' }).filter({ hasText: '(min-width: 1px)' }).first();
    await section.waitFor({ state: 'visible' });
    // The section renders its properties after its header.
    const value = section.locator('span.value[aria-label="CSS property value: rgb(0, 128, 0)"]').first();
    await value.waitFor({ state: 'visible' });
    t.diagnostic(`@media section: ${(await section.innerText()).replace(/\s+/g, ' ')}`);
    await page.locator('.styles-section', { hasText: 'font-weight' }).first().waitFor({ state: 'visible' });
    const shot = await dt.screenshot('styles');
    t.diagnostic(`screenshot: ${shot}`);

    // Edit the value in the pane: the page's computed style follows.
    // At the text's end: its start is the color swatch, which opens the picker.
    const box = await value.boundingBox();
    await value.click({ position: { x: (box?.width || 10) - 3, y: (box?.height || 10) / 2 } });
    await page.keyboard.press('Control+A');
    // Key by key, as a user types (100 ms a key): the pane applies every
    // keystroke as a live edit (CSS.setStyleTexts), and the intermediate
    // values the page's CSS parser refuses ('r', 'rgb(0, 0,') come back as
    // typed, so the property stays in the editor (docs/agent-note.md,
    // Styles of pages).
    await page.keyboard.type('rgb(0, 0, 255)', { delay: 100 });
    await page.keyboard.press('Enter');
    const deadline = Date.now() + STEP_MS;
    let color = '';
    while (Date.now() < deadline) {
      color = await tab.evaluate(() => getComputedStyle(/** @type {Element} */ (document.querySelector('h1'))).color);
      if (color === 'rgb(0, 0, 255)') break;
      await page.waitForTimeout(100);
    }
    assert.equal(color, 'rgb(0, 0, 255)', 'editing the @media rule\'s value in Styles changes the page\'s computed color');
    t.diagnostic(`screenshot: ${await dt.screenshot('styles-edited')}`);

    // Toggle the property off with its checkbox: the page stops applying it
    // and the pane keeps showing it, disabled (the frontend writes it as a
    // comment; the page gives the comment back as a disabled property).
    await page.keyboard.press('Escape'); // Enter moved on to a new property's name
    const prop = section.locator('li', { has: page.locator('span.value[aria-label="CSS property value: rgb(0, 0, 255)"]') }).first();
    await prop.hover();
    await prop.locator('input[type=checkbox]').first().click({ force: true });
    const off = Date.now() + STEP_MS;
    while (Date.now() < off) {
      color = await tab.evaluate(() => getComputedStyle(/** @type {Element} */ (document.querySelector('h1'))).color);
      if (color !== 'rgb(0, 0, 255)') break;
      await page.waitForTimeout(100);
    }
    assert.equal(color, 'rgb(0, 0, 0)', 'the toggled-off color no longer applies to the page\'s <h1>');
    await section.locator('li.disabled', { has: page.locator('span.value[aria-label="CSS property value: rgb(0, 0, 255)"]') }).first().waitFor({ state: 'visible' });
    t.diagnostic(`screenshot: ${await dt.screenshot('styles-toggled')}`);

    // :hov, then :hover: the page's h1:hover rule applies to the <h1> (its
    // computed background) and shows in Styles; unchecked, it goes again.
    /** @param {string} want */
    const background = async (want) => {
      const until = Date.now() + STEP_MS;
      let bg = '';
      while (Date.now() < until) {
        bg = await tab.evaluate(() => getComputedStyle(/** @type {Element} */ (document.querySelector('h1'))).backgroundColor);
        if (bg === want) break;
        await page.waitForTimeout(100);
      }
      return bg;
    };
    await page.locator('.element-state').first().click(); // the :hov button, "Toggle element state"
    const hover = page.locator('devtools-checkbox[title=":hover"]').first();
    await hover.click();
    assert.equal(await background('rgb(255, 255, 0)'), 'rgb(255, 255, 0)', 'forced :hover applies the page\'s h1:hover rule');
    await page.locator('.styles-section', { hasText: 'h1:hover' }).first().waitFor({ state: 'visible' });
    t.diagnostic(`screenshot: ${await dt.screenshot('styles-hover')}`);
    await hover.click();
    assert.equal(await background('rgba(0, 0, 0, 0)'), 'rgba(0, 0, 0, 0)', 'the h1:hover rule stops applying once :hover is no longer forced');

    const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
    const a = await proxy.settle({ timeoutMs: 15_000 });
    const summary = formatAnalysis(a);
    for (const line of summary.split('\n')) t.diagnostic(line);
    assert.deepEqual(a.unanswered.map((r) => `${r.id} ${r.method}`), [], `unanswered requests\n${summary}`);
    assert.deepEqual(a.duplicateAnswers.map((r) => `${r.id} ${r.method}`), [], `requests answered twice\n${summary}`);
    assert.deepEqual(dt.frontendConsole.filter((l) => /CSS\.|TypeError/.test(l)), [], 'no frontend errors about CSS requests');
  });
});
