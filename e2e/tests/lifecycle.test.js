// Shutdown: the worker leaves no node host behind, even with a DevTools session open
// (a host stuck at "Waiting for the debugger to disconnect..." would be a leak).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import CDP from 'chrome-remote-interface';
import { alive, step } from '../lib/procs.js';
import { TEST_MS, startHost } from '../lib/setup.js';

test('shutdown: SIGTERM stops the worker and its node host while a session is attached', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { name: 'shutdown' });
  await h.run(async () => {
    const client = await step(CDP({ host: '127.0.0.1', port: h.w.port, target: h.w.target.id }), 'CDP() connect');
    t.after(() => client.close().catch(() => {}));
    await step(client.Runtime.enable(), 'Runtime.enable');
    await step(client.Debugger.enable(), 'Debugger.enable');
    const disconnected = new Promise((resolve) => client.on('disconnect', resolve));
    assert.ok(alive(h.w.hostPid), 'the host runs');
    const r = await h.w.stop();
    assert.equal(r.workerKilled, false, `the worker exits on SIGTERM (exit: ${JSON.stringify(r.workerExit)})\n${h.w.output()}`);
    assert.equal(r.hostLeaked, false, `the node host ${h.w.hostPid} exits with the worker`);
    await step(disconnected, 'the client to see its socket closed');
  });
});
