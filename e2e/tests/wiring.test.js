// Pages join without code, with real Express, helmet, compression, Vite, Fastify
// and Koa from the registry: `run --inject` (the default) and the explicit wiring that
// `inspector-worker wiring express|vite` prints. Each response is fetched from the
// same app under plain node and under the worker and compared byte for byte: a
// response the worker does not touch must be identical (but Date); one it touches
// must be the plain body with the tag right after <head>, with a Content-Length
// that matches when there is one. A page joining is seen the way a DevTools window
// sees it: its console message arrives over CDP under a page context (negative
// executionContextId).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { test } from 'node:test';
import CDP from 'chrome-remote-interface';
import { spawnGroup, step, waitFor } from '../lib/procs.js';
import { TEST_MS, startHost, useChromium } from '../lib/setup.js';
import { workerBin } from '../lib/worker.js';
import { STEP_MS } from '../lib/devtools.js';

const chrome = useChromium();

const EXPRESS_HOST = fileURLToPath(new URL('../fixtures/express-host.js', import.meta.url));
const VITE_HOST = fileURLToPath(new URL('../fixtures/vite-host.js', import.meta.url));
const SERVERS_HOST = fileURLToPath(new URL('../fixtures/servers-host.js', import.meta.url));

/** This run's tag, whatever the port and token. */
const TAG = /<script src="http:\/\/127\.0\.0\.1:\d+\/client\.js" data-endpoint="ws:\/\/127\.0\.0\.1:\d+\/client" data-token="[^"]+"><\/script>/g;
/** Headers --inject changes on a page it injects (Date always differs). */
const CHANGED = new Set(['date', 'content-length', 'transfer-encoding', 'etag', 'last-modified']);

/**
 * `inspector-worker wiring NAME` written to a temp file, as a user keeps it.
 * @param {import('node:test').TestContext} t @param {'express'|'vite'} name @param {string} [dir]
 */
function wiringFile(t, name, dir) {
  if (!dir) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-e2e-wiring-'));
    t.after(() => fs.rmSync(/** @type {string} */ (dir), { recursive: true, force: true }));
  }
  const file = path.join(dir, `inspector-worker-${name}.mjs`);
  fs.writeFileSync(file, execFileSync(workerBin(), ['wiring', name]));
  return file;
}

/**
 * The fixture under plain node (no worker); its page URL. Stopped in t.after.
 * @param {import('node:test').TestContext} t @param {string} fixture @param {string[]} args @param {Record<string, string>} [env]
 */
async function plainHost(t, fixture, args, env = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-e2e-plain-'));
  const clean = { ...process.env, ...env };
  for (const k of Object.keys(clean)) if (k.startsWith('INSPECTOR_WORKER_')) delete clean[k];
  const proc = spawnGroup(process.execPath, [fixture, dir, ...args], { env: clean });
  t.after(async () => {
    await proc.stop({ graceMs: 5000, group: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });
  await waitFor(() => {
    if (proc.hasExited) throw new Error(`plain host exited: ${proc.out.stderr}`);
    return fs.existsSync(path.join(dir, 'host.pid'));
  }, { what: `${path.basename(fixture)} under plain node`, timeoutMs: 60_000 });
  return fs.readFileSync(path.join(dir, 'page.url'), 'utf8').trim();
}

/** The page URL a fixture under the worker wrote. @param {{triggerDir: string}} w */
const pageOf = (w) => fs.readFileSync(path.join(w.triggerDir, 'page.url'), 'utf8').trim();

/** The request headers Chromium sends when it opens a page (a navigation). */
const NAVIGATION = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate' };

/**
 * A raw response: status, headers as sent (but Date), body bytes as sent (never
 * decompressed). nav: sent as a browser's navigation (NAVIGATION's headers).
 * @param {string} url @param {{method?: string, gzip?: boolean, nav?: boolean}} [o]
 * @returns {Promise<{status: number, headers: string[], body: Buffer}>}
 */
function fetchRaw(url, { method = 'GET', gzip = false, nav = false } = {}) {
  const headers = { ...(nav ? NAVIGATION : {}), ...(gzip ? { 'accept-encoding': 'gzip' } : {}) };
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, headers }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const headers = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i].toLowerCase() !== 'date') headers.push(`${res.rawHeaders[i].toLowerCase()}: ${res.rawHeaders[i + 1]}`);
        }
        resolve({ status: /** @type {number} */ (res.statusCode), headers, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** @param {string[]} headers @param {string} name */
const header = (headers, name) => headers.find((h) => h.startsWith(`${name}: `))?.slice(name.length + 2);

/**
 * Fetches each path from both apps and checks it: `injected` paths carry the tag
 * once, right after <head>, the rest of the body and headers as plain node sent
 * them; every other request is byte-identical. Returns the number of requests.
 * @param {string} plainURL @param {string} runURL
 * @param {{injected: string[], untouched: string[], head: string[], gzip?: boolean, nav?: boolean, same?: boolean}} o
 *   head: paths whose HEAD is checked (no body; under the worker an HTML page's HEAD
 *   loses its Content-Length); same: both apps run without the worker, every HEAD identical;
 *   nav: the `injected` paths are requested as a browser's navigation, which the app
 *   under run answers uncompressed (the other requests as without nav)
 */
async function compareResponses(plainURL, runURL, { injected, untouched, head, gzip = false, nav = false, same = false }) {
  const unzip = (/** @type {Buffer} */ b, /** @type {string[]} */ h) => (header(h, 'content-encoding') === 'gzip' ? zlib.gunzipSync(b) : b);
  for (const p of injected) {
    const plain = await fetchRaw(new URL(p, plainURL).href, { gzip, nav });
    const run = await fetchRaw(new URL(p, runURL).href, { gzip, nav });
    const what = `GET ${p} under run`;
    assert.equal(run.status, plain.status, what);
    const text = unzip(run.body, run.headers).toString('utf8');
    const tags = text.match(TAG) ?? [];
    assert.equal(tags.length, 1, `${what}: one tag in ${text}`);
    assert.equal(text.replace(TAG, ''), unzip(plain.body, plain.headers).toString('utf8'), `${what}: the page but the tag`);
    assert.ok(/<head>$/.test(text.slice(0, text.indexOf(tags[0]))), `${what}: the tag right after <head>: ${text}`);
    const cl = header(run.headers, 'content-length');
    if (cl !== undefined) assert.equal(Number(cl), run.body.length, `${what}: Content-Length`);
    else assert.equal(header(run.headers, 'transfer-encoding'), 'chunked', `${what}: chunked without Content-Length`);
    assert.equal(header(run.headers, 'etag'), undefined, `${what}: no ETag`);
    const changed = (/** @type {string} */ name) => CHANGED.has(name) || (nav && name === 'content-encoding');
    const kept = (/** @type {string[]} */ h) => h.filter((l) => !changed(l.slice(0, l.indexOf(':'))));
    assert.deepEqual(kept(run.headers), kept(plain.headers), `${what}: the other headers`);
  }
  for (const p of untouched) {
    const plain = await fetchRaw(new URL(p, plainURL).href, { gzip });
    const run = await fetchRaw(new URL(p, runURL).href, { gzip });
    assert.deepEqual(run, plain, `GET ${p}: byte-identical under run`);
  }
  for (const p of head) {
    const plain = await fetchRaw(new URL(p, plainURL).href, { method: 'HEAD', gzip });
    const run = await fetchRaw(new URL(p, runURL).href, { method: 'HEAD', gzip });
    assert.equal(run.body.length, 0);
    const html = !same && /^text\/html/.test(header(plain.headers, 'content-type') ?? '');
    const keep = (/** @type {string[]} */ h) => (html ? h.filter((l) => !l.startsWith('content-length:')) : h);
    assert.deepEqual(keep(run.headers), keep(plain.headers), `HEAD ${p}: as plain node${html ? ', but Content-Length' : ''}`);
    if (html) assert.equal(header(run.headers, 'content-length'), undefined, `HEAD ${p}: no length promised`);
  }
  return injected.length * 2 + untouched.length * 2 + head.length * 2;
}

/**
 * A CDP session on the worker's target with the Runtime on; `next(text)` resolves
 * with the next console message `text` from a page (negative context id).
 * @param {import('node:test').TestContext} t @param {{port: number, target: {id: string}}} w
 */
async function pageConsole(t, w) {
  const client = await step(CDP({ host: '127.0.0.1', port: w.port, target: w.target.id }), 'CDP() connect');
  t.after(() => client.close().catch(() => {}));
  /** @type {Array<{text: string, resolve: (m: any) => void}>} */
  const waiting = [];
  client.on('Runtime.consoleAPICalled', (/** @type {any} */ m) => {
    const i = waiting.findIndex((x) => m.executionContextId < 0 && m.args?.[0]?.value === x.text);
    if (i >= 0) waiting.splice(i, 1)[0].resolve(m);
  });
  await step(client.Runtime.enable(), 'Runtime.enable');
  return {
    /** @param {string} text @returns {Promise<any>} */
    next: (text) => new Promise((resolve) => { waiting.push({ text, resolve }); }),
  };
}

/**
 * Loads the page in a tab of the suite's chromium and waits until the window sees
 * its console message `text` under a page context.
 * @param {import('node:test').TestContext} t @param {{port: number, target: {id: string}}} w
 * @param {string} url @param {string} text
 */
async function expectPageJoins(t, w, url, text) {
  const joined = (await pageConsole(t, w)).next(text);
  const page = await chrome().browser.contexts()[0].newPage();
  t.after(async () => { await page.close().catch(() => {}); });
  await page.goto(url, { timeout: STEP_MS });
  const m = await step(joined, `the page's '${text}' under a page context`);
  t.diagnostic(`joined: ${url} logged '${text}' in context ${m.executionContextId}`);
}

/** The lines of the worker's stderr that match re. @param {{output: () => string}} w @param {RegExp} re */
const stderrLines = (w, re) => w.output().split('\n').filter((l) => re.test(l));

test('express under run (--inject, the default): static, res.send and streamed pages get the tag, the page joins; the rest is byte-identical', { timeout: TEST_MS }, async (t) => {
  const plainURL = await plainHost(t, EXPRESS_HOST, []);
  const h = await startHost(t, { name: 'wiring-express-inject', fixture: EXPRESS_HOST });
  await h.run(async () => {
    const runURL = pageOf(h.w);
    const n = await compareResponses(plainURL, runURL, {
      injected: ['/', '/index.html', '/send', '/stream'],
      untouched: ['/app.js', '/api', '/data.json', '/missing'],
      head: ['/', '/send', '/app.js', '/api'],
    });
    t.diagnostic(`${n} requests compared`);
    await expectPageJoins(t, h.w, runURL, 'express-page: ran /');
    await expectPageJoins(t, h.w, new URL('/stream', runURL).href, 'express-page: ran /stream');
    // Express's 404 page (/missing, the browser's /favicon.ico) carries default-src 'none': no hint for it.
    assert.deepEqual(stderrLines(h.w, /inspector-worker: (the page's Content-Security-Policy|an HTML response)/), [], 'no hint line');
  });
});

for (const name of ['fastify', 'koa']) {
  test(`${name} under run (--inject, the default): a page sent whole and a streamed one get the tag and join; the rest is byte-identical`, { timeout: TEST_MS }, async (t) => {
    const plainURL = await plainHost(t, SERVERS_HOST, [name]);
    const h = await startHost(t, { name: `wiring-${name}-inject`, fixture: SERVERS_HOST, hostArgs: [name] });
    await h.run(async () => {
      const runURL = pageOf(h.w);
      const n = await compareResponses(plainURL, runURL, {
        injected: ['/', '/stream'],
        untouched: ['/app.js', '/api', '/missing'],
        head: ['/', '/app.js'],
      });
      t.diagnostic(`${n} requests compared`);
      await expectPageJoins(t, h.w, runURL, `${name}-page: ran /`);
      await expectPageJoins(t, h.w, new URL('/stream', runURL).href, `${name}-page: ran /stream`);
      assert.deepEqual(stderrLines(h.w, /inspector-worker: (the page's Content-Security-Policy|an HTML response)/), [], 'no hint line');
    });
  });
}

test('express with the middleware: under plain node it changes no byte; under run --inject=false it adds the tag and the page joins', { timeout: TEST_MS }, async (t) => {
  const mw = wiringFile(t, 'express');
  const plainURL = await plainHost(t, EXPRESS_HOST, []);
  const plainMwURL = await plainHost(t, EXPRESS_HOST, ['--middleware', mw]);
  const paths = ['/', '/send', '/stream', '/app.js', '/api', '/data.json', '/missing'];
  const n = await compareResponses(plainURL, plainMwURL, { injected: [], untouched: paths, head: ['/', '/send', '/app.js'], same: true });
  t.diagnostic(`plain node with and without the middleware: ${n} requests identical`);
  const h = await startHost(t, { name: 'wiring-express-middleware', fixture: EXPRESS_HOST, runArgs: ['--inject=false'], hostArgs: ['--middleware', mw] });
  await h.run(async () => {
    const runURL = pageOf(h.w);
    await compareResponses(plainURL, runURL, {
      injected: ['/', '/send', '/stream'],
      untouched: ['/app.js', '/api', '/data.json', '/missing'],
      head: ['/', '/send', '/app.js'],
    });
    await expectPageJoins(t, h.w, runURL, 'express-page: ran /');
  });
});

test('express with compression: --inject has a navigation answered uncompressed with the tag and the page joins; every other request stays gzip, byte-identical; the middleware after compression injects before compressing', { timeout: TEST_MS }, async (t) => {
  const mw = wiringFile(t, 'express');
  const plainURL = await plainHost(t, EXPRESS_HOST, ['--compression']);
  const pages = ['/', '/send', '/stream'];
  const h = await startHost(t, { name: 'wiring-express-gzip', fixture: EXPRESS_HOST, hostArgs: ['--compression'] });
  await h.run(async () => {
    const runURL = pageOf(h.w);
    const r = await fetchRaw(runURL, { gzip: true });
    assert.equal(header(r.headers, 'content-encoding'), 'gzip', 'compression is on');
    const plainNav = await fetchRaw(plainURL, { gzip: true, nav: true });
    assert.equal(header(plainNav.headers, 'content-encoding'), 'gzip', 'without the worker a navigation is compressed');
    // Not a navigation (a fetch, a script): as without the worker, gzip.
    await compareResponses(plainURL, runURL, { injected: [], untouched: [...pages, '/app.js', '/api'], head: ['/', '/app.js'], gzip: true });
    await compareResponses(plainURL, runURL, { injected: pages, untouched: [], head: [], gzip: true, nav: true });
    const nav = await fetchRaw(new URL('/send', runURL).href, { gzip: true, nav: true });
    assert.equal(header(nav.headers, 'content-encoding'), undefined, 'a navigation under run is answered uncompressed');
    // A HEAD is not a navigation: the app's headers, gzip included (but Content-Length, as for any HTML HEAD).
    const headPlain = await fetchRaw(plainURL, { method: 'HEAD', gzip: true, nav: true });
    const headRun = await fetchRaw(runURL, { method: 'HEAD', gzip: true, nav: true });
    const noLength = (/** @type {string[]} */ hs) => hs.filter((l) => !l.startsWith('content-length:'));
    assert.deepEqual(noLength(headRun.headers), noLength(headPlain.headers), 'HEAD as a navigation: the app\'s headers');
    await expectPageJoins(t, h.w, runURL, 'express-page: ran /');
    assert.deepEqual(stderrLines(h.w, /Content-Encoding/), [], 'no compression hint: no page was left compressed');
  });
  for (const inject of ['--inject=false', '--inject=true']) {
    const hm = await startHost(t, { name: 'wiring-express-gzip-mw', fixture: EXPRESS_HOST, runArgs: [inject], hostArgs: ['--compression', '--middleware', mw] });
    await hm.run(async () => {
      const runURL = pageOf(hm.w);
      await compareResponses(plainURL, runURL, { injected: pages, untouched: ['/app.js', '/api'], head: ['/app.js'], gzip: true });
      const r = await fetchRaw(new URL('/send', runURL).href, { gzip: true });
      assert.equal(header(r.headers, 'content-encoding'), 'gzip', `${inject}: the injected page is still compressed`);
      await expectPageJoins(t, hm.w, runURL, 'express-page: ran /');
      assert.deepEqual(stderrLines(hm.w, /Content-Encoding/), [], `${inject}: no compression hint, the page was injected`);
    });
  }
});

test("express with helmet's default CSP: the page is left as the app sent it and one stderr line names the header and the fix; with that fix the page joins", { timeout: TEST_MS }, async (t) => {
  const plainURL = await plainHost(t, EXPRESS_HOST, ['--helmet']);
  const h = await startHost(t, { name: 'wiring-express-helmet', fixture: EXPRESS_HOST, hostArgs: ['--helmet'] });
  await h.run(async () => {
    const runURL = pageOf(h.w);
    const csp = header((await fetchRaw(runURL)).headers, 'content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/, "helmet's default CSP");
    await compareResponses(plainURL, runURL, { injected: [], untouched: ['/', '/send', '/stream', '/app.js'], head: ['/app.js'] });
    const hints = await waitFor(() => {
      const l = stderrLines(h.w, /Content-Security-Policy/);
      return l.length ? l : null;
    }, { what: 'the CSP hint on stderr', timeoutMs: 30_000 });
    const addr = `127.0.0.1:${h.w.port}`;
    assert.equal(hints.length, 1, `one hint line for three pages: ${hints.join('\n')}`);
    assert.equal(hints[0].trim(), `inspector-worker: the page's Content-Security-Policy (script-src 'self') blocks the client, so that page will not join the window; in development add http://${addr} to script-src and ws://${addr} to connect-src`);
  });
  // The fix the line names, in helmet's own options: the page gets the tag and joins.
  const fixed = await startHost(t, { name: 'wiring-express-helmet-fixed', fixture: EXPRESS_HOST, hostArgs: ['--helmet-allow-worker'] });
  await fixed.run(async () => {
    const runURL = pageOf(fixed.w);
    const csp = header((await fetchRaw(runURL)).headers, 'content-security-policy') ?? '';
    assert.match(csp, new RegExp(`script-src 'self' http://127\\.0\\.0\\.1:${fixed.w.port};`), csp);
    await expectPageJoins(t, fixed.w, runURL, 'express-page: ran /');
    assert.deepEqual(stderrLines(fixed.w, /Content-Security-Policy/), []);
  });
});

/**
 * A Vite root in a temp folder: index.html, main.js, the printed plugin and a
 * vite.config.mjs that uses it unless E2E_VITE_NO_PLUGIN is set.
 * @param {import('node:test').TestContext} t
 */
function viteRoot(t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-e2e-vite-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  wiringFile(t, 'vite', root);
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html>\n<html>\n  <head>\n    <meta charset="utf-8">\n    <title>Vite page</title>\n  </head>\n' +
    '  <body>\n    <h1>Vite page</h1>\n    <script type="module" src="/main.js"></script>\n  </body>\n</html>\n');
  fs.writeFileSync(path.join(root, 'main.js'), "console.log('vite-page: ran');\n");
  fs.writeFileSync(path.join(root, 'vite.config.mjs'), "import inspectorWorker from './inspector-worker-vite.mjs';\n" +
    'export default { plugins: process.env.E2E_VITE_NO_PLUGIN ? [] : [inspectorWorker()] };\n');
  return root;
}

test('vite plugin: under plain node it changes nothing; under run --inject=false the page gets the tag first in <head> and joins; with --inject still one tag', { timeout: TEST_MS }, async (t) => {
  const root = viteRoot(t);
  const withPlugin = await plainHost(t, VITE_HOST, [root]);
  const without = await plainHost(t, VITE_HOST, [root], { E2E_VITE_NO_PLUGIN: '1' });
  const n = await compareResponses(without, withPlugin, { injected: [], untouched: ['/', '/main.js'], head: ['/'], same: true });
  t.diagnostic(`plain node with and without the plugin: ${n} requests identical`);
  const plainHTML = (await fetchRaw(without)).body.toString('utf8');
  for (const inject of ['--inject=false', '--inject=true']) {
    const h = await startHost(t, { name: 'wiring-vite', fixture: VITE_HOST, runArgs: [inject], hostArgs: [root] });
    await h.run(async () => {
      const runURL = pageOf(h.w);
      const html = (await fetchRaw(runURL)).body.toString('utf8');
      const tags = html.match(TAG) ?? [];
      assert.equal(tags.length, 1, `${inject}: one tag in ${html}`);
      const at = html.indexOf(tags[0]);
      assert.ok(at < html.indexOf('/@vite/client') && at < html.indexOf('/main.js'), `${inject}: the tag before Vite's and the page's scripts: ${html}`);
      assert.ok(/<head>\s*$/.test(html.slice(0, at)), `${inject}: the tag first in <head>: ${html}`);
      // Vite indents the tags it adds: compared with runs of white space as one.
      const norm = (/** @type {string} */ s) => s.replace(/\s+/g, ' ');
      assert.equal(norm(html.replace(TAG, '')), norm(plainHTML), `${inject}: the page but the tag`);
      await expectPageJoins(t, h.w, runURL, 'vite-page: ran');
    });
  }
});

// With CI set (as in CI) Vite colours its banner: the port is split by escapes.
const stripColours = (/** @type {string} */ s) => s.replace(/\x1b\[[0-9;]*m/g, '');

const VITE_BIN = fileURLToPath(new URL('../node_modules/vite/bin/vite.js', import.meta.url));

test("vite's own command under run, no plugin: the page joins by --inject; a save reloads it into a new page context", { timeout: TEST_MS }, async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-e2e-vite-cli-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><html><head><title>Vite CLI page</title></head><body><script type="module" src="/main.js"></script></body></html>');
  fs.writeFileSync(path.join(root, 'main.js'), "console.log('vite-cli-page: load 1');\n");
  // As a user types it, with node named (run -- npx vite comes with child-process following).
  const proc = spawnGroup(workerBin(), ['run', '--port', '0', '--', process.execPath, VITE_BIN, '--host', '127.0.0.1', '--port', '0'], { cwd: root });
  t.after(async () => { await proc.stop({ graceMs: 10_000 }); });
  const fail = (/** @type {string} */ what) => { if (proc.hasExited) throw new Error(`worker exited before ${what}:\n${proc.out.stderr}\n${proc.out.stdout}`); };
  const port = await waitFor(() => { fail('listening'); return Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(proc.out.stderr)?.[1] ?? 0); }, { what: 'the worker to listen' });
  const pageURL = await waitFor(() => { fail("Vite's URL"); return /Local:\s+(http:\/\/127\.0\.0\.1:\d+\/)/.exec(stripColours(proc.out.stdout))?.[1]; }, { what: "Vite's Local: URL" })
    .catch((e) => { throw new Error(`${e.message}\nstderr:\n${proc.out.stderr}\nstdout:\n${proc.out.stdout}`); });
  const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const w = { port, target: list[0] };
  const html = (await fetchRaw(pageURL)).body.toString('utf8');
  assert.equal((html.match(TAG) ?? []).length, 1, `one tag: ${html}`);
  const con = await pageConsole(t, w);
  const first = con.next('vite-cli-page: load 1');
  const page = await chrome().browser.contexts()[0].newPage();
  t.after(async () => { await page.close().catch(() => {}); });
  await page.goto(pageURL, { timeout: STEP_MS });
  const m1 = await step(first, 'the first load under a page context');
  // main.js accepts no hot update: Vite reloads the page, which joins again.
  const second = con.next('vite-cli-page: load 2');
  fs.writeFileSync(path.join(root, 'main.js'), "console.log('vite-cli-page: load 2');\n");
  const m2 = await step(second, 'the reloaded page under a page context');
  assert.notEqual(m2.executionContextId, m1.executionContextId, 'the reload swapped the page context');
  t.diagnostic(`contexts ${m1.executionContextId} then ${m2.executionContextId}`);
});
