// Debugging: pause, see it, resume, see execution continue.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { FIXTURE_URL, fixtureLine } from '../lib/worker.js';

const chrome = useChromium();

test('debugging: a debugger statement pauses (paused status, call stack) and F8 resumes', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'debugger-statement' });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    h.w.trigger('pause', 'd1');
    const status = await dt.waitForPaused();
    assert.match(status, /paused/i, 'the Sources sidebar says the debugger is paused');
    const stack = await dt.callStack();
    assert.match(stack[0] ?? '', new RegExp(`^pauseHere host\\.js:${fixtureLine('debugger; // e2e')}$`), `top frame is pauseHere at the debugger line: ${JSON.stringify(stack)}`);
    assert.equal(await dt.selectedEditorTab(), 'host.js', 'the paused script is open in the editor');
    t.diagnostic(`screenshot: ${await dt.screenshot('paused')}`);

    // Still paused: the line after `debugger;` has not run.
    await dt.showPanel('console');
    assert.ok(!(await dt.consoleTexts()).some((x) => x.includes('resumed after debugger d1')), 'nothing runs while paused');
    await dt.showPanel('sources');
    await dt.page.keyboard.press('F8');
    await dt.waitForNotPaused();
    await dt.showPanel('console');
    await dt.waitForConsoleText('e2e-host: resumed after debugger d1');
    t.diagnostic(`screenshot: ${await dt.screenshot('resumed')}`);
  });
});

test('debugging: a breakpoint set by clicking the gutter pauses, and the Resume button resumes', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'gutter-breakpoint' });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    await dt.openSource(FIXTURE_URL);
    const line = fixtureLine('// BREAKPOINT-LINE');
    await dt.clickGutter(line);
    const bp = dt.page.locator('.breakpoint-item', { hasText: 'BREAKPOINT-LINE' });
    await bp.waitFor();
    assert.match(await bp.innerText(), new RegExp(`\\b${line}\\s*$`), 'the Breakpoints pane lists the clicked line');
    t.diagnostic(`screenshot: ${await dt.screenshot('breakpoint-set')}`);

    h.w.trigger('break', 'b1');
    const status = await dt.waitForPaused();
    assert.match(status, /breakpoint/i, 'the Sources sidebar says paused on a breakpoint');
    const stack = await dt.callStack();
    assert.match(stack[0] ?? '', new RegExp(`^breakpointTarget host\\.js:${line}$`), `top frame is at the breakpoint line: ${JSON.stringify(stack)}`);
    t.diagnostic(`screenshot: ${await dt.screenshot('paused-on-breakpoint')}`);

    await dt.clickResume();
    await dt.waitForNotPaused();
    await dt.showPanel('console');
    await dt.waitForConsoleText('e2e-host: passed breakpoint line b1');
    t.diagnostic(`screenshot: ${await dt.screenshot('resumed')}`);
  });
});
