// inject.mjs — `run --inject`: the host's HTML responses get the client's
// <script> tag, so pages join the window with no code in the app. Inlined
// by build.mjs into preload.cjs as IWInject.
//
// It wraps node:http's ServerResponse.prototype writeHead/write/end (what
// Express, Koa, Fastify, Vite's and Next's dev servers all end in), or —
// injectResponse, the explicit wiring of wiring/express.mjs — one
// response's own methods, with the same rules. A
// response is a candidate when, at the moment its headers are committed,
//   - Content-Type is text/html (any parameters),
//   - it has no Content-Encoding other than identity: a compressed body
//     is LEFT UNTOUCHED — the compressor wraps write/end per response and
//     calls ours with compressed bytes; decompressing and recompressing
//     would cost every page CPU and change its bytes for a debugging aid.
//     Instead a browser's GET navigation reaches the app without
//     Accept-Encoding (installInject only: identityForNavigations), so
//     Express `compression`, `next dev`/`next start` and the like answer
//     it uncompressed; a compressed 2xx navigation all the same gets one
//     stderr line per process,
//   - its status has a body (not 1xx, 204, 304),
//   - no Content-Security-Policy blocks the client (cspBlocks: then the
//     response is left alone and, for a 2xx page, ONE line per process
//     names the header and the fix; an error page's policy — Express's
//     404 sends default-src 'none' — gets no line). A policy in a
//     `<meta http-equiv>` tag applies only to what follows it: the tag
//     goes before a meta in <head> and the page joins (only evaluation is
//     refused where the policy forbids eval, which the page client says);
//     a blocking meta before the insertion point (a page without <head>)
//     counts as the header does (metaPolicies): page as held, same line.
// Everything else passes through byte-identical, without buffering.
//
// A candidate's body is held (never more than MAX_PREFIX bytes) until the
// head is complete: `</head` or `<body` seen, MAX_PREFIX reached, or end().
// Then, in that prefix (searched as latin1, so offsets are byte offsets and
// a UTF-8 character split between chunks does not matter):
//   - it already names this run's client (`marker`, the data-endpoint of
//     bootstrapSnippet()): untouched — no double injection;
//   - else the tag goes right after the first `<head…>`; without one, before
//     the first `<script`; without one, right after `<body…>`; with none of
//     them, nowhere (a fragment, not a page). The first of these in the
//     document wins, which in valid HTML is the same order.
// So the client runs before any script of the page.
//
// Content-Length: a response ended with end(data) whose whole body was
// held gets the exact new length; a streamed one (its prefix flushed before
// the end) loses Content-Length and goes chunked. A HEAD response to a
// candidate loses Content-Length too (the GET's body may or may not get
// the tag: a length is not promised) and its body — which Node never sends
// — is not touched. An explicit writeHead() of a candidate is held with
// the prefix and replayed, with its headers (object, flat array or array of
// pairs) minus or with the fixed Content-Length; res.statusCode is set at
// once, res.headersSent stays false until the prefix is flushed (so does
// a flushHeaders() before the first write; one after writeHead sends the
// held head at once, without Content-Length).
// An injected response also loses ETag and Last-Modified (VALIDATORS).
// http2's compatibility response is not node:http's and is not touched.

/**
 * Bytes of a candidate's body held at most while its head is incomplete: a
 * head larger than this (inline styles) is flushed and the tag inserted in
 * what was held. 64 KiB holds every real head seen (Vite, Next dev,
 * Express templates: under 4 KiB) and bounds the memory per response.
 */
export const MAX_PREFIX = 64 * 1024;

// On the prototype: installed once (a second preload does not wrap twice).
const INSTALLED = Symbol('inspectorWorkerInjectInstalled');
// On one response (injectResponse): wrapped once (a middleware used twice
// does not wrap twice), and the prototype's wrappers leave it to its own.
const OWN = Symbol('inspectorWorkerInjectResponse');

/**
 * @typedef {object} InjectOptions
 * @property {string} snippet the <script> tag (bootstrapSnippet())
 * @property {string} marker text whose presence means the page already has it
 * @property {string} host HOST:PORT of the worker (for the CSP check)
 * @property {(line: string) => void} warn prints one line on stderr
 */

/**
 * The stderr lines already printed, per options object: a preload passes one
 * object to installInject and to every injectResponse, so each hint is
 * printed once per process however the responses were wrapped.
 * @type {WeakMap<InjectOptions, Set<string>>}
 */
const warnedFor = new WeakMap();

/**
 * Wraps ServerResponse.prototype. Returns an uninstall function (tests).
 * @param {any} http node:http
 * @param {InjectOptions} o
 */
export function installInject(http, o) {
  const proto = http && http.ServerResponse && http.ServerResponse.prototype;
  if (!proto || !o.snippet || proto[INSTALLED]) return () => {};
  const orig = { writeHead: proto.writeHead, write: proto.write, end: proto.end };
  Object.assign(proto, wrappers(orig, o, true));
  proto[INSTALLED] = true;
  const unIdentity = identityForNavigations(http);
  return function uninstall() {
    unIdentity();
    Object.assign(proto, orig);
    delete proto[INSTALLED];
  };
}

/**
 * Makes the app answer a browser's page navigation uncompressed, so the page
 * can get the tag: http.Server.prototype.emit, for 'request' events of a
 * GET navigation (isNavigation), removes Accept-Encoding from the request
 * (req.headers and req.rawHeaders) before any listener sees it. A
 * compressor (`compression`, Next's, @fastify/compress, koa-compress) then
 * sends identity, which the browser takes as any server's answer. Every
 * other request — assets, fetch/XHR (Next's RSC payloads), HEAD — reaches
 * the app as sent and is answered as without the worker, compressed or not.
 * http.Server.prototype is where every node:http server's 'request' is
 * emitted (a framework's own `new http.Server` included); https.Server is
 * not under it (not hooked: a dev server on https keeps its compressed
 * pages, and the hint line says so). Returns the uninstall function.
 * @param {any} http node:http
 */
function identityForNavigations(http) {
  const sproto = http.Server && http.Server.prototype;
  if (!sproto) return () => {};
  const had = Object.prototype.hasOwnProperty.call(sproto, 'emit');
  const origEmit = sproto.emit;
  sproto.emit = function emit(/** @type {any} */ type, /** @type {any} */ req) {
    if (type === 'request') {
      try { if (pageRequest(req)) dropAcceptEncoding(req); } catch (e) { /* the request as sent */ }
    }
    return origEmit.apply(this, arguments);
  };
  return function uninstall() {
    if (had) sproto.emit = origEmit;
    else delete sproto.emit;
  };
}

/**
 * Whether request headers are a browser's navigation to a document (what a
 * user opens and expects to join), not a subresource or a fetch. Browsers
 * send Sec-Fetch-Dest to loopback and https origins: document, iframe or
 * frame is a navigation. Without it (a plain-http LAN address, an old
 * browser), a navigation is told by its Accept, which starts with text/html
 * in every browser (fetch() and XHR send no text/html first).
 * @param {Record<string, any>} h
 */
export function isNavigation(h) {
  const dest = h['sec-fetch-dest'];
  if (typeof dest === 'string') return dest === 'document' || dest === 'iframe' || dest === 'frame';
  return /^\s*text\/html\b/i.test(String(h.accept || ''));
}

/**
 * A GET navigation (browsers never navigate with HEAD; a HEAD's answer keeps
 * the app's headers, compressed or not). @param {any} req an http.IncomingMessage
 */
function pageRequest(req) {
  return !!req && req.method === 'GET' && !!req.headers && isNavigation(req.headers);
}

/** @param {any} req an http.IncomingMessage */
function dropAcceptEncoding(req) {
  if (!('accept-encoding' in req.headers)) return;
  delete req.headers['accept-encoding'];
  const raw = req.rawHeaders;
  if (!Array.isArray(raw)) return;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if (String(raw[i]).toLowerCase() === 'accept-encoding') raw.splice(i, 2);
  }
}

/**
 * Wraps one response (the explicit wiring: the Express middleware calls it
 * through the preload's injectResponse) with the same rules as
 * installInject, around whatever writeHead/write/end the response has now
 * — so a middleware registered after `compression` sees the page before it
 * is compressed, and injects it. Such a response is its wrappers' alone:
 * the prototype's (installInject) pass it through, so a compressed page
 * the middleware did inject gets no hint line. Returns whether it wrapped
 * (false: no snippet, or this response is wrapped already).
 * @param {any} res an http.ServerResponse
 * @param {InjectOptions} o
 */
export function injectResponse(res, o) {
  if (!res || typeof res.end !== 'function' || !o.snippet || Object.prototype.hasOwnProperty.call(res, OWN)) return false;
  const orig = { writeHead: res.writeHead, write: res.write, end: res.end };
  Object.assign(res, wrappers(orig, o, false));
  res[OWN] = true;
  return true;
}

/**
 * writeHead/write/end that hold a candidate's head and insert the tag,
 * calling orig's for everything they send.
 * @param {{writeHead: Function, write: Function, end: Function}} orig
 * @param {InjectOptions} o
 * @param {boolean} shared on the prototype: pass the responses injectResponse wrapped
 */
function wrappers(orig, o, shared) {
  // Per wrapping: a response wrapped both on its prototype and on itself
  // keeps two states (the prototype's passes it, see decide).
  const STATE = Symbol('inspectorWorkerInject');
  const snippet = Buffer.from(o.snippet, 'latin1');
  const seen = warnedFor.get(o) || new Set();
  warnedFor.set(o, seen);
  const warnOnce = (/** @type {string} */ key, /** @type {string} */ line) => {
    if (seen.has(key)) return;
    seen.add(key);
    try { o.warn(line); } catch (e) { /* never into the application */ }
  };

  /** The CSP hint, once per process. @param {string} what the policy and its blocking directive */
  const warnCSP = (what) => warnOnce('csp', 'inspector-worker: ' + what + ' blocks the client, so that page ' +
    'will not join the window; in development add http://' + o.host + ' to script-src and ws://' + o.host + ' to connect-src');

  /** @param {any} res @param {any} extra headers passed to writeHead */
  function decide(res, extra) {
    if (shared && Object.prototype.hasOwnProperty.call(res, OWN)) return 'pass';
    let h;
    try { h = mergedHeaders(res, extra); } catch (e) { return 'pass'; }
    if (!/^\s*text\/html\b/i.test(String(h['content-type'] || ''))) return 'pass';
    const status = Number(res.statusCode);
    if (status < 200 || status === 204 || status === 304) return 'pass';
    const enc = String(h['content-encoding'] || '').trim().toLowerCase();
    // The hints are for pages someone opens, not error pages (below).
    if (enc && enc !== 'identity') {
      // A compressed navigation is one whose app compressed what
      // identityForNavigations asked it not to (or, with injectResponse,
      // a middleware before the compressor); other requests (fetch, XHR)
      // are not pages anyone opens.
      if (status >= 300 || !pageRequest(res.req)) return 'pass';
      warnOnce('encoding', 'inspector-worker: an HTML response compressed with Content-Encoding: ' + enc +
        ' was left without the client\'s script tag (--inject does not touch compressed bodies); ' +
        'turn compression off in development, or register the inspector-worker Express middleware after compression ' +
        '(README "Frameworks")');
      return 'pass';
    }
    const csp = cspBlocks(h['content-security-policy'], o.host);
    if (csp) {
      // Error pages carry strict policies of their own (Express's 404, the
      // answer to every browser's /favicon.ico, sends default-src 'none'):
      // a hint for them would name a page nobody opened.
      if (status >= 300) return 'pass';
      warnCSP('the page\'s Content-Security-Policy (' + csp + ')');
      return 'pass';
    }
    const req = res.req;
    if (req && req.method === 'HEAD') return 'head';
    return 'buffer';
  }

  /** @param {any} res */
  function state(res) {
    let st = res[STATE];
    if (!st) {
      st = { mode: 'undecided', chunks: /** @type {Buffer[]} */ ([]), size: 0, cbs: /** @type {any[]} */ ([]), tail: '', head: /** @type {any[]|null} */ (null) };
      res[STATE] = st;
    }
    return st;
  }

  /** Called once the headers are about to be committed without writeHead. @param {any} res */
  function decideImplicit(res) {
    const st = state(res);
    if (st.mode !== 'undecided') return st;
    if (res.headersSent) { st.mode = 'pass'; return st; }
    st.mode = decide(res, null);
    if (st.mode === 'head') {
      try { res.removeHeader('content-length'); } catch (e) { /* ignore */ }
      st.mode = 'pass';
    }
    return st;
  }

  /**
   * Sends what was held: headers (a held writeHead replayed), the prefix
   * with the tag if it goes in, then the rest as the application wrote it.
   * @param {any} res @param {any} st @param {boolean} final @param {any} [endCb]
   */
  function flush(res, st, final, endCb) {
    st.mode = 'pass';
    const data = st.chunks.length === 1 ? st.chunks[0] : Buffer.concat(st.chunks, st.size);
    const had = st.chunks.length > 0;
    st.chunks = [];
    const text = data.toString('latin1');
    let at = insertAt(text, o.marker);
    if (at >= 0) {
      // Only a <meta> policy BEFORE the tag applies to it (a meta policy
      // governs what the parser meets after it): after <head> there is
      // none; in a page without <head> there can be.
      const csp = cspBlocks(metaPolicies(text.slice(0, at)), o.host);
      if (csp) {
        // As for the header (decide): the page as sent, one line, none
        // for an error page.
        at = -1;
        if (Number(res.statusCode) < 300) warnCSP('the page\'s Content-Security-Policy <meta> tag (' + csp + ')');
      }
    }
    const out = at < 0 ? data : Buffer.concat([data.subarray(0, at), snippet, data.subarray(at)]);
    // Content-Length: exact when the whole body is here, else none.
    const length = at < 0 ? null : final ? out.length : -1;
    if (st.head) {
      const [status, reason, headers] = st.head;
      st.head = null;
      if (length !== null) fixLength(res, length, true);
      const fixed = length === null ? headers : withLength(headers, length, true);
      if (reason !== undefined) orig.writeHead.call(res, status, reason, fixed);
      else orig.writeHead.call(res, status, fixed);
    } else if (length !== null && !res.headersSent) {
      fixLength(res, length, true);
    }
    const cbs = st.cbs;
    st.cbs = [];
    const done = cbs.length === 0 ? undefined : (/** @type {any} */ err) => { for (const cb of cbs) { try { cb(err); } catch (e) { /* as Node would */ } } };
    if (final) {
      const cb = done && endCb ? (/** @type {any} */ err) => { done(err); endCb(); } : done || endCb;
      return had ? orig.end.call(res, out, cb) : orig.end.call(res, cb);
    }
    return orig.write.call(res, out, done);
  }

  /**
   * The headers go out while the prefix is held — flushHeaders(), or a
   * second writeHead (which Node would refuse; the held one is sent): as
   * for a streamed body, without Content-Length and validators.
   * @param {any} res @param {any} st @param {any} args writeHead's
   */
  function commitEarly(res, st, args) {
    fixLength(res, -1, true);
    if (!st.head) return orig.writeHead.apply(res, args);
    const [status, reason, headers] = st.head;
    st.head = null;
    const fixed = withLength(headers, -1, true);
    return reason !== undefined ? orig.writeHead.call(res, status, reason, fixed) : orig.writeHead.call(res, status, fixed);
  }

  function writeHead(/** @type {any} */ status, /** @type {any} */ reason, /** @type {any} */ headers) {
    const st = state(this);
    if (st.mode === 'buffer' && !this.headersSent) return commitEarly(this, st, arguments);
    if (st.mode !== 'undecided' || this.headersSent) return orig.writeHead.apply(this, arguments);
    const explicitReason = typeof reason === 'string';
    const h = explicitReason ? headers : reason;
    const saved = this.statusCode;
    this.statusCode = status;
    const mode = decide(this, h);
    if (mode === 'buffer') {
      st.mode = 'buffer';
      st.head = [status, explicitReason ? reason : undefined, h];
      if (explicitReason) this.statusMessage = reason;
      return this;
    }
    st.mode = 'pass';
    this.statusCode = saved;
    if (mode === 'head') {
      try { if (this.hasHeader('content-length')) this.removeHeader('content-length'); } catch (e) { /* ignore */ }
      if (explicitReason) return orig.writeHead.call(this, status, reason, withLength(headers, -1));
      return orig.writeHead.call(this, status, withLength(reason, -1));
    }
    return orig.writeHead.apply(this, arguments);
  }

  function write(/** @type {any} */ chunk, /** @type {any} */ encoding, /** @type {any} */ cb) {
    const st = decideImplicit(this);
    if (st.mode !== 'buffer') return orig.write.apply(this, arguments);
    if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    try {
      const b = toBuffer(chunk, encoding);
      st.chunks.push(b);
      st.size += b.length;
    } catch (e) {
      // Not a chunk Node takes either: let Node throw its own error.
      flush(this, st, false);
      return orig.write.apply(this, arguments);
    }
    if (typeof cb === 'function') st.cbs.push(cb);
    if (st.size >= MAX_PREFIX || headComplete(st, st.chunks[st.chunks.length - 1])) return flush(this, st, false);
    return true;
  }

  function end(/** @type {any} */ chunk, /** @type {any} */ encoding, /** @type {any} */ cb) {
    const st = decideImplicit(this);
    if (st.mode !== 'buffer') return orig.end.apply(this, arguments);
    if (typeof chunk === 'function') { cb = chunk; chunk = undefined; }
    else if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
    if (chunk !== undefined && chunk !== null) {
      try {
        const b = toBuffer(chunk, encoding);
        st.chunks.push(b);
        st.size += b.length;
      } catch (e) {
        flush(this, st, false);
        return orig.end.apply(this, arguments);
      }
    }
    flush(this, st, true, typeof cb === 'function' ? cb : undefined);
    return this;
  }

  return { writeHead, write, end };
}

/**
 * A Content-Length set with setHeader becomes length (-1: removed); with
 * validators, ETag and Last-Modified go too (see VALIDATORS).
 * @param {any} res @param {number} length @param {boolean} [validators]
 */
function fixLength(res, length, validators) {
  try {
    if (validators) for (const v of VALIDATORS) res.removeHeader(v);
    if (!res.hasHeader('content-length')) return;
    if (length >= 0) res.setHeader('content-length', length);
    else res.removeHeader('content-length');
  } catch (e) { /* headers gone: nothing to fix */ }
}

/** @param {any} chunk @param {any} encoding */
function toBuffer(chunk, encoding) {
  if (typeof chunk === 'string') return Buffer.from(chunk, encoding || 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError('not a chunk');
}

/**
 * Whether the held prefix now holds `</head` or `<body`: only the new chunk
 * and the last 5 bytes before it are searched (a tag split between writes),
 * so many tiny writes cost linear time.
 * @param {{tail: string}} st @param {Buffer} chunk
 */
function headComplete(st, chunk) {
  const text = st.tail + chunk.toString('latin1');
  st.tail = text.slice(-5);
  return /<\/head\b|<body\b/i.test(text);
}

/**
 * Where the tag goes in a head prefix, or -1 for nowhere.
 * @param {string} text the prefix, latin1
 * @param {string} marker
 */
export function insertAt(text, marker) {
  if (marker && text.includes(marker)) return -1;
  const m = /<head(?:\s[^>]*)?>|<script\b|<body(?:\s[^>]*)?>/i.exec(text);
  if (!m) return -1;
  return /^<script/i.test(m[0]) ? m.index : m.index + m[0].length;
}

/**
 * The header names and values of the response, with writeHead's own.
 * @param {any} res @param {any} extra
 * @returns {Record<string, any>}
 */
function mergedHeaders(res, extra) {
  /** @type {Record<string, any>} */
  const h = Object.assign({}, res.getHeaders());
  if (Array.isArray(extra)) {
    if (extra.length && Array.isArray(extra[0])) {
      for (const [k, v] of extra) h[String(k).toLowerCase()] = v;
    } else {
      for (let i = 0; i + 1 < extra.length; i += 2) h[String(extra[i]).toLowerCase()] = extra[i + 1];
    }
  } else if (extra && typeof extra === 'object') {
    for (const k of Object.keys(extra)) h[k.toLowerCase()] = extra[k];
  }
  return h;
}

/**
 * An injected response loses its validators: the tag carries this run's
 * token, and the app's ETag / Last-Modified describe the page without it,
 * so a copy cached in one run would be revalidated (304) in the next and
 * the browser would reuse the old run's tag, which the new worker refuses.
 * Without them the page is fetched whole; a dev server's HTML is small.
 */
const VALIDATORS = ['etag', 'last-modified'];

/**
 * writeHead's headers with Content-Length replaced by length (-1: removed),
 * and with validators, without ETag and Last-Modified.
 * @param {any} headers object, flat array or array of pairs
 * @param {number} length
 * @param {boolean} [validators]
 */
export function withLength(headers, length, validators) {
  const drop = (/** @type {any} */ k) => validators === true && VALIDATORS.includes(String(k).toLowerCase());
  const isLen = (/** @type {any} */ k) => String(k).toLowerCase() === 'content-length';
  if (Array.isArray(headers)) {
    if (headers.length && Array.isArray(headers[0])) {
      const out = headers.filter((p) => !isLen(p[0]) && !drop(p[0]));
      if (length >= 0 && out.length !== headers.length) out.push(['Content-Length', String(length)]);
      return out;
    }
    /** @type {any[]} */
    const out = [];
    let had = false;
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (isLen(headers[i])) had = true;
      else if (!drop(headers[i])) out.push(headers[i], headers[i + 1]);
    }
    if (length >= 0 && had) out.push('Content-Length', String(length));
    return out;
  }
  if (!headers || typeof headers !== 'object') return headers;
  /** @type {Record<string, any>} */
  const out = {};
  let had = false;
  for (const k of Object.keys(headers)) {
    if (isLen(k)) had = true;
    else if (!drop(k)) out[k] = headers[k];
  }
  if (length >= 0 && had) out['Content-Length'] = String(length);
  return out;
}

/**
 * The directive of a Content-Security-Policy that would block the client
 * (its script from http://HOST and its socket to ws://HOST), or '' when
 * none does. Each policy (several headers, or one joined by commas) is
 * enforced on its own, so any blocking one blocks. A source list allows the
 * client with `*`, the scheme (`http:` / `ws:`), or the worker's
 * host[:port] with that scheme; 'strict-dynamic' ignores host sources, so a
 * script-src with it blocks. <meta http-equiv> policies: metaPolicies.
 * @param {any} header
 * @param {string} host HOST:PORT
 */
export function cspBlocks(header, host) {
  if (header === undefined || header === null) return '';
  const policies = (Array.isArray(header) ? header : [header]).flatMap((p) => String(p).split(','));
  for (const policy of policies) {
    /** @type {Record<string, string[]>} */
    const dirs = {};
    for (const part of policy.split(';')) {
      const words = part.trim().split(/\s+/).filter(Boolean);
      if (words.length === 0) continue;
      const name = words[0].toLowerCase();
      if (!(name in dirs)) dirs[name] = words.slice(1);
    }
    const script = dirs['script-src-elem'] || dirs['script-src'] || dirs['default-src'];
    if (script && !allows(script, 'http', host, true)) {
      return (dirs['script-src-elem'] ? 'script-src-elem ' : dirs['script-src'] ? 'script-src ' : 'default-src ') + script.join(' ');
    }
    const connect = dirs['connect-src'] || dirs['default-src'];
    if (connect && !allows(connect, 'ws', host, false)) {
      return (dirs['connect-src'] ? 'connect-src ' : 'default-src ') + connect.join(' ');
    }
  }
  return '';
}

/**
 * The policies of the `<meta http-equiv="Content-Security-Policy">` tags in
 * text (latin1), for cspBlocks. A meta policy is enforced from where the
 * parser meets it on, so the caller passes the text before the tag's
 * insertion point. Report-Only is not a meta http-equiv value browsers
 * honour and is not matched.
 * @param {string} text
 * @returns {string[] | undefined} undefined: no such tag
 */
export function metaPolicies(text) {
  /** @type {string[]} */
  const out = [];
  const tags = /<meta\b[^>]*>/gi;
  for (let m = tags.exec(text); m; m = tags.exec(text)) {
    const attrs = m[0];
    if (!/\bhttp-equiv\s*=\s*(["']?)content-security-policy\1(?=[\s/>])/i.test(attrs)) continue;
    const c = /\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i.exec(attrs);
    if (!c) continue;
    out.push((c[1] ?? c[2] ?? c[3]).replace(/&(quot|#34|apos|#39|amp);/gi, (_e, n) =>
      ({ quot: '"', '#34': '"', apos: "'", '#39': "'", amp: '&' })[String(n).toLowerCase()] || ''));
  }
  return out.length ? out : undefined;
}

/** @param {string[]} list @param {string} scheme @param {string} host @param {boolean} script */
function allows(list, scheme, host, script) {
  const lower = list.map((s) => s.toLowerCase());
  if (script && lower.includes("'strict-dynamic'")) return false;
  return lower.some((s) => s === '*' || s === scheme + ':' || s === scheme + '://' + host ||
    s.startsWith(scheme + '://' + host + '/'));
}
