// Tests of embed.mjs against a fake `inspector-worker serve` (a Node
// script behind a tiny shell wrapper, so it is spawned like a binary).

import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, chmodSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startInspectorWorker } from './embed.mjs';

const dir = mkdtempSync(join(tmpdir(), 'iw-embed-'));
const FAKE = fileURLToPath(new URL('testdata/fake-worker.cjs', import.meta.url));
const EMBED = fileURLToPath(new URL('embed.mjs', import.meta.url));

/** A fake binary running fake-worker.cjs in mode, logging to a fresh file. @param {string} mode */
function fakeBinary(mode) {
  const logFile = join(dir, mode + '-' + Math.random().toString(16).slice(2) + '.log');
  const bin = join(dir, 'fake-' + mode + '-' + Math.random().toString(16).slice(2));
  writeFileSync(bin, `#!/bin/sh\nFAKE_MODE=${mode} FAKE_LOG='${logFile}' exec '${process.execPath}' '${FAKE}' "$@"\n`);
  chmodSync(bin, 0o755);
  const entries = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
  return { bin, entries };
}

/** @param {() => boolean} cond */
async function until(cond, ms = 5000) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timeout');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('starts the worker on our own inspector, resolves on its listening line, feeds it host frames', async () => {
  const fake = fakeBinary('normal');
  const iw = await startInspectorWorker({ binary: fake.bin, port: 0 });
  try {
    assert.equal(iw.address, '127.0.0.1:45678');
    assert.equal(iw.frontendURL, 'devtools://devtools/bundled/inspector.html?ws=127.0.0.1:45678/x');
    assert.match(iw.inspectorURL, /^ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f-]+$/);
    const argv = fake.entries()[0].argv;
    assert.deepEqual(argv, ['serve', '--host-inspector', iw.inspectorURL, '--port', '0', '--host-channel-fd', '3']);
    await until(() => fake.entries().some((e) => e.inspector));
    assert.match(fake.entries().find((e) => e.inspector).inspector, /^node\.js\//i, 'the worker can reach our inspector');
    assert.equal(iw.observe('ready', { pid: 1 }), true);
    await until(() => iw.stats().acked === 1);
    const frames = fake.entries().filter((e) => e.frame).map((e) => e.frame);
    assert.deepEqual(frames.map((f) => f.type), ['hello', 'replace', 'append']);
    assert.deepEqual(frames[0].body, { role: 'host', capabilities: [], topics: ['app', 'fetch'], agent: frames[0].body.agent });
    assert.equal(frames[0].body.agent.name, 'inspector-worker-embed');
    assert.deepEqual(frames[2].body.items[0].app.data, { pid: 1 });
    assert.equal(frames[2].gen, 5);
  } finally {
    await iw.close();
  }
  await until(() => fake.entries().some((e) => e.signal === 'SIGTERM'));
});

test('a worker that never reads fd 3 (today\'s serve): the bounded queue absorbs observations', async () => {
  const fake = fakeBinary('silent');
  const iw = await startInspectorWorker({ binary: fake.bin });
  try {
    for (let i = 0; i < 25000; i++) iw.observe('tick', i);
    assert.deepEqual(iw.stats(), { queued: 10000, dropped: 15000, sent: 0, acked: 0 });
  } finally {
    await iw.close();
  }
});

test('a missing binary or a worker that dies early rejects', async () => {
  await assert.rejects(startInspectorWorker({ binary: join(dir, 'no-such-binary') }), /ENOENT/);
  const fake = fakeBinary('die');
  await assert.rejects(startInspectorWorker({ binary: fake.bin }), /exited \(3\) before it was listening/);
});

test('the embedded worker does not keep the app alive, and dies with it', () => {
  const fake = fakeBinary('normal');
  const code = `import(${JSON.stringify(EMBED)}).then((m) => m.startInspectorWorker({ binary: ${JSON.stringify(fake.bin)} }))` +
    `.then((w) => { w.observe('x', 1); console.log('listening ' + w.address); })`;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 15000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /listening 127\.0\.0\.1:45678/);
  assert.match(r.stderr, /inspector-worker: listening on http:\/\/127\.0\.0\.1:45678/, 'the worker\'s stderr is forwarded');
  assert.ok(Date.now() - t0 < 10000);
  return until(() => fake.entries().some((e) => e.signal === 'SIGTERM'));
});

test('capture: fetch items on the host channel while running, fetch put back by close(); capture:false installs nothing', async () => {
  const http = await import('node:http');
  const server = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('embedded'); });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const url = 'http://127.0.0.1:' + /** @type {any} */ (server.address()).port + '/e';
  const nodeFetch = globalThis.fetch;
  try {
    const off = await startInspectorWorker({ binary: fakeBinary('normal').bin, capture: false });
    assert.equal(globalThis.fetch, nodeFetch, 'capture:false leaves fetch alone');
    await off.close();

    const fake = fakeBinary('normal');
    const iw = await startInspectorWorker({ binary: fake.bin });
    try {
      assert.notEqual(globalThis.fetch, nodeFetch);
      const res = await fetch(url);
      assert.equal(await res.text(), 'embedded');
      /** @returns {any[]} */
      const items = () => fake.entries().filter((e) => e.frame && e.frame.type === 'append').flatMap((e) => e.frame.body.items).filter((it) => it.fetch);
      await until(() => items().some((it) => it.fetch.phase === 'finished'));
      const phases = items().map((it) => it.fetch.phase);
      assert.deepEqual(phases, ['request', 'response', 'body', 'finished']);
      const req = items()[0].fetch.request;
      assert.equal(req.url, url);
      assert.match(req.stackTrace.callFrames[0].url, /embed\.test\.mjs$/);
      assert.equal(Buffer.from(items()[2].fetch.body.data, 'base64').toString(), 'embedded');
    } finally {
      await iw.close();
    }
    assert.equal(globalThis.fetch, nodeFetch, 'close() puts fetch back');
  } finally {
    globalThis.fetch = nodeFetch;
    server.close();
  }
});
