// Native pages: the app's page runs in a second Chromium whose DevTools endpoint the
// worker uses (run --browser-cdp). The stock window shows the page's own script in
// Sources; a gutter breakpoint in it pauses the page when the page runs that line, the
// call stack shows the page's frame, Resume resumes. The page also loads the client
// snippet; it is shown once, natively.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { launchChromium } from '../lib/chromium.js';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';

const chrome = useChromium();
const PAGE_HOST = fileURLToPath(new URL('../fixtures/page-host.js', import.meta.url));

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
