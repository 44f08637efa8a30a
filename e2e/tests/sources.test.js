// Sources: the host script in the navigator and in the editor. This window connects to
// the worker directly (no recording proxy), so the suite also covers that path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { FIXTURE_LINES, FIXTURE_URL } from '../lib/worker.js';

const chrome = useChromium();

test('sources: the host script is listed under a file:// tree and its text is shown when opened', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: false, name: 'sources' });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    const item = await dt.revealInNavigator(FIXTURE_URL);
    // The file sits in a file:// domain folder, not in "(no domain)" or elsewhere.
    const ancestry = await item.evaluate((el) => {
      const titles = [];
      for (let li = el; li; ) {
        const group = li.parentElement?.closest('ol[role=group]');
        const parent = group?.previousElementSibling;
        if (!parent || parent.getAttribute('role') !== 'treeitem') break;
        titles.unshift(parent.getAttribute('title') || parent.textContent || '');
        li = parent;
      }
      return titles;
    });
    assert.ok(ancestry.includes('file://'), `host.js is under file:// in the navigator; its ancestors: ${JSON.stringify(ancestry)}`);
    assert.equal(await dt.page.locator(`.navigator-file-tree-item[title="${FIXTURE_URL}"]`).count(), 1, 'host.js is listed once');
    // The host frame's URL is the script's folder; it is not a document, so the
    // folder (open now) lists no "(index)" entry for it (it used to, and opening it
    // showed "'Page.getResourceContent' wasn't found").
    const folderURL = new URL('.', FIXTURE_URL).href;
    const titles = await dt.navigatorTitles();
    assert.ok(!titles.includes(folderURL), `no navigator entry for the host frame's folder ${folderURL}: ${JSON.stringify(titles)}`);
    assert.equal(await dt.page.locator(`.navigator-file-tree-item[title="${folderURL}"]`).count(), 0, `no file item for ${folderURL}`);
    await dt.openSource(FIXTURE_URL);
    await dt.page.locator('#sources-panel-sources-view .cm-line', { hasText: 'function pauseHere' }).first().waitFor();
    const shown = (await dt.editorLines()).map((l) => l.trimEnd());
    const want = FIXTURE_LINES.slice(0, 20).map((l) => l.trimEnd());
    assert.deepEqual(shown.slice(0, 20), want, 'the editor shows the host script from its first line');
    t.diagnostic(`screenshot: ${await dt.screenshot('sources')}`);
  });
});
