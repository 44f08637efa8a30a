// Browser automation clients from their registries against the worker's browser
// endpoint (/json/version's webSocketDebuggerUrl): they connect as to a browser and
// find the worker's targets.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { STEP_MS } from '../lib/devtools.js';
import { alive, step, waitFor } from '../lib/procs.js';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';

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

const PAGE_HOST = fileURLToPath(new URL('../fixtures/page-host.js', import.meta.url));
const chrome = useChromium();

/**
 * The worker in front of fixtures/page-host.js with its page open in a tab of the
 * suite's chromium; resolves once the page is its own target in /json/list.
 * @param {import('node:test').TestContext} t
 * @param {string} name
 */
async function startShop(t, name) {
  const h = await startHost(t, { chrome, name, fixture: PAGE_HOST });
  const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
  const tab = await chrome().browser.contexts()[0].newPage();
  t.after(async () => { await tab.close().catch(() => {}); });
  await tab.goto(pageURL, { timeout: STEP_MS });
  const list = await waitFor(async () => {
    const l = await (await fetch(`http://127.0.0.1:${h.w.port}/json/list`)).json();
    return l.length === 2 ? l : null;
  }, { what: 'the page as its own target in /json/list', timeoutMs: STEP_MS });
  return { h, pageURL, tab, pageTarget: list[1] };
}

test('puppeteer-core: every connected page is listed; on a page evaluate, console, response and goto work', { timeout: TEST_MS }, async (t) => {
  const { h, pageURL, pageTarget } = await startShop(t, 'puppeteer-pages');
  await h.run(async () => {
    const browser = await step(puppeteer.connect({ browserURL: `http://127.0.0.1:${h.w.port}`, defaultViewport: null }), 'puppeteer.connect');
    t.after(() => browser.disconnect().catch(() => {}));
    const pages = await step(browser.pages(), 'browser.pages()');
    const ids = pages.map((p) => p.target()._targetId);
    assert.ok(ids.includes(h.w.target.id), `pages() lists the combined target: ${ids}`);
    const page = pages.find((p) => p.target()._targetId === pageTarget.id);
    assert.ok(page, `pages() lists the page's own target ${pageTarget.id}: ${ids}`);
    assert.equal(page.url(), pageURL);
    assert.equal(await step(page.evaluate(() => document.title), 'evaluate document.title'), 'Shop page');

    const logged = new Promise((resolve) => page.on('console', (m) => { if (m.text().includes('after connect')) resolve(m.text()); }));
    await step(page.evaluate(() => { /** @type {any} */ (window).shopLog('after connect'); }), 'shopLog in the page');
    assert.equal(await step(logged, "on('console')"), 'shop-page: on demand after connect');

    const responded = page.waitForResponse((r) => r.url().endsWith('/app.js?fetched'), { timeout: STEP_MS });
    assert.equal(await step(page.evaluate(() => fetch('/app.js?fetched').then((r) => r.status)), 'fetch in the page'), 200);
    const response = await step(responded, "on('response') for the page's fetch");
    assert.equal(response.status(), 200);

    const next = pageURL + '?next';
    await step(page.goto(next), 'page.goto another URL of the app');
    assert.equal(page.url(), next);
    assert.equal(await step(page.evaluate(() => location.href), 'evaluate after goto'), next);

    await step(browser.disconnect(), 'browser.disconnect()');
    assert.ok(alive(h.w.hostPid), 'the host runs on after disconnect()');
  });
});

test('playwright-core: connectOverCDP lists the pages and evaluates in one', { timeout: TEST_MS }, async (t) => {
  const { h, pageURL } = await startShop(t, 'playwright');
  await h.run(async () => {
    const browser = await step(chromium.connectOverCDP(`http://127.0.0.1:${h.w.port}`, { timeout: STEP_MS }), 'chromium.connectOverCDP');
    t.after(() => browser.close().catch(() => {}));
    const pages = browser.contexts().flatMap((c) => c.pages());
    const urls = pages.map((p) => p.url());
    const page = pages.find((p) => p.url() === pageURL);
    assert.ok(page, `the page is listed: ${urls}`);
    assert.equal(await step(page.evaluate(() => document.title), 'page.evaluate document.title'), 'Shop page');
  });
  assert.ok(alive(h.w.hostPid), 'the host runs on after the client closed its connection');
});
