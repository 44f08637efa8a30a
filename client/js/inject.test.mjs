// Tests of inject.mjs on a real node:http server and client: each response
// is fetched with the hook installed and without it, and compared (status,
// raw headers but Date, body bytes).

import test, { before, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { installInject, injectResponse, insertAt, cspBlocks, metaPolicies, withLength, MAX_PREFIX } from './inject.mjs';

const HOST = '127.0.0.1:9229';
const TAG = '<script src="http://' + HOST + '/client.js" data-endpoint="ws://' + HOST + '/client" data-token="t"></script>';
const MARKER = 'data-endpoint="ws://' + HOST + '/client"';
const PAGE = '<!doctype html><html><head><title>Ünïcode</title></head><body><script src="/app.js"></script></body></html>';
/**
 * A page whose policy is in a <meta> tag (as an app that cannot set headers,
 * or a static export, has it), with no <head> element: the tag would go
 * before the first <script>, after the policy.
 */
const META_PAGE = '<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src \'self\'"><title>m</title><script src="/app.js"></script>';

/** @type {Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>} */
const routes = {
  '/end': (_q, res) => { res.setHeader('Content-Type', 'text/html; charset=utf-8'); res.end(PAGE); },
  '/setlength': (_q, res) => {
    res.setHeader('content-type', 'text/html');
    res.setHeader('ETag', 'W/"1"');
    res.setHeader('content-length', Buffer.byteLength(PAGE));
    res.end(PAGE);
  },
  '/writehead': (_q, res) => {
    res.writeHead(200, 'Fine', { 'Content-Type': 'text/html', 'Content-Length': Buffer.byteLength(PAGE), 'Last-Modified': 'Thu, 01 Jan 2026 00:00:00 GMT', 'X-A': '1' });
    res.end(Buffer.from(PAGE));
  },
  '/flat': (_q, res) => {
    res.writeHead(201, ['Content-Type', 'text/html', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'Content-Length', String(Buffer.byteLength(PAGE))]);
    res.end(PAGE);
  },
  '/pairs': (_q, res) => {
    res.writeHead(200, [['Content-Type', 'TEXT/HTML'], ['Content-Length', String(Buffer.byteLength(PAGE))]]);
    res.end(PAGE);
  },
  '/stream': (_q, res) => {
    res.setHeader('Content-Type', 'text/html');
    const parts = ['<!doctype html><html><he', 'ad lang="en"><title>s</title></he', 'ad><body>', '<p>later</p>', '</body></html>'];
    let called = 0;
    const next = () => {
      const p = parts.shift();
      if (p === undefined) { res.end(); return; }
      res.write(p, () => { called++; });
      setTimeout(next, 5);
    };
    res.on('finish', () => { /** @type {any} */ (globalThis).streamCallbacks = called; });
    next();
  },
  '/gzip': (_q, res) => {
    const z = zlib.gzipSync(PAGE);
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': z.length });
    res.end(z);
  },
  '/negotiate': (q, res) => {
    // What `compression` does: gzip when the request accepts it.
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('vary', 'Accept-Encoding');
    const body = /\bgzip\b/.test(String(q.headers['accept-encoding'] || '')) ? (res.setHeader('content-encoding', 'gzip'), zlib.gzipSync(PAGE)) : Buffer.from(PAGE);
    res.setHeader('content-length', body.length);
    res.end(q.method === 'HEAD' ? undefined : body);
  },
  '/gzip-404': (_q, res) => {
    const z = zlib.gzipSync('<!doctype html><html><head></head><body>Not Found</body></html>');
    res.writeHead(404, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': z.length });
    res.end(z);
  },
  '/plain': (_q, res) => { res.setHeader('content-type', 'text/plain'); res.end(PAGE); },
  '/json': (_q, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.write('{"a":"<head>"'); res.end('}'); },
  '/already': (_q, res) => { res.setHeader('content-type', 'text/html'); res.end(PAGE.replace('<title>', '<title>x</title>' + TAG + '<title>')); },
  '/csp-block': (_q, res) => { res.setHeader('content-type', 'text/html'); res.setHeader('content-security-policy', "default-src 'self'"); res.end(PAGE); },
  '/csp-404': (_q, res) => {
    // Express's finalhandler: every browser's /favicon.ico gets this.
    res.statusCode = 404;
    res.setHeader('content-security-policy', "default-src 'none'");
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot GET /favicon.ico</pre>\n</body>\n</html>\n');
  },
  '/csp-ok': (_q, res) => {
    res.setHeader('content-type', 'text/html');
    res.setHeader('content-security-policy', "script-src 'self' http://" + HOST + "; connect-src 'self' ws://" + HOST);
    res.end(PAGE);
  },
  '/meta-csp': (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(META_PAGE) });
    res.end(META_PAGE);
  },
  '/meta-csp-404': (_q, res) => { res.statusCode = 404; res.setHeader('content-type', 'text/html'); res.end(META_PAGE); },
  '/meta-csp-ok': (_q, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(META_PAGE.replace("default-src 'self'", "script-src 'self' http://" + HOST + "; connect-src 'self' ws://" + HOST));
  },
  '/meta-in-head': (_q, res) => { res.setHeader('content-type', 'text/html'); res.end('<html><head>' + META_PAGE + '</head></html>'); },
  '/meta-report-only': (_q, res) => { res.setHeader('content-type', 'text/html'); res.end(META_PAGE.replace('Content-Security-Policy"', 'Content-Security-Policy-Report-Only"')); },
  '/nohead': (_q, res) => { res.setHeader('content-type', 'text/html'); res.end('<p>x</p><script>1</script>'); },
  '/bodyonly': (_q, res) => { res.setHeader('content-type', 'text/html'); res.end('<html><BODY class="a"><p>x</p></body>'); },
  '/fragment': (_q, res) => { res.setHeader('content-type', 'text/html'); res.end('<p>just a fragment</p>'); },
  '/big': (_q, res) => {
    res.setHeader('content-type', 'text/html');
    res.write('<html><head><style>');
    res.write('x'.repeat(MAX_PREFIX));
    res.end('</style></head><body></body></html>');
  },
  '/tiny': (_q, res) => {
    res.setHeader('content-type', 'text/html');
    for (const c of PAGE) res.write(c);
    res.end();
  },
  '/flushheaders': (_q, res) => {
    res.setHeader('content-type', 'text/html');
    res.setHeader('content-length', String(Buffer.byteLength(PAGE)));
    res.flushHeaders();
    res.end(PAGE);
  },
  '/writehead-flush': (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(Buffer.byteLength(PAGE)), etag: '"e"' });
    res.flushHeaders();
    res.write(PAGE.slice(0, 20));
    setTimeout(() => res.end(PAGE.slice(20)), 5);
  },
  '/bytes': (_q, res) => {
    res.setHeader('content-type', 'text/html');
    const b = new TextEncoder().encode(PAGE);
    res.write(b.subarray(0, 30));
    res.end(Buffer.from(b.subarray(30)).toString('latin1'), 'latin1', () => {});
  },
  '/304': (_q, res) => { res.writeHead(304, { 'content-type': 'text/html' }); res.end(); },
  '/express-head': (q, res) => {
    // What Express's res.send does: the length of the GET body, no body on HEAD.
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('content-length', String(Buffer.byteLength(PAGE)));
    if (q.method === 'HEAD') res.end(); else res.end(PAGE);
  },
};

/** @type {string[]} */
const warnings = [];

/** What Chromium sends when it opens a page. */
const NAVIGATION = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'accept-encoding': 'gzip, deflate, br', 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate' };
/** A page's fetch() of the same URL (Next's RSC payloads). */
const FETCH = { accept: '*/*', 'accept-encoding': 'gzip, deflate, br', 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'cors' };
/** A <script src> of the page. */
const SCRIPT = { accept: '*/*', 'accept-encoding': 'gzip, deflate, br', 'sec-fetch-dest': 'script', 'sec-fetch-mode': 'no-cors' };

/**
 * How the hook is put in: on ServerResponse.prototype (`run --inject`), by
 * the handler on each response before the route writes (injectResponse,
 * what the Express middleware does), or both (the middleware under `run
 * --inject`: still one tag, one hint). Each mode runs every test below.
 * @type {'prototype'|'response'|'both'}
 */
let mode = 'prototype';

/** While set, the server's handler wraps each response with these options. @type {any} */
let perResponse = null;

/** Starts the server; returns its port and a closer. */
async function serve() {
  const srv = http.createServer((q, res) => {
    if (perResponse) injectResponse(res, perResponse);
    (routes[/** @type {string} */ (q.url)] || routes['/end'])(q, res);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', () => r(undefined)));
  return { port: /** @type {any} */ (srv.address()).port, close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(r); }) };
}

/**
 * @param {number} port @param {string} path @param {string} [method] @param {Record<string, string>} [headers]
 * @returns {Promise<{status: number, headers: string[], body: Buffer}>}
 */
function get(port, path, method = 'GET', headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        /** @type {string[]} */
        const headers = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i].toLowerCase() !== 'date') headers.push(res.rawHeaders[i] + ': ' + res.rawHeaders[i + 1]);
        }
        resolve({ status: /** @type {number} */ (res.statusCode), headers, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Fetches path without the hook, then with it.
 * @param {string} path @param {string} [method] @param {Record<string, string>} [headers] the request's
 */
async function both(path, method, headers) {
  const s = await serve();
  try {
    const plain = await get(s.port, path, method, headers);
    const o = { snippet: TAG, marker: MARKER, host: HOST, warn: (/** @type {string} */ l) => warnings.push(l) };
    const uninstall = mode !== 'response' ? installInject(http, o) : () => {};
    if (mode !== 'prototype') perResponse = o;
    try {
      return { plain, injected: await get(s.port, path, method, headers) };
    } finally {
      uninstall();
      perResponse = null;
    }
  } finally {
    await s.close();
  }
}

/** @param {string[]} headers @param {string} name */
function header(headers, name) {
  const h = headers.filter((l) => l.toLowerCase().startsWith(name.toLowerCase() + ': '));
  return h.length ? h.map((l) => l.slice(name.length + 2)).join(', ') : undefined;
}

/** The body expected with the tag inserted where the page's text has `after`. @param {Buffer} body @param {string} after */
function withTag(body, after) {
  const at = body.indexOf(after) + Buffer.byteLength(after);
  return Buffer.concat([body.subarray(0, at), Buffer.from(TAG), body.subarray(at)]);
}

/** @param {{plain: any, injected: any}} r */
function assertUntouched(r) {
  assert.equal(r.injected.status, r.plain.status);
  assert.deepEqual(r.injected.headers, r.plain.headers);
  assert.ok(r.injected.body.equals(r.plain.body), 'body changed: ' + r.injected.body);
}

/**
 * The body has the tag; Content-Length, when sent, is its length.
 * @param {{plain: any, injected: any}} r @param {string} after
 */
function assertInjected(r, after) {
  assert.equal(r.injected.status, r.plain.status);
  assert.deepEqual(r.injected.body, withTag(r.plain.body, after));
  const cl = header(r.injected.headers, 'content-length');
  if (cl !== undefined) assert.equal(Number(cl), r.injected.body.length);
  return cl;
}

for (const m of /** @type {const} */ (['prototype', 'response', 'both'])) describe(m, () => {
  before(() => { mode = m; });

  for (const path of ['/end', '/setlength', '/writehead', '/flat', '/pairs']) {
    test('end(data) of an HTML page (' + path + '): the tag after <head>, exact Content-Length', async () => {
      const r = await both(path);
      const cl = assertInjected(r, '<head>');
      assert.equal(Number(cl), r.plain.body.length + Buffer.byteLength(TAG));
      // The other headers are kept, duplicates included; validators go.
      const other = (/** @type {string[]} */ h) => h.filter((l) => !/^(content-length|etag|last-modified):/i.test(l));
      assert.deepEqual(other(r.injected.headers), other(r.plain.headers));
      assert.equal(header(r.injected.headers, 'etag'), undefined);
      assert.equal(header(r.injected.headers, 'last-modified'), undefined);
    });
  }

  test('a streamed page: the tag in the chunk that completes the head, chunked, callbacks called', async () => {
    const r = await both('/stream');
    assertInjected(r, '<head lang="en">');
    assert.equal(header(r.injected.headers, 'transfer-encoding'), 'chunked');
    assert.equal(/** @type {any} */ (globalThis).streamCallbacks, 5);
  });

  for (const path of ['/flushheaders', '/writehead-flush']) {
    test('flushHeaders() before or after writeHead (' + path + '): the tag in, Content-Length absent or exact', async () => {
      const r = await both(path);
      assertInjected(r, '<head>');
      assert.equal(header(r.injected.headers, 'etag'), undefined);
      assert.equal(header(r.injected.headers, 'content-type'), 'text/html');
    });
  }

  test('a Uint8Array write, then end(string, encoding, cb)', async () => {
    assertInjected(await both('/bytes'), '<head>');
  });

  test('one-byte writes: injected once, in linear time', async () => {
    const r = await both('/tiny');
    assertInjected(r, '<head>');
  });

  test('a head larger than MAX_PREFIX: what was held is flushed with the tag', async () => {
    const r = await both('/big');
    assertInjected(r, '<head>');
  });

  test('no <head>: before the first <script>; only <body>: right after it', async () => {
    const r = await both('/nohead');
    assert.deepEqual(r.injected.body.toString(), '<p>x</p>' + TAG + '<script>1</script>');
    assertInjected(await both('/bodyonly'), '<BODY class="a">');
  });

  for (const path of ['/plain', '/json', '/already', '/fragment', '/304']) {
    test('byte-identical: ' + path, async () => { assertUntouched(await both(path)); });
  }

  test('gzip-compressed HTML is byte-identical, with one stderr line per process for a navigation (none for an error page or a fetch)', async () => {
    warnings.length = 0;
    assertUntouched(await both('/gzip-404', 'GET', NAVIGATION));
    assertUntouched(await both('/gzip', 'GET', FETCH));
    assertUntouched(await both('/gzip'));
    assert.deepEqual(warnings, []);
    const r = await both('/gzip', 'GET', NAVIGATION);
    assertUntouched(r);
    assert.equal(zlib.gunzipSync(r.injected.body).toString(), PAGE);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /Content-Encoding: gzip/);
  });

  test('an app that compresses what the request accepts: a navigation is answered uncompressed and injected (installInject); a fetch, a subresource and a HEAD stay gzip, byte-identical', async () => {
    warnings.length = 0;
    for (const h of [FETCH, SCRIPT, { 'accept-encoding': 'gzip' }]) {
      const r = await both('/negotiate', 'GET', h);
      assert.equal(header(r.plain.headers, 'content-encoding'), 'gzip');
      assertUntouched(r);
    }
    const head = await both('/negotiate', 'HEAD', NAVIGATION);
    assert.equal(header(head.injected.headers, 'content-encoding'), 'gzip');
    assert.deepEqual(head.injected.headers, head.plain.headers);
    const nav = await both('/negotiate', 'GET', NAVIGATION);
    assert.equal(header(nav.plain.headers, 'content-encoding'), 'gzip');
    if (mode === 'response') {
      // The middleware alone (--inject=false) changes no request: the app
      // compresses, the page is left as sent, with the hint.
      assertUntouched(nav);
      assert.equal(warnings.length, 1);
      return;
    }
    assert.equal(header(nav.injected.headers, 'content-encoding'), undefined);
    assert.equal(nav.injected.body.toString(), PAGE.replace('<head>', '<head>' + TAG));
    assert.equal(Number(header(nav.injected.headers, 'content-length')), nav.injected.body.length);
    const old = await both('/negotiate', 'GET', { accept: 'text/html,application/xhtml+xml', 'accept-encoding': 'gzip, deflate' });
    assert.equal(old.injected.body.toString(), PAGE.replace('<head>', '<head>' + TAG), 'a navigation without Sec-Fetch-*, told by Accept');
    assert.deepEqual(warnings, []);
  });

  test('a CSP that blocks the client: byte-identical and one line naming the header and the fix', async () => {
    warnings.length = 0;
    assertUntouched(await both('/csp-block'));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /Content-Security-Policy \(default-src 'self'\).*http:\/\/127\.0\.0\.1:9229 to script-src and ws:\/\/127\.0\.0\.1:9229 to connect-src/);
    assertInjected(await both('/csp-ok'), '<head>');
  });

  test('a CSP <meta http-equiv> before where the tag goes that blocks the client: byte-identical and the same one line (none for an error page); after <head>, allowing, or Report-Only: injected', async () => {
    warnings.length = 0;
    assertUntouched(await both('/meta-csp-404'));
    assert.deepEqual(warnings, []);
    assertUntouched(await both('/meta-csp'));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /^inspector-worker: the page's Content-Security-Policy <meta> tag \(default-src 'self'\) blocks the client.*add http:\/\/127\.0\.0\.1:9229 to script-src and ws:\/\/127\.0\.0\.1:9229 to connect-src$/);
    // The tag before the policy: it does not apply to the tag.
    assertInjected(await both('/meta-in-head'), '<head>');
    // Before the first <script> (right after </title>), after a policy that allows it or only reports.
    assertInjected(await both('/meta-csp-ok'), '</title>');
    assertInjected(await both('/meta-report-only'), '</title>');
    assert.equal(warnings.length, 1);
  });

  test("an error page with a blocking CSP (Express's 404): byte-identical, no line", async () => {
    warnings.length = 0;
    assertUntouched(await both('/csp-404'));
    assert.deepEqual(warnings, []);
  });

  test('HEAD: no body, no Content-Length promised; GET of the same page is injected', async () => {
    const head = await both('/express-head', 'HEAD');
    assert.equal(head.injected.body.length, 0);
    assert.equal(header(head.plain.headers, 'content-length'), String(Buffer.byteLength(PAGE)));
    assert.equal(header(head.injected.headers, 'content-length'), undefined);
    const other = (/** @type {string[]} */ h) => h.filter((l) => !/^content-length:/i.test(l));
    assert.deepEqual(other(head.injected.headers), other(head.plain.headers));
    assertInjected(await both('/express-head'), '<head>');
    const wh = await both('/writehead', 'HEAD');
    assert.equal(wh.injected.body.length, 0);
    assert.equal(header(wh.injected.headers, 'content-length'), undefined);
    assert.deepEqual(other(wh.injected.headers), other(wh.plain.headers));
    const plainHead = await both('/plain', 'HEAD');
    assertUntouched(plainHead);
  });
});

test('insertAt: anchors, marker, case and split tags', () => {
  assert.equal(insertAt('<HTML><HEAD data-x="1"><title>', ''), '<HTML><HEAD data-x="1">'.length);
  assert.equal(insertAt('<header>x</header><script>', ''), '<header>x</header>'.length);
  assert.equal(insertAt('<head>' + MARKER, MARKER), -1);
  assert.equal(insertAt('<p>', ''), -1);
});

test('metaPolicies: the content of each CSP <meta http-equiv>, entities decoded; other metas and Report-Only not', () => {
  assert.equal(metaPolicies('<head><meta charset="utf-8"><title>x</title>'), undefined);
  assert.deepEqual(metaPolicies(`<META HTTP-EQUIV=Content-Security-Policy CONTENT="script-src 'self'">`), ["script-src 'self'"]);
  assert.deepEqual(metaPolicies(`<meta content='default-src &#39;none&#39;' http-equiv='content-security-policy'/>`), ["default-src 'none'"]);
  assert.deepEqual(metaPolicies('<meta http-equiv="Content-Security-Policy-Report-Only" content="default-src \'none\'">'), undefined);
  assert.deepEqual(metaPolicies('<meta http-equiv="content-security-policy" content="img-src *"><meta http-equiv="Content-Security-Policy" content="connect-src \'self\'">'), ['img-src *', "connect-src 'self'"]);
  assert.equal(cspBlocks(metaPolicies('<meta http-equiv="content-security-policy" content="img-src *"><meta http-equiv="Content-Security-Policy" content="connect-src \'self\'">'), HOST), "connect-src 'self'");
});

test('withLength: object, flat array, pairs; added only where it was', () => {
  assert.deepEqual(withLength({ 'Content-Length': 3, a: 'b' }, 9), { a: 'b', 'Content-Length': '9' });
  assert.deepEqual(withLength({ a: 'b' }, 9), { a: 'b' });
  assert.deepEqual(withLength(['content-length', '3', 'a', 'b'], -1), ['a', 'b']);
  assert.deepEqual(withLength([['a', 'b'], ['Content-Length', '3']], 5), [['a', 'b'], ['Content-Length', '5']]);
  assert.deepEqual(withLength(['ETag', 'x', 'Last-Modified', 'y', 'a', 'b'], -1, true), ['a', 'b']);
  assert.deepEqual(withLength({ ETag: 'x' }, -1), { ETag: 'x' });
});

test('cspBlocks: what lets the client in and what does not', () => {
  assert.equal(cspBlocks(undefined, HOST), '');
  assert.equal(cspBlocks("img-src 'self'", HOST), '');
  assert.equal(cspBlocks("script-src 'self'", HOST), "script-src 'self'");
  assert.equal(cspBlocks("script-src * ; connect-src 'self'", HOST), "connect-src 'self'");
  assert.equal(cspBlocks("default-src 'self' http: ws:", HOST), '');
  assert.equal(cspBlocks("script-src 'nonce-x' 'strict-dynamic' http://" + HOST, HOST), "script-src 'nonce-x' 'strict-dynamic' http://" + HOST);
  assert.equal(cspBlocks(["default-src *", "script-src 'self'"], HOST), "script-src 'self'");
  // helmet's default
  assert.match(cspBlocks("default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self' https: 'unsafe-inline';upgrade-insecure-requests", HOST), /^script-src 'self'$/);
});

/**
 * A compressor as `compression` is one: it wraps the response's write/end
 * and hands the methods under it gzip bytes with Content-Encoding set.
 * @param {http.ServerResponse} res
 */
function gzipResponse(res) {
  /** @type {Buffer[]} */
  const chunks = [];
  const end = res.end;
  const take = (/** @type {any} */ c, /** @type {any} */ e) => { if (c && typeof c !== 'function') chunks.push(Buffer.from(c, typeof e === 'string' ? e : undefined)); };
  res.write = /** @type {any} */ (function (/** @type {any} */ c, /** @type {any} */ e) { take(c, e); return true; });
  res.end = /** @type {any} */ (function (/** @type {any} */ c, /** @type {any} */ e) {
    take(c, e);
    const z = zlib.gzipSync(Buffer.concat(chunks));
    res.setHeader('content-encoding', 'gzip');
    res.setHeader('content-length', z.length);
    return end.call(res, z);
  });
}

test('injectResponse after a compressor, under installInject too: the page injected before gzip, no hint line', async () => {
  warnings.length = 0;
  const o = { snippet: TAG, marker: MARKER, host: HOST, warn: (/** @type {string} */ l) => warnings.push(l) };
  const uninstall = installInject(http, o);
  const srv = http.createServer((_q, res) => {
    gzipResponse(res);
    injectResponse(res, o);
    res.setHeader('content-type', 'text/html');
    res.end(PAGE);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', () => r(undefined)));
  try {
    const r = await get(/** @type {any} */ (srv.address()).port, '/');
    assert.equal(header(r.headers, 'content-encoding'), 'gzip');
    assert.equal(Number(header(r.headers, 'content-length')), r.body.length);
    assert.equal(zlib.gunzipSync(r.body).toString(), PAGE.replace('<head>', '<head>' + TAG));
    assert.deepEqual(warnings, []);
  } finally {
    uninstall();
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  }
});
