// capture.mjs — fetch capture shared by the host preload (preload.cjs) and
// the page client (client.js): wraps a realm's fetch (and, in pages,
// XMLHttpRequest) and turns each call into `fetch` items of the internal
// protocol (docs/protocol.md "Items and topics", FetchEvent).
//
// Like runtime.mjs it is not shipped on its own: build.mjs inlines it, after
// core.mjs and bodytap.mjs, into preload.cjs, embed.mjs and client.js as
// `IWCapture`. Edit this file, then run `node client/js/build.mjs`.
//
// What the application sees must not change, whatever happens here:
//   - the wrapper hands the original fetch a Request built from the
//     caller's arguments (so the body can be cloned once); when that
//     Request cannot be built, the original fetch is called with the
//     caller's own arguments and produces its own error;
//   - the caller's promise settles with the original Response, or the
//     original error object, one microtask after the original fetch's
//     promise (it is a `then` of it: a rejection the app does not handle
//     is still reported unhandled, with the same reason);
//   - request bodies are read from a Request.clone() (fetch reads its own
//     branch to the end, so the tee never waits on the capture);
//   - a response body is NOT teed (bodytap.mjs says why): the application
//     gets a Response of the same class and the same status, headers, url,
//     type and redirected, whose body is a stream of the capture's
//     (BodyTap): it reads the original body ahead of the application up to
//     the per-body budget, recording each chunk and queueing it, unchanged,
//     for the application; past the budget it only passes reads through;
//     the application's cancel (in any form) cancels the original body at
//     once, and so does the stream being garbage-collected unread. The
//     application's stream holds at most ~budget bytes more than the
//     original would without capture;
//   - every capture step runs inside try/catch; a failure only loses items.
//
// Items go into the Producer's bounded queue (oldest dropped), never
// anywhere else. Phases of one id are queued in the protocol's order:
// request, request body chunks, response, response body chunks, then
// finished or failed; a response that arrives while the request body is
// still being read waits (bounded by the response budget) behind it.

import { nowMs, capString, bytesToBase64, stackHolder, stackOfHolder } from './core.mjs';
import { readBody, responseShape } from './bodytap.mjs';

/** Default per-body budget (bytes of each body kept); env INSPECTOR_WORKER_CAPTURE_BODY_BYTES overrides it on the host. */
export const CAPTURE_BODY_BYTES = 1 << 20;
/** Headers of one request or response (sourceproto.MaxHeaders). */
export const CAPTURE_MAX_HEADERS = 256;
// Caps that keep the head items far below MaxFrameBytes: 256 headers of
// 2 KiB values are 512 KiB at most.
const URL_BYTES = 8192;
const NAME_BYTES = 256;
const VALUE_BYTES = 2048;
const MESSAGE_BYTES = 2048;

let counter = 0;
const idPrefix = 'f' + Math.floor(Math.random() * 0x100000).toString(36) + '.';

/** A new fetch id, unique in this realm (and so within any generation). */
export function captureId() {
  counter++;
  return idPrefix + counter;
}

/**
 * Where records put their items: the realm's Producer (enqueueJSON,
 * enqueueLater, limits) and the realm's own-frame test for stacks.
 * @typedef {{producer: any, isOwn: (f: {url: string}) => boolean, budget: number}} CaptureSink
 */

/**
 * @typedef {object} RequestHead
 * @property {string} url
 * @property {string} method
 * @property {Array<{name:string, value:string}>|(() => Array<{name:string, value:string}>)} headers
 *   a function: listed when the item is sent (headers nobody can change)
 * @property {boolean} [hasBody]
 * @property {string} [kind] "xhr" | "http" (absent: "fetch")
 * @property {boolean} [bodiesNotRead]
 */

/**
 * One captured request: builds its items and keeps their order.
 */
export class FetchRecord {
  /**
   * @param {CaptureSink} sink
   */
  constructor(sink) {
    this.sink = sink;
    this.id = captureId();
    /** @type {Array<() => void>|null} items waiting for the request body (see hold) */
    this.held = null;
    this.done = false;
    this.requestBytes = 0;
    this.responseBytes = 0;
    this.requestTruncated = false;
    this.responseTruncated = false;
  }

  /** @param {string} phase @param {number} ts */
  head(phase, ts) {
    return '{"fetch":{"id":"' + this.id + '","phase":"' + phase + '","timestamp":' + ts + ',"' + phase + '":';
  }

  /**
   * Queues now, or after the held request body.
   * @param {() => void} fn
   */
  emit(fn) {
    if (this.held) this.held.push(fn);
    else safe(fn);
  }

  /** Later items wait until release(): the request body is being read. */
  hold() { if (!this.held) this.held = []; }

  release() {
    const h = this.held;
    this.held = null;
    if (h) for (const fn of h) safe(fn);
  }

  /**
   * The request phase. The stack (a stackHolder taken in the caller's
   * call) is formatted when the item is sent, off the caller's path.
   * @param {RequestHead} r
   * @param {number} ts
   * @param {any} [holder]
   */
  request(r, ts, holder) {
    const list = typeof r.headers === 'function' ? r.headers : null;
    /** @type {Record<string, any>} */
    const body = { url: capString(r.url, URL_BYTES), method: capString(r.method, NAME_BYTES) || 'GET', headers: list ? [] : r.headers };
    if (r.hasBody) body.hasBody = true;
    if (r.kind) body.kind = r.kind;
    if (r.bodiesNotRead) body.bodiesNotRead = true;
    const head = this.head('request', ts);
    const sink = this.sink;
    const build = () => {
      if (list) body.headers = list();
      if (holder) {
        const st = stackOfHolder(holder, sink.isOwn);
        if (st) body.stackTrace = st;
      }
      return head + JSON.stringify(body) + '}}';
    };
    const bytes = headBytes(r.url, list ? [] : /** @type {any} */ (r.headers)) + (list ? LAZY_HEADERS_BYTES : 0) + 4096;
    this.emit(() => sink.producer.enqueueLater('fetch', build, bytes));
  }

  /**
   * The response phase (headers received at ts).
   * @param {{url:string, status:number, statusText:string, headers:Array<{name:string,value:string}>|(() => Array<{name:string,value:string}>), redirected?:boolean, type?:string}} r
   *   headers as a function: listed when the item is sent (immutable ones)
   * @param {number} ts
   */
  response(r, ts) {
    /** @type {Record<string, any>} */
    const body = {
      url: capString(r.url, URL_BYTES),
      status: r.status >= 0 && r.status <= 999 ? Math.floor(r.status) : 0,
      statusText: capString(r.statusText, NAME_BYTES),
      headers: r.headers,
    };
    if (r.redirected) body.redirected = true;
    if (r.type) body.type = capString(r.type, 64);
    const head = this.head('response', ts);
    if (typeof r.headers !== 'function') {
      const json = head + JSON.stringify(body) + '}}';
      this.emit(() => this.sink.producer.enqueueJSON('fetch', json));
      return;
    }
    // Headers that cannot change (a fetch Response's are immutable) are
    // listed when the item is sent, off the application's call.
    const list = r.headers;
    const build = () => {
      body.headers = list();
      return head + JSON.stringify(body) + '}}';
    };
    this.emit(() => this.sink.producer.enqueueLater('fetch', build, headBytes(r.url, []) + LAZY_HEADERS_BYTES));
  }

  /**
   * One body chunk; data is copied (base64) now.
   * @param {'request'|'response'} part
   * @param {number} offset
   * @param {Uint8Array} data
   */
  chunk(part, offset, data) {
    const b64 = bytesToBase64(data);
    const json = this.head('body', nowMs()) + '{"part":"' + part + '","offset":' + offset + ',"data":"' + b64 + '"}}}';
    // All ASCII, three objects, three levels: measured without a scan.
    const m = { bytes: json.length, objects: 3, depth: 3, maxString: Math.max(b64.length, this.id.length) };
    const fn = () => this.sink.producer.enqueueJSON('fetch', json, undefined, m);
    // Request body chunks are what the hold waits for: never held.
    if (part === 'request') safe(fn); else this.emit(fn);
  }

  /** The finished phase, once. */
  finish() {
    if (this.done) return;
    this.done = true;
    const ts = nowMs();
    /** @type {Record<string, any>} */
    const body = { requestBytes: this.requestBytes, responseBytes: this.responseBytes };
    if (this.requestTruncated) body.requestTruncated = true;
    if (this.responseTruncated) body.responseTruncated = true;
    const json = this.head('finished', ts) + JSON.stringify(body) + '}}';
    this.emit(() => this.sink.producer.enqueueJSON('fetch', json));
  }

  /**
   * The failed phase, once.
   * @param {string} message
   * @param {boolean} aborted
   */
  fail(message, aborted) {
    if (this.done) return;
    this.done = true;
    const ts = nowMs();
    /** @type {Record<string, any>} */
    const body = { message: capString(message || 'failed', MESSAGE_BYTES) };
    if (aborted) body.aborted = true;
    const json = this.head('failed', ts) + JSON.stringify(body) + '}}';
    this.emit(() => this.sink.producer.enqueueJSON('fetch', json));
  }
}

/** @param {() => void} fn */
function safe(fn) {
  try { fn(); } catch (e) { /* capture never throws into the application */ }
}

// The queue's estimate of headers listed only when sent (the item is
// measured then): 16 typical headers.
const LAZY_HEADERS_BYTES = 2048;

/**
 * An estimate of a head item's size, for the queue's byte bound before the
 * item is built.
 * @param {string} url
 * @param {Array<{name:string, value:string}>} headers
 */
function headBytes(url, headers) {
  let n = 256 + Math.min(url.length * 3, URL_BYTES);
  for (const h of headers) n += h.name.length + h.value.length * 3 + 24;
  return n;
}

/**
 * A header list from name/value pairs: at most CAPTURE_MAX_HEADERS,
 * names and values capped.
 * @param {Iterable<[string, string]>} pairs
 */
export function headerList(pairs) {
  /** @type {Array<{name:string, value:string}>} */
  const out = [];
  try {
    for (const [k, v] of pairs) {
      if (out.length >= CAPTURE_MAX_HEADERS) break;
      out.push({ name: capString(String(k), NAME_BYTES), value: capString(String(v), VALUE_BYTES) });
    }
  } catch (e) { /* a broken iterator: what we have */ }
  return out;
}

/**
 * An error's text with its cause's: "fetch failed: connect ECONNREFUSED …".
 * @param {any} e
 */
export function errorMessage(e) {
  const one = (/** @type {any} */ x) => {
    try {
      if (x !== null && typeof x === 'object') {
        const msg = x.message;
        if (typeof msg === 'string' && msg) return msg;
        const name = x.name;
        if (typeof name === 'string' && name) return name;
      }
      return String(x);
    } catch (err) {
      return 'error';
    }
  };
  let text = one(e);
  try {
    let c = e !== null && typeof e === 'object' ? e.cause : undefined;
    for (let i = 0; i < 4 && c !== undefined && c !== null; i++) {
      const t = one(c);
      if (t && text.indexOf(t) < 0) text += ': ' + t;
      c = typeof c === 'object' ? c.cause : undefined;
    }
  } catch (err) { /* a throwing getter */ }
  return text;
}

/** @param {any} headers a Headers object */
function headersOf(headers) {
  try { return headerList(headers); } catch (e) { return []; }
}

/**
 * Wraps global.fetch. Returns a function that puts the original back (only
 * while the wrapper is still installed), or null when there is no fetch.
 * @param {any} global the realm's global object
 * @param {CaptureSink & {enabled?: () => boolean, Request?: any}} sink
 */
export function wrapFetch(global, sink) {
  /** @type {any} */
  let orig;
  try { orig = global.fetch; } catch (e) { return null; }
  const Req = sink.Request || global.Request;
  if (typeof orig !== 'function' || typeof Req !== 'function') return null;
  const enabled = sink.enabled || (() => true);
  /** @type {import('./bodytap.mjs').ResponseShape|null} */
  let shape = null;
  try { shape = responseShape(global); } catch (e) { shape = null; }
  /** @type {any} */
  const wrapper = function fetch(/** @type {any} */ input, /** @type {any} */ init) {
    /** @type {FetchRecord|null} */
    let rec = null;
    /** @type {{url: string, method: string, headers: any, signal: any, request: any, own: boolean, abortable: boolean}|null} */
    let h = null;
    let holder;
    if (enabled()) {
      try {
        holder = stackHolder();
        h = bodyless(global, input, init, arguments.length) ||
          normalized(arguments.length > 1 ? new Req(input, init) : new Req(input),
            input instanceof Req || (arguments.length > 1 && !!init && typeof init === 'object' && init.signal != null));
        rec = new FetchRecord(sink);
      } catch (e) {
        rec = null; // the original call makes (and reports) the same error
      }
    }
    // @ts-ignore -- `this` is whatever the caller used
    if (!rec || !h) return orig.apply(this, arguments);
    const r = rec, head = h;
    let reqClone = null;
    try {
      reqClone = head.request && head.request.body ? head.request.clone() : null;
    } catch (e) { reqClone = null; }
    try {
      const hs = head.headers;
      // Headers only the wrapper holds (its own Request, its copy of
      // init.headers) are listed when sent; the caller's Request's now.
      const headers = head.own ? () => headersOf(hs) : headersOf(hs);
      r.request({ url: head.url, method: head.method, headers, hasBody: !!reqClone }, nowMs(), holder);
      if (reqClone) {
        r.hold();
        readBody(r, 'request', reqClone.body).then(() => r.release(), () => r.release());
      }
    } catch (e) { /* items lost, the call goes on */ }
    let p;
    try {
      // @ts-ignore -- `this` is whatever the caller used
      p = head.request ? orig.call(this, head.request) : orig.apply(this, arguments);
    } catch (e) {
      safe(() => r.fail(errorMessage(e), signalAborted(head.signal)));
      throw e; // the same object, synchronously, as without capture
    }
    if (!p || typeof p.then !== 'function') return p;
    return p.then((/** @type {any} */ res) => {
      let out = res;
      safe(() => { out = onResponse(r, head, res, shape); });
      return out;
    }, (/** @type {any} */ e) => {
      safe(() => r.fail(errorMessage(e), signalAborted(head.signal)));
      throw e;
    });
  };
  try { Object.defineProperty(wrapper, 'name', { value: orig.name, configurable: true }); } catch (e) { /* ignore */ }
  try { Object.defineProperty(wrapper, 'length', { value: orig.length, configurable: true }); } catch (e) { /* ignore */ }
  try { global.fetch = wrapper; } catch (e) { return null; }
  if (global.fetch !== wrapper) return null;
  return () => { try { if (global.fetch === wrapper) global.fetch = orig; } catch (e) { /* ignore */ } };
}

/** @param {any} signal */
function signalAborted(signal) {
  try { return !!(signal && signal.aborted); } catch (e) { return false; }
}

// Methods fetch normalizes to upper case (the Fetch standard's list).
const NORMALIZED_METHODS = /^(delete|get|head|options|post|put)$/i;

/**
 * The head of a call without a body, read from the caller's own arguments,
 * which then go to the original fetch unchanged: building a Request costs
 * about a third of a whole loopback fetch in Node 20 (each makes its own
 * AbortSignal), and there is no body to tee. null when the call has (or
 * may have) a body, or anything is unusual: the caller's arguments are
 * then normalized into one Request.
 * @param {any} global
 * @param {any} input
 * @param {any} init
 * @param {number} argc
 */
function bodyless(global, input, init, argc) {
  if (argc > 1 && init !== undefined && init !== null) {
    if (typeof init !== 'object' || (init.body !== undefined && init.body !== null)) return null;
  } else {
    init = undefined;
  }
  const R = global.Request;
  let url, method = 'GET', headers = null, signal = null, own = true;
  if (typeof input === 'string' || (global.URL && input instanceof global.URL)) {
    // A page resolves relative URLs against its base URL (<base href>).
    const base = (global.document && global.document.baseURI) || (global.location && global.location.href);
    url = (base ? new URL(String(input), String(base)) : new URL(String(input))).href;
  } else if (typeof R === 'function' && input instanceof R) {
    if (input.body !== null) return null;
    url = String(input.url);
    method = String(input.method);
    headers = input.headers;
    own = false; // the caller's Request: its headers may change after the call
    signal = input.signal;
  } else {
    return null;
  }
  if (init) {
    if (init.method !== undefined) {
      const m = String(init.method);
      method = NORMALIZED_METHODS.test(m) ? m.toUpperCase() : m;
    }
    if (init.headers !== undefined) {
      headers = new global.Headers(init.headers);
      own = true;
    }
    if (init.signal !== undefined) signal = init.signal;
  }
  return { url, method, headers: headers || [], signal, request: null, own, abortable: signal !== null };
}

/**
 * @param {any} req a Request the wrapper made
 * @param {boolean} abortable the caller gave a signal (or a Request, which may carry one)
 */
function normalized(req, abortable) {
  return { url: String(req.url), method: String(req.method), headers: req.headers, signal: req.signal, request: req, own: true, abortable };
}

/**
 * The original fetch resolved: the response head now, then the body
 * through a BodyTap (the Response the application gets is the returned
 * one), or, where no tap can be made, from a clone.
 * @param {FetchRecord} rec
 * @param {{url: string, signal: any, abortable?: boolean}} req
 * @param {any} res
 * @param {import('./bodytap.mjs').ResponseShape|null} shape
 * @returns {any} the Response for the application
 */
function onResponse(rec, req, res, shape) {
  const ts = nowMs();
  let body = null;
  try { body = res.body; } catch (e) { body = null; }
  let out = null;
  if (body) {
    /** @type {import('./bodytap.mjs').TapReport} */
    const report = {
      error: (e) => rec.fail(errorMessage(e), signalAborted(req.signal) || isAbort(e)),
      reason: errorMessage,
      aborted: () => signalAborted(req.signal),
    };
    // The tap reads nothing before its first await: the response item
    // below still goes before any body chunk.
    // A call that can be aborted keeps the constructed Response: Node's
    // abort cancels the body in the Response's state when nobody reads it
    // yet, which would disturb the swapped stream (the app's text() then
    // threw "Body is unusable" instead of the AbortError it gets without
    // capture).
    try { out = shape ? shape.wrap(rec, res, report, !req.abortable) : null; } catch (e) { out = null; }
  }
  // Node's own fetch Response, its body swapped in place (bodytap.mjs
  // swapBody), has immutable headers (guard "immutable"): listed when the
  // item is sent. Any other Response's may be changed later: listed now.
  const hs = res.headers;
  rec.response({
    url: String(res.url || req.url),
    status: Number(res.status) || 0,
    statusText: String(res.statusText || ''),
    headers: out !== null && out === res ? () => headersOf(hs) : headersOf(hs),
    redirected: !!res.redirected,
    type: typeof res.type === 'string' ? res.type : '',
  }, ts);
  if (!body) {
    rec.finish();
    return res;
  }
  if (out) return out;
  // A Response this realm's constructor refuses (a status outside
  // 200–599) or of another realm: read a clone, as a tee (the
  // application's cancel then waits for this read, see the header).
  let clone = null;
  try { clone = res.clone(); } catch (e) { clone = null; }
  if (!clone) {
    rec.finish();
    return res;
  }
  readBody(rec, 'response', clone.body).then((err) => {
    if (err) rec.fail(errorMessage(err), signalAborted(req.signal) || isAbort(err));
    else rec.finish();
  }, () => rec.fail('body read failed', false));
  return res;
}

/** @param {any} e */
function isAbort(e) {
  try { return !!e && e.name === 'AbortError'; } catch (x) { return false; }
}

// ---------------------------------------------------------------------------
// XMLHttpRequest (pages)

/**
 * Bytes of an XHR request body as the browser would send them, or null
 * when they cannot be known without side effects (a ReadableStream).
 * FormData is encoded by a Response, whose multipart boundary differs from
 * the one the XHR sends.
 * @param {any} global
 * @param {any} body
 * @returns {Promise<Uint8Array>|Uint8Array|null}
 */
function xhrBodyBytes(global, body) {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  const R = global.Response;
  if (typeof R !== 'function') return null;
  try {
    if (global.Document && body instanceof global.Document) {
      return new TextEncoder().encode(new global.XMLSerializer().serializeToString(body));
    }
    return new R(body).arrayBuffer().then((/** @type {ArrayBuffer} */ b) => new Uint8Array(b));
  } catch (e) {
    return null;
  }
}

/**
 * Chunks of a complete in-memory body into rec (within the budget).
 * @param {FetchRecord} rec
 * @param {'request'|'response'} part
 * @param {Uint8Array} bytes
 */
export function bodyChunks(rec, part, bytes) {
  const lim = rec.sink.producer.limits;
  const size = Math.max(3, Math.min(lim.maxChunkBytes, Math.floor(lim.maxStringBytes / 4) * 3));
  const keep = Math.min(bytes.length, rec.sink.budget);
  for (let off = 0; off < keep; off += size) rec.chunk(part, off, bytes.subarray(off, Math.min(keep, off + size)));
  if (part === 'request') {
    rec.requestBytes = bytes.length;
    rec.requestTruncated = bytes.length > keep;
  } else {
    rec.responseBytes = bytes.length;
    rec.responseTruncated = bytes.length > keep;
  }
}

/**
 * The response of a loaded XHR as bytes, from xhr.response read the way
 * its responseType says (which is what the page reads too: the getters
 * cache their value). "json" has no bytes left: its parsed value is
 * re-serialized, which need not match the server's text byte for byte.
 * @param {any} xhr
 * @returns {Promise<Uint8Array>|Uint8Array|null}
 */
function xhrResponseBytes(xhr) {
  const t = xhr.responseType;
  if (t === '' || t === 'text') return new TextEncoder().encode(String(xhr.responseText));
  const r = xhr.response;
  if (r === null || r === undefined) return null;
  if (t === 'arraybuffer') return new Uint8Array(r.slice(0));
  if (t === 'json') return new TextEncoder().encode(JSON.stringify(r));
  if (t === 'blob') return r.arrayBuffer().then((/** @type {ArrayBuffer} */ b) => new Uint8Array(b));
  if (t === 'document') return new TextEncoder().encode(r.documentElement ? r.documentElement.outerHTML : '');
  return null;
}

/**
 * "a: b\r\nc: d" → header list.
 * @param {string} raw
 */
function parseRawHeaders(raw) {
  /** @type {Array<[string, string]>} */
  const pairs = [];
  for (const line of String(raw || '').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) pairs.push([line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim()]);
  }
  return headerList(pairs);
}

/**
 * Wraps XMLHttpRequest.prototype's open, setRequestHeader and send to
 * note what the page asked for, and listens (addEventListener on the
 * instance, at send) for the head, the end and failures. Nothing the page
 * sees changes: each wrapper calls the original with the same `this` and
 * arguments and returns its result; the response is read only after
 * `load`, from the getters the page uses. Returns the undo function, or
 * null when the realm has no XMLHttpRequest.
 * @param {any} global
 * @param {CaptureSink & {enabled?: () => boolean}} sink
 */
export function wrapXHR(global, sink) {
  const X = global.XMLHttpRequest;
  const proto = X && X.prototype;
  if (!proto || typeof proto.open !== 'function' || typeof proto.send !== 'function') return null;
  const enabled = sink.enabled || (() => true);
  /** @type {WeakMap<object, XHRInfo>} */
  const info = new WeakMap();
  const origOpen = proto.open, origSet = proto.setRequestHeader, origSend = proto.send;
  /** @this {any} */
  const open = function (/** @type {any} */ method, /** @type {any} */ url) {
    const r = origOpen.apply(this, arguments);
    try {
      // open() on a request in flight ends it without any event.
      const old = info.get(this);
      if (old && old.rec) {
        const rec = old.rec;
        safe(() => rec.fail('XMLHttpRequest re-opened before it ended', true));
      }
      let abs = String(url);
      try { abs = new URL(abs, String(global.location && global.location.href)).href; } catch (e) { /* as given */ }
      info.set(this, { method: String(method).toUpperCase(), url: abs, headers: [], rec: null, sent: false });
    } catch (e) { /* ignore */ }
    return r;
  };
  /** @this {any} */
  const setRequestHeader = function (/** @type {any} */ name, /** @type {any} */ value) {
    const r = origSet.apply(this, arguments);
    try {
      const i = info.get(this);
      if (i) i.headers.push([String(name).toLowerCase(), String(value)]);
    } catch (e) { /* ignore */ }
    return r;
  };
  /** @this {any} */
  const send = function (/** @type {any} */ body) {
    const xhr = this;
    let rec = null;
    try {
      const i = info.get(xhr);
      // A second send() throws InvalidStateError: not a new request.
      if (i && !i.sent && xhr.readyState === 1 && enabled()) {
        i.sent = true;
        rec = i.rec = startXHR(global, sink, xhr, i, body, () => info.get(xhr) === i);
      }
    } catch (e) { rec = null; }
    try {
      return origSend.apply(xhr, arguments);
    } catch (e) {
      if (rec) {
        const r = rec;
        safe(() => r.fail(errorMessage(e), false));
      }
      throw e;
    }
  };
  /** @type {Array<[string, Function, Function]>} */
  const installed = [];
  for (const [name, orig, w] of /** @type {Array<[string, Function, Function]>} */ ([['open', origOpen, open], ['setRequestHeader', origSet, setRequestHeader], ['send', origSend, send]])) {
    try { Object.defineProperty(w, 'name', { value: orig.name, configurable: true }); } catch (e) { /* ignore */ }
    try { Object.defineProperty(w, 'length', { value: orig.length, configurable: true }); } catch (e) { /* ignore */ }
    try {
      proto[name] = w;
      installed.push([name, orig, w]);
    } catch (e) { /* a frozen prototype */ }
  }
  return () => {
    for (const [name, orig, w] of installed) {
      try { if (proto[name] === w) proto[name] = orig; } catch (e) { /* ignore */ }
    }
  };
}

/**
 * What wrapXHR knows of one open()ed request.
 * @typedef {{method:string, url:string, headers:Array<[string,string]>, rec: FetchRecord|null, sent: boolean}} XHRInfo
 */

/**
 * One XHR send: the request item and its body, and listeners for the rest.
 * The listeners stay on the instance (a page may reuse it): `current` says
 * whether this request is still the instance's latest.
 * @param {any} global
 * @param {CaptureSink} sink
 * @param {any} xhr
 * @param {XHRInfo} i
 * @param {any} body
 * @param {() => boolean} current
 */
function startXHR(global, sink, xhr, i, body, current) {
  const holder = stackHolder();
  const rec = new FetchRecord(sink);
  const bytes = i.method === 'GET' || i.method === 'HEAD' ? null : xhrBodyBytes(global, body);
  rec.request({ url: i.url, method: i.method, headers: headerList(i.headers), hasBody: !!bytes, kind: 'xhr' }, nowMs(), holder);
  if (bytes instanceof Uint8Array) {
    bodyChunks(rec, 'request', bytes);
  } else if (bytes) {
    rec.hold();
    bytes.then((b) => { bodyChunks(rec, 'request', b); rec.release(); }, () => rec.release());
  }
  let responded = false;
  const respond = () => {
    if (responded) return;
    responded = true;
    const url = String(xhr.responseURL || i.url);
    rec.response({
      url,
      status: Number(xhr.status) || 0,
      statusText: String(xhr.statusText || ''),
      headers: parseRawHeaders(xhr.getAllResponseHeaders()),
      redirected: !!xhr.responseURL && url !== i.url.split('#')[0],
    }, nowMs());
  };
  /** @param {string} type @param {(ev: any) => void} fn */
  const on = (type, fn) => xhr.addEventListener(type, (/** @type {any} */ ev) => { if (current()) safe(() => fn(ev)); });
  on('readystatechange', () => { if (xhr.readyState >= 2 && xhr.status !== 0) respond(); });
  on('load', () => {
    respond();
    let b = null;
    try { b = xhrResponseBytes(xhr); } catch (e) { b = null; }
    if (b instanceof Uint8Array) {
      bodyChunks(rec, 'response', b);
      rec.finish();
    } else if (b) {
      b.then((u8) => { bodyChunks(rec, 'response', u8); rec.finish(); }, () => rec.finish());
    } else {
      rec.finish();
    }
  });
  on('error', () => rec.fail('XMLHttpRequest failed (network error)', false));
  on('abort', () => rec.fail('XMLHttpRequest aborted', true));
  on('timeout', () => rec.fail('XMLHttpRequest timed out after ' + Number(xhr.timeout) + ' ms', false));
  return rec;
}

/**
 * The per-body budget from a setting ('' or invalid: the default).
 * @param {unknown} v
 */
export function bodyBudget(v) {
  if (v === undefined || v === null || v === '') return CAPTURE_BODY_BYTES;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : CAPTURE_BODY_BYTES;
}

