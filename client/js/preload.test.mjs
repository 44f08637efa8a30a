// Tests of the host preload (preload.cjs): a real `node --require
// preload.cjs app.cjs` child whose fd 3 is a socketpair (stdio 'pipe') held
// by the test, which plays the worker over newline-framed JSON.

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFrame } from './testdata/frames.mjs';
import { AGENT_VERSION, DEFAULT_LIMITS } from './core.mjs';

const PRELOAD = fileURLToPath(new URL('preload.cjs', import.meta.url));
const APP = fileURLToPath(new URL('testdata/app.cjs', import.meta.url));

/**
 * Starts the app under the preload. The test's end of fd 3 yields frames.
 * @param {Record<string,string>} env
 * @param {{fd3?: any}} [o]
 */
function startApp(env, o = {}) {
  const child = spawn(process.execPath, ['--require', PRELOAD, APP], {
    stdio: ['ignore', 'pipe', 'pipe', o.fd3 === undefined ? 'pipe' : o.fd3],
    env: { PATH: process.env.PATH, INSPECTOR_WORKER_FD: '3', PRELOAD_PATH: PRELOAD, ...env },
  });
  let out = '', err = '';
  child.stdout.on('data', (c) => { out += c; });
  child.stderr.on('data', (c) => { err += c; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const sock = /** @type {any} */ (child.stdio[3]);
  /** @type {any[]} */
  const frames = [];
  /** @type {Array<() => void>} */
  let waiters = [];
  let buf = '';
  if (sock && typeof sock.on === 'function') {
    sock.setEncoding('utf8');
    sock.on('data', (/** @type {string} */ c) => {
      buf += c;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        frames.push(parseFrame(line));
      }
      const w = waiters;
      waiters = [];
      w.forEach((f) => f());
    });
    sock.on('error', () => {});
  }
  return {
    child, sock, frames, exited,
    get out() { return out; },
    get err() { return err; },
    /** Resolves when at least n frames arrived. @param {number} n */
    async frame(n, ms = 5000) {
      const t0 = Date.now();
      while (frames.length < n) {
        if (Date.now() - t0 > ms) throw new Error(`timeout waiting for frame ${n}; have ${frames.map((f) => f.type)}; stderr ${err}`);
        await new Promise((r) => { waiters.push(/** @type {() => void} */ (r)); setTimeout(r, 50); });
      }
      return frames[n - 1];
    },
    /** @param {any} f */
    send(f) { sock.write(JSON.stringify(f) + '\n'); },
    /** The JSON line the app prints at exit. */
    async result() {
      const e = await exited;
      const line = out.trim().split('\n').pop() || '{}';
      return { ...JSON.parse(line), exit: e };
    },
  };
}

const welcome = (gen = 2) => ({ v: 1, type: 'welcome', source: 'host', gen, body: { capabilities: [], topics: ['app', 'fetch'], limits: DEFAULT_LIMITS } });
const ack = (/** @type {number} */ seq, gen = 2, dropped = 0) => ({ v: 1, type: 'ack', source: 'host', gen, seq, body: dropped ? { dropped } : {} });
const quiet = (ms = 300) => new Promise((r) => setTimeout(r, ms));

test('hello, replace, appends: newline framing, one append in flight until the ack', async () => {
  const app = startApp({ OBS: '600', HOLD: '10000', EXIT_WHEN_DRAINED: '1', EXTRA: '1' });
  const hello = await app.frame(1);
  assert.deepEqual(hello, { v: 1, type: 'hello', source: 'host', body: {
    role: 'host', capabilities: [], topics: ['app', 'fetch'], agent: { name: 'inspector-worker-preload', version: AGENT_VERSION } } });
  await quiet(200);
  assert.equal(app.frames.length, 1, 'nothing but the hello before the welcome');
  app.send(welcome());
  const replace = await app.frame(2);
  assert.deepEqual(replace, { v: 1, type: 'replace', source: 'host', gen: 2, seq: 0, body: { reason: 'initial', items: [] } });
  await quiet();
  assert.equal(app.frames.length, 2, 'the replace is in flight: no append yet');
  app.send(ack(0));
  const a1 = await app.frame(3);
  assert.equal(a1.type, 'append');
  assert.equal(a1.seq, 1);
  assert.equal(a1.body.items.length, 512);
  assert.equal('dropped' in a1.body, false);
  const it0 = a1.body.items[0].app;
  assert.equal(it0.name, 'obs');
  assert.deepEqual(it0.data, { i: 0 });
  assert.ok(it0.timestamp > 1.6e12);
  await quiet();
  assert.equal(app.frames.length, 3, 'a second append never goes out before the ack');
  app.send(ack(512));
  const a2 = await app.frame(4);
  assert.equal(a2.seq, 513);
  assert.equal(a2.body.items.length, 92);
  const extra = a2.body.items.slice(-4).map((/** @type {any} */ it) => it.app);
  assert.equal(extra[0].name, 'weird_name_');
  assert.equal(extra[0].data, '1');
  assert.deepEqual(extra[1].data, { a: 1, self: '[Circular]' });
  assert.deepEqual(extra[2].data, { truncated: true, bytes: 300002 });
  assert.equal('data' in extra[3], false);
  app.send(ack(604));
  const r = await app.result();
  assert.deepEqual(r.exit, { code: 0, signal: null });
  assert.deepEqual(r.stats, { queued: 0, dropped: 0, sent: 604, acked: 604 });
  assert.equal(r.fdEnv, null, 'INSPECTOR_WORKER_FD is removed for child processes');
  assert.equal(r.same, true, 'module.exports is globalThis.inspectorWorker');
  // The exit handler's own observe() may still go out (the ack freed the slot).
  assert.deepEqual(app.frames.slice(4).map((f) => f.body.items.map((/** @type {any} */ it) => it.app.name)), r.observeAfter ? [['after']] : []);
});

test('a worker that never answers does not block the app: 100,000 observations, prompt exit', async (t) => {
  const t0 = Date.now();
  const app = startApp({ OBS: '100000' });
  await app.frame(1);
  const r = await app.result();
  const wall = Date.now() - t0;
  assert.deepEqual(r.exit, { code: 0, signal: null });
  assert.deepEqual(r.stats, { queued: 10000, dropped: 90000, sent: 0, acked: 0 });
  // Not a speed check (a shared machine took 3.4 s): an observe() that
  // waited for the worker would never return, the loop never end and the
  // app never exit. The bounds only turn such a hang into a failure.
  assert.ok(r.loopMs < 60_000, `observe loop took ${r.loopMs} ms`);
  assert.ok(wall < 90_000, `exit took ${wall} ms`);
  t.diagnostic(`100,000 observe() calls: ${Math.round(r.loopMs)} ms; exit after ${wall} ms`);
  assert.equal(app.frames.length, 1);
});

test('late acks: the next batches report the drops as an explained gap', async () => {
  const app = startApp({ OBS: '100000', HOLD: '15000', EXIT_WHEN_DRAINED: '1' });
  await app.frame(1);
  app.send(welcome(7));
  await app.frame(2);
  app.send(ack(0, 7));
  let next = 1, received = 0, dropped = 0;
  for (let n = 3; ; n++) {
    const f = await app.frame(n);
    assert.equal(f.type, 'append');
    assert.equal(f.gen, 7);
    assert.ok(f.seq >= next);
    assert.equal(f.seq - next, f.body.dropped || 0, 'every gap is explained by dropped');
    dropped += f.body.dropped || 0;
    received += f.body.items.length;
    next = f.seq + f.body.items.length;
    await quiet(20);
    assert.equal(app.frames.length, n, 'one append in flight');
    app.send(ack(next - 1, 7, f.body.dropped || 0));
    if (received + dropped === 100000) break;
  }
  assert.equal(dropped, 90000);
  assert.equal(received, 10000);
  assert.equal(app.frames[2].seq, 90001);
  assert.equal(app.frames[2].body.dropped, 90000);
  const r = await app.result();
  assert.deepEqual(r.stats, { queued: 0, dropped: 90000, sent: 10000, acked: 10000 });
});

test('the worker hanging up: the app keeps running, observe becomes a no-op', async () => {
  const app = startApp({ OBS: '10', HOLD: '600' });
  await app.frame(1);
  app.sock.end();
  const r = await app.result();
  assert.deepEqual(r.exit, { code: 0, signal: null });
  assert.equal(r.observeAfter, false);
});

test('no fd, a fd that is not a socket, a closed fd: a silent no-op', async () => {
  for (const env of [{ INSPECTOR_WORKER_FD: '' }, { INSPECTOR_WORKER_FD: '9' }, { INSPECTOR_WORKER_FD: 'x' }, { INSPECTOR_WORKER_FD: '1' }]) {
    const app = startApp({ OBS: '5', ...env }, { fd3: 'ignore' });
    const r = await app.result();
    assert.deepEqual(r.exit, { code: 0, signal: null }, JSON.stringify(env) + app.err);
    assert.equal(app.err, '');
    assert.deepEqual(r.stats, { queued: 0, dropped: 0, sent: 0, acked: 0 });
    assert.equal(r.observeAfter, false);
  }
  const file = join(tmpdir(), 'iw-preload-' + process.pid);
  const fd = openSync(file, 'w');
  try {
    const app = startApp({ OBS: '5' }, { fd3: fd });
    const r = await app.result();
    assert.deepEqual(r.exit, { code: 0, signal: null });
    assert.equal(app.err, '');
    assert.equal(r.observeAfter, false);
  } finally {
    closeSync(fd);
  }
});

test('bootstrapSnippet from the run\'s endpoint and token; the token is not on the API object', async () => {
  const app = startApp({ INSPECTOR_WORKER_ENDPOINT: '127.0.0.1:9229', INSPECTOR_WORKER_TOKEN: 'tok_SECRET-123' }, { fd3: 'ignore' });
  const r = await app.result();
  assert.equal(r.snippet, '<script src="http://127.0.0.1:9229/client.js" data-endpoint="ws://127.0.0.1:9229/client" data-token="tok_SECRET-123"></script>');
  assert.ok(!r.inspected.includes('SECRET'), r.inspected);
  assert.ok(!app.err.includes('SECRET'));
  const none = startApp({}, { fd3: 'ignore' });
  assert.equal((await none.result()).snippet, '');
});

test('exit report: "exit N" on INSPECTOR_WORKER_EXIT_FD at exit, and the variable is not inherited', async () => {
  const child = spawn(process.execPath, ['--require', PRELOAD, '-e',
    'console.log(JSON.stringify(process.env.INSPECTOR_WORKER_EXIT_FD === undefined)); process.exit(7)'], {
    stdio: ['ignore', 'pipe', 'pipe', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH, INSPECTOR_WORKER_EXIT_FD: '4' },
  });
  let report = '', out = '', err = '';
  /** @type {any} */ (child.stdio[4]).on('data', (/** @type {Buffer} */ c) => { report += c; });
  child.stdout.on('data', (c) => { out += c; });
  child.stderr.on('data', (c) => { err += c; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 7, err);
  assert.equal(report, 'exit 7\n');
  assert.equal(out.trim(), 'true');
  // Not a pipe: no report, no error.
  const plain = spawn(process.execPath, ['--require', PRELOAD, '-e', 'process.exitCode = 2'], {
    stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, INSPECTOR_WORKER_EXIT_FD: '1' },
  });
  let perr = '';
  plain.stderr.on('data', (c) => { perr += c; });
  assert.equal(await new Promise((resolve) => plain.on('close', resolve)), 2);
  assert.equal(perr, '');
});
