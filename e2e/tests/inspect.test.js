// chrome://inspect: Chromium's network target discovery finds the worker as it finds
// `node --inspect`, lists the combined target and each connected page, and its
// "inspect" link opens a DevTools window connected to the worker through Chromium.
// The chromium here is this file's own, started once the worker's port is known:
// --remote-debugging-targets is Chromium's switch for the "Discover network targets"
// list (which is on by default, headless too).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import CDP from 'chrome-remote-interface';
import { artifactPath } from '../lib/artifacts.js';
import { launchChromium } from '../lib/chromium.js';
import { STEP_MS } from '../lib/devtools.js';
import { step, waitFor } from '../lib/procs.js';
import { TEST_MS, startHost } from '../lib/setup.js';

const PAGE_HOST = fileURLToPath(new URL('../fixtures/page-host.js', import.meta.url));

/**
 * Runs in the DevTools window (a string: it is sent with Runtime.evaluate): the first
 * element matching sel, looking through open shadow roots as Playwright does, or null.
 */
const DEEP_QUERY = `function deepQuery(sel) {
  const walk = (root) => {
    const hit = root.querySelector(sel);
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) { const h = walk(el.shadowRoot); if (h) return h; }
    }
    return null;
  };
  return walk(document);
}`;

/**
 * The DevTools window chrome://inspect opened: Playwright does not attach to DevTools
 * windows, so it is driven over its own CDP socket on chromium's debugging port, with
 * real mouse and key events.
 * @param {import('node:test').TestContext} t
 * @param {number} chromePort
 * @param {string} targetId
 */
async function driveDevToolsWindow(t, chromePort, targetId) {
  const client = await step(CDP({ target: `ws://127.0.0.1:${chromePort}/devtools/page/${targetId}`, local: true }), 'connect to the DevTools window');
  t.after(() => client.close().catch(() => {}));
  // As Playwright does for its pages: a headless window that is not the focused one
  // would drop typed text.
  await step(client.Emulation.setFocusEmulationEnabled({ enabled: true }), 'focus emulation in the DevTools window');
  /** The frontend's own errors and warnings, for failure messages. */
  const frontendConsole = /** @type {string[]} */ ([]);
  client.Runtime.consoleAPICalled(({ type, args }) => {
    if (type === 'error' || type === 'warning') frontendConsole.push(`${type}: ${args.map((a) => a.value ?? a.description).join(' ')}`);
  });
  client.Runtime.exceptionThrown(({ exceptionDetails }) => frontendConsole.push(`exception: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`));
  await step(client.Runtime.enable(), 'Runtime.enable in the DevTools window');
  /** Evaluates expression in the frontend; its value. */
  const evaluate = async (/** @type {string} */ expression) => {
    const r = await step(client.Runtime.evaluate({ expression, returnByValue: true, awaitPromise: true }), `evaluate in the DevTools window: ${expression.slice(0, 60)}`);
    if (r.exceptionDetails) throw new Error(`the DevTools window threw: ${JSON.stringify(r.exceptionDetails).slice(0, 500)}`);
    return r.result.value;
  };
  const win = {
    client,
    frontendConsole,
    evaluate,
    /** The layout box of the element matching sel, or null while it is absent or hidden. */
    async box(/** @type {string} */ sel) {
      const b = await evaluate(`(${DEEP_QUERY})(${JSON.stringify(sel)})?.getBoundingClientRect()?.toJSON() ?? null`);
      return b && b.width > 0 && b.height > 0 ? b : null;
    },
    /** Waits for the element matching sel to be laid out, then clicks its middle. */
    async click(/** @type {string} */ sel) {
      const b = await waitFor(() => win.box(sel), { what: `${sel} in the DevTools window`, timeoutMs: STEP_MS });
      for (const type of ['mousePressed', 'mouseReleased']) {
        await client.Input.dispatchMouseEvent({ type, x: b.x + b.width / 2, y: b.y + b.height / 2, button: 'left', clickCount: 1 });
      }
    },
    /** Types text a key at a time, as a user would. */
    async type(/** @type {string} */ text) {
      for (const ch of text) {
        await client.Input.dispatchKeyEvent({ type: 'keyDown', key: ch, text: ch });
        await client.Input.dispatchKeyEvent({ type: 'keyUp', key: ch });
      }
    },
    async pressEnter() {
      for (const type of ['keyDown', 'keyUp']) {
        await client.Input.dispatchKeyEvent({ type, key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, ...(type === 'keyDown' ? { text: '\r' } : {}) });
      }
    },
    /** The texts of every element matching sel, through shadow roots. */
    async texts(/** @type {string} */ sel) {
      return evaluate(`(() => {
        const out = [];
        const walk = (root) => {
          for (const el of root.querySelectorAll(${JSON.stringify(sel)})) out.push(el.innerText);
          for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
        };
        walk(document);
        return out;
      })()`);
    },
    async screenshot(/** @type {string} */ name) {
      const { data } = await step(client.Page.captureScreenshot({ format: 'png' }), 'screenshot of the DevTools window');
      const file = artifactPath(name);
      fs.writeFileSync(file, Buffer.from(data, 'base64'));
      return file;
    },
  };
  return win;
}

test('chrome://inspect: the worker is discovered, its combined target and page are listed, and inspect opens a window on the host', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { name: 'inspect', fixture: PAGE_HOST });
  const chrome = await launchChromium({ args: [`--remote-debugging-targets=127.0.0.1:${h.w.port}`] });
  t.after(() => chrome.close());
  let inspectText = '';
  await h.run(async () => {
    try {
      const context = chrome.browser.contexts()[0];
      const pageURL = fs.readFileSync(path.join(h.w.triggerDir, 'page.url'), 'utf8').trim();
      const tab = await context.newPage();
      await tab.goto(pageURL, { timeout: STEP_MS });
      await waitFor(async () => (await (await fetch(`http://127.0.0.1:${h.w.port}/json/list`)).json()).length === 2,
        { what: 'the page as its own target in /json/list', timeoutMs: STEP_MS });

      const inspect = await context.newPage();
      inspect.setDefaultTimeout(STEP_MS);
      await inspect.goto('chrome://inspect/#devices', { timeout: STEP_MS });
      // Chromium polls its network targets every few seconds; the worker's port gets
      // its own "browser" entry with one row per target of /json/list.
      const remote = inspect.locator(`.browser[id="127.0.0.1:${h.w.port}"]`);
      const combined = remote.locator('.row', { has: inspect.locator('.name', { hasText: h.w.target.title }) });
      const page = remote.locator('.row', { has: inspect.locator('.url', { hasText: pageURL }) });
      try {
        await combined.waitFor({ state: 'visible' });
        await page.waitFor({ state: 'visible' });
      } finally {
        inspectText = await inspect.locator('#devices-list').innerText().catch(() => '');
        const shot = artifactPath('inspect-01-devices.png');
        await inspect.screenshot({ path: shot });
        t.diagnostic(`screenshot: ${shot}`);
      }
      assert.equal(await remote.locator('.row').count(), 2, `two targets listed under the worker:\n${inspectText}`);
      assert.equal((await combined.locator('.url').innerText()).trim(), h.w.target.url, 'the combined target shows the host script');
      assert.equal((await page.locator('.name').innerText()).trim(), 'Shop page', "the page's target shows its title");

      // "inspect" opens a DevTools window (bundled frontend, talking to the worker
      // through Chromium's own connection to it).
      const cdp = await chrome.browser.newBrowserCDPSession();
      const windows = async () => (await cdp.send('Target.getTargets')).targetInfos.filter((i) => i.url.startsWith('devtools://'));
      assert.deepEqual(await windows(), [], 'no DevTools window before the click');
      await combined.locator('.action', { hasText: /^inspect$/ }).click();
      const [win] = await waitFor(async () => { const w = await windows(); return w.length ? w : null; },
        { what: 'the DevTools window chrome://inspect opens', timeoutMs: STEP_MS });
      t.diagnostic(`DevTools window: ${win.url}`);
      assert.match(win.url, /^devtools:\/\/devtools\/bundled\//, 'the bundled frontend (nothing fetched from outside)');
      const dt = await driveDevToolsWindow(t, chrome.port, win.targetId);
      try {
        // A click that lands while the frontend still lays out its tabs is lost:
        // click the Console tab until the Console's prompt shows.
        await waitFor(async () => {
          if (await dt.box('#console-prompt')) return true;
          if (await dt.box('#tab-console')) await dt.click('#tab-console');
          return false;
        }, { what: "the Console panel in the DevTools window", timeoutMs: STEP_MS, intervalMs: 1000 });
        // A command entered before the window has an execution context is dropped:
        // the host's first line shows once Runtime is enabled and its context exists.
        await waitFor(async () => (await dt.texts('.console-message-text')).includes('e2e-page-host: started before any DevTools window'),
          { what: "the host's first console line in the DevTools window", timeoutMs: STEP_MS });
        await dt.click('#console-prompt');
        await dt.type('process.pid');
        let typed = /** @type {string[]} */ ([]);
        await waitFor(async () => { typed = await dt.texts('.cm-content[aria-label="Console prompt"]'); return typed.join('').trim() === 'process.pid'; },
          { what: 'process.pid typed at the Console prompt', timeoutMs: STEP_MS }).catch((e) => { throw new Error(`${e.message}; the prompt shows ${JSON.stringify(typed)}`); });
        await dt.pressEnter();
        const results = await waitFor(async () => {
          const r = await dt.texts('.console-user-command-result .console-message-text');
          return r.length ? r : null;
        }, { what: 'the Console\'s answer to process.pid', timeoutMs: STEP_MS });
        assert.deepEqual(results.map((s) => s.trim()), [String(h.w.hostPid)], 'process.pid is the host\'s');
      } finally {
        t.diagnostic(`screenshot: ${await dt.screenshot('inspect-02-devtools-console.png').catch((e) => `none (${e})`)}`);
        if (dt.frontendConsole.length) t.diagnostic(`the DevTools window's console:\n  ${dt.frontendConsole.slice(-20).join('\n  ')}`);
      }
    } catch (e) {
      const err = /** @type {Error} */ (e);
      throw new Error(`${err.message}\n--- chrome://inspect showed ---\n${inspectText}`, { cause: err });
    }
  });
});
