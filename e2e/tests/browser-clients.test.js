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
import { alive, spawnGroup, step, waitFor } from '../lib/procs.js';
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

/**
 * chrome-devtools-mcp (from npm, a devDependency) started over MCP stdio against the
 * worker, with everything that would reach the network turned off. call(tool, args)
 * resolves to the tool's text; it rejects on an MCP error or a tool error.
 * @param {import('node:test').TestContext} t
 * @param {number} port
 */
async function startMCP(t, port) {
  const bin = fileURLToPath(new URL('../node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js', import.meta.url));
  const proc = spawnGroup(process.execPath, [bin, '--browserUrl', `http://127.0.0.1:${port}`, '--no-usage-statistics', '--no-performance-crux'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1', CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1', CHROME_DEVTOOLS_MCP_NO_CONFIG_DISCOVERY: '1' },
  });
  t.after(() => proc.stop({ graceMs: 3000, group: true }));
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
  const waiting = new Map();
  let buf = '';
  proc.child.stdout.on('data', (chunk) => {
    buf += chunk;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      const msg = JSON.parse(line);
      const w = waiting.get(msg.id);
      if (!w) continue;
      waiting.delete(msg.id);
      if (msg.error) w.reject(new Error(`MCP error ${msg.error.code}: ${msg.error.message}`));
      else w.resolve(msg.result);
    }
  });
  let nextId = 0;
  /** @param {string} method @param {object} [params] */
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = ++nextId;
    waiting.set(id, { resolve, reject });
    proc.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  await step(request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'iw-e2e', version: '0' } }), 'MCP initialize');
  proc.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  return {
    /** @param {string} name @param {object} [args] @returns {Promise<string>} */
    async call(name, args = {}) {
      const r = /** @type {any} */ (await step(request('tools/call', { name, arguments: args }), `MCP ${name}`));
      const text = (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
      if (r.isError) throw new Error(`${name} failed: ${text}\n--- mcp stderr ---\n${proc.out.stderr.slice(-3000)}`);
      return text;
    },
  };
}

/** The MCP page id list_pages gives the page whose line includes text. */
function mcpPageId(/** @type {string} */ list, /** @type {string} */ text) {
  const line = list.split('\n').find((l) => /^\d+:/.test(l) && l.includes(text));
  if (!line) throw new Error(`no page listed with ${text}:\n${list}`);
  return Number(line.split(':')[0]);
}

test('chrome-devtools-mcp: over MCP stdio with --browserUrl, a page and the combined target each give their own data', { timeout: TEST_MS }, async (t) => {
  const { h, pageURL, tab } = await startShop(t, 'mcp');
  await h.run(async () => {
    const mcp = await startMCP(t, h.w.port);
    const pages = await mcp.call('list_pages');
    t.diagnostic(`list_pages:\n${pages}`);
    // This MCP version routes page tools by pageId (and select_page sets the default).
    const pageId = mcpPageId(pages, pageURL);
    await mcp.call('select_page', { pageId });
    assert.match(await mcp.call('evaluate_script', { pageId, function: '() => document.title' }), /Shop page/);
    await tab.evaluate(() => { /** @type {any} */ (window).shopLog('for mcp'); });
    await tab.evaluate(() => fetch('/app.js?mcp'));
    await waitFor(async () => (await mcp.call('list_console_messages', { pageId })).includes('on demand for mcp'),
      { what: 'the page\'s console line in list_console_messages', timeoutMs: STEP_MS });
    await waitFor(async () => (await mcp.call('list_network_requests', { pageId })).includes('/app.js?mcp'),
      { what: 'the page\'s fetch in list_network_requests', timeoutMs: STEP_MS });

    // The combined target: the host's realm.
    const hostId = mcpPageId(pages, 'fixtures/');
    await mcp.call('select_page', { pageId: hostId });
    assert.match(await mcp.call('evaluate_script', { pageId: hostId, function: '() => process.pid' }), new RegExp(String(h.w.hostPid)));
    h.w.trigger('log', 'for mcp');
    await waitFor(async () => (await mcp.call('list_console_messages', { pageId: hostId })).includes('e2e-page-host: on demand for mcp'),
      { what: 'the host\'s console line on the combined target', timeoutMs: STEP_MS });
  });
  assert.ok(alive(h.w.hostPid), 'the host runs on after the MCP server went');
});
