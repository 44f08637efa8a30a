// Tests of the protocol core (core.mjs), with a fake worker in JS.
// Run: node --test client/js/

import test from 'node:test';
import assert from 'node:assert/strict';
import {
  Producer, measureJSON, capString, utf8Length, remoteObject, parseStack, captureStack, stackHolder, stackOfHolder, wrapConsole,
  consoleItemJSON, scriptReadFrames, toIdentifier, isIdentifier, DEFAULT_LIMITS, MAX_FRAME_OBJECTS,
  AGENT_VERSION, attachLineStream, PACE_BYTES, LONG_TASK_MS,
} from './core.mjs';
import { FakeWorker, parseFrame } from './testdata/frames.mjs';
import { PassThrough, Duplex } from 'node:stream';

const tick = () => new Promise((r) => setImmediate(r));

/**
 * A producer wired to a FakeWorker; the worker answers asynchronously.
 * @param {Partial<import('./core.mjs').ProducerOptions>} [opts]
 * @param {ConstructorParameters<typeof FakeWorker>[0]} [wopts]
 */
function setup(opts = {}, wopts = {}) {
  const w = new FakeWorker(wopts);
  const p = new Producer({
    role: 'client', source: 'client-7f3a', token: 'tok', capabilities: ['console', 'scripts'],
    topics: ['console', 'page', 'script'], agent: { name: 'test', version: '1' },
    page: () => ({ url: 'http://127.0.0.1:5173/', title: 'My app' }),
    snapshot: () => [{ page: { url: 'http://127.0.0.1:5173/', title: 'My app' } }, { script: { url: 'http://127.0.0.1:5173/app.js' } }],
    maxInFlight: 16,
    ...opts,
  });
  w.reply = (t) => queueMicrotask(() => p.receive(t));
  const connect = () => p.connect((t) => { w.take(t); return true; });
  return { w, p, connect };
}

const log = (/** @type {string} */ s) => ({ type: 'log', args: [{ type: 'string', value: s }], timestamp: 1 });

test('hello, welcome, initial replace: exact shapes', async () => {
  const { w, p, connect } = setup();
  connect();
  assert.deepEqual(w.frames[0], {
    v: 1, type: 'hello', source: 'client-7f3a', body: {
      role: 'client', token: 'tok', capabilities: ['console', 'scripts'], topics: ['console', 'page', 'script'],
      agent: { name: 'test', version: '1' }, page: { url: 'http://127.0.0.1:5173/', title: 'My app' },
    },
  });
  assert.equal(p.state, 'hello');
  await tick();
  assert.equal(p.state, 'open');
  assert.equal(p.gen, 4);
  assert.deepEqual(w.frames[1], {
    v: 1, type: 'replace', source: 'client-7f3a', gen: 4, seq: 0, body: {
      reason: 'initial', items: [{ page: { url: 'http://127.0.0.1:5173/', title: 'My app' } }, { script: { url: 'http://127.0.0.1:5173/app.js' } }],
    },
  });
});

test('the host hello has no token and no page', () => {
  const { w, connect } = setup({ role: 'host', source: 'host', token: undefined, capabilities: [], topics: ['app', 'fetch'], page: undefined });
  connect();
  assert.deepEqual(w.frames[0].body, { role: 'host', capabilities: [], topics: ['app', 'fetch'], agent: { name: 'test', version: '1' } });
});

test('appends: sequence numbers count items, batches ≤ maxBatchItems', async () => {
  const { w, p, connect } = setup();
  for (let i = 0; i < 3; i++) p.enqueue('console', log('a' + i));
  connect();
  await tick();
  const a = w.of('append');
  assert.equal(a.length, 1);
  assert.deepEqual(a[0], { v: 1, type: 'append', source: 'client-7f3a', gen: 4, seq: 1, body: { items: [0, 1, 2].map((i) => ({ console: log('a' + i) })) } });
  for (let i = 0; i < 1200; i++) p.enqueue('console', log('b' + i));
  for (let i = 0; i < 10; i++) await tick();
  const b = w.of('append').slice(1);
  assert.deepEqual(b.map((f) => [f.seq, f.body.items.length]), [[4, 512], [516, 512], [1028, 176]]);
  assert.equal(w.gaps.length, 0);
  assert.deepEqual(p.stats(), { source: 'client-7f3a', gen: 4, state: 'open', queued: 0, dropped: 0, sent: 1203, acked: 1203, inFlight: 0 });
});

test('bounded queue: the oldest items are dropped and reported as dropped', async () => {
  const { w, p, connect } = setup({ maxQueueItems: 10 });
  for (let i = 0; i < 25; i++) assert.equal(p.enqueue('console', log(String(i))), true);
  assert.equal(p.stats().queued, 10);
  assert.equal(p.stats().dropped, 15);
  connect();
  await tick();
  const [a] = w.of('append');
  assert.equal(a.seq, 16);
  assert.equal(a.body.dropped, 15);
  assert.deepEqual(a.body.items.map((/** @type {any} */ it) => it.console.args[0].value), ['15', '16', '17', '18', '19', '20', '21', '22', '23', '24']);
  assert.deepEqual(w.gaps, [{ expected: 1, received: 16, count: 15, explained: 15 }]);
  // Later batches are contiguous and carry no dropped member.
  p.enqueue('console', log('x'));
  await tick();
  assert.equal(w.of('append')[1].seq, 26);
  assert.equal('dropped' in w.of('append')[1].body, false);
});

test('bounded queue by bytes', () => {
  const { p } = setup({ maxQueueBytes: 10000 });
  for (let i = 0; i < 20; i++) p.enqueue('console', log('x'.repeat(1000)));
  assert.ok(p.queueBytes <= 10000);
  assert.ok(p.stats().dropped >= 10);
});

test('host channel: exactly one sequenced frame in flight', async () => {
  const { w, p, connect } = setup({ maxInFlight: 1 }, { autoAck: false });
  for (let i = 0; i < 600; i++) p.enqueue('console', log(String(i)));
  connect();
  await tick();
  assert.deepEqual(w.frames.map((f) => f.type), ['hello', 'replace']);
  w.ack(0);
  await tick();
  assert.deepEqual(w.frames.map((f) => f.type), ['hello', 'replace', 'append']);
  p.enqueue('console', log('late'));
  await tick();
  assert.equal(w.of('append').length, 1, 'nothing before the ack');
  w.ack(512);
  await tick();
  assert.equal(w.of('append').length, 2);
  assert.equal(w.of('append')[1].seq, 513);
  assert.equal(w.of('append')[1].body.items.length, 89);
  // A reject releases the in-flight batch as well.
  p.enqueue('console', log('after reject'));
  await tick();
  assert.equal(w.of('append').length, 2);
  w.send('reject', { code: 'malformed', reason: 'x', refType: 'append', refSeq: 513 });
  await tick();
  assert.equal(w.of('append').length, 3);
  assert.equal(w.of('append')[2].seq, 602, 'a rejected batch still consumed its sequence numbers');
});

test('drops while a batch is in flight are reported in the next append', async () => {
  const { w, p, connect } = setup({ maxInFlight: 1, maxQueueItems: 5 }, { autoAck: false });
  connect();
  await tick();
  w.ack(0);
  p.enqueue('console', log('first'));
  await tick();
  assert.equal(w.of('append')[0].seq, 1);
  for (let i = 0; i < 20; i++) p.enqueue('console', log(String(i)));
  w.ack(1);
  await tick();
  const a = w.of('append')[1];
  assert.equal(a.seq, 17);
  assert.equal(a.body.dropped, 15);
  assert.equal(a.body.items.length, 5);
  assert.deepEqual(w.gaps, [{ expected: 2, received: 17, count: 15, explained: 15 }]);
});

test('snapshot-request is answered with replace{reason:"requested"} covering what was sent', async () => {
  const { w, p, connect } = setup();
  connect();
  await tick();
  for (let i = 0; i < 7; i++) p.enqueue('console', log(String(i)));
  await tick();
  w.send('snapshot-request', { expected: 2, received: 6, missing: 4 });
  await tick();
  const r = w.of('replace');
  assert.equal(r.length, 2);
  assert.equal(r[1].body.reason, 'requested');
  assert.equal(r[1].seq, 7);
  assert.deepEqual(r[1].body.items[0], { page: { url: 'http://127.0.0.1:5173/', title: 'My app' } });
  p.enqueue('console', log('next'));
  await tick();
  assert.equal(w.of('append').at(-1).seq, 8);
});

test('reconnect: a new hello, a new generation, a new initial replace; queued items follow it', async () => {
  const { w, p, connect } = setup({}, { autoAck: false });
  connect();
  await tick();
  w.ack(0);
  p.enqueue('console', log('gen4'));
  await tick();
  assert.equal(w.of('append').length, 1);
  p.disconnect();
  assert.equal(p.state, 'idle');
  p.enqueue('console', log('offline 1'));
  p.enqueue('console', log('offline 2'));
  await tick();
  assert.equal(w.of('append').length, 1, 'nothing is sent while disconnected');
  w.gen = 9;
  w.autoAck = true;
  connect();
  await tick();
  const types = w.frames.map((f) => f.type);
  assert.deepEqual(types, ['hello', 'replace', 'append', 'hello', 'replace', 'append']);
  assert.equal('gen' in w.frames[3], false);
  assert.equal(w.frames[4].gen, 9);
  assert.equal(w.frames[4].body.reason, 'initial');
  assert.equal(w.frames[4].seq, 0, 'sequence numbers restart with the generation');
  assert.equal(w.frames[5].seq, 1);
  assert.deepEqual(w.frames[5].body.items.map((/** @type {any} */ it) => it.console.args[0].value), ['offline 1', 'offline 2']);
});

test('batches respect maxFrameBytes and MaxFrameObjects', async () => {
  const { w, p, connect } = setup();
  connect();
  await tick();
  const big = 'x'.repeat(60000);
  for (let i = 0; i < 40; i++) p.enqueue('console', log(big));
  const many = { type: 'log', args: Array.from({ length: 60 }, () => ({ type: 'object', description: 'Object', preview: { type: 'object', overflow: false, properties: [] } })), timestamp: 1 };
  for (let i = 0; i < 300; i++) p.enqueue('console', many);
  for (let i = 0; i < 10; i++) await tick();
  const apps = w.of('append');
  assert.equal(apps.reduce((n, f) => n + f.body.items.length, 0), 340);
  assert.ok(apps.length >= 4);
  // parseFrame (in FakeWorker.take) checked every frame's size and object count.
  assert.ok(apps.some((f) => f.body.items.length < 40), 'byte limit split the large items');
});

test('items of topics the welcome did not grant are never sent nor sequenced', async () => {
  const { w, p, connect } = setup({}, { topics: ['console', 'page'] });
  connect();
  await tick();
  p.enqueue('script', { url: 'http://x/a.js' });
  p.enqueue('console', log('c'));
  await tick();
  assert.deepEqual(w.of('replace')[0].body.items, [{ page: { url: 'http://127.0.0.1:5173/', title: 'My app' } }]);
  assert.deepEqual(w.items(), [{ console: log('c') }]);
  assert.equal(w.of('append')[0].seq, 1);
});

test('an item that can never fit a frame is refused at enqueue', () => {
  const { p } = setup();
  assert.equal(p.enqueue('console', log('x'.repeat(70000))), false, 'a string over MaxStringBytes');
  assert.equal(p.enqueueJSON('console', '{"console":' + '['.repeat(70) + ']'.repeat(70) + '}'), false, 'too deep');
  assert.equal(p.stats().queued, 0);
  const cyclic = {}; cyclic.self = cyclic;
  assert.equal(p.enqueue('app', cyclic), false);
});

test('worker close, hello reject, console sessions, requests', async () => {
  /** @type {any[]} */
  const seen = [];
  const { w, p, connect } = setup({
    onClose: (code, reason) => seen.push(['close', code, reason]),
    onRequest: (type, body) => seen.push([type, body]),
    onOpen: (gen) => seen.push(['open', gen]),
  });
  connect();
  await tick();
  w.send('console.enable', { session: 's1' });
  w.send('script.read', { id: 1, url: 'http://x/a.js' });
  w.send('close', { code: 'shutdown' });
  await tick();
  // console.* frames update consoleSessions and then reach onRequest too (a realm keeps a console group per session).
  assert.deepEqual(seen, [['open', 4], ['console.enable', { session: 's1' }], ['script.read', { id: 1, url: 'http://x/a.js' }], ['close', 'shutdown', undefined]]);
  assert.deepEqual([...p.consoleSessions], ['s1']);
  assert.equal(p.state, 'closed');

  /** @type {string[]} */
  const refused = [];
  const q = new Producer({ role: 'client', source: 'c1', onRefused: (c) => refused.push(c) });
  q.connect(() => true);
  q.receive(JSON.stringify({ v: 1, type: 'reject', source: 'c1', body: { code: 'unauthorized', reason: 'x' } }));
  assert.deepEqual(refused, ['unauthorized']);
  assert.equal(q.lastRefusal, 'unauthorized');
  // Garbage and foreign frames are ignored, never thrown.
  q.receive('not json');
  q.receive('{"v":2,"type":"welcome"}');
  q.receive(JSON.stringify({ v: 1, type: 'welcome', source: 'other', gen: 3, body: {} }));
  assert.equal(q.state, 'hello');
});

test('welcome limits are adopted', async () => {
  const { p, connect } = setup();
  connect();
  p.receive(JSON.stringify({ v: 1, type: 'welcome', source: 'client-7f3a', gen: 2, body: { capabilities: [], topics: ['console'], limits: { maxFrameBytes: 4096, maxBatchItems: 2, maxStringBytes: 1000, maxChunkBytes: 700, maxValueBytes: 2000 } } }));
  assert.deepEqual(p.limits, { maxFrameBytes: 4096, maxBatchItems: 2, maxStringBytes: 1000, maxChunkBytes: 700, maxValueBytes: 2000 });
});

test('a rejected initial replace is retried once with the page only, then the generation is given up', async () => {
  /** @type {string[]} */
  const closes = [];
  const { w, connect } = setup({ onClose: (c) => closes.push(c) }, { autoAck: false });
  connect();
  await tick();
  w.send('reject', { code: 'oversized', reason: 'x', limit: 'MaxFrameBytes', max: 1048576 });
  await tick();
  const r = w.of('replace');
  assert.equal(r.length, 2);
  assert.equal(r[1].body.reason, 'initial');
  assert.deepEqual(r[1].body.items, [{ page: { url: 'http://127.0.0.1:5173/', title: 'My app' } }]);
  w.send('reject', { code: 'malformed', reason: 'x', refType: 'replace' });
  await tick();
  assert.deepEqual(w.frames.at(-1).body, { code: 'normal', reason: 'replace refused' });
  assert.deepEqual(closes, ['normal']);
});

test('line stream carrier: newline framing, long lines skipped, death disconnects', async () => {
  const toWorker = new PassThrough();
  const toProducer = new PassThrough();
  const stream = Duplex.from({ readable: toProducer, writable: toWorker });
  const p = new Producer({ role: 'host', source: 'host', topics: ['app'], maxInFlight: 1 });
  let died = 0;
  attachLineStream(p, stream, () => died++);
  /** @type {string} */
  let out = '';
  toWorker.on('data', (c) => { out += c; });
  await tick();
  assert.ok(out.endsWith('\n'));
  assert.equal(parseFrame(out.trim()).type, 'hello');
  // A welcome split across chunks, preceded by an over-long line.
  toProducer.write('x'.repeat(DEFAULT_LIMITS.maxFrameBytes + 10));
  toProducer.write('still the long line\n{"v":1,"type":"wel');
  toProducer.write('come","source":"host","gen":3,"body":{}}\n');
  await tick();
  assert.equal(p.state, 'open');
  assert.equal(p.gen, 3);
  const lines = out.trim().split('\n');
  assert.equal(lines.length, 2);
  assert.equal(parseFrame(lines[1]).type, 'replace');
  toProducer.end();
  await tick();
  assert.equal(died, 1);
  assert.equal(p.state, 'idle');
});

// ---------------------------------------------------------------------------
// Measurement and strings

test('measureJSON counts UTF-8 bytes, objects outside strings, depth, escaped string bytes', () => {
  const v = { a: [{ b: 'x{y}' }, { c: 'é€😀' }], d: '\n\u0001"' };
  const s = JSON.stringify(v);
  const m = measureJSON(s);
  assert.equal(m.bytes, Buffer.byteLength(s));
  assert.equal(m.objects, 3);
  assert.equal(m.depth, 3);
  assert.equal(m.maxString, Buffer.byteLength('\\n\\u0001\\"'));
  assert.equal(utf8Length(s), Buffer.byteLength(s));
});

test('capString keeps the escaped form within the bound and never splits a pair', () => {
  const samples = ['plain ascii '.repeat(50), 'é€😀'.repeat(100), '\u0001"\\\n'.repeat(100), '\ud800x'.repeat(100), '😀'.repeat(1000)];
  for (const s of samples) {
    for (const max of [10, 100, 1000, 5000]) {
      const c = capString(s, max);
      const bytes = Buffer.byteLength(JSON.stringify(c)) - 2;
      assert.ok(bytes <= max, `${bytes} > ${max}`);
      if (Buffer.byteLength(JSON.stringify(s)) - 2 <= max) assert.equal(c, s);
      else assert.ok(c.endsWith('…') && s.startsWith(c.slice(0, -1)));
      const k = c.length - 1;
      if (c !== s && k > 0) {
        const hi = s.charCodeAt(k - 1), lo = s.charCodeAt(k);
        assert.ok(!(hi >= 0xd800 && hi <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff), 'no split pair');
      }
    }
  }
});

test('identifiers', () => {
  assert.equal(isIdentifier('client-7f3a'), true);
  assert.equal(isIdentifier('a b'), false);
  assert.equal(isIdentifier('x'.repeat(129)), false);
  assert.equal(toIdentifier('user login!', 'app'), 'user_login_');
  assert.equal(toIdentifier('', 'app'), 'app');
  assert.equal(toIdentifier('y'.repeat(300), 'app').length, 128);
});

// ---------------------------------------------------------------------------
// Values

test('remoteObject: every primitive kind', () => {
  assert.deepEqual(remoteObject(undefined), { type: 'undefined' });
  assert.deepEqual(remoteObject(null), { type: 'object', subtype: 'null' });
  assert.deepEqual(remoteObject(true), { type: 'boolean', value: true });
  assert.deepEqual(remoteObject(false), { type: 'boolean', value: false });
  assert.deepEqual(remoteObject(7), { type: 'number', value: 7, description: '7' });
  assert.deepEqual(remoteObject(1.5), { type: 'number', value: 1.5, description: '1.5' });
  assert.deepEqual(remoteObject(0), { type: 'number', value: 0, description: '0' });
  assert.deepEqual(remoteObject(-0), { type: 'number', unserializableValue: '-0', description: '-0' });
  assert.deepEqual(remoteObject(NaN), { type: 'number', unserializableValue: 'NaN', description: 'NaN' });
  assert.deepEqual(remoteObject(Infinity), { type: 'number', unserializableValue: 'Infinity', description: 'Infinity' });
  assert.deepEqual(remoteObject(-Infinity), { type: 'number', unserializableValue: '-Infinity', description: '-Infinity' });
  assert.deepEqual(remoteObject(12n), { type: 'bigint', unserializableValue: '12n', description: '12n' });
  assert.deepEqual(remoteObject(-3n), { type: 'bigint', unserializableValue: '-3n', description: '-3n' });
  assert.deepEqual(remoteObject('hi'), { type: 'string', value: 'hi' });
  assert.deepEqual(remoteObject(Symbol('s')), { type: 'symbol', description: 'Symbol(s)' });
  const f = remoteObject(function login(a) { return a; });
  assert.equal(f.type, 'function');
  assert.equal(f.className, 'Function');
  assert.match(f.description, /^function login\(a\)/);
  assert.equal(remoteObject(async () => 1).className, 'AsyncFunction');
  // JSON round trip keeps them (no undefined members, no raw NaN).
  for (const v of [undefined, null, NaN, -0, 1n, 'x', Symbol('q')]) assert.deepEqual(JSON.parse(JSON.stringify(remoteObject(v))), remoteObject(v));
});

test('remoteObject: long strings are capped to the limit', () => {
  const r = remoteObject('é'.repeat(100000));
  assert.ok(Buffer.byteLength(JSON.stringify(r.value)) - 2 <= DEFAULT_LIMITS.maxStringBytes);
  assert.ok(r.value.endsWith('…'));
  assert.equal(remoteObject('x'.repeat(5000), { stringBytes: 100 }).value.length, 98);
});

test('remoteObject: objects get type/subtype/className/description and a bounded preview', () => {
  assert.deepEqual(remoteObject({ id: 7, name: 'ann', ok: true, n: null, o: { x: 1 }, f() {}, six: 6 }), {
    type: 'object', className: 'Object', description: 'Object',
    preview: { type: 'object', description: 'Object', overflow: true, properties: [
      { name: 'id', type: 'number', value: '7' }, { name: 'name', type: 'string', value: 'ann' },
      { name: 'ok', type: 'boolean', value: 'true' }, { name: 'n', type: 'object', value: 'null', subtype: 'null' },
      { name: 'o', type: 'object', value: 'Object' },
    ] },
  });
  assert.deepEqual(remoteObject([1, 'a']), {
    type: 'object', subtype: 'array', className: 'Array', description: 'Array(2)',
    preview: { type: 'object', subtype: 'array', description: 'Array(2)', overflow: false, properties: [
      { name: '0', type: 'number', value: '1' }, { name: '1', type: 'string', value: 'a' }] },
  });
  const big = remoteObject(new Array(1000).fill(0));
  assert.equal(big.preview.properties.length, 100);
  assert.equal(big.preview.overflow, true);
  const m = remoteObject(new Map([['k', 1]]));
  assert.equal(m.subtype, 'map');
  assert.equal(m.description, 'Map(1)');
  assert.deepEqual(m.preview.entries, [{ key: { type: 'string', description: 'k', overflow: false, properties: [] }, value: { type: 'number', description: '1', overflow: false, properties: [] } }]);
  const s = remoteObject(new Set([1, 2, 3, 4, 5, 6]));
  assert.equal(s.subtype, 'set');
  assert.equal(s.preview.entries.length, 5);
  assert.equal(s.preview.overflow, true);
  const d = new Date(0);
  assert.deepEqual(remoteObject(d), { type: 'object', subtype: 'date', className: 'Date', description: d.toString(), preview: { type: 'object', subtype: 'date', description: d.toString().slice(0, 99) + (d.toString().length > 100 ? '…' : d.toString().slice(99)), overflow: false, properties: [] } });
  assert.equal(remoteObject(/a+/g).description, '/a+/g');
  assert.equal(remoteObject(/a+/g).subtype, 'regexp');
  const e = new TypeError('boom');
  const re = remoteObject(e);
  assert.equal(re.subtype, 'error');
  assert.equal(re.className, 'TypeError');
  assert.equal(re.description, e.stack);
  assert.equal(remoteObject(new Uint8Array(3)).description, 'Uint8Array(3)');
  assert.equal(remoteObject(new Uint8Array(3)).subtype, 'typedarray');
  assert.equal(remoteObject(new ArrayBuffer(8)).subtype, 'arraybuffer');
  assert.equal(remoteObject(new DataView(new ArrayBuffer(8))).subtype, 'dataview');
  assert.equal(remoteObject(Promise.resolve(1)).subtype, 'promise');
  assert.equal(remoteObject(new WeakMap()).subtype, 'weakmap');
  assert.equal(remoteObject(new WeakSet()).subtype, 'weakset');
  assert.equal(remoteObject([1].values()).subtype, 'iterator');
  assert.equal(remoteObject((function* g() {})()).subtype, 'generator');
  class User { constructor() { this.id = 1; } }
  assert.equal(remoteObject(new User()).className, 'User');
  assert.equal(remoteObject(Object.create(null)).className, 'Object');
});

test('remoteObject never runs getters and never throws', () => {
  let calls = 0;
  const o = { get secret() { calls++; throw new Error('getter ran'); }, plain: 1 };
  const r = remoteObject(o);
  assert.equal(calls, 0);
  assert.deepEqual(r.preview.properties, [{ name: 'secret', type: 'accessor' }, { name: 'plain', type: 'number', value: '1' }]);
  const hostile = new Proxy({}, {
    getPrototypeOf() { throw new Error('trap'); }, ownKeys() { throw new Error('trap'); },
    getOwnPropertyDescriptor() { throw new Error('trap'); }, get() { throw new Error('trap'); },
  });
  const h = remoteObject(hostile);
  assert.equal(h.type, 'object');
  assert.doesNotThrow(() => JSON.stringify(h));
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  assert.equal(remoteObject(revoked.proxy).type, 'object');
});

// ---------------------------------------------------------------------------
// Stacks

test('parseStack: V8 and Firefox formats, 0-based', () => {
  const v8 = `Error: x
    at login (http://127.0.0.1:5173/app.js:42:9)
    at async Promise.all (index 0)
    at new Foo (http://127.0.0.1:5173/app.js:10:3)
    at http://127.0.0.1:5173/app.js:1:1
    at <anonymous> (http://h/a.js:2:2)
    at eval (eval at run (http://h/a.js:5:5), <anonymous>:1:1)`;
  assert.deepEqual(parseStack(v8), [
    { functionName: 'login', url: 'http://127.0.0.1:5173/app.js', lineNumber: 41, columnNumber: 8 },
    { functionName: 'Foo', url: 'http://127.0.0.1:5173/app.js', lineNumber: 9, columnNumber: 2 },
    { functionName: '', url: 'http://127.0.0.1:5173/app.js', lineNumber: 0, columnNumber: 0 },
    { functionName: '', url: 'http://h/a.js', lineNumber: 1, columnNumber: 1 },
    { functionName: 'eval', url: '', lineNumber: 0, columnNumber: 0 },
  ]);
  assert.deepEqual(parseStack('login@http://h/app.js:42:9\n@http://h/app.js:1:1\n'), [
    { functionName: 'login', url: 'http://h/app.js', lineNumber: 41, columnNumber: 8 },
    { functionName: '', url: 'http://h/app.js', lineNumber: 0, columnNumber: 0 },
  ]);
  assert.deepEqual(parseStack(undefined), []);
  const deep = 'Error\n' + Array.from({ length: 100 }, (_, i) => `    at f${i} (http://h/a.js:${i + 1}:1)`).join('\n');
  assert.equal(parseStack(deep).length, 64);
});

test('captureStack drops the producer\'s own leading frames', () => {
  const here = new URL(import.meta.url).href;
  function userCode() { return captureStack((f) => f.url.endsWith('/core.mjs')); }
  const st = userCode();
  assert.ok(st);
  assert.equal(st.callFrames[0].functionName, 'userCode');
  assert.equal(st.callFrames[0].url, here);
  const old = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try { assert.equal(captureStack(() => false), undefined); } finally { Error.stackTraceLimit = old; }
  assert.equal(Error.stackTraceLimit, old);
});

test('stackOfHolder parses each call site once, also sites taken in turns', () => {
  const own = (/** @type {{url: string}} */ f) => f.url.endsWith('/core.mjs');
  function siteA() { return stackHolder(); }
  function siteB() { return stackHolder(); }
  /** @type {any[]} */
  const got = [];
  for (let i = 0; i < 2; i++) got.push(stackOfHolder(/** @type {any} */ (siteA()), own), stackOfHolder(/** @type {any} */ (siteB()), own));
  const [a1, b1, a2, b2] = got;
  assert.equal(a1 && a1.callFrames[0].functionName, 'siteA');
  assert.equal(b1 && b1.callFrames[0].functionName, 'siteB');
  // The same frames, not parsed again (the one-entry cache before parsed every call here).
  assert.equal(a2 && a2.callFrames, a1 && a1.callFrames);
  assert.equal(b2 && b2.callFrames, b1 && b1.callFrames);
  // More sites than the cache keeps: still the right frames.
  /** @type {Array<() => any>} */
  const sites = [];
  for (let i = 0; i < 300; i++) sites.push(new Function('sh', 'return function site' + i + '() { return sh(); }')(stackHolder));
  for (const f of sites.concat(sites)) {
    const st = stackOfHolder(f(), own);
    assert.equal(st && st.callFrames[0].functionName, f.name);
  }
});

// ---------------------------------------------------------------------------
// Console

function fakeConsole() {
  /** @type {any[]} */
  const calls = [];
  /** @type {any} */
  const con = {};
  for (const m of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'dirxml', 'table', 'clear', 'assert',
    'group', 'groupCollapsed', 'groupEnd', 'count', 'countReset', 'time', 'timeLog', 'timeEnd']) {
    con[m] = function (...args) { calls.push([m, this, args]); return m === 'log' ? 42 : undefined; };
  }
  con.boom = 0;
  return { con, calls };
}

test('console wrapper: takes the call\'s stack itself, from the page\'s caller down', () => {
  const { con } = fakeConsole();
  const own = (/** @type {{url: string}} */ f) => f.url.endsWith('/core.mjs');
  /** @type {any[]} */
  const holders = [];
  wrapConsole(con, (_type, _args, _wrapper, holder) => { holders.push(holder); });
  const old = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit'));
  try {
    function pageCaller() { con.log('x'); }
    function outer() { pageCaller(); }
    Error.stackTraceLimit = 1;
    outer();
    const st = stackOfHolder(holders[0], own);
    assert.deepEqual(st && st.callFrames.map((f) => f.functionName), ['pageCaller'], 'the page\'s frames only, as many as its limit');
    assert.equal(Error.stackTraceLimit, 1, 'the page\'s limit restored');
    Error.stackTraceLimit = 10;
    outer();
    const st2 = stackOfHolder(holders[1], own);
    assert.deepEqual(st2 && st2.callFrames.slice(0, 2).map((f) => f.functionName), ['pageCaller', 'outer']);
    con.time('t');
    con.assert(true, 'passes');
    assert.equal(holders.length, 2, 'no event, no stack');
    Error.stackTraceLimit = 0;
    con.log('no stack');
    assert.equal(holders[2], undefined);
    // A page that fixed its limit: the event still comes, without our stack.
    Error.stackTraceLimit = 3;
    Object.defineProperty(Error, 'stackTraceLimit', { value: 3, writable: false, configurable: true });
    con.log('fixed');
    assert.equal(holders.length, 4);
    assert.equal(holders[3], undefined);
  } finally {
    Object.defineProperty(Error, 'stackTraceLimit', old);
  }
});

test('console wrapper: original first, same this/args/return; ours only after', () => {
  const { con, calls } = fakeConsole();
  const origLog = con.log;
  /** @type {any[]} */
  const events = [];
  const unwrap = wrapConsole(con, (type, args) => { events.push([type, args, calls.length]); });
  assert.notEqual(con.log, origLog);
  assert.equal(con.log.name, origLog.name);
  const self = { tag: 'self' };
  assert.equal(con.log.call(self, 'a', 1), 42);
  assert.deepEqual(calls[0], ['log', self, ['a', 1]]);
  assert.deepEqual(events[0], ['log', ['a', 1], 1], 'emitted after the original ran');
  const detached = con.info;
  assert.equal(detached('x'), undefined);
  con.warn('w');
  con.error('e');
  con.debug('d');
  con.trace();
  con.group();
  con.groupCollapsed('g');
  con.groupEnd();
  con.dir({});
  con.table([1]);
  con.clear();
  assert.deepEqual(events.slice(1).map((e) => [e[0], e[1].length && typeof e[1][0] === 'string' ? e[1][0] : e[1].length]), [
    ['info', 'x'], ['warning', 'w'], ['error', 'e'], ['debug', 'd'], ['trace', 'console.trace'], ['startGroup', 'console.group'],
    ['startGroupCollapsed', 'g'], ['endGroup', 'console.groupEnd'], ['dir', 1], ['table', 1], ['clear', 'console.clear'],
  ]);
  unwrap();
  assert.equal(con.log, origLog);
});

test('console wrapper: assert, count, time', () => {
  const { con } = fakeConsole();
  /** @type {any[]} */
  const events = [];
  let t = 1000;
  wrapConsole(con, (type, args) => events.push([type, args]), { now: () => t });
  con.assert(true, 'no');
  con.assert(false, 'yes', 2);
  con.assert(0);
  con.count();
  con.count('a');
  con.count();
  con.countReset();
  con.count();
  con.time('t');
  t += 12.5;
  con.timeLog('t', 'extra');
  con.timeEnd('t');
  con.timeEnd('t');
  assert.deepEqual(events, [
    ['assert', ['yes', 2]], ['assert', ['console.assert']],
    ['count', ['default: 1']], ['count', ['a: 1']], ['count', ['default: 2']], ['count', ['default: 1']],
    ['log', ['t: 12.5 ms', 'extra']], ['timeEnd', ['t: 12.5 ms']], ['warning', ["Timer 't' does not exist"]],
  ]);
});

test('console wrapper: a throwing emit is swallowed; a throwing original propagates unchanged', () => {
  const { con, calls } = fakeConsole();
  wrapConsole(con, () => { throw new Error('producer bug'); });
  assert.equal(con.log('still fine'), 42);
  assert.equal(calls.length, 1);
  const err = new Error('original threw');
  const c2 = { log() { throw err; } };
  let emitted = 0;
  wrapConsole(c2, () => { emitted++; });
  assert.throws(() => c2.log('x'), (e) => e === err);
  assert.equal(emitted, 0);
});

test('console wrapper: re-entrant calls reach the original but are not emitted', () => {
  const { con, calls } = fakeConsole();
  /** @type {any[]} */
  const events = [];
  wrapConsole(con, (type, args) => { events.push(type); con.info('from inside emit'); });
  con.log('outer');
  assert.deepEqual(calls.map((c) => c[0]), ['log', 'info']);
  assert.deepEqual(events, ['log']);
});

test('consoleItemJSON: shape, 64-argument cap, fits a frame whatever the arguments', () => {
  const j = consoleItemJSON('log', ['user', { id: 7 }], { timestamp: 1700000000000.5, url: 'http://h/', stackTrace: { callFrames: [{ functionName: 'f', url: 'http://h/a.js', lineNumber: 1, columnNumber: 2 }] } });
  assert.deepEqual(JSON.parse(j), { console: { type: 'log', args: [{ type: 'string', value: 'user' }, remoteObject({ id: 7 })],
    timestamp: 1700000000000.5, stackTrace: { callFrames: [{ functionName: 'f', url: 'http://h/a.js', lineNumber: 1, columnNumber: 2 }] }, url: 'http://h/' } });
  const many = JSON.parse(consoleItemJSON('log', Array.from({ length: 100 }, (_, i) => i)));
  assert.equal(many.console.args.length, 64);
  const huge = consoleItemJSON('log', Array.from({ length: 64 }, () => 'é'.repeat(70000)));
  const m = measureJSON(huge);
  assert.ok(m.bytes < DEFAULT_LIMITS.maxFrameBytes - 200, 'fits a frame');
  assert.ok(m.maxString <= DEFAULT_LIMITS.maxStringBytes);
  const wide = consoleItemJSON('log', Array.from({ length: 64 }, () => Object.fromEntries(Array.from({ length: 50 }, (_, i) => ['k'.repeat(200) + i, 'v'.repeat(300)]))));
  assert.ok(measureJSON(wide).objects < MAX_FRAME_OBJECTS);
  assert.ok(measureJSON(wide).bytes < DEFAULT_LIMITS.maxFrameBytes);
});

// ---------------------------------------------------------------------------
// Script reads

test('scriptReadFrames: meta, base64 chunks ≤ maxChunkBytes in order, end', () => {
  const bytes = new Uint8Array(120000).map((_, i) => i % 251);
  const frames = scriptReadFrames(5, 'http://h/a.js', bytes, { content: true, contentType: 'text/javascript', sourceMapURL: 'a.js.map', hash: 'ab' });
  assert.deepEqual(frames[0], ['script.meta', { id: 5, url: 'http://h/a.js', length: 120000, sourceMapURL: 'a.js.map', hash: 'ab', contentType: 'text/javascript' }]);
  const chunks = frames.filter((f) => f[0] === 'script.chunk').map((f) => f[1]);
  assert.deepEqual(chunks.map((c) => c.offset), [0, 49152, 98304]);
  const back = Buffer.concat(chunks.map((c) => Buffer.from(c.data, 'base64')));
  assert.ok(chunks.every((c) => Buffer.from(c.data, 'base64').length <= DEFAULT_LIMITS.maxChunkBytes && c.data.length <= DEFAULT_LIMITS.maxStringBytes));
  assert.deepEqual(new Uint8Array(back), bytes);
  assert.deepEqual(frames.at(-1), ['script.end', { id: 5, length: 120000 }]);
  assert.deepEqual(scriptReadFrames(6, 'u', bytes).map((f) => f[0]), ['script.meta', 'script.end']);
  assert.deepEqual(scriptReadFrames(7, 'u', new Uint8Array(17 << 20)), [['script.end', { id: 7, length: 0, error: { code: 'too-large', message: 'script over MaxScriptBytes' } }]]);
});

test('agent version is a string', () => {
  assert.equal(typeof AGENT_VERSION, 'string');
});

test('appItemJSON: identifier names, JSON-safe data, oversized data replaced', async () => {
  const { appItemJSON } = await import('./core.mjs');
  const a = JSON.parse(appItemJSON('user login', { id: 1 }));
  assert.equal(a.app.name, 'user_login');
  assert.deepEqual(a.app.data, { id: 1 });
  assert.ok(a.app.timestamp > 1.6e12);
  assert.equal('data' in JSON.parse(appItemJSON('x')).app, false);
  assert.equal('data' in JSON.parse(appItemJSON('x', () => 1)).app, false);
  assert.equal(JSON.parse(appItemJSON('x', 5n)).app.data, '5');
  const cyc = { n: 1 }; cyc.me = cyc;
  assert.deepEqual(JSON.parse(appItemJSON('x', cyc)).app.data, { n: 1, me: '[Circular]' });
  assert.deepEqual(JSON.parse(appItemJSON('x', 'y'.repeat(300000))).app.data, { truncated: true, bytes: 300002 });
  let deep = {}; for (let i = 0; i < 70; i++) deep = { deep };
  assert.equal(JSON.parse(appItemJSON('x', deep)).app.data.truncated, true);
});

test('enqueueLater: the item is built when sent, in order with the others; one that does not fit is refused then', async () => {
  const { w, p, connect } = setup();
  let built = 0;
  p.enqueueJSON('console', JSON.stringify({ console: log('first') }));
  p.enqueueLater('console', () => { built++; return JSON.stringify({ console: log('later') }); }, 100);
  p.enqueueLater('console', () => JSON.stringify({ console: log('x'.repeat(DEFAULT_LIMITS.maxStringBytes + 10)) }), 100);
  p.enqueueJSON('console', JSON.stringify({ console: log('last') }), () => ',"url":"http://tail/"');
  assert.equal(built, 0, 'nothing built while queued');
  connect();
  await tick(); await tick();
  assert.equal(built, 1);
  const items = w.items().map((/** @type {any} */ it) => [it.console.args[0].value, it.console.url]);
  assert.deepEqual(items, [['first', undefined], ['later', undefined], ['last', 'http://tail/']]);
  assert.equal(p.refused, 1);
  assert.equal(p.queueBytes, 0);
  // Dropped unbuilt when the queue overflows: never built, counted as dropped.
  const q = new Producer({ role: 'client', source: 'c', maxQueueItems: 2 });
  let b2 = 0;
  for (let i = 0; i < 5; i++) q.enqueueLater('console', () => { b2++; return '{}'; }, 10);
  assert.deepEqual([q.queue.length, q.dropped, b2, q.queueBytes], [2, 3, 0, 20]);
});

test('batchWindow: fetch items wait for company, other items still go at once', async () => {
  const fetchItem = (/** @type {number} */ i) => ({ id: 'f' + i, phase: 'failed', timestamp: 1, failed: { message: 'x' } });
  const { w, p, connect } = setup({ role: 'host', source: 'host', token: undefined, capabilities: [], topics: ['app', 'fetch'], page: undefined, snapshot: undefined, maxInFlight: 1, batchWindow: 40 });
  connect();
  await tick();
  await tick();
  assert.equal(w.of('replace').length, 1);
  p.enqueue('fetch', fetchItem(1));
  await tick();
  p.enqueue('fetch', fetchItem(2));
  await tick();
  assert.equal(w.of('append').length, 0, 'fetch items wait for the window');
  await new Promise((r) => setTimeout(r, 80));
  const a = w.of('append');
  assert.equal(a.length, 1, 'one batch for both');
  assert.deepEqual(a[0].body.items.map((/** @type {any} */ it) => it.fetch.id), ['f1', 'f2']);
  await tick();
  p.enqueue('app', { name: 'now', timestamp: 1 });
  await tick();
  await tick();
  assert.equal(w.of('append').length, 2, 'an app item is not delayed');
});

test('pace: while items keep coming, one append per interval; a full frame and a drain go at once', async () => {
  /** @type {Array<{fn: () => void, ms: number}>} */
  const timers = [];
  let scheduled = 0;
  const schedule = (/** @type {() => void} */ fn) => { scheduled++; queueMicrotask(fn); };
  const { w, p, connect } = setup({ pace: 10000, schedule, timer: (fn, ms) => { timers.push({ fn, ms }); } });
  connect();
  await tick();
  await tick();
  p.enqueue('console', log('a'));
  await tick();
  assert.equal(w.of('append').length, 1, 'the first append goes at once');
  p.enqueue('console', log('b'));
  await tick();
  const before = scheduled;
  p.enqueue('console', log('c'));
  await tick();
  assert.equal(w.of('append').length, 1, 'the next ones wait for the interval');
  assert.equal(scheduled, before, 'no flush is scheduled while the pace timer will flush');
  assert.equal(timers.length, 1, 'one timer for the interval');
  assert.ok(timers[0].ms > 0 && timers[0].ms <= 10000);
  timers.shift()?.fn();
  await tick();
  const a = w.of('append');
  assert.equal(a.length, 2);
  assert.deepEqual(a[1].body.items.map((/** @type {any} */ it) => it.console.args[0].value), ['b', 'c'], 'one frame for both, in order');
  // A frame's worth of queued bytes does not wait.
  for (let n = 0; n < PACE_BYTES; n += 40 << 10) p.enqueue('console', log('x'.repeat(40 << 10)));
  await tick();
  assert.equal(w.of('append').length, 3, 'a full frame goes at once');
  // Nor does a drain (page unload).
  p.enqueue('console', log('d'));
  await tick();
  assert.equal(w.of('append').length, 3);
  p.flush(true);
  assert.equal(w.of('append').length, 4, 'a drain ignores the pace');
});

test('pace: after a quiet interval the next append goes at once', async () => {
  const { w, p, connect } = setup({ pace: 20 });
  connect();
  await tick();
  await tick();
  p.enqueue('console', log('a'));
  await tick();
  await new Promise((r) => setTimeout(r, 60)); // longer than the pace: quiet
  p.enqueue('console', log('b'));
  await tick();
  assert.equal(w.of('append').length, 2, 'no wait after a quiet interval');
});

test('pace: a page logging 200 calls/s, half with an object, waits for the interval (estimated bytes do not trip PACE_BYTES)', async () => {
  /** @type {Array<() => void>} */
  const timers = [];
  const { w, p, connect } = setup({ pace: 200, paceBurst: 1, timer: (fn) => { timers.push(fn); } });
  connect();
  await tick();
  await tick();
  p.enqueue('console', log('first'));
  await tick();
  assert.equal(w.of('append').length, 1);
  // One interval's calls, as client.js queues them: built when sent, their
  // bytes estimated meanwhile (objectBytes, primitiveBytes: 1,316 and 340
  // for the benchmark's two calls; ~520 and ~290 once built).
  for (let i = 0; i < 40; i++) {
    const obj = i % 2 === 0;
    p.enqueueLater('console', () => JSON.stringify({ console: { type: 'log', args: [{ type: 'string', value: 'tick' }], timestamp: i } }), obj ? 1316 : 340, true);
    await tick();
  }
  assert.equal(w.of('append').length, 1, 'no frame before the interval ends');
  assert.equal(timers.length, 1);
  timers.shift()?.();
  await tick();
  assert.equal(w.of('append').length, 2);
  assert.equal(w.of('append')[1].body.items.length, 40, 'the interval\'s calls in one frame');
});

/** Runs the caller's task on for ms (a long task: no timer, no microtask). */
function busy(/** @type {number} */ ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* spin */ }
}

test('pace: a long task sends from its own calls, once per LONG_TASK_MS', async () => {
  /** @type {Array<() => void>} */
  const timers = [];
  const { w, p, connect } = setup({ pace: 10000, timer: (fn) => { timers.push(fn); } });
  connect();
  await tick();
  await tick();
  p.enqueue('console', log('a'));
  await tick();
  p.enqueue('console', log('b'));
  await tick();
  assert.equal(w.of('append').length, 1, 'b waits for the pace timer');
  assert.equal(timers.length, 1);
  const values = () => w.of('append').map((/** @type {any} */ f) => f.body.items.map((/** @type {any} */ it) => it.console.args[0].value));
  // The timer is not due yet: a call in a long task does not send.
  busy(LONG_TASK_MS + 10);
  p.enqueue('console', log('c'));
  assert.equal(w.of('append').length, 1, 'the pace timer is not due: nothing sent');
  // The same long task, now past the timer's due time (as if it had 0 ms).
  p.paceDue = performance.timeOrigin + performance.now() - LONG_TASK_MS - 1;
  p.enqueue('console', log('d'));
  assert.deepEqual(values(), [['a'], ['b', 'c', 'd']], 'sent from the call, in the task');
  p.enqueue('console', log('e'));
  assert.equal(w.of('append').length, 2, 'at most once per LONG_TASK_MS');
  busy(LONG_TASK_MS + 5);
  p.enqueue('console', log('f'));
  assert.deepEqual(values().at(-1), ['e', 'f'], 'and again LONG_TASK_MS later');
  // The task ends; the timer fires: no frame before a new interval.
  await tick();
  timers.shift()?.();
  p.enqueue('console', log('g'));
  await tick();
  assert.equal(w.of('append').length, 3, 'the timer after a late send waits a new interval');
  assert.equal(timers.length, 1, 'a new interval');
});

test('pace: a long task sends what waits for its microtask flush', async () => {
  const { w, p, connect } = setup({ pace: 10000, timer: () => {} });
  connect();
  await tick();
  await tick();
  p.enqueue('console', log('a'));
  busy(LONG_TASK_MS + 5);
  assert.equal(w.of('append').length, 0, 'a waits for the microtask');
  p.enqueue('console', log('b'));
  assert.deepEqual(w.of('append').map((/** @type {any} */ f) => f.body.items.length), [2], 'a and b sent from the call');
  await tick();
  assert.equal(w.of('append').length, 1, 'the microtask then finds nothing to send');
});

test('pace: a burst of paceBurst appends goes back to back, then one per interval', async () => {
  /** @type {Array<() => void>} */
  const timers = [];
  const { w, p, connect } = setup({ pace: 10000, paceBurst: 3, timer: (fn) => { timers.push(fn); } });
  connect();
  await tick();
  await tick();
  for (const s of ['a', 'b', 'c', 'd', 'e']) {
    p.enqueue('console', log(s));
    await tick();
  }
  assert.deepEqual(w.of('append').map((/** @type {any} */ f) => f.body.items.map((/** @type {any} */ it) => it.console.args[0].value)), [['a'], ['b'], ['c']],
    'three frames at once, then the rest waits');
  assert.equal(timers.length, 1);
  timers.shift()?.();
  await tick();
  assert.deepEqual(w.of('append').at(-1).body.items.map((/** @type {any} */ it) => it.console.args[0].value), ['d', 'e'], 'the rest in one frame');
});
