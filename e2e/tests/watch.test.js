// run --watch: the host restarts on a save and the open DevTools window stays
// attached, with its gutter breakpoint.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { FIXTURE, fixtureLine } from '../lib/worker.js';

const chrome = useChromium();

test('watch: after a save the window shows the restart, the new process and its text, and a gutter breakpoint set before pauses it', { timeout: TEST_MS }, async (t) => {
  // A copy of the fixture in a folder of its own: the test edits it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-e2e-watch-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const script = path.join(dir, 'host.js');
  fs.copyFileSync(FIXTURE, script);
  const url = pathToFileURL(script).href;
  const h = await startHost(t, { chrome, proxy: true, name: 'watch', fixture: script, runArgs: ['--watch'] });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    await dt.showPanel('sources');
    await dt.openSource(url);
    const line = fixtureLine('// BREAKPOINT-LINE');
    await dt.clickGutter(line);
    await dt.page.locator('.breakpoint-item', { hasText: 'BREAKPOINT-LINE' }).waitFor();

    // The save: a line appended, so the breakpoint's line keeps its number.
    const firstPid = h.w.hostPid;
    const tmp = path.join(dir, '.host.js.tmp');
    fs.writeFileSync(tmp, fs.readFileSync(script, 'utf8') + "console.log('e2e-host: version 2 after the save');\n");
    fs.renameSync(tmp, script);

    await dt.showPanel('console');
    await dt.waitForConsoleText('host.js changed; restarted the host');
    await dt.waitForConsoleText('e2e-host: version 2 after the save');
    t.diagnostic(`screenshot: ${await dt.screenshot('restarted')}`);
    const newPid = Number(fs.readFileSync(path.join(h.w.triggerDir, 'host.pid'), 'utf8'));
    assert.notEqual(newPid, firstPid, 'a new host process runs');

    h.w.trigger('break', 'w1');
    const status = await dt.waitForPaused();
    assert.match(status, /breakpoint/i, 'the breakpoint set before the save pauses the new process');
    const stack = await dt.callStack();
    assert.match(stack[0] ?? '', new RegExp(`^breakpointTarget host\\.js:${line}$`), `top frame at the breakpoint line: ${JSON.stringify(stack)}`);
    // CodeMirror renders the lines near the view only: the appended line is the last.
    await dt.page.locator('#sources-panel-sources-view .cm-editor .cm-scroller').evaluate((el) => { el.scrollTop = el.scrollHeight; });
    await dt.page.waitForTimeout(200);
    const lines = await dt.editorLines();
    assert.ok(lines.some((l) => l.includes('version 2 after the save')), 'Sources shows the new text');
    t.diagnostic(`screenshot: ${await dt.screenshot('paused-after-restart')}`);
    await dt.clickResume();
    await dt.waitForNotPaused();
    await dt.showPanel('console');
    await dt.waitForConsoleText('e2e-host: passed breakpoint line w1');
  });
});
