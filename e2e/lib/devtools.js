// One stock DevTools window (devtools_app.html served by chromium itself) and the
// few things a user does in it. Selectors come from the devtools-frontend sources;
// Playwright's CSS engine pierces DevTools' open shadow roots.
import { artifactPath } from './artifacts.js';

/** Generous: the UI takes 4–9 s to appear on a loaded 2-core machine. */
export const STEP_MS = 60_000;

/**
 * @param {{browser: import('playwright-core').Browser, frontendUrl: (ws: string) => string}} chrome
 * @param {string} wsHostPath  host:port/devtools/page/<id>
 * @param {string} name        used in screenshot file names
 */
export async function openDevTools(chrome, wsHostPath, name) {
  const context = chrome.browser.contexts()[0] ?? (await chrome.browser.newContext());
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  await page.setViewportSize({ width: 1280, height: 800 });
  /** The frontend's own console: "Request X failed" and the like. */
  const frontendConsole = /** @type {string[]} */ ([]);
  page.on('console', (m) => {
    // Chromium's own noise (its debugging server has no favicon; software WebGL) is
    // not the frontend talking about us.
    if (m.location().url.endsWith('/favicon.ico') || /swiftshader|software WebGL/i.test(m.text())) return;
    if (m.type() === 'error' || m.type() === 'warning') frontendConsole.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => frontendConsole.push(`pageerror: ${e.message}`));
  await page.goto(chrome.frontendUrl(wsHostPath), { timeout: STEP_MS });
  await page.locator('#tab-console').waitFor({ state: 'visible' });
  let shots = 0;
  const dt = {
    page,
    name,
    frontendConsole,
    async close() {
      await page.close().catch(() => {});
    },
    /** Saves a PNG named <name>-NN-<step>.png and returns its path. */
    async screenshot(/** @type {string} */ step) {
      const file = artifactPath(`${name}-${String(++shots).padStart(2, '0')}-${step}.png`);
      await page.mouse.move(1279, 799); // no hover highlight left on the last clicked tab
      await page.screenshot({ path: file });
      return file;
    },
    async showPanel(/** @type {'console'|'sources'|'network'} */ panel) {
      const tab = page.locator(`#tab-${panel}`);
      await tab.click();
      await page.locator(`#tab-${panel}[aria-selected="true"]`).waitFor();
    },
    async selectedPanel() {
      const ids = await page.locator('.tabbed-pane-header-tab[aria-selected="true"]').evaluateAll((els) => els.map((e) => e.id));
      return ids.find((id) => /^tab-(console|sources|network|timeline|heap-profiler|elements)$/.test(id))?.slice(4) ?? '';
    },
    /** Texts of the console messages (not the prompt). */
    async consoleTexts() {
      if ((await dt.selectedPanel()) !== 'console') await dt.showPanel('console');
      return page.locator('.console-message-wrapper .console-message-text').allInnerTexts();
    },
    /** Shows the Console panel (devtools_app opens on Elements) and waits for a message. */
    async waitForConsoleText(/** @type {string} */ text) {
      if ((await dt.selectedPanel()) !== 'console') await dt.showPanel('console');
      await page.locator('.console-message-wrapper .console-message-text', { hasText: text }).first().waitFor({ state: 'visible' });
    },
    /** The source link ("host.js:33") of the console message with that text. */
    consoleLinkFor(/** @type {string} */ text) {
      return page.locator('.console-message-wrapper', { has: page.locator('.console-message-text', { hasText: text }) })
        .locator('.console-message-anchor .devtools-link').first();
    },
    /** Types an expression at the console prompt and presses Enter. */
    async evaluateInConsole(/** @type {string} */ expression) {
      await dt.showPanel('console');
      await page.locator('#console-prompt .cm-content').click();
      await page.keyboard.type(expression);
      await page.keyboard.press('Enter');
    },
    /** Expands the Sources navigator until the file item for url is shown. */
    async revealInNavigator(/** @type {string} */ url) {
      await dt.showPanel('sources');
      const file = page.locator(`.navigator-file-tree-item[title="${url}"]`);
      const deadline = Date.now() + STEP_MS;
      while (!(await file.isVisible())) {
        if (Date.now() > deadline) {
          const seen = await navigatorTitles(page);
          throw new Error(`${url} never became visible in the Sources navigator; it shows: ${JSON.stringify(seen)}`);
        }
        if (await file.count()) {
          // The item exists under a collapsed folder: expand its collapsed ancestors
          // (the tree puts a parent's children in the <ol role=group> after it).
          await file.evaluate((el) => {
            for (let li = el; li; ) {
              const parent = li.parentElement?.closest('ol[role=group]')?.previousElementSibling;
              if (!parent || parent.getAttribute('role') !== 'treeitem') break;
              if (parent.getAttribute('aria-expanded') === 'false') {
                /** @type {any} */ (parent).treeElement?.expand?.();
                if (parent.getAttribute('aria-expanded') === 'false') parent.dispatchEvent(new MouseEvent('dblclick', { bubbles: true }));
              }
              li = /** @type {HTMLElement} */ (parent);
            }
          });
        } else {
          // Not created yet: open the frames (top), the worker threads and the visible
          // folders on the way to url (file://, path folders); leave "(no domain)" and
          // the rest alone.
          const collapsed = page.locator('.navigator-tabbed-pane [role=treeitem][aria-expanded="false"]:visible');
          const titles = await collapsed.evaluateAll((els) => els.map((e) => [e.getAttribute('title') || '',
            e.classList.contains('navigator-frame-tree-item') || e.classList.contains('navigator-worker-tree-item')]));
          const i = titles.findIndex(([title, frame]) => frame || (title && url.includes(/** @type {string} */ (title))));
          if (i >= 0) {
            await collapsed.nth(i).click();
            await page.keyboard.press('ArrowRight');
          }
        }
        await page.waitForTimeout(200);
      }
      return file;
    },
    /** The titles of the navigator's visible tree items (for assertions and errors). */
    navigatorTitles: () => navigatorTitles(page),
    /** Opens url from the navigator; resolves when its editor tab is selected. */
    async openSource(/** @type {string} */ url) {
      const item = await dt.revealInNavigator(url);
      await item.click();
      const base = url.slice(url.lastIndexOf('/') + 1);
      await page.locator('.tabbed-pane-header-tab[aria-selected="true"]', { hasText: base }).waitFor();
    },
    /** The selected editor tab's file name. */
    async selectedEditorTab() {
      const names = await page.locator('#sources-panel-sources-view .tabbed-pane-header-tab[aria-selected="true"]').allInnerTexts();
      return names.map((s) => s.trim()).join(',');
    },
    /** The text lines CodeMirror has rendered for the open file. */
    async editorLines() {
      return page.locator('#sources-panel-sources-view .cm-editor .cm-content .cm-line').allInnerTexts();
    },
    /** Clicks the gutter at a 1-based line number of the open file. */
    async clickGutter(/** @type {number} */ line) {
      const gutter = page.locator('#sources-panel-sources-view .cm-lineNumbers .cm-gutterElement', { hasText: new RegExp(`^${line}$`) });
      await gutter.scrollIntoViewIfNeeded();
      await gutter.click();
    },
    /** Waits for the Sources pause banner ("Paused on breakpoint", "Debugger paused", …). */
    async waitForPaused() {
      const status = page.locator('.paused-message .paused-status');
      await status.first().waitFor({ state: 'visible' });
      return (await status.first().innerText()).trim();
    },
    async waitForNotPaused() {
      await page.locator('.paused-message .paused-status').first().waitFor({ state: 'hidden' });
    },
    async callStack() {
      return (await page.locator('.call-frame-item').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
    },
    /** The Threads pane's rows (title and state, e.g. "Main", "x.js (worker 1) paused"). */
    async threads() {
      return (await page.locator('.thread-item').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
    },
    /** Presses the Resume button in the Sources toolbar. */
    async clickResume() {
      await page.locator('devtools-button[aria-label="Resume script execution"], button[aria-label^="Resume script execution"]').first().click();
    },
  };
  return dt;
}

async function navigatorTitles(/** @type {import('playwright-core').Page} */ page) {
  return page.locator('.navigator-tabbed-pane [role=treeitem]').evaluateAll((els) => els.map((e) => e.getAttribute('title') || e.textContent));
}
