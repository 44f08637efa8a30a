// Tests of the shipped browser client (client.js), run unmodified in a vm
// context with a fake DOM and a fake WebSocket wired to a JS fake worker.

import test from 'node:test';
import assert from 'node:assert/strict';
import { fakeBrowser, settle, PAGE_URL, APP_URL, CLIENT_URL } from './testdata/browser.mjs';
import { FakeWorker } from './testdata/frames.mjs';
import { AGENT_VERSION, DEFAULT_LIMITS } from './core.mjs';

/**
 * Waits (bounded: a hang detector, not a speed check) until the client's
 * load-time hold is over: the windows are known, held calls sent.
 * @param {any} b
 */
async function untilReleased(b) {
  for (let t = 0; t < 400 && b.win.__inspectorWorkerClient.stats().holding; t++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(b.win.__inspectorWorkerClient.stats().holding, false, 'the load-time hold ended');
  await sent(b);
}

/**
 * Waits (bounded: a hang detector) until the client's queue is empty and
 * every frame it sent was answered: what the page logged has reached the
 * worker. A page that keeps logging sends one frame per pace interval, so
 * a few setImmediate turns are not enough.
 * @param {any} b
 */
async function sent(b) {
  const idle = () => { const s = b.win.__inspectorWorkerClient.stats(); return s.queued === 0 && s.inFlight === 0; };
  for (let t = 0; t < 400 && !idle(); t++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(idle(), 'the client sent what the page logged');
  await settle();
}

/** @param {any} b */
function stopAll(b) {
  try { b.win.__inspectorWorkerClient.stop(); } catch (e) { /* already */ }
}

test('hello, welcome, initial replace with the page and its scripts', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  assert.equal(b.sockets.length, 1);
  assert.equal(b.socket.url, 'ws://127.0.0.1:9229/client');
  const [hello, replace] = b.worker.frames;
  const source = b.storage.get('inspector-worker:source');
  assert.match(source, /^client-[0-9a-f]{16}$/);
  assert.deepEqual(hello, {
    v: 1, type: 'hello', source, body: {
      role: 'client', token: 'secret-token', capabilities: ['console', 'scripts', 'runtime', 'dom'], topics: ['console', 'page', 'script', 'fetch'],
      agent: { name: 'inspector-worker-client', version: AGENT_VERSION }, page: { url: PAGE_URL, title: 'My app' },
      ackDelayMs: 500,
    },
  });
  assert.deepEqual(replace, {
    v: 1, type: 'replace', source, gen: 4, seq: 0, body: {
      reason: 'initial', items: [{ page: { url: PAGE_URL, title: 'My app' } }, { script: { url: APP_URL } }],
    },
  });
});

test('console calls: the original runs with the same result; appends carry the event with a page stack', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  const ret = b.run(`
    function login(user) {
      return console.log('user', user, 1.5, NaN, undefined, null, 10n);
    }
    login({ id: 7 });`);
  assert.equal(ret, 'ret:log');
  assert.equal(b.consoleCalls.length, 1);
  assert.equal(b.consoleCalls[0][0], 'log');
  assert.equal(b.consoleCalls[0][1][0], 'user');
  b.run(`console.warn('careful'); console.assert(1 === 2, 'math'); console.groupEnd();`);
  await untilReleased(b); // an object logged at load waits for the windows (no console.enable here)
  const items = b.worker.items();
  assert.equal(items.length, 4);
  const ev = items[0].console;
  assert.equal(ev.type, 'log');
  assert.deepEqual(ev.args, [
    { type: 'string', value: 'user' },
    { type: 'object', className: 'Object', description: 'Object', preview: { type: 'object', description: 'Object', overflow: false, properties: [{ name: 'id', type: 'number', value: '7' }] } },
    { type: 'number', value: 1.5, description: '1.5' },
    { type: 'number', unserializableValue: 'NaN', description: 'NaN' },
    { type: 'undefined' },
    { type: 'object', subtype: 'null' },
    { type: 'bigint', unserializableValue: '10n', description: '10n' },
  ]);
  assert.equal(ev.url, undefined, 'no url per item: the page items say it');
  assert.ok(ev.timestamp > 1.6e12);
  assert.deepEqual(ev.stackTrace.callFrames[0], { functionName: 'login', url: APP_URL, lineNumber: 2, columnNumber: 21 });
  assert.ok(ev.stackTrace.callFrames.every((/** @type {any} */ f) => f.url !== CLIENT_URL), 'no client frames');
  assert.deepEqual(items.slice(1).map((/** @type {any} */ it) => [it.console.type, it.console.args[0].value]), [
    ['warning', 'careful'], ['assert', 'math'], ['endGroup', 'console.groupEnd']]);
  const [a] = b.worker.of('append');
  assert.equal(a.seq, 1);
});

test('the page console works identically when the worker is down', async (t) => {
  const b = fakeBrowser({ refuse: true });
  t.after(() => stopAll(b));
  assert.equal(b.sockets.length, 0);
  assert.equal(b.run(`console.log('a')`), 'ret:log');
  assert.equal(b.run(`console.error(new Error('x'))`), 'ret:error');
  assert.equal(b.consoleCalls.length, 2);
  // A socket stuck in CONNECTING is never written (no InvalidStateError).
  b.env.refuse = false;
  b.env.autoOpen = false;
  await new Promise((r) => setTimeout(r, 300)); // first backoff ≤ 250 ms
  assert.equal(b.sockets.length, 1);
  assert.equal(b.socket.readyState, 0);
  assert.doesNotThrow(() => b.run(`for (let i = 0; i < 100; i++) console.info(i)`));
  await settle();
  assert.deepEqual(b.socket.sent, []);
  const st = b.win.__inspectorWorkerClient.stats();
  assert.equal(st.queued + st.held, 102, 'queued, or held behind the error object (load time)');
  // Once open, everything queued goes after the initial replace.
  b.socket.open();
  await untilReleased(b);
  const types = b.worker.frames.map((f) => f.type);
  assert.deepEqual(types.slice(0, 3), ['hello', 'replace', 'append']);
  assert.ok(types.slice(3).every((x) => x === 'append'), types.join(','));
  assert.equal(b.worker.items().length, 102);
});

test('a send that throws is swallowed', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  b.socket.send = () => { throw new Error('InvalidStateError'); };
  assert.equal(b.run(`console.log('still works')`), 'ret:log');
  await settle();
});

test('reconnect: backoff, a new hello (new generation), queued items after the new replace', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  const source = b.worker.frames[0].source;
  b.run(`console.log('gen 4')`);
  await settle();
  b.socket.drop();
  b.run(`console.log('while down 1'); console.log('while down 2')`);
  b.worker.gen = 9;
  const t0 = Date.now();
  while (b.sockets.length < 2 && Date.now() - t0 < 2000) await new Promise((r) => setTimeout(r, 20));
  assert.equal(b.sockets.length, 2);
  await settle();
  const f = b.worker.frames;
  assert.deepEqual(f.map((x) => x.type), ['hello', 'replace', 'append', 'hello', 'replace', 'append']);
  assert.equal(f[3].source, source, 'same source');
  assert.equal('gen' in f[3], false);
  assert.equal(f[4].gen, 9);
  assert.equal(f[4].body.reason, 'initial');
  assert.equal(f[5].seq, 1);
  assert.deepEqual(f[5].body.items.map((/** @type {any} */ it) => it.console.args[0].value), ['while down 1', 'while down 2']);
});

test('a reload keeps the source id (sessionStorage); a new tab gets another', async () => {
  const storage = new Map();
  const b1 = fakeBrowser({ storage });
  await settle();
  b1.dispatch('pagehide', { persisted: false });
  await settle();
  const closeFrame = b1.worker.frames.at(-1);
  assert.deepEqual(closeFrame.body, { code: 'going-away', reason: 'pagehide' });
  assert.equal(b1.socket.readyState, 3);
  stopAll(b1);
  const b2 = fakeBrowser({ storage });
  await settle();
  assert.equal(b2.worker.frames[0].source, b1.worker.frames[0].source);
  stopAll(b2);
  const b3 = fakeBrowser();
  await settle();
  assert.notEqual(b3.worker.frames[0].source, b1.worker.frames[0].source);
  stopAll(b3);
  const b4 = fakeBrowser({ attrs: { 'data-source': 'my-page' } });
  await settle();
  assert.equal(b4.worker.frames[0].source, 'my-page');
  stopAll(b4);
});

test('pagehide flushes and closes; pageshow from the bfcache reconnects', async (t) => {
  const worker = new FakeWorker({ autoAck: false });
  const b = fakeBrowser({ worker });
  t.after(() => stopAll(b));
  await settle();
  worker.ack(0);
  await settle();
  for (let i = 0; i < 20; i++) b.run(`console.log(${i})`);
  await settle();
  // 16 batches in flight at most; pagehide sends the rest regardless.
  b.run(`for (let i = 0; i < 10000; i++) console.log('burst', i)`);
  await settle();
  const before = worker.of('append').length;
  assert.ok(before <= 16);
  b.dispatch('pagehide', { persisted: true });
  await settle();
  assert.ok(worker.of('append').length > before);
  assert.equal(worker.frames.at(-1).type, 'close');
  assert.equal(b.sockets.length, 1);
  b.dispatch('pageshow', { persisted: true });
  await settle();
  assert.equal(b.sockets.length, 2);
  assert.equal(worker.frames.at(-2).type, 'hello');
});

test('snapshot-request → replace{reason:"requested"}', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  b.run(`console.log(1); console.log(2)`);
  await settle();
  b.worker.send('snapshot-request', { expected: 1, received: 3, missing: 2 });
  await settle();
  const r = b.worker.of('replace');
  assert.equal(r.length, 2);
  assert.equal(r[1].body.reason, 'requested');
  assert.equal(r[1].seq, 2);
  assert.deepEqual(r[1].body.items, [{ page: { url: PAGE_URL, title: 'My app' } }, { script: { url: APP_URL } }]);
});

test('close{replaced} from the worker: a new source id, then reconnect', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  const first = b.worker.frames[0].source;
  b.worker.send('close', { code: 'replaced' });
  const t0 = Date.now();
  while (b.sockets.length < 2 && Date.now() - t0 < 2000) await new Promise((r) => setTimeout(r, 20));
  await settle();
  const hellos = b.worker.of('hello');
  assert.equal(hellos.length, 2);
  assert.notEqual(hellos[1].source, first);
  assert.equal(b.storage.get('inspector-worker:source'), hellos[1].source);
});

test('uncaught errors and unhandled rejections become console errors with the exception stack', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  const err = b.run(`function fail() { return new Error('boom'); } fail()`);
  b.dispatch('error', { message: 'Uncaught Error: boom', error: err, filename: APP_URL, lineno: 1, colno: 1 });
  b.dispatch('error', { message: 'Script error.', error: null, filename: 'http://cdn/x.js', lineno: 3, colno: 4 });
  b.dispatch('unhandledrejection', { reason: 'nope' });
  b.dispatch('error', { type: 'error' }); // a resource error (no message)
  await untilReleased(b);
  const items = b.worker.items().map((/** @type {any} */ it) => it.console);
  assert.equal(items.length, 3);
  assert.equal(items[0].type, 'error');
  assert.deepEqual(items[0].args[0], { type: 'string', value: 'Uncaught' });
  assert.equal(items[0].args[1].subtype, 'error');
  assert.match(items[0].args[1].description, /^Error: boom/);
  assert.deepEqual(items[0].stackTrace.callFrames[0], { functionName: 'fail', url: APP_URL, lineNumber: 0, columnNumber: 25 });
  assert.deepEqual(items[1].args, [{ type: 'string', value: 'Script error.' }]);
  assert.deepEqual(items[1].stackTrace.callFrames, [{ functionName: '', url: 'http://cdn/x.js', lineNumber: 2, columnNumber: 3 }]);
  assert.deepEqual(items[2].args, [{ type: 'string', value: 'Uncaught (in promise)' }, { type: 'string', value: 'nope' }]);
});

test('history navigation becomes a page item', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  assert.equal(b.run(`history.pushState({}, '', '/next')`), 'pushed');
  b.run(`history.replaceState({}, '', '/next')`); // no change: no item
  await settle();
  assert.deepEqual(b.worker.items(), [{ page: { url: 'http://127.0.0.1:5173/next', title: 'My app' } }]);
});

test('script.read: meta, chunks, end; errors for cross-origin and missing scripts', async (t) => {
  const body = new Uint8Array(100000).map((_, i) => (i * 7) % 256);
  /** @type {string[]} */
  const fetched = [];
  const b = fakeBrowser({
    fetch: async (url) => {
      fetched.push(url);
      if (url.endsWith('/missing.js')) return new Response('nope', { status: 404 });
      return new Response(body, { headers: { 'content-type': 'text/javascript', sourcemap: 'app.js.map' } });
    },
  });
  t.after(() => stopAll(b));
  await settle();
  b.worker.send('script.read', { id: 3, url: APP_URL, content: true });
  b.worker.send('script.read', { id: 4, url: 'http://evil.example/x.js', content: true });
  b.worker.send('script.read', { id: 5, url: 'http://127.0.0.1:5173/missing.js' });
  b.worker.send('script.read', { id: 6, url: APP_URL });
  const of = (/** @type {number} */ id) => b.worker.frames.filter((f) => f.body.id === id);
  const t0 = Date.now();
  while (![3, 4, 5, 6].every((id) => of(id).some((f) => f.type === 'script.end')) && Date.now() - t0 < 5000) {
    await new Promise((r) => setTimeout(r, 10));
  }
  const r3 = of(3);
  assert.equal(r3[0].type, 'script.meta');
  assert.equal(r3[0].body.length, 100000);
  assert.equal(r3[0].body.contentType, 'text/javascript');
  assert.equal(r3[0].body.sourceMapURL, 'app.js.map');
  assert.match(r3[0].body.hash, /^[0-9a-f]{64}$/);
  const chunks = r3.filter((f) => f.type === 'script.chunk');
  assert.deepEqual(chunks.map((f) => f.body.offset), [0, 49152, 98304]);
  assert.ok(chunks.every((f) => Buffer.from(f.body.data, 'base64').length <= DEFAULT_LIMITS.maxChunkBytes));
  assert.deepEqual(new Uint8Array(Buffer.concat(chunks.map((f) => Buffer.from(f.body.data, 'base64')))), body);
  assert.deepEqual(r3.at(-1).body, { id: 3, length: 100000 });
  assert.deepEqual(of(4).map((f) => [f.type, f.body.error && f.body.error.code]), [['script.end', 'unsupported']]);
  assert.deepEqual(of(5).map((f) => [f.type, f.body.error && f.body.error.code]), [['script.end', 'no-such-script']]);
  assert.deepEqual(of(6).map((f) => f.type), ['script.meta', 'script.end']);
  assert.deepEqual(fetched.filter((u) => u.includes('evil')), [], 'no cross-origin fetch');
});

test('stop() restores the page console and closes', async () => {
  const b = fakeBrowser();
  await settle();
  const wrapped = b.win.console.log;
  b.win.__inspectorWorkerClient.stop();
  assert.notEqual(b.win.console.log, wrapped);
  assert.equal(b.run(`console.log('x')`), 'ret:log');
  assert.equal(b.worker.frames.at(-1).type, 'close');
  assert.equal(b.win.__inspectorWorkerClient, undefined);
});

test('no data-endpoint: the client does nothing', () => {
  const b = fakeBrowser({ attrs: { 'data-endpoint': '' } });
  assert.equal(b.sockets.length, 0);
  assert.equal(b.win.__inspectorWorkerClient, undefined);
  assert.equal(b.run(`console.log('x')`), 'ret:log');
});

test('runtime: evaluate in the page through the socket; console objects carry handles per enabled session', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await settle();
  const w = b.worker;
  w.send('runtime.command', { session: 's1', id: 1, method: 'evaluate', evaluate: { expression: 'document.title' } });
  await settle();
  const [r1] = w.of('runtime.result');
  assert.deepEqual(r1.body, { session: 's1', id: 1, method: 'evaluate', evaluate: { result: { type: 'string', value: 'My app' } } });

  // No session enabled console: one event, no handles, no session.
  await untilReleased(b);
  b.run(`console.log('plain', { a: 1 })`);
  await settle();
  let ev = w.items().at(-1).console;
  assert.equal(ev.session, undefined);
  assert.equal(ev.args[1].handle, undefined);

  w.send('console.enable', { session: 's1' });
  w.send('console.enable', { session: 's2' });
  await settle();
  const before = w.items().length;
  b.run(`globalThis.user = { id: 7 }; console.log('user', user); console.log('strings only', 1)`);
  await sent(b);
  const evs = w.items().slice(before).map((/** @type {any} */ it) => it.console);
  assert.deepEqual(evs.map((/** @type {any} */ e) => [e.session, e.args[0].value]), [['s1', 'user'], ['s2', 'user'], [undefined, 'strings only']]);
  const h1 = evs[0].args[1].handle, h2 = evs[1].args[1].handle;
  assert.match(h1, /^h:\d+$/);
  assert.notEqual(h1, h2);
  assert.deepEqual(evs[0].args[1].preview.properties, [{ name: 'id', type: 'number', value: '7' }]);
  assert.deepEqual(evs[0].stackTrace, evs[1].stackTrace, 'one stack for both sessions');

  // The console handle expands in its session, and is refused in the other.
  w.send('runtime.command', { session: 's1', id: 2, method: 'getProperties', getProperties: { handle: h1, ownProperties: true } });
  w.send('runtime.command', { session: 's2', id: 3, method: 'getProperties', getProperties: { handle: h1, ownProperties: true } });
  await settle();
  const [, r2, r3] = w.of('runtime.result');
  assert.deepEqual(r2.body.getProperties.result[0], { name: 'id', value: { type: 'number', value: 7, description: '7' }, writable: true, configurable: true, enumerable: true, isOwn: true });
  assert.equal(r3.body.error.code, 'no-such-handle');
  w.send('runtime.ack', { session: 's1', id: 2, method: 'getProperties', accepted: true });
  await settle();
  const stats = () => JSON.parse(JSON.stringify(b.win.__inspectorWorkerClient.stats().runtime));
  assert.deepEqual(stats().perSession, { s1: 2, s2: 1 }); // s1: the console arg and the prototype from getProperties

  // discard releases s1's console group only (with what getProperties made
  // from it: property values join their object's group, as in V8);
  // disable releases s2's.
  w.send('console.discard', { session: 's1' });
  await settle();
  assert.deepEqual(stats().perSession, { s2: 1 });
  w.send('console.disable', { session: 's2' });
  await settle();
  assert.deepEqual(stats().perSession, {});
  b.run(`console.log(user)`);
  await sent(b);
  ev = w.items().at(-1).console;
  assert.equal(ev.session, 's1', 'only s1 still enabled');

  // A new generation drops every handle.
  b.socket.drop();
  assert.equal(stats().handles, 0);
});

test('load time: objects logged before the windows are known get each window\'s handles, in order, previewed at the call', async (t) => {
  const b = fakeBrowser({ autoOpen: false });
  t.after(() => stopAll(b));
  // The page's own scripts log before the connection is open.
  b.run(`globalThis.cart = { n: 1 }; console.log('first'); console.log('cart', cart); cart.n = 2; console.log('after')`);
  assert.equal(b.win.__inspectorWorkerClient.stats().held, 2, 'held from the first object call on');
  b.socket.open();
  await settle();
  assert.deepEqual(b.worker.items().map((/** @type {any} */ it) => it.console && it.console.args[0].value), ['first']);
  // Two windows were open before the page loaded.
  b.worker.send('console.enable', { session: 's1' });
  b.worker.send('console.enable', { session: 's2' });
  await untilReleased(b);
  const evs = b.worker.items().map((/** @type {any} */ it) => it.console);
  assert.deepEqual(evs.map((/** @type {any} */ e) => [e.session, e.args[0].value]), [[undefined, 'first'], ['s1', 'cart'], ['s2', 'cart'], [undefined, 'after']]);
  assert.match(evs[1].args[1].handle, /^h:\d+$/);
  assert.notEqual(evs[1].args[1].handle, evs[2].args[1].handle);
  assert.deepEqual(evs[1].args[1].preview.properties, [{ name: 'n', type: 'number', value: '1' }], 'the values at the call');
  assert.ok(evs[1].timestamp <= evs[3].timestamp);
  // The handle expands in its window.
  b.worker.send('runtime.command', { session: 's1', id: 1, method: 'getProperties', getProperties: { handle: evs[1].args[1].handle, ownProperties: true } });
  await settle();
  const [r] = b.worker.of('runtime.result');
  assert.deepEqual(r.body.getProperties.result[0].value, { type: 'number', value: 2, description: '2' }, 'live now');
});

test('load time: with no window, held objects go out without handles once the replace is acked', async (t) => {
  const b = fakeBrowser({ autoOpen: false });
  t.after(() => stopAll(b));
  b.run(`console.log('obj', { a: 1 }); console.log('s')`);
  b.socket.open();
  await untilReleased(b);
  const evs = b.worker.items().map((/** @type {any} */ it) => it.console);
  assert.deepEqual(evs.map((/** @type {any} */ e) => [e.session, e.args[0].value, e.args[1] && e.args[1].handle]), [[undefined, 'obj', undefined], [undefined, 's', undefined]]);
});

test('a page that keeps logging sends one frame per pace interval, everything in order', async (t) => {
  const b = fakeBrowser();
  t.after(() => stopAll(b));
  await untilReleased(b);
  const before = b.worker.of('append').length;
  const n0 = b.worker.items().length;
  const t0 = performance.now();
  for (let i = 0; i < 20; i++) { // 20 tasks, one call each: a page's timer
    b.run(`console.log('tick', ${i})`);
    await new Promise((r) => setImmediate(r));
  }
  // The bucket's bound, whatever the machine's speed: 4 at once, then one
  // per 100 ms of the loop (each frame sent during the loop).
  const bound = 4 + Math.ceil((performance.now() - t0) / 100) + 1;
  await sent(b);
  const got = b.worker.items().slice(n0).map((/** @type {any} */ it) => it.console.args[1].value);
  assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => i), 'every call, in order');
  const frames = b.worker.of('append').length - before;
  assert.ok(frames <= Math.min(bound, 19), `20 tasks in ${frames} frames (bound ${bound}): paced, not one frame per task`);
});
