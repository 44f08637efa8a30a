// Tests of the explicit wiring (wiring/express.mjs, wiring/vite.mjs) and of
// the README's snippet example, each under plain `node` (they must change
// nothing) and with the run's preload (they add this run's tag once).
// Real Express and Vite are tested in e2e/tests/wiring.test.js.

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import inspectorWorkerVite, { tagAttrs } from './wiring/vite.mjs';

const PRELOAD = fileURLToPath(new URL('preload.cjs', import.meta.url));
const EXPRESS = new URL('wiring/express.mjs', import.meta.url).href;
const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const RUN_ENV = { INSPECTOR_WORKER_ENDPOINT: '127.0.0.1:9229', INSPECTOR_WORKER_TOKEN: 'tok-1' };
const TAG = '<script src="http://127.0.0.1:9229/client.js" data-endpoint="ws://127.0.0.1:9229/client" data-token="tok-1"></script>';
const PAGE = '<!doctype html><html><head><title>t</title></head><body><script src="/app.js"></script></body></html>';

/**
 * Runs an ES module text in a new node: plain, or with the preload and a
 * run's environment (inject: the INSPECTOR_WORKER_INJECT `run` sets).
 * @param {string} code @param {{preload?: boolean, inject?: boolean}} [o]
 */
function node(code, o = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('INSPECTOR_WORKER_')) delete env[k];
  if (o.preload) Object.assign(env, RUN_ENV, o.inject ? { INSPECTOR_WORKER_INJECT: '1' } : {});
  const args = [...(o.preload ? ['--require', PRELOAD] : []), '--input-type=module', '-e', code];
  const r = spawnSync(process.execPath, args, { env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, 'node exited ' + r.status + ': ' + r.stderr);
  return r.stdout;
}

// An app that serves PAGE (and a JSON body) through a connect-style chain
// with the middleware, fetches both from itself and prints them as JSON.
const EXPRESS_APP = `
import http from 'node:http';
import inspectorWorker from ${JSON.stringify(EXPRESS)};
const mw = inspectorWorker();
const srv = http.createServer((req, res) => mw(req, res, () => {
  if (req.url === '/json') { res.setHeader('content-type', 'application/json'); res.end('{"a":"<head>"}'); return; }
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(${JSON.stringify(PAGE)}));
  res.write(${JSON.stringify(PAGE)}.slice(0, 20));
  res.end(${JSON.stringify(PAGE)}.slice(20));
}));
srv.listen(0, '127.0.0.1', async () => {
  const out = {};
  for (const p of ['/', '/json']) {
    const r = await fetch('http://127.0.0.1:' + srv.address().port + p);
    out[p] = { body: await r.text(), length: r.headers.get('content-length') };
  }
  srv.close();
  console.log(JSON.stringify(out));
});
`;

test('express.mjs under plain node: next() only, every response as the app wrote it', () => {
  const out = JSON.parse(node(EXPRESS_APP));
  assert.equal(out['/'].body, PAGE);
  assert.equal(out['/'].length, String(Buffer.byteLength(PAGE)));
  assert.equal(out['/json'].body, '{"a":"<head>"}');
});

test('express.mjs under a run with --inject=false: the tag after <head>, once; other bodies untouched', () => {
  const out = JSON.parse(node(EXPRESS_APP, { preload: true }));
  assert.equal(out['/'].body, PAGE.replace('<head>', '<head>' + TAG));
  // Written in two pieces, the second by end(): all held, so the length is exact.
  assert.equal(out['/'].length, String(Buffer.byteLength(PAGE + TAG)));
  assert.equal(out['/json'].body, '{"a":"<head>"}');
});

test('express.mjs under a run with --inject (the default): still one tag', () => {
  const out = JSON.parse(node(EXPRESS_APP, { preload: true, inject: true }));
  assert.equal(out['/'].body, PAGE.replace('<head>', '<head>' + TAG));
});

const VITE_HOOK = `
import inspectorWorker from ${JSON.stringify(new URL('wiring/vite.mjs', import.meta.url).href)};
const p = inspectorWorker();
console.log(JSON.stringify({ apply: p.apply, order: p.transformIndexHtml.order, out: p.transformIndexHtml.handler(${JSON.stringify(PAGE)}) }));
`;

test('vite.mjs under plain node: the page unchanged; dev server only', () => {
  const r = JSON.parse(node(VITE_HOOK));
  assert.deepEqual(r, { apply: 'serve', order: 'post', out: PAGE });
});

test('vite.mjs under a run: the tag prepended to <head> as a Vite tag descriptor', () => {
  const r = JSON.parse(node(VITE_HOOK, { preload: true }));
  assert.deepEqual(r.out, {
    html: PAGE,
    tags: [{ tag: 'script', attrs: { src: 'http://127.0.0.1:9229/client.js', 'data-endpoint': 'ws://127.0.0.1:9229/client', 'data-token': 'tok-1' }, injectTo: 'head-prepend' }],
  });
});

test('vite.mjs: a page that already has this run\'s tag is left alone; attributes unescaped', () => {
  const g = /** @type {any} */ (globalThis);
  g.inspectorWorker = { bootstrapSnippet: () => TAG };
  try {
    const h = inspectorWorkerVite().transformIndexHtml.handler;
    assert.equal(h(PAGE.replace('<head>', '<head>' + TAG)), PAGE.replace('<head>', '<head>' + TAG));
    g.inspectorWorker = { bootstrapSnippet: () => { throw new Error('x'); } };
    assert.equal(h(PAGE), PAGE);
  } finally {
    delete g.inspectorWorker;
  }
  assert.deepEqual(tagAttrs('<script src="a" data-endpoint="ws://h/c?a=1&amp;b=&quot;2&quot;" data-token="t"></script>'),
    { src: 'a', 'data-endpoint': 'ws://h/c?a=1&b="2"', 'data-token': 't' });
  assert.equal(tagAttrs(''), null);
  assert.equal(tagAttrs('<img src="x">'), null);
});

/** The README's ```js blocks that call bootstrapSnippet(). */
function readmeSnippetBlocks() {
  const text = readFileSync(README, 'utf8');
  return [...text.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => /const head = .*bootstrapSnippet\(\)/.test(b));
}

test('the README\'s bootstrapSnippet() example: \'\' under plain node, the tag under a run', () => {
  const blocks = readmeSnippetBlocks();
  assert.equal(blocks.length, 1, 'one README example defines head from bootstrapSnippet()');
  const code = blocks[0] + '\nconsole.log(JSON.stringify(head));';
  assert.equal(JSON.parse(node(code)), '');
  assert.equal(JSON.parse(node(code, { preload: true })), TAG);
});

test('express.mjs from CommonJS: require() gives the middleware (Node >= 20.19 / 22.12)', { skip: process.features.require_module ? false : 'this node cannot require() an ES module' }, () => {
  const code = 'const { inspectorWorker } = require(' + JSON.stringify(fileURLToPath(EXPRESS)) + ');\n' +
    'let called = 0; inspectorWorker()({}, {}, () => { called++; }); console.log(called);';
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '1');
  assert.doesNotMatch(r.stderr, /Error/);
});
