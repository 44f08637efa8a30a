// Child processes: a child the host forks while a stock DevTools window is open runs
// (the window lets it: it attached with waitForDebuggerOnStart), its console message is
// shown with its context, and Sources lists its script.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';

const chrome = useChromium();
const CHILDREN_HOST = fileURLToPath(new URL('../fixtures/children-host.js', import.meta.url));
const CHILD_URL = new URL('../fixtures/child.js', import.meta.url).href;

test('children: a forked child\'s console message is shown with its context, and Sources lists its script', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'children', fixture: CHILDREN_HOST });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-children-host: started before any DevTools window');
    h.w.trigger(/** @type {any} */ ('child'), 'one');
    await dt.waitForConsoleText('e2e-children-host: forked one');
    await dt.waitForConsoleText('e2e-child: hello one');
    const link = (await dt.consoleLinkFor('e2e-child: hello one').innerText()).trim();
    assert.match(link, /^child\.js:\d+$/, 'the child\'s message links to its own script');
    // The Console's context selector lists the child's context by Node's own name for
    // it, "<node>[<pid>]", beside the host's.
    const contexts = dt.page.locator('[aria-label^="JavaScript context"]').first();
    await contexts.click();
    const items = dt.page.locator('[role=menuitem]');
    let options = [];
    for (const until = Date.now() + 10_000; Date.now() < until && !options.some((o) => o.includes('node[')); ) {
      await dt.page.waitForTimeout(100);
      options = await items.allInnerTexts();
    }
    await dt.page.keyboard.press('Escape');
    t.diagnostic(`context selector: ${JSON.stringify(options)}`);
    const childContext = options.map((o) => /node\[(\d+)\]/.exec(o)).find(Boolean);
    assert.ok(childContext, `the context selector lists the child: ${JSON.stringify(options)}`);
    assert.ok(options.some((o) => o.startsWith('children-host.js')), `and the host: ${JSON.stringify(options)}`);

    // Sources shows the child as a group of its own, titled with its command line and
    // pid, holding its script.
    await dt.showPanel('sources');
    const group = dt.page.locator('.navigator-tabbed-pane .navigator-worker-tree-item', { hasText: 'child.js one (pid ' + childContext[1] + ')' });
    await group.click();
    await dt.page.keyboard.press('ArrowRight');
    await dt.openSource(CHILD_URL);
    const lines = await dt.editorLines();
    assert.ok(lines.some((l) => l.includes('CHILD-LOG-LINE')), `the child's script is shown: ${JSON.stringify(lines.slice(0, 5))}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('children-sources')}`);
  });
});
