// Client pages: a browser page served by the host includes the worker's client
// (bootstrapSnippet) and shows up in the stock DevTools window as its own execution
// context, next to the host's. The host is fixtures/page-host.js; the page is loaded
// in a plain tab of the suite's chromium.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { artifactPath } from '../lib/artifacts.js';
import { STEP_MS } from '../lib/devtools.js';
import { formatAnalysis } from '../lib/proxy.js';
import { TEST_MS, openPageTab, startHost, useChromium } from '../lib/setup.js';

const chrome = useChromium();

const PAGE_HOST = fileURLToPath(new URL('../fixtures/page-host.js', import.meta.url));
const PAGE_HOST_LINES = fs.readFileSync(PAGE_HOST, 'utf8').split('\n');
const PAGE_TITLE = 'Shop page';
const HOST_STARTED = 'e2e-page-host: started before any DevTools window';

/** @param {string[]} lines @param {string} text */
function lineOf(lines, text) {
  const hits = lines.flatMap((l, i) => (l.includes(text) ? [i + 1] : []));
  if (hits.length !== 1) throw new Error(`${hits.length} lines contain ${JSON.stringify(text)}`);
  return hits[0];
}

/**
 * The worker in front of fixtures/page-host.js, behind the recording proxy; the
 * page's address. Everything is stopped in t.after (startHost).
 * @param {import('node:test').TestContext} t
 * @param {string} name
 */
async function startPageHost(t, name) {
  const h = await startHost(t, { chrome, proxy: true, name, fixture: PAGE_HOST });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  return { h, pageURL };
}

/**
 * Loads the page in a new tab of the suite's chromium (closed in t.after), then brings
 * the DevTools window back to the front (a background tab neither renders nor
 * screenshots).
 * @param {import('node:test').TestContext} t
 * @param {string} pageURL
 * @param {{page: import('playwright-core').Page}} dt
 */
async function openShopPage(t, pageURL, dt) {
  return openPageTab(t, chrome, pageURL, dt);
}

/** The served app.js, and the 1-based line of its only line containing text. */
async function pageScriptLine(/** @type {string} */ pageURL, /** @type {string} */ text) {
  const res = await fetch(new URL('app.js', pageURL));
  return lineOf((await res.text()).split('\n'), text);
}

/**
 * Opens the Console's JavaScript context selector and returns the entries' titles
 * once one is the page's; leaves the list open.
 * @param {import('playwright-core').Page} page
 */
async function openContextSelector(page) {
  const button = page.locator('button.soft-dropdown[aria-label^="JavaScript context"]');
  if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
  const entries = page.locator('[role=menuitem] .console-context-selector-element .title');
  await entries.filter({ hasText: PAGE_TITLE }).first().waitFor({ state: 'visible' });
  return (await entries.allInnerTexts()).map((s) => s.trim());
}

async function closeContextSelector(/** @type {import('playwright-core').Page} */ page) {
  await page.keyboard.press('Escape');
  await page.locator('button.soft-dropdown[aria-label^="JavaScript context"][aria-expanded="false"]').waitFor();
}

/**
 * The proxy's conversation checks (as in cdp-log.test.js) and the methods answered
 * with an error, all of them and those sent after `since` (the client flow).
 * @param {import('node:test').TestContext} t
 * @param {NonNullable<Awaited<ReturnType<typeof startHost>>['proxy']>} proxy
 * @param {string} name
 * @param {number} since
 */
async function checkCdpLog(t, proxy, name, since) {
  const a = await proxy.settle({ timeoutMs: 15_000 });
  const summary = formatAnalysis(a);
  const during = errorsSince(proxy.frames, since);
  const text = `${summary}\nmethods answered with an error that were sent after the page was opened (${during.length}):\n${during.map((e) => `  ${e}`).join('\n')}`;
  fs.writeFileSync(artifactPath(`${name}-cdp-log-summary.txt`), text + '\n');
  for (const line of text.split('\n')) t.diagnostic(line);
  assert.deepEqual(a.unanswered.map((r) => `${r.id} ${r.method}`), [], `unanswered requests\n${summary}`);
  assert.deepEqual(a.duplicateAnswers.map((r) => `${r.id} ${r.method}`), [], `requests answered twice\n${summary}`);
  assert.deepEqual(a.unsolicited, [], `answers to requests never sent\n${summary}`);
  assert.deepEqual(a.idless, [], `answers without an id\n${summary}`);
}

/**
 * `method [code] message` of every request sent at or after `since` that was answered
 * with an error, once per method.
 * @param {Array<{conn: number, dir: string, t: number, text: string}>} frames
 * @param {number} since
 */
function errorsSince(frames, since) {
  /** @type {Map<string, {method: string, t: number}>} */
  const sent = new Map();
  /** @type {Map<string, string>} */
  const out = new Map();
  for (const f of frames) {
    let msg;
    try { msg = JSON.parse(f.text); } catch { continue; }
    const key = `${f.conn}/${msg.sessionId || ''}/${msg.id}`;
    if (f.dir === '>' && typeof msg.method === 'string') sent.set(key, { method: msg.method, t: f.t });
    else if (f.dir === '<' && msg.id !== undefined && msg.error) {
      const req = sent.get(key);
      if (req && req.t >= since && !out.has(req.method)) out.set(req.method, `${req.method} [${msg.error.code}] ${msg.error.message}`);
    }
  }
  return [...out.values()].sort();
}

/**
 * A disconnected DevTools window: the proxy saw its connection close or a second one
 * open, or the frontend shows its "connection was closed" screen.
 * @param {NonNullable<Awaited<ReturnType<typeof startHost>>['proxy']>} proxy
 * @param {import('playwright-core').Page} page
 */
async function disconnectedState(proxy, page) {
  const problems = [];
  if (proxy.conns.size !== 1) problems.push(`${proxy.conns.size} connections went through the proxy (want 1: no reconnect)`);
  for (const [conn, c] of proxy.conns) if (c.closed) problems.push(`connection ${conn} was closed by the ${c.closedBy} (code ${c.closeCode})`);
  const screens = await page.getByText(/Debugging connection was closed|DevTools was disconnected|Reconnect DevTools/i).count();
  if (screens) problems.push(`the window shows a disconnected screen (${screens} matching elements)`);
  return problems;
}

test('client pages: the page appears as its own entry in the Console\'s context selector', { timeout: TEST_MS }, async (t) => {
  const name = 'client-selector';
  const { h, pageURL } = await startPageHost(t, name);
  const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText(HOST_STARTED);
    const since = Date.now();
    await openShopPage(t, pageURL, dt);
    await dt.waitForConsoleText('shop-page: loaded, load 1');
    const titles = await openContextSelector(dt.page);
    t.diagnostic(`context selector entries: ${JSON.stringify(titles)}`);
    assert.equal(titles.filter((x) => x === PAGE_TITLE).length, 1, `one entry for the page: ${JSON.stringify(titles)}`);
    // The host's entry is named after the app's script, never the node binary's path.
    assert.equal(titles.filter((x) => x === 'page-host.js').length, 1, `one entry for the host, named after its script: ${JSON.stringify(titles)}`);
    for (const x of titles) {
      assert.ok(!x.includes(process.execPath) && !/node\[\d+\]/.test(x) && !x.includes('/'), `no entry names the node binary or a path: ${JSON.stringify(x)}`);
    }
    assert.ok(titles.length >= 2, `the host's entry and the page's: ${JSON.stringify(titles)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('context-selector')}`);
    await closeContextSelector(dt.page);
    await checkCdpLog(t, proxy, name, since);
  });
});

test("client pages: page messages are visible next to the host's", { timeout: TEST_MS }, async (t) => {
  const name = 'client-console';
  const { h, pageURL } = await startPageHost(t, name);
  const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText(HOST_STARTED);
    const since = Date.now();
    const page = await openShopPage(t, pageURL, dt);
    await dt.waitForConsoleText('shop-page: loaded, load 1');
    // The host's inspectorWorker.observe() call (serving the page) is a Console line.
    await dt.waitForConsoleText('observe("page-served") {"load":1}');
    await page.evaluate(() => /** @type {any} */ (window).shopLog('next to the host'));
    await dt.waitForConsoleText('shop-page: on demand next to the host');
    h.w.trigger('log', 'after the page logged');
    await dt.waitForConsoleText('e2e-page-host: on demand after the page logged');

    const texts = await dt.consoleTexts();
    const want = [HOST_STARTED, 'shop-page: loaded, load 1', 'shop-page: on demand next to the host', 'e2e-page-host: on demand after the page logged'];
    const at = want.map((x) => texts.indexOf(x));
    assert.ok(at.every((i, k) => i >= 0 && (k === 0 || i > at[k - 1])), `host and page messages, in order: ${JSON.stringify(texts)}`);
    for (const x of want) assert.equal(texts.filter((y) => y === x).length, 1, `"${x}" is shown once: ${JSON.stringify(texts)}`);

    // Source links: the page's messages name app.js, the host's name page-host.js.
    const loadedLine = await pageScriptLine(pageURL, "console.log('shop-page: loaded");
    const onDemandLine = await pageScriptLine(pageURL, "console.log('shop-page: on demand '");
    assert.equal((await dt.consoleLinkFor('shop-page: loaded, load 1').innerText()).trim(), `app.js:${loadedLine}`);
    assert.equal((await dt.consoleLinkFor('shop-page: on demand next to the host').innerText()).trim(), `app.js:${onDemandLine}`);
    assert.equal((await dt.consoleLinkFor('e2e-page-host: on demand after the page logged').innerText()).trim(),
      `page-host.js:${lineOf(PAGE_HOST_LINES, "console.log('e2e-page-host: on demand '")}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('console')}`);

    // Selecting the page's context keeps every message shown (the "selected context
    // only" filter is off by default); the selector names the page.
    await openContextSelector(dt.page);
    await dt.page.locator('[role=menuitem]', { has: dt.page.locator('.console-context-selector-element .title', { hasText: PAGE_TITLE }) }).click();
    await dt.page.locator(`button.soft-dropdown[aria-label="JavaScript context: ${PAGE_TITLE}"]`).waitFor();
    const shown = await dt.consoleTexts();
    for (const x of want) assert.ok(shown.includes(x), `"${x}" is still shown with the page context selected: ${JSON.stringify(shown)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('console-page-context')}`);

    // The page message's link opens the page script's text in Sources.
    await dt.consoleLinkFor('shop-page: loaded, load 1').click();
    await dt.page.locator('#tab-sources[aria-selected="true"]').waitFor();
    await dt.page.locator('#sources-panel-sources-view .tabbed-pane-header-tab[aria-selected="true"]', { hasText: 'app.js' }).waitFor();
    await dt.page.getByText(new RegExp(`^Line ${loadedLine}, column \\d+$`)).waitFor();
    const lines = await dt.editorLines();
    assert.ok(lines.some((l) => l.includes("console.log('shop-page: on demand ' + text);")), `the editor shows the page script: ${JSON.stringify(lines.slice(0, 8))}`);
    assert.ok(!lines.some((l) => l.includes('e2e-page-host')), `the editor shows app.js, not the host script: ${JSON.stringify(lines.slice(0, 8))}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('sources-from-link')}`);
    await checkCdpLog(t, proxy, name, since);
  });
});

test('client pages: a reload keeps the window attached and the page selectable again', { timeout: TEST_MS }, async (t) => {
  const name = 'client-reload';
  const { h, pageURL } = await startPageHost(t, name);
  const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText(HOST_STARTED);
    const since = Date.now();
    const page = await openShopPage(t, pageURL, dt);
    await dt.waitForConsoleText('shop-page: loaded, load 1');
    assert.deepEqual((await openContextSelector(dt.page)).filter((x) => x === PAGE_TITLE), [PAGE_TITLE], 'the page is selectable before the reload');
    await closeContextSelector(dt.page);
    // The page's document is listed in Sources as "(index)" (its title is the URL).
    await dt.revealInNavigator(pageURL);

    await page.reload({ timeout: STEP_MS });
    await dt.page.bringToFront();
    await dt.waitForConsoleText('shop-page: loaded, load 2');
    {
      // Chrome's divider, and nothing cleared: the old load's message and the host's stay.
      const texts = await dt.consoleTexts();
      const divider = texts.indexOf(`Navigated to ${pageURL}`);
      assert.ok(divider > texts.indexOf('shop-page: loaded, load 1') && texts.indexOf('shop-page: loaded, load 1') >= 0 &&
        divider < texts.indexOf('shop-page: loaded, load 2') && texts.includes(HOST_STARTED),
      `"Navigated to ${pageURL}" between the two loads, earlier messages kept: ${JSON.stringify(texts)}`);
      t.diagnostic(`screenshot: ${await dt.screenshot('console-navigated')}`);
    }
    // "(index)" stays in Sources after the reload.
    await dt.revealInNavigator(pageURL);
    assert.equal(await dt.page.locator(`.navigator-file-tree-item[title="${pageURL}"]`).count(), 1, 'the page\'s (index) is listed once after the reload');
    // Opening it shows the page's document (page-host.js serves it no-store, so the
    // page sends its current DOM, which says so).
    await dt.page.locator(`.navigator-file-tree-item[title="${pageURL}"]`).click();
    await dt.page.locator('#sources-panel-sources-view .cm-line', { hasText: 'the browser cache holds no copy' }).first().waitFor();
    const docLines = await dt.editorLines();
    assert.ok(docLines.some((l) => l.includes('<title>Shop page</title>')), `(index) shows the page's HTML: ${JSON.stringify(docLines.slice(0, 5))}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('sources-index')}`);
    await dt.showPanel('console');
    await page.evaluate(() => /** @type {any} */ (window).shopLog('after the reload'));
    await dt.waitForConsoleText('shop-page: on demand after the reload');
    h.w.trigger('log', 'after the reload');
    await dt.waitForConsoleText('e2e-page-host: on demand after the reload');
    const texts = await dt.consoleTexts();
    t.diagnostic(`console after the reload: ${JSON.stringify(texts)}`);
    assert.equal(texts.filter((x) => x === 'shop-page: loaded, load 2').length, 1, `the new load's message is shown once: ${JSON.stringify(texts)}`);

    const titles = await openContextSelector(dt.page);
    t.diagnostic(`context selector entries after the reload: ${JSON.stringify(titles)}`);
    assert.equal(titles.filter((x) => x === PAGE_TITLE).length, 1, `one entry for the page after the reload (the old context is gone): ${JSON.stringify(titles)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('context-selector-after-reload')}`);
    await closeContextSelector(dt.page);

    assert.deepEqual(await disconnectedState(proxy, dt.page), [], 'the DevTools window stayed attached through the reload');
    t.diagnostic(`screenshot: ${await dt.screenshot('console-after-reload')}`);
    await checkCdpLog(t, proxy, name, since);
  });
});

test('client pages: evaluating in the page context prints its value, an object expands, a throw shows as an error, autocomplete lists page globals', { timeout: TEST_MS }, async (t) => {
  const name = 'client-evaluate';
  const { h, pageURL } = await startPageHost(t, name);
  const proxy = /** @type {NonNullable<typeof h.proxy>} */ (h.proxy);
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText(HOST_STARTED);
    const since = Date.now();
    await openShopPage(t, pageURL, dt);
    await dt.waitForConsoleText('shop-page: loaded, load 1');
    // Select the page's context, as a user does, then evaluate at the prompt.
    await openContextSelector(dt.page);
    await dt.page.locator('[role=menuitem] .console-context-selector-element .title', { hasText: PAGE_TITLE }).first().click();
    await dt.page.locator('button.soft-dropdown[aria-label^="JavaScript context"]', { hasText: PAGE_TITLE }).waitFor();

    await dt.evaluateInConsole('document.title');
    await dt.page.locator('.console-user-command-result .console-message-text', { hasText: `'${PAGE_TITLE}'` }).waitFor();

    await dt.evaluateInConsole("console.log('cart', {items: [{sku: 'A-1', qty: 2}], total: 7})");
    const logged = dt.page.locator('.console-message-wrapper', { has: dt.page.locator('.console-message-text', { hasText: 'cart' }) }).last();
    await logged.waitFor();
    // Expand the logged object: its properties come from the page (getProperties).
    await logged.locator('.console-view-object-properties-section, .object-properties-section, .tree-outline').first().waitFor();
    await logged.locator('.object-value-object, .console-object-preview, .console-view-object-properties-section').first().click();
    await logged.locator('.name', { hasText: /^items$/ }).first().waitFor({ state: 'visible' });
    await logged.locator('.name', { hasText: /^total$/ }).first().waitFor({ state: 'visible' });
    t.diagnostic(`screenshot: ${await dt.screenshot('page-object-expanded')}`);

    await dt.evaluateInConsole('missingThing.x');
    await dt.page.locator('.console-error-level .console-message-text', { hasText: /ReferenceError: missingThing is not defined/ }).first().waitFor();
    t.diagnostic(`screenshot: ${await dt.screenshot('page-evaluate')}`);

    // Autocomplete in the page context lists a page global: the frontend evaluates
    // globalThis with throwOnSideEffect and lists its properties, both in the page.
    const prompt = dt.page.locator('#console-prompt .cm-content');
    await prompt.click();
    await dt.page.keyboard.type('shopL');
    await dt.page.locator('.cm-tooltip-autocomplete li', { hasText: 'shopLog' }).first().waitFor({ state: 'visible' });
    t.diagnostic(`screenshot: ${await dt.screenshot('page-autocomplete')}`);
    await dt.page.keyboard.press('Escape');
    await dt.page.keyboard.press('Control+A');
    await dt.page.keyboard.press('Backspace');
    // Eager evaluation previews a side-effect-free path, as Chrome's does.
    await dt.page.keyboard.type('document.title');
    await dt.page.locator('.console-eager-preview', { hasText: PAGE_TITLE }).waitFor({ state: 'visible' });
    await dt.page.keyboard.press('Control+A');
    await dt.page.keyboard.press('Backspace');
    await checkCdpLog(t, proxy, name, since);
  });
});
