// Test plumbing: one chromium per test file, one worker (+ optional recording proxy)
// per test, everything stopped in t.after even when the test fails.
import { after, before } from 'node:test';
import { launchChromium } from './chromium.js';
import { STEP_MS, openDevTools } from './devtools.js';
import { artifactPath, artifactsDir } from './artifacts.js';
import { formatAnalysis, startProxy } from './proxy.js';
import { startWorker } from './worker.js';

/** Per test: the whole test, however slow the machine (never a speed assertion). */
export const TEST_MS = 300_000;

/** Starts one headless chromium for the file; returns a getter. */
export function useChromium() {
  /** @type {Awaited<ReturnType<typeof launchChromium>> | null} */
  let chrome = null;
  before(async () => {
    artifactsDir();
    chrome = await launchChromium();
  });
  after(async () => {
    await chrome?.close();
  });
  return () => {
    if (!chrome) throw new Error('chromium did not start');
    return chrome;
  };
}

/**
 * Starts the worker in front of the fixture host, and a recording proxy when asked.
 * Returns helpers to open DevTools windows; t.after stops all of it.
 * @param {import('node:test').TestContext} t
 * @param {{chrome?: () => Awaited<ReturnType<typeof launchChromium>>, proxy?: boolean, name: string, fixture?: string, runArgs?: string[], hostArgs?: string[]}} opts
 *   fixture: another host script (default fixtures/host.js), runArgs: more flags of `run`,
 *   hostArgs: more arguments of the fixture; see startWorker.
 */
export async function startHost(t, { chrome, proxy: withProxy = false, name, fixture, runArgs, hostArgs }) {
  const w = await startWorker({ fixture, runArgs, hostArgs });
  /** @type {Awaited<ReturnType<typeof startProxy>> | null} */
  let proxy = null;
  /** @type {Awaited<ReturnType<typeof openDevTools>>[]} */
  const windows = [];
  t.after(async () => {
    for (const dt of windows) await dt.close();
    await proxy?.close();
    const r = await w.stop();
    if (r.workerKilled) t.diagnostic('worker ignored SIGTERM for 10 s and was SIGKILLed');
    if (r.hostLeaked) t.diagnostic(`node host ${w.hostPid} outlived the worker and was SIGKILLed`);
  });
  if (withProxy) proxy = await startProxy({ upstreamPort: w.port, logFile: artifactPath(`${name}-cdp.jsonl`) });
  const h = {
    w,
    proxy,
    windows,
    /** Opens a DevTools window on the target, through the proxy when there is one. */
    async open(/** @type {string} */ windowName = name) {
      if (!chrome) throw new Error('no chromium in this test file');
      const ws = proxy ? proxy.wsHostPath(w.wsPath) : w.wsHostPath;
      const dt = await openDevTools(chrome(), ws, windowName);
      windows.push(dt);
      return dt;
    },
    /**
     * Runs the test body; on failure screenshots every window and adds the worker's
     * output and the frontend's own console errors to the error.
     * @param {() => Promise<void>} body
     */
    async run(body) {
      try {
        await body();
      } catch (e) {
        const err = /** @type {Error} */ (e);
        const extra = [];
        for (const dt of windows) {
          try { extra.push(`failure screenshot: ${await dt.screenshot('failure')}`); } catch { /* page gone */ }
          if (dt.frontendConsole.length) extra.push(`frontend console of ${dt.name}:\n  ${dt.frontendConsole.slice(-20).join('\n  ')}`);
        }
        // What the frontend asked and never got answered is often the real cause.
        if (proxy) extra.push(formatAnalysis(proxy.analyze()));
        extra.push(w.output());
        // A new error: reporters print the stack, which was fixed when err was made.
        throw new Error(`${err.message}\n${extra.join('\n')}`, { cause: err });
      }
    },
  };
  return h;
}

/**
 * Loads url in a new tab of the suite's chromium (closed in t.after), then brings
 * the DevTools window back to the front (a background tab neither renders nor
 * screenshots).
 * @param {import('node:test').TestContext} t
 * @param {() => Awaited<ReturnType<typeof launchChromium>>} chrome
 * @param {string} url
 * @param {{page: import('playwright-core').Page}} dt
 */
export async function openPageTab(t, chrome, url, dt) {
  const context = chrome().browser.contexts()[0];
  const page = await context.newPage();
  t.after(async () => { await page.close().catch(() => {}); });
  page.setDefaultTimeout(STEP_MS);
  await page.goto(url, { timeout: STEP_MS });
  await dt.page.bringToFront();
  return page;
}
