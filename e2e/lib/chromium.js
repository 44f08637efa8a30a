// Headless Debian chromium with its own DevTools frontend served on the debugging port.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { spawnGroup, waitFor } from './procs.js';

export const CHROMIUM = process.env.E2E_CHROMIUM || '/usr/bin/chromium';

/**
 * Starts chromium with --remote-debugging-port=0, reads the port from
 * <user-data-dir>/DevToolsActivePort and connects Playwright over CDP.
 * Playwright never launches or downloads a browser here. args are more switches
 * (e.g. --remote-debugging-targets for chrome://inspect).
 * @param {{args?: string[]}} [opts]
 */
export async function launchChromium({ args = [] } = {}) {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`no browser at ${CHROMIUM}: run 'apt-get update && apt-get install -y chromium' (scripts/e2e.sh does this when root)`);
  }
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-e2e-chromium-'));
  const proc = spawnGroup(CHROMIUM, [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
    '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=0',
    `--user-data-dir=${userDataDir}`,
    '--window-size=1400,900',
    ...args,
    'about:blank',
  ]);
  const cleanup = async () => {
    await proc.stop({ graceMs: 3000, group: true });
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  try {
    const activePort = path.join(userDataDir, 'DevToolsActivePort');
    const port = await waitFor(() => {
      if (proc.hasExited) throw new Error(`chromium exited early:\n${proc.out.stderr.slice(-2000)}`);
      const text = fs.existsSync(activePort) ? fs.readFileSync(activePort, 'utf8') : '';
      const p = Number(text.split('\n')[0]);
      return p > 0 ? p : 0;
    }, { timeoutMs: 60_000, what: 'chromium DevToolsActivePort' });
    const browser = await chromium.connectOverCDP(`http://127.0.0.1:${port}`, { timeout: 60_000 });
    return {
      port,
      pid: proc.child.pid,
      browser,
      /** The frontend URL for a target websocket (host:port/path, without ws://). */
      frontendUrl(/** @type {string} */ wsHostPath) {
        return `http://127.0.0.1:${port}/devtools/devtools_app.html?ws=${wsHostPath}`;
      },
      async close() {
        try { await browser.close(); } catch { /* already gone */ }
        await cleanup();
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
