// Every realm of one host in one stock DevTools window: the host's main thread, a
// worker thread it starts and a child it forks. The Console lists each one's messages,
// and its context selector names each realm; with "Selected context only", choosing a
// realm's context shows that realm's messages and no other's. Sources lists the
// thread's script and the child's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { THREAD_FIXTURE_URL } from '../lib/worker.js';

const chrome = useChromium();
const CHILDREN_HOST = fileURLToPath(new URL('../fixtures/children-host.js', import.meta.url));
const CHILD_URL = new URL('../fixtures/child.js', import.meta.url).href;

/** Each realm's message, by realm. */
const MESSAGES = {
  main: 'e2e-children-host: forked one',
  thread: 'e2e-thread: waiting t1',
  child: 'e2e-child: hello one',
};

test('realms: the Console lists the messages of main, a thread and a child, each under its context name, and Sources shows the thread\'s and the child\'s scripts', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'realms', fixture: CHILDREN_HOST });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-children-host: started before any DevTools window');
    h.w.trigger(/** @type {any} */ ('thread'), 't1');
    await dt.waitForConsoleText('e2e-children-host: started thread t1');
    h.w.trigger(/** @type {any} */ ('child'), 'one');
    for (const text of Object.values(MESSAGES)) await dt.waitForConsoleText(text);
    assert.match((await dt.consoleLinkFor(MESSAGES.thread).innerText()).trim(), /^thread-worker\.js:\d+$/, 'the thread\'s message links to its script');
    assert.match((await dt.consoleLinkFor(MESSAGES.child).innerText()).trim(), /^child\.js:\d+$/, 'the child\'s message links to its script');

    t.diagnostic(`screenshot: ${await dt.screenshot('console')}`);

    // The context selector names the three realms: the host by its script, the
    // thread and the child by Node's own names, "Worker[<threadId>]" and
    // "<node's path>[<pid>]".
    const selector = dt.page.locator('[aria-label^="JavaScript context"]').first();
    const items = dt.page.locator('[role=menuitem]');
    /** @type {Record<keyof MESSAGES, RegExp>} */
    const names = { main: /^children-host\.js/, thread: /\bWorker\[\d+\]/, child: /\bnode\[\d+\]/ };
    await selector.click();
    let options = [];
    for (const until = Date.now() + 10_000; Date.now() < until && !Object.values(names).every((re) => options.some((o) => re.test(o))); ) {
      await dt.page.waitForTimeout(100);
      options = (await items.allInnerTexts()).map((o) => o.replace(/\s+/g, ' ').trim());
    }
    t.diagnostic(`context selector: ${JSON.stringify(options)}`);
    for (const [realm, re] of Object.entries(names)) {
      assert.ok(options.some((o) => re.test(o)), `the context selector lists the ${realm} realm (${re}): ${JSON.stringify(options)}`);
    }
    t.diagnostic(`screenshot: ${await dt.screenshot('contexts')}`);
    await dt.page.keyboard.press('Escape');

    // "Selected context only": each realm's context shows its own message and not
    // the others'.
    await dt.page.locator('[aria-label="Console settings"]').first().click();
    await dt.page.getByText('Selected context only', { exact: true }).first().click();
    await dt.page.locator('[aria-label="Console settings"]').first().click();
    for (const [realm, re] of Object.entries(names)) {
      await selector.click();
      await items.filter({ hasText: re }).first().click();
      await dt.waitForConsoleText(MESSAGES[/** @type {keyof MESSAGES} */ (realm)]);
      const shown = await dt.consoleTexts();
      t.diagnostic(`${realm} context selected: ${JSON.stringify(shown)}`);
      for (const [other, text] of Object.entries(MESSAGES)) {
        if (other !== realm) assert.ok(!shown.some((s) => s.includes(text)), `with the ${realm} context selected, the ${other}'s message is not shown: ${JSON.stringify(shown)}`);
      }
    }

    // Sources lists the thread's script and the child's, each under its realm.
    for (const url of [THREAD_FIXTURE_URL, CHILD_URL]) {
      await dt.openSource(url);
      const base = url.slice(url.lastIndexOf('/') + 1);
      assert.equal(await dt.selectedEditorTab(), base, `Sources opened ${base}`);
    }
    const groups = (await dt.navigatorTitles()).filter((x) => /Worker|worker|\(pid \d+\)/.test(x ?? ''));
    t.diagnostic(`navigator groups: ${JSON.stringify(groups)}`);
  });
});
