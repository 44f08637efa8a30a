// A real third-party CDP client library (chrome-remote-interface) against the worker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import CDP from 'chrome-remote-interface';
import { step } from '../lib/procs.js';
import { TEST_MS, startHost } from '../lib/setup.js';

test('chrome-remote-interface: /json/list lists the target and Runtime.evaluate runs in the host', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { name: 'cri' });
  await h.run(async () => {
    const targets = await step(CDP.List({ host: '127.0.0.1', port: h.w.port }), 'CDP.List (/json/list)');
    assert.equal(targets.length, 1, `one target: ${JSON.stringify(targets)}`);
    const [target] = targets;
    assert.equal(target.type, 'page');
    for (const k of ['id', 'title', 'url', 'webSocketDebuggerUrl', 'devtoolsFrontendUrl']) {
      assert.equal(typeof target[k], 'string', `target.${k} is a string`);
    }
    assert.equal(target.webSocketDebuggerUrl, `ws://127.0.0.1:${h.w.port}/devtools/page/${target.id}`);

    const client = await step(CDP({ host: '127.0.0.1', port: h.w.port, target: target.id }), 'CDP() connect');
    t.after(() => client.close().catch(() => {}));
    const sum = await step(client.Runtime.evaluate({ expression: '6 * 7', returnByValue: true }), 'Runtime.evaluate 6 * 7');
    assert.deepEqual(sum.result, { type: 'number', value: 42, description: '42' });
    // It ran in the host: the fixture's own PID and globals are there.
    const pid = await step(client.Runtime.evaluate({ expression: 'process.pid', returnByValue: true }), 'Runtime.evaluate process.pid');
    assert.equal(pid.result.value, h.w.hostPid, 'evaluated in the node host');
    const fn = await step(client.Runtime.evaluate({ expression: 'typeof pauseHere', returnByValue: true }), 'Runtime.evaluate typeof pauseHere');
    assert.equal(fn.result.value, 'function', "the fixture's globals are visible");
  });
});

test('chrome-remote-interface: the typed API built from /json/protocol has each domain once, with the worker\'s events', { timeout: TEST_MS }, async (t) => {
  const h = await startHost(t, { name: 'cri-protocol' });
  await h.run(async () => {
    // CDP() fetches /json/protocol (local: false) and creates client.<Domain>.<name>
    // for each command and event; a domain listed twice would replace the first.
    const client = await step(CDP({ host: '127.0.0.1', port: h.w.port, local: false }), 'CDP() connect');
    t.after(() => client.close().catch(() => {}));
    const names = client.protocol.domains.map((d) => d.domain);
    assert.deepEqual(names.filter((n, i) => names.indexOf(n) !== i), [], 'no domain listed twice');
    for (const name of ['Network.requestWillBeSent', 'Network.loadingFinished', 'Page.frameNavigated', 'Log.entryAdded',
      'Runtime.consoleAPICalled', 'Network.setCacheDisabled', 'Page.disable', 'Runtime.evaluate']) {
      const [domain, member] = name.split('.');
      assert.equal(typeof client[domain]?.[member], 'function', `client.${name} is a function`);
    }
    assert.deepEqual(await step(client.Page.disable(), 'Page.disable'), {});
    assert.deepEqual(await step(client.Network.enable(), 'Network.enable'), {});
  });
});
