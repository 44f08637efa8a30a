// Worker threads: a thread the host starts while a stock DevTools window is open runs
// (the window releases it: it attached with waitForDebuggerOnStart), and its console
// message reaches the window. A gutter breakpoint in a thread's own script pauses that
// thread only: the Threads pane shows it paused while the main thread runs on.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { FIXTURE, THREAD_FIXTURE, THREAD_FIXTURE_URL, fixtureLine } from '../lib/worker.js';

const chrome = useChromium();

test('threads: a worker thread started with a window open runs, and its console message is shown', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'threads' });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    h.w.trigger('thread', 'one');
    await dt.waitForConsoleText('e2e-host: thread ran one');
    await dt.waitForConsoleText('e2e-thread: hello one');
    t.diagnostic(`screenshot: ${await dt.screenshot('threads-console')}`);
  });
});

test('threads: a gutter breakpoint in a thread\'s script pauses that thread only (Threads pane), and Resume resumes it', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { chrome, proxy: true, name: 'thread-breakpoint' });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    h.w.trigger('tstart', 't1');
    await dt.waitForConsoleText('e2e-thread: waiting t1');

    // Sources lists the thread's script; a click on its gutter sets a breakpoint.
    await dt.openSource(THREAD_FIXTURE_URL);
    const line = fixtureLine('// THREAD-BREAKPOINT-LINE', THREAD_FIXTURE);
    await dt.clickGutter(line);
    const bp = dt.page.locator('.breakpoint-item', { hasText: 'THREAD-BREAKPOINT-LINE' });
    await bp.waitFor();

    h.w.trigger('twork', 't1 w1');
    const status = await dt.waitForPaused();
    assert.match(status, /breakpoint/i, 'the Sources sidebar says paused on a breakpoint');
    const stack = await dt.callStack();
    assert.match(stack[0] ?? '', new RegExp(`^threadWork thread-worker\\.js:${line}$`), `top frame is the thread's breakpoint line: ${JSON.stringify(stack)}`);
    const threads = await dt.threads();
    t.diagnostic(`Threads pane: ${JSON.stringify(threads)}`);
    // Rows are named by each target's default context: the host's "host.js", a
    // thread's Node's own "Worker[<threadId>]".
    assert.deepEqual(threads, ['host.js', 'Worker[1] paused'], 'the Threads pane shows the thread paused and the main thread running');
    t.diagnostic(`screenshot: ${await dt.screenshot('thread-paused')}`);

    // The main thread runs on while the thread is paused.
    h.w.trigger('log', 'during the thread pause');
    await dt.waitForConsoleText('e2e-host: on demand during the thread pause');
    assert.ok(!(await dt.consoleTexts()).some((x) => x.includes('thread answered worked w1')), 'the paused thread did not answer');

    await dt.showPanel('sources');
    await dt.clickResume();
    await dt.waitForNotPaused();
    await dt.waitForConsoleText('e2e-host: thread answered worked w1');

    // A thread started after the breakpoint was set gets it too (the frontend sets
    // it there, the worker has already): it pauses there, and the breakpoint stays
    // listed (a set the thread refused would make the frontend drop it).
    h.w.trigger('tstart', 't2');
    await dt.waitForConsoleText('e2e-thread: waiting t2');
    h.w.trigger('twork', 't2 w2');
    await dt.showPanel('sources');
    await dt.waitForPaused();
    const stack2 = await dt.callStack();
    assert.match(stack2[0] ?? '', new RegExp(`^threadWork thread-worker\\.js:${line}$`), `the second thread paused on the line: ${JSON.stringify(stack2)}`);
    assert.deepEqual(await dt.threads(), ['host.js', 'Worker[1]', 'Worker[2] paused'], 'the Threads pane shows the second thread paused');
    await bp.waitFor();
    await dt.clickResume();
    await dt.waitForNotPaused();
    await dt.waitForConsoleText('e2e-host: thread answered worked w2');
    const refused = h.proxy?.analyze().errors.get('Debugger.setBreakpointByUrl');
    assert.equal(refused, undefined, `no breakpoint set was refused: ${JSON.stringify(refused)}`);
  });
});

test('threads: under run --watch the restarted host\'s threads are attached, and a breakpoint set in a thread before the save pauses them', { timeout: TEST_MS }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-e2e-watch-threads-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const script = path.join(dir, 'host.js');
  fs.copyFileSync(FIXTURE, script);
  fs.copyFileSync(THREAD_FIXTURE, path.join(dir, 'thread-worker.js'));
  const threadURL = pathToFileURL(path.join(dir, 'thread-worker.js')).href;
  const h = await startHost(t, { chrome, proxy: true, name: 'watch-threads', fixture: script, runArgs: ['--watch'] });
  await h.run(async () => {
    const dt = await h.open();
    await dt.waitForConsoleText('e2e-host: started before any DevTools window');
    h.w.trigger('tstart', 't1');
    await dt.waitForConsoleText('e2e-thread: waiting t1');
    await dt.openSource(threadURL);
    const line = fixtureLine('// THREAD-BREAKPOINT-LINE', THREAD_FIXTURE);
    await dt.clickGutter(line);
    const bp = dt.page.locator('.breakpoint-item', { hasText: 'THREAD-BREAKPOINT-LINE' });
    await bp.waitFor();

    const tmp = path.join(dir, '.host.js.tmp');
    fs.writeFileSync(tmp, fs.readFileSync(script, 'utf8') + "console.log('e2e-host: version 2 after the save');\n");
    fs.renameSync(tmp, script);
    await dt.waitForConsoleText('host.js changed; restarted the host');
    await dt.waitForConsoleText('e2e-host: version 2 after the save');

    // The new host's thread: attached, and paused by the breakpoint set before.
    h.w.trigger('tstart', 't2');
    await dt.waitForConsoleText('e2e-thread: waiting t2');
    h.w.trigger('twork', 't2 w2');
    await dt.showPanel('sources');
    const status = await dt.waitForPaused();
    assert.match(status, /breakpoint/i, 'paused on the breakpoint');
    const stack = await dt.callStack();
    assert.match(stack[0] ?? '', new RegExp(`^threadWork thread-worker\\.js:${line}$`), `the new host's thread paused on the line: ${JSON.stringify(stack)}`);
    assert.deepEqual(await dt.threads(), ['host.js', 'Worker[1] paused'], 'only the new host\'s thread is listed, paused');
    t.diagnostic(`screenshot: ${await dt.screenshot('watch-thread-paused')}`);
    await bp.waitFor();
    await dt.clickResume();
    await dt.waitForNotPaused();
    await dt.waitForConsoleText('e2e-host: thread answered worked w2');
    const refused = h.proxy?.analyze().errors.get('Debugger.setBreakpointByUrl');
    assert.equal(refused, undefined, `no breakpoint set was refused: ${JSON.stringify(refused)}`);
  });
});
