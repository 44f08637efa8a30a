// Host fetch capture (preload.cjs + capture.mjs + nodecapture.mjs) with a
// real node child and a real loopback HTTP server: the app's results are
// the same with and without capture, and the fetch items say what happened.

import test from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseFrame } from './testdata/frames.mjs';
import { DEFAULT_LIMITS } from './core.mjs';

const PRELOAD = fileURLToPath(new URL('preload.cjs', import.meta.url));
const APP = fileURLToPath(new URL('testdata/fetch-app.cjs', import.meta.url));

export const BINARY = Uint8Array.from({ length: 256 }, (_, i) => i);
const big = (/** @type {number} */ n) => Uint8Array.from({ length: n }, (_, i) => (i * 13 + 5) & 255);
const sha = (/** @type {Uint8Array} */ b) => crypto.createHash('sha256').update(b).digest('hex');

/** A loopback server with the routes the cases use. */
async function startServer() {
  /** @type {Map<string, any>} */
  const seen = new Map();
  /** @type {Map<string, number>} when each request's connection closed (res 'close'), by path and query */
  const closed = new Map();
  const server = http.createServer((req, res) => {
    const u = new URL(req.url || '/', 'http://x');
    res.on('close', () => closed.set(u.pathname + u.search, Date.now()));
    /** @type {Buffer[]} */
    const parts = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      seen.set(u.pathname + u.search, { method: req.method, headers: req.headers, body: Buffer.concat(parts) });
      switch (u.pathname) {
        case '/text':
          res.writeHead(200, 'Fine', { 'content-type': 'text/plain; charset=utf-8', 'x-multi': ['a', 'b'] });
          res.end('héllo wörld');
          return;
        case '/binary':
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(BINARY);
          return;
        case '/redirect':
          res.writeHead(302, { location: '/text' });
          res.end();
          return;
        case '/big': {
          const n = Number(u.searchParams.get('n'));
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(n) });
          res.end(big(n));
          return;
        }
        case '/stream': {
          // Chunked, 8 chunks of 20 KiB, 15 ms apart.
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          let i = 0;
          const next = () => {
            if (i === 8) { res.end(); return; }
            res.write(big(20480 + i++));
            setTimeout(next, 15);
          };
          next();
          return;
        }
        case '/echo':
          res.writeHead(201, { 'content-type': req.headers['content-type'] || 'application/octet-stream' });
          res.end(Buffer.concat(parts));
          return;
        case '/hang':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
          return; // never ends: the client aborts
        case '/never':
          return; // no head at all
        case '/closed': {
          // When the connection of request `u` closed (ms since the epoch), or "no".
          const at = closed.get(String(u.searchParams.get('u')));
          res.end(at === undefined ? 'no' : String(at));
          return;
        }
        case '/sse': {
          // Server-sent events at ~120 B/s, never ending: a slow stream.
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          let i = 0;
          res.write(sseEvent(i++));
          const timer = setInterval(() => res.write(sseEvent(i++)), 130);
          res.on('close', () => clearInterval(timer));
          return;
        }
        case '/idle':
          // One event, then nothing, ever: an idle stream.
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(sseEvent(0));
          return;
        case '/burst': {
          // n bytes at once, then idle: past the body budget, not ended.
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.write(big(Number(u.searchParams.get('n'))));
          return;
        }
        default:
          res.writeHead(404);
          res.end();
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const addr = /** @type {net.AddressInfo} */ (server.address());
  return { base: 'http://127.0.0.1:' + addr.port, seen, closed, close: () => { server.closeAllConnections(); server.close(); } };
}

/** Event i of /sse (event 0 is all /idle sends). @param {number} i */
const sseEvent = (i) => 'data: tick ' + String(i).padStart(3, '0') + '\n\n';

/** A port nobody listens on. */
async function refusedPort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', () => r(undefined)));
  const port = /** @type {net.AddressInfo} */ (s.address()).port;
  await new Promise((r) => s.close(() => r(undefined)));
  return port;
}

/**
 * Runs fetch-app.cjs with CASES; with capture, its fd 3 is a socketpair
 * the test answers as the worker (welcome, acks). Returns the app's lines
 * and the fetch items.
 * @param {any[]} cases
 * @param {{capture: boolean, env?: Record<string,string>, nodeArgs?: string[], exit?: boolean, timeoutMs?: number}} o
 *   exit: the app exits after its done line (a stream that hangs would keep it alive);
 *   timeoutMs: the child is killed after this (default 60 s)
 */
export async function runApp(cases, o) {
  const env = { PATH: process.env.PATH || '', CASES: JSON.stringify(cases), ...(o.env || {}) };
  const args = [...(o.nodeArgs || []), ...(o.capture || o.env ? ['--require', PRELOAD, APP] : [APP])];
  if (o.exit) env.EXIT_WHEN_DONE = '1';
  if (o.capture) env.INSPECTOR_WORKER_FD = '3';
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe', o.capture ? 'pipe' : 'ignore'], env });
  let out = '', err = '';
  child.stdout.on('data', (c) => { out += c; });
  child.stderr.on('data', (c) => { err += c; });
  /** @type {any[]} */
  const items = [];
  /** @type {any[]} */
  const frames = [];
  const sock = /** @type {any} */ (child.stdio[3]);
  if (o.capture) {
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('error', () => {});
    sock.on('data', (/** @type {string} */ c) => {
      buf += c;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const f = parseFrame(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        frames.push(f);
        const w = (/** @type {any} */ x) => sock.write(JSON.stringify(x) + '\n');
        if (f.type === 'hello') w({ v: 1, type: 'welcome', source: 'host', gen: 1, body: { capabilities: [], topics: ['app', 'fetch'], limits: DEFAULT_LIMITS } });
        if (f.type === 'replace') w({ v: 1, type: 'ack', source: 'host', gen: 1, seq: f.seq, body: {} });
        if (f.type === 'append') {
          items.push(...f.body.items);
          w({ v: 1, type: 'ack', source: 'host', gen: 1, seq: f.seq + f.body.items.length - 1, body: {} });
        }
      }
    });
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs || 60000);
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  assert.equal(code, 0, 'app exit; stderr:\n' + err);
  const lines = out.trim().split('\n').map((l) => JSON.parse(l));
  const done = lines.pop();
  assert.equal(done.done, true, out);
  /** @type {Record<string, any>} */
  const byName = {};
  for (const l of lines) byName[l.name] = l;
  return { results: byName, done, items, frames, err };
}

/**
 * The fetch items grouped by id, in arrival order, keyed by request url + method.
 * @param {any[]} items
 */
export function groupFetches(items) {
  /** @type {Map<string, any[]>} */
  const byId = new Map();
  for (const it of items) {
    assert.deepEqual(Object.keys(it), ['fetch']);
    const f = it.fetch;
    if (!byId.has(f.id)) byId.set(f.id, []);
    /** @type {any[]} */ (byId.get(f.id)).push(f);
  }
  return [...byId.values()];
}

/**
 * Checks one fetch's phase order and reassembles it.
 * @param {any[]} evs
 */
export function assemble(evs) {
  const phases = evs.map((e) => e.phase);
  assert.equal(phases[0], 'request', phases.join());
  const last = phases[phases.length - 1];
  assert.ok(last === 'finished' || last === 'failed', phases.join());
  assert.equal(phases.filter((p) => p === 'finished' || p === 'failed').length, 1, phases.join());
  // request, body(request)…, response…, body(response)…, end.
  const order = { request: 0, 'body:request': 1, response: 2, 'body:response': 3, finished: 4, failed: 4 };
  let prev = 0;
  /** @type {Record<string, Buffer[]>} */
  const bodies = { request: [], response: [] };
  /** @type {Record<string, number>} */
  const next = { request: 0, response: 0 };
  for (const e of evs) {
    const k = e.phase === 'body' ? 'body:' + e.body.part : e.phase;
    const rank = /** @type {any} */ (order)[k];
    assert.ok(rank >= prev || (k === 'failed'), 'phase order ' + phases.join());
    prev = rank;
    assert.equal(typeof e.timestamp, 'number');
    assert.deepEqual(Object.keys(e).sort(), ['id', 'phase', 'timestamp', e.phase].sort());
    if (e.phase === 'body') {
      assert.equal(e.body.offset, next[e.body.part], 'offsets in order');
      const d = Buffer.from(e.body.data, 'base64');
      assert.ok(d.length <= DEFAULT_LIMITS.maxChunkBytes && d.length > 0);
      next[e.body.part] += d.length;
      bodies[e.body.part].push(d);
    }
  }
  const end = evs[evs.length - 1];
  const get = (/** @type {string} */ p) => evs.find((e) => e.phase === p);
  return {
    request: get('request').request,
    response: get('response') ? get('response').response : null,
    requestBody: Buffer.concat(bodies.request),
    responseBody: Buffer.concat(bodies.response),
    finished: end.finished || null,
    failed: end.failed || null,
    times: evs.map((e) => e.timestamp),
  };
}

test('fetch capture: the app sees the same results; the items say what happened', async (t) => {
  const srv = await startServer();
  t.after(srv.close);
  const refused = await refusedPort();
  const cases = [
    { name: 'text', url: srv.base + '/text', headers: { 'x-app': 'one', accept: 'text/plain' } },
    { name: 'binary', url: srv.base + '/binary' },
    { name: 'redirect', url: srv.base + '/redirect' },
    { name: 'stream', url: srv.base + '/stream', readDelayMs: 40 },
    { name: 'over', url: srv.base + '/big?n=300000' },
    { name: 'byob', url: srv.base + '/big?n=250000', byob: true },
    { name: 'clone', url: srv.base + '/redirect?clone', clone: true },
    { name: 'post', url: srv.base + '/echo', method: 'POST', body: 'bytes:70000', headers: { 'content-type': 'application/x-test' } },
    { name: 'refused', url: 'http://127.0.0.1:' + refused + '/' },
    { name: 'abort-before', url: srv.base + '/never', abortAfterMs: 100 },
    { name: 'abort-reason', url: srv.base + '/never', abortAfterMs: 100, abortReason: true },
    { name: 'abort-body', url: srv.base + '/hang', abortAfterMs: 150 },
    // res.text() (the body mixin's reader, not res.body's) when the abort comes.
    { name: 'abort-text', url: srv.base + '/hang?text', abortAfterMs: 150, text: true },
    // The abort comes while nobody reads the body; text() after it.
    { name: 'abort-unread', url: srv.base + '/hang?unread', abortAfterMs: 100, textAfterMs: 300 },
    { name: 'bad-url', url: 'not a url' },
    { name: 'unhandled', url: 'http://127.0.0.1:' + refused + '/x', unhandled: true },
  ];
  const env = { INSPECTOR_WORKER_CAPTURE_BODY_BYTES: '100000' };
  const plain = await runApp(cases, { capture: false });
  const cap = await runApp(cases, { capture: true, env });

  // What the app saw: identical, hashes included.
  // How the stream was cut into reads depends on timing, not on capture.
  const same = (/** @type {any} */ x) => { const { chunks: _c, ...rest } = x; return rest; };
  // Not yet the same for abort-unread: the constructed Response's body
  // reports the original's error ("This operation was aborted") and reads as
  // used, where Node says "The operation was aborted." and unused; the
  // error's kind is the same (below).
  for (const c of cases) if (c.name !== 'abort-unread') assert.deepEqual(same(cap.results[c.name]), same(plain.results[c.name]), c.name);
  assert.equal(cap.results['abort-unread'].bodyError.name, plain.results['abort-unread'].bodyError.name, 'abort-unread: the same kind of error');
  assert.ok(cap.results.stream.chunks >= 2);
  const r = plain.results;
  assert.equal(r.binary.sha256, sha(BINARY));
  assert.equal(r.over.sha256, sha(big(300000)));
  assert.equal(r.stream.length, 8 * 20480 + 28);
  assert.ok(r.stream.chunks >= 2, 'the stream arrived in pieces');
  assert.equal(r.redirect.redirected, true);
  assert.equal(r.byob.sha256, sha(big(250000)), 'a BYOB reader reads the body');
  assert.deepEqual(r.clone.clone, { url: srv.base + '/text', type: 'basic', redirected: true, status: 200, bodyUsed: false, length: Buffer.byteLength('héllo wörld') });
  assert.equal(r.refused.error.message, 'fetch failed');
  assert.equal(r.refused.error.cause.code, 'ECONNREFUSED');
  assert.equal(r['abort-reason'].error.isReason, true, 'a custom abort reason is the rejection itself');
  assert.equal(r['abort-before'].error.name, 'AbortError');
  assert.ok(r['abort-body'].bodyError, 'the body read fails after the abort');
  assert.equal(r['abort-text'].bodyError && r['abort-text'].bodyError.name, 'AbortError', 'text() rejects with the abort');
  assert.equal(r['bad-url'].error.ctor, 'TypeError');
  assert.equal(r.unhandled.unhandled.length, 1, 'an unhandled fetch rejection is still unhandled');
  assert.equal(cap.done.fetchName, 'fetch');
  assert.equal(cap.done.fetchLength, plain.done.fetchLength);

  // What the items say.
  const fetches = groupFetches(cap.items).map(assemble);
  /** @param {string} path */
  const find = (path) => {
    const f = fetches.filter((x) => x.request.url.endsWith(path));
    assert.equal(f.length, 1, path + ': ' + fetches.map((x) => x.request.url).join(' '));
    return f[0];
  };
  const text = find('/text');
  const textId = cap.items.find((x) => x.fetch.phase === 'request' && x.fetch.request.url.endsWith('/text')).fetch.id;
  t.diagnostic('the items of GET /text:\n' + cap.items.filter((x) => x.fetch.id === textId).map((x) => JSON.stringify(x)).join('\n'));
  assert.equal(text.request.method, 'GET');
  assert.equal(text.request.kind, undefined, 'kind absent means fetch');
  assert.deepEqual(text.request.headers, [{ name: 'accept', value: 'text/plain' }, { name: 'x-app', value: 'one' }]);
  assert.equal(text.response.status, 200);
  assert.equal(text.response.statusText, 'Fine');
  assert.ok(text.response.headers.some((/** @type {any} */ h) => h.name === 'x-multi' && h.value === 'a, b'));
  assert.equal(text.responseBody.toString('utf8'), 'héllo wörld');
  assert.deepEqual(text.finished, { requestBytes: 0, responseBytes: Buffer.byteLength('héllo wörld') });
  const frames = text.request.stackTrace.callFrames;
  assert.ok(frames.length > 0 && /fetch-app\.cjs$/.test(frames[0].url), JSON.stringify(frames[0]));
  assert.ok(text.times[0] <= text.times[1] && text.times[1] <= text.times[text.times.length - 1], 'start ≤ headers ≤ end');

  assert.deepEqual([...find('/binary').responseBody], [...BINARY]);

  const redirect = find('/redirect');
  assert.equal(redirect.response.redirected, true);
  assert.equal(redirect.response.url, srv.base + '/text');
  assert.equal(redirect.responseBody.toString('utf8'), 'héllo wörld');

  const stream = find('/stream');
  assert.equal(stream.responseBody.length, 100000, 'the stream is over the 100,000-byte budget');
  assert.equal(stream.finished.responseTruncated, true);

  const over = find('/big?n=300000');
  assert.equal(sha(over.responseBody), sha(big(300000).subarray(0, 100000)), 'the prefix is kept');
  assert.equal(over.finished.responseTruncated, true);
  assert.ok(over.finished.responseBytes >= 100000 && over.finished.responseBytes <= 300000);

  const post = find('/echo');
  assert.equal(post.request.method, 'POST');
  assert.equal(post.request.hasBody, true);
  assert.equal(sha(post.requestBody), sha(big(70000).map((_, i) => (i * 31 + 7) & 255)));
  assert.equal(post.response.status, 201);
  assert.equal(sha(post.responseBody), sha(post.requestBody));
  assert.deepEqual(post.finished, { requestBytes: 70000, responseBytes: 70000 });

  const refusedF = fetches.filter((x) => x.request.url === 'http://127.0.0.1:' + refused + '/');
  assert.equal(refusedF.length, 1);
  assert.equal(refusedF[0].response, null, 'refused: failed before any response');
  assert.match(refusedF[0].failed.message, /^fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  assert.equal(refusedF[0].failed.aborted, undefined);

  const aborts = fetches.filter((x) => x.request.url.endsWith('/never'));
  assert.equal(aborts.length, 2);
  for (const a of aborts) {
    assert.equal(a.failed.aborted, true);
    assert.equal(a.response, null);
  }
  assert.ok(aborts.some((a) => a.failed.message === 'custom abort reason'));
  const ab = find('/hang');
  assert.equal(ab.response.status, 200);
  assert.equal(ab.failed.aborted, true, JSON.stringify(ab.failed));
  assert.equal(ab.responseBody.toString(), 'partial');

  assert.equal(fetches.filter((x) => x.request.url.includes('not a url')).length, 0, 'a call the original fetch refused leaves no item');
  assert.equal(fetches.filter((x) => x.request.url.endsWith('/x')).length, 1, 'the unhandled one is captured');
});

test('INSPECTOR_WORKER_CAPTURE=0: fetch is not wrapped, no fetch item', async (t) => {
  const srv = await startServer();
  t.after(srv.close);
  const off = await runApp([{ name: 'text', url: srv.base + '/text' }], { capture: true, env: { INSPECTOR_WORKER_CAPTURE: '0' } });
  assert.equal(off.results.text.status, 200);
  assert.equal(off.items.length, 0);
  assert.deepEqual(off.frames.map((f) => f.type), ['hello', 'replace']);
});

test('node:http requests: head items from diagnostics_channel, bodies not read, fetch not reported twice', async (t) => {
  const srv = await startServer();
  t.after(srv.close);
  const refused = await refusedPort();
  const cases = [
    { name: 'get', url: srv.base + '/binary', http: true, headers: { 'X-Custom': 'v' } },
    { name: 'refused', url: 'http://127.0.0.1:' + refused + '/r', http: true },
    { name: 'fetch', url: srv.base + '/text' },
  ];
  const plain = await runApp(cases, { capture: false });
  const cap = await runApp(cases, { capture: true });
  assert.deepEqual(cap.results.get.sha256, sha(BINARY));
  for (const c of cases) {
    const { ms: _a, ...a } = cap.results[c.name];
    const { ms: _b, ...b } = plain.results[c.name];
    assert.deepEqual(a, b, c.name);
  }
  const fetches = groupFetches(cap.items).map(assemble);
  assert.equal(fetches.length, 3, 'one entry per request: ' + fetches.map((f) => f.request.url).join(' '));
  const get = fetches.find((f) => f.request.url === srv.base + '/binary');
  assert.ok(get);
  assert.equal(get.request.kind, 'http');
  assert.equal(get.request.bodiesNotRead, true);
  assert.equal(get.request.method, 'GET');
  assert.ok(get.request.headers.some((/** @type {any} */ h) => h.name === 'X-Custom' && h.value === 'v'), JSON.stringify(get.request.headers));
  assert.equal(get.response.status, 200);
  assert.equal(get.response.statusText, 'OK');
  assert.ok(get.response.headers.some((/** @type {any} */ h) => h.name.toLowerCase() === 'content-type' && h.value === 'application/octet-stream'));
  assert.equal(get.responseBody.length, 0);
  assert.deepEqual(get.finished, { requestBytes: 0, responseBytes: 0 });
  // The caller's stack needs http.client.request.created (Node 22.12+);
  // before it, only Node's own frames are on the stack: no stackTrace.
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 12)) {
    assert.ok(get.request.stackTrace && /fetch-app\.cjs$/.test(get.request.stackTrace.callFrames[0].url), JSON.stringify(get.request.stackTrace, null, 1));
  } else {
    assert.equal(get.request.stackTrace, undefined, JSON.stringify(get.request.stackTrace));
  }
  const bad = fetches.find((f) => f.request.url.endsWith('/r'));
  assert.ok(bad);
  assert.match(bad.failed.message, /ECONNREFUSED/);
  const viaFetch = fetches.find((f) => f.request.url.endsWith('/text'));
  assert.equal(viaFetch.request.kind, undefined);
});

// How long a cancel may take to settle, and the server to see the
// connection close, before a test calls it a hang: plain fetch takes a few
// milliseconds; a capture that holds the stream takes hours (~120 B/s up
// to the budget) or forever (an idle stream). The app itself gives up
// waiting at 6 s (fetch-app.cjs SETTLE_GUARD_MS) and reports it.
const SETTLE_BOUND_MS = 5000;

/**
 * The fetch entry of one URL in the items, assembled.
 * @param {any[]} items
 * @param {string} url
 */
function entryOf(items, url) {
  const f = groupFetches(items).map(assemble).filter((x) => x.request.url === url);
  assert.equal(f.length, 1, url);
  return f[0];
}

test('a streamed body the app cancels (reader, body, for-await break, pipe): settles at once with capture, the server sees the close, the entry says cancelled', async (t) => {
  const srv = await startServer();
  t.after(srv.close);
  const forms = ['reader', 'body', 'break', 'pipe'];
  const casesFor = (/** @type {string} */ run) => {
    const cases = [];
    for (const route of ['sse', 'idle']) {
      for (const form of forms) cases.push({ name: route + '-' + form, url: srv.base + '/' + route + '?run=' + run + '&c=' + form, cancel: form });
    }
    // Past the 100,000-byte budget: the capture has let go, the app reads
    // on and cancels.
    cases.push({ name: 'budget', url: srv.base + '/burst?n=300000&run=' + run, cancel: 'reader', untilBytes: 300000 });
    return cases;
  };
  const env = { INSPECTOR_WORKER_CAPTURE_BODY_BYTES: '100000' };
  const plainCases = casesFor('plain'), capCases = casesFor('cap');
  // A hang costs the app 6 s per case (its guard): up to ~100 s on the old capture.
  const plain = await runApp(plainCases, { capture: false, exit: true, timeoutMs: 180000 });
  const cap = await runApp(capCases, { capture: true, env, exit: true, timeoutMs: 180000 });

  const ms = (/** @type {number|null} */ x) => (x === null ? 'not within 6 s' : x.toFixed(1) + ' ms');
  for (const cs of capCases) {
    const p = plain.results[cs.name], c = cap.results[cs.name];
    t.diagnostic(`${cs.name}: cancel settled: plain ${ms(p.settleMs)}, capture ${ms(c.settleMs)}; server saw the close after: plain ${ms(p.closeMs)}, capture ${ms(c.closeMs)}`);
  }
  for (const cs of capCases) {
    const p = plain.results[cs.name], c = cap.results[cs.name];
    assert.equal(p.settled, true, cs.name + ': plain fetch settles (the reference)');
    assert.equal(c.settled, true, cs.name + ': the cancel did not settle within 6 s with capture');
    assert.ok(c.settleMs < SETTLE_BOUND_MS, cs.name + ': settled after ' + c.settleMs + ' ms');
    assert.ok(c.closeMs !== null && c.closeMs < SETTLE_BOUND_MS, cs.name + ': the server saw the connection close ' + c.closeMs + ' ms after the cancel');
    const view = (/** @type {any} */ r) => ({ status: r.status, type: r.type, redirected: r.redirected, bodyUsed: r.bodyUsed, settled: r.settled, readBeforeCancel: r.readBeforeCancel });
    assert.deepEqual(view(c), view(p), cs.name + ': what the app saw');
    assert.equal(c.url, cs.url);
  }

  // The entries: cancelled, with the bytes read, which are what the server sent.
  let sse = '';
  for (let i = 0; i < 200; i++) sse += sseEvent(i);
  for (const cs of capCases) {
    const e = entryOf(cap.items, cs.url);
    if (cs.name === 'budget') {
      assert.equal(e.finished.responseTruncated, true, 'budget: truncated');
      assert.ok(e.finished.responseBytes >= 100000, 'budget: ' + e.finished.responseBytes);
      assert.equal(sha(e.responseBody), sha(big(300000).subarray(0, 100000)), 'budget: the kept prefix');
      continue;
    }
    assert.equal(e.response.status, 200, cs.name);
    assert.ok(e.failed, cs.name + ': ' + JSON.stringify(e.finished));
    assert.equal(e.failed.aborted, true, cs.name);
    const m = /^the application cancelled the response body after (\d+) bytes$/.exec(e.failed.message);
    assert.ok(m, cs.name + ': ' + e.failed.message);
    assert.equal(Number(m[1]), e.responseBody.length, cs.name + ': the bytes said are the bytes recorded');
    assert.ok(sse.startsWith(e.responseBody.toString('latin1')), cs.name + ': ' + e.responseBody.toString('latin1'));
    if (cs.cancel !== 'body') assert.ok(e.responseBody.length >= sseEvent(0).length, cs.name + ': the chunk the app read is recorded');
  }
});

test('a streamed body the app drops unread: the connection closes when it is collected, as with plain fetch', async (t) => {
  const srv = await startServer();
  t.after(srv.close);
  const casesFor = (/** @type {string} */ run) => ['sse', 'idle'].map((route) => ({ name: route, url: srv.base + '/' + route + '?run=' + run + '&drop=1', drop: true }));
  const plainCases = casesFor('plain'), capCases = casesFor('cap');
  const plain = await runApp(plainCases, { capture: false, exit: true, nodeArgs: ['--expose-gc'] });
  const cap = await runApp(capCases, { capture: true, exit: true, nodeArgs: ['--expose-gc'] });
  const ms = (/** @type {number|null} */ x) => (x === null ? 'not within 6 s' : x + ' ms');
  for (const cs of capCases) {
    t.diagnostic(`${cs.name}: the server saw the close after the app dropped the response: plain ${ms(plain.results[cs.name].closeMs)}, capture ${ms(cap.results[cs.name].closeMs)}`);
  }
  for (const cs of capCases) {
    const cc = cap.results[cs.name].closeMs;
    assert.ok(cc !== null && cc < SETTLE_BOUND_MS, cs.name + ': the connection closed ' + cc + ' ms after the app dropped the response');
    const e = entryOf(cap.items, cs.url);
    assert.equal(e.failed && e.failed.aborted, true, JSON.stringify(e.failed));
    assert.match(e.failed.message, /^the application dropped the response before its body ended \(\d+ bytes read\)$/);
  }
});
