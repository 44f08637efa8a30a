// Native pages: the app's page runs in a second Chromium whose DevTools endpoint the
// worker uses (run --browser-cdp). The stock window shows the page's own script in
// Sources; a gutter breakpoint in it pauses the page when the page runs that line, the
// call stack shows the page's frame, Resume resumes. The page also loads the client
// snippet; it is shown once, natively.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { launchChromium } from '../lib/chromium.js';
import { STEP_MS } from '../lib/devtools.js';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';

const chrome = useChromium();
const PAGE_HOST = fileURLToPath(new URL('../fixtures/page-host.js', import.meta.url));
const NETWORK_HOST = fileURLToPath(new URL('../fixtures/network-host.js', import.meta.url));

/** The 1-based line of the first line of text that contains needle. */
function lineOf(/** @type {string} */ text, /** @type {string} */ needle) {
  const n = text.split('\n').findIndex((l) => l.includes(needle)) + 1;
  assert.ok(n > 0, `the script has a line with ${needle}`);
  return n;
}

/**
 * Clicks the gutter at line of the open file and waits for the Breakpoints pane to list
 * it at that line. The editor may still scroll just after opening a file, so a click
 * that lands elsewhere is undone and retried.
 * @param {any} dt @param {number} line @param {string} text  text of that line
 */
async function setBreakpoint(dt, line, text) {
  const item = dt.page.locator('.breakpoint-item', { hasText: text });
  const gutter = dt.page.locator('#sources-panel-sources-view .cm-lineNumbers .cm-gutterElement', { hasText: new RegExp(`^${line}$`) });
  for (let attempt = 0; ; attempt++) {
    // The just-opened editor may still scroll: click once the line stays put.
    await gutter.scrollIntoViewIfNeeded();
    for (let last = '', i = 0; i < 50; i++) {
      const box = JSON.stringify(await gutter.boundingBox());
      if (box === last) break;
      last = box;
      await dt.page.waitForTimeout(200);
    }
    await dt.clickGutter(line);
    const any = dt.page.locator('.breakpoint-item').last();
    await any.waitFor();
    if (await item.count()) {
      assert.match(await item.first().innerText(), new RegExp(`\\b${line}\\s*$`), 'the Breakpoints pane lists the clicked line');
      return;
    }
    const wrong = (await any.innerText()).replace(/\s+/g, ' ');
    assert.ok(attempt < 2, `a gutter click at line ${line} set a breakpoint elsewhere: ${wrong}`);
    // Undo the stray one with a click on its own line, then click again.
    const strayLine = Number(/(\d+)$/.exec(wrong.trim())?.[1]);
    await dt.clickGutter(strayLine);
    await any.waitFor({ state: 'detached' });
    // A stray breakpoint in code that runs (the host polls every 50 ms) may have
    // paused already: resume.
    await dt.page.waitForTimeout(500);
    if (await dt.page.locator('.paused-message .paused-status').first().isVisible()) {
      await dt.clickResume();
      await dt.waitForNotPaused();
    }
  }
}

/**
 * Starts the app's Chromium and a worker attached to it (run --browser-cdp), then
 * opens the fixture's page in that Chromium.
 * @param {import('node:test').TestContext} t @param {string} name @param {string} fixture
 */
async function startNative(t, name, fixture) {
  const app = await launchChromium(); // the app's browser; the suite's chromium serves the frontend
  t.after(() => app.close());
  const h = await startHost(t, { chrome, proxy: true, name, fixture,
    runArgs: ['--browser-cdp', `http://127.0.0.1:${app.port}`] });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  const context = app.browser.contexts()[0] ?? await app.browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  await page.goto(pageURL);
  return { h, page, pageURL };
}

test('native pages: Sources shows a Chromium page\'s script, a gutter breakpoint pauses the page, Resume resumes', { timeout: TEST_MS }, async (t) => {
  const app = await launchChromium(); // the app's browser; the suite's chromium serves the frontend
  t.after(() => app.close());
  const h = await startHost(t, { chrome, proxy: true, name: 'native', fixture: PAGE_HOST,
    runArgs: ['--browser-cdp', `http://127.0.0.1:${app.port}`] });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  const appJS = new URL('app.js', pageURL).href;
  const lines = (await (await fetch(appJS)).text()).split('\n');
  const line = lines.findIndex((l) => l.includes("console.log('shop-page: on demand '")) + 1;
  assert.ok(line > 0, 'app.js has the shopLog line');
  await h.run(async () => {
    const context = app.browser.contexts()[0] ?? await app.browser.newContext();
    const page = await context.newPage();
    await page.goto(pageURL);
    const dt = await h.open();
    await dt.openSource(appJS);
    const text = await dt.editorLines();
    assert.ok(text.some((l) => l.includes('function shopLog')), `the page's script is shown: ${JSON.stringify(text.slice(0, 5))}`);
    await dt.clickGutter(line);
    await dt.page.locator('.breakpoint-item', { hasText: 'shop-page: on demand' }).waitFor();

    const ran = page.evaluate(() => /** @type {any} */ (window).shopLog('from e2e'));
    const status = await dt.waitForPaused();
    assert.match(status, /breakpoint/i, 'the Sources sidebar says paused on a breakpoint');
    const stack = await dt.callStack();
    assert.match(stack[0] ?? '', new RegExp(`^shopLog app\\.js:${line}$`), `top frame is the page's, at the line: ${JSON.stringify(stack)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('native-paused')}`);
    await dt.clickResume();
    await dt.waitForNotPaused();
    await ran;
    // Shown once, natively: the client snippet is in the page but did not start.
    const client = await page.evaluate(() => JSON.stringify(/** @type {any} */ (window).__inspectorWorkerClient));
    assert.equal(client, '{"native":true}', 'the client snippet stood down in the native page');
  });
});

test('native pages: a host breakpoint and a page breakpoint in one window, each hit and resumed there', { timeout: TEST_MS }, async (t) => {
  const { h, page, pageURL } = await startNative(t, 'native-both', PAGE_HOST);
  const hostURL = pathToFileURL(PAGE_HOST).href;
  const hostLine = lineOf(fs.readFileSync(PAGE_HOST, 'utf8'), "console.log('e2e-page-host: on demand '");
  const appJS = new URL('app.js', pageURL).href;
  const pageLine = lineOf(await (await fetch(appJS)).text(), "console.log('shop-page: heading clicked')");
  await h.run(async () => {
    const dt = await h.open();
    // The suite's frontend keeps breakpoints per URL; page-host.js's file URL is the
    // same in every test, so this test removes its host breakpoint at the end.
    await dt.openSource(hostURL);
    await setBreakpoint(dt, hostLine, 'e2e-page-host: on demand');
    await dt.openSource(appJS);
    await setBreakpoint(dt, pageLine, 'heading clicked');

    // The host's breakpoint: its request-polling code runs the line.
    h.w.trigger('log', 'host-bp');
    assert.match(await dt.waitForPaused(), /breakpoint/i, 'paused on the host\'s breakpoint');
    let stack = await dt.callStack();
    assert.match(stack[0] ?? '', new RegExp(`^e2eLog page-host\\.js:${hostLine}$`), `top frame is the host's: ${JSON.stringify(stack)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('host-paused')}`);
    await dt.clickResume();
    await dt.waitForNotPaused();

    // The page's breakpoint, in the same window: a click on the page's heading.
    const clicked = page.click('h1');
    assert.match(await dt.waitForPaused(), /breakpoint/i, 'paused on the page\'s breakpoint');
    stack = await dt.callStack();
    assert.match(stack[0] ?? '', new RegExp(`^onShopHeadingClick app\\.js:${pageLine}$`), `top frame is the page's: ${JSON.stringify(stack)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('page-paused')}`);
    await dt.clickResume();
    await dt.waitForNotPaused();
    await clicked;

    // Both ran on: each one's line is in the one Console.
    await dt.waitForConsoleText('e2e-page-host: on demand host-bp');
    await dt.waitForConsoleText('shop-page: heading clicked');
    await dt.openSource(hostURL);
    await dt.clickGutter(hostLine);
    await dt.page.locator('.breakpoint-item', { hasText: 'e2e-page-host: on demand' }).waitFor({ state: 'detached' });
  });
});

test('native pages: Network lists the page\'s requests beside the host\'s fetches', { timeout: TEST_MS }, async (t) => {
  const { h, page } = await startNative(t, 'native-network', NETWORK_HOST);
  await h.run(async () => {
    const dt = await h.open();
    await dt.showPanel('network');
    const names = dt.page.locator('.network-log-grid td.name-column');
    // The host's fetch made before the window opened (replayed by Network.enable).
    await names.filter({ hasText: 'host-stock' }).first().waitFor({ state: 'visible' });
    // The page is attached once Sources lists its script; a reload after that is seen
    // by the page's own Network domain: the document, its script and the fetch it makes.
    await dt.revealInNavigator(new URL('app.js', page.url()).href);
    await dt.showPanel('network');
    await page.reload();
    await page.evaluate(() => fetch('/api/page-items?after-attach'));
    h.w.trigger('log', 'fetch');
    for (const name of ['app.js', 'page-items?after-attach', 'page-items']) {
      await names.filter({ hasText: name }).first().waitFor({ state: 'visible' });
    }
    const deadline = Date.now() + STEP_MS;
    while ((await names.filter({ hasText: 'host-stock' }).count()) < 2 && Date.now() < deadline) await dt.page.waitForTimeout(200);
    const all = (await names.allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
    t.diagnostic(`Network rows: ${JSON.stringify(all)}`);
    assert.ok(all.filter((n) => n.includes('host-stock')).length >= 2, `the host's fetch after attach is listed: ${JSON.stringify(all)}`);
    assert.ok(all.some((n) => /^127\.0\.0\.1\b/.test(n) || n.startsWith('localhost')), `the page's document is listed: ${JSON.stringify(all)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('network')}`);
  });
});

// Not yet: the stock frontend shows a child target's DOM only under a frame owner in
// its parent's document (SDK DOMModel: a child model's document is requested when a
// parent node is an <iframe> whose frameId is the child's main frame, and attached
// through DOM.getFrameOwner on the parent); it never opens a second tree for it. The
// window's document has no owner for a native page, so the panel shows the host's
// document alone. Kept as a todo test that states the goal (docs/agent-note.md
// "Native pages").
test('native pages: Elements shows the page\'s DOM', { timeout: TEST_MS,
  todo: 'the window\'s document has no <iframe> owner for a native page (DOM.getFrameOwner refused)' }, async (t) => {
  const { h } = await startNative(t, 'native-elements', PAGE_HOST);
  await h.run(async () => {
    const dt = await h.open();
    await dt.page.locator('#tab-elements').click();
    await dt.page.locator('#tab-elements[aria-selected="true"]').waitFor();
    const h1 = dt.page.locator('#elements-content li[role=treeitem]', { hasText: 'Shop page' })
      .filter({ has: dt.page.locator('.webkit-html-tag', { hasText: /^<h1/ }) }).first();
    try {
      // Expanding the tree fully (Ctrl+Alt+click would) is not needed to fail: the
      // owner <iframe> itself is missing. 15 s: the host's tree shows in 1-3 s.
      await dt.page.locator('#elements-content .webkit-html-tag', { hasText: /^<iframe/ }).first().waitFor({ timeout: 15_000 });
      await h1.waitFor({ timeout: 15_000 });
    } finally {
      t.diagnostic(`screenshot: ${await dt.screenshot('elements')}`);
    }
  });
});
