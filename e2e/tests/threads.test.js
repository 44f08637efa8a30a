// Worker threads: a thread the host starts while a stock DevTools window is open runs
// (the window releases it: it attached with waitForDebuggerOnStart), and its console
// message reaches the window.
import { test } from 'node:test';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';

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
