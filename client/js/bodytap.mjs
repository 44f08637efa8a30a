// bodytap.mjs — how the fetch capture reads bodies (capture.mjs): the
// chunking of a body into `fetch` body items within the per-body budget,
// the reader of a clone (request bodies), and the response tap: the
// Response the application gets while the capture reads its body.
//
// Why a tap and not Response.clone(): a tee's cancel settles only when
// both branches are cancelled, so an application's reader.cancel() (or a
// `for await` left early, or a pipe that stops) on a slow or idle stream
// waited for the capture's branch, and the server connection stayed open
// while the capture read it towards the budget; a tee branch gives the
// capture no way to learn of the application's cancel. The tap's stream is
// the application's body itself, so every way to cancel it, and its being
// collected, reaches the tap, which cancels the original at once.
//
// Like capture.mjs it is not shipped on its own: build.mjs inlines it
// before capture.mjs as `IWBodyTap`. Edit this file, then run
// `node client/js/build.mjs`. Nothing here throws into the application.

/** @typedef {import('./capture.mjs').FetchRecord} FetchRecord */

/** @param {() => void} fn */
function safe(fn) {
  try { fn(); } catch (e) { /* capture never throws into the application */ }
}

/**
 * One body's bytes turned into chunk items of rec, keeping at most the
 * per-body budget (the kept prefix is exactly the budget).
 */
export class BodyChunks {
  /**
   * @param {FetchRecord} rec
   * @param {'request'|'response'} part
   */
  constructor(rec, part) {
    this.rec = rec;
    this.part = part;
    this.budget = rec.sink.budget;
    const lim = rec.sink.producer.limits;
    this.size = Math.max(3, Math.min(lim.maxChunkBytes, Math.floor(lim.maxStringBytes / 4) * 3));
    this.total = 0;
    this.kept = 0;
    this.offset = 0;
    // Copies of what is not sent yet: a chunk item carries up to `size`
    // bytes, so small reads (under a quarter of that) are gathered first
    // (the chunks are the application's: copied, never held as views).
    /** @type {Uint8Array[]} */
    this.pending = [];
    this.pendingLen = 0;
  }

  /**
   * Takes one chunk (encoded or copied now: the caller may hand the chunk
   * to the application next, which may transfer its buffer).
   * @param {any} v
   * @returns {boolean} whether the body is now past the budget
   */
  add(v) {
    const u8 = v instanceof Uint8Array ? v : ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(0);
    this.total += u8.length;
    const n = Math.min(u8.length, this.budget - this.kept);
    if (n > 0) {
      if (n >= this.size >> 2) {
        // A large read goes out straight from the chunk, in items of at
        // most `size` (encoded now, not kept): gathering it copied each
        // byte twice (a slice, then the gathered item) before encoding.
        if (this.pendingLen) this.flush(true);
        for (let at = 0; at < n; at += this.size) this.send(u8.subarray(at, Math.min(n, at + this.size)));
      } else {
        this.pending.push(u8.slice(0, n));
        this.pendingLen += n;
      }
      this.kept += n;
      this.flush(false);
    }
    return this.total > this.budget;
  }

  /** @param {Uint8Array} piece */
  send(piece) {
    this.rec.chunk(this.part, this.offset, piece);
    this.offset += piece.length;
  }

  /** @param {boolean} all */
  flush(all) {
    const size = this.size, pending = this.pending;
    while (this.pendingLen >= size || (all && this.pendingLen > 0)) {
      const n = Math.min(size, this.pendingLen);
      let piece;
      if (pending[0].length === n) {
        piece = /** @type {Uint8Array} */ (pending.shift());
      } else {
        piece = new Uint8Array(n);
        let at = 0;
        while (at < n) {
          const head = pending[0];
          const take = Math.min(head.length, n - at);
          piece.set(take === head.length ? head : head.subarray(0, take), at);
          at += take;
          if (take === head.length) pending.shift(); else pending[0] = head.subarray(take);
        }
      }
      this.pendingLen -= n;
      this.send(piece);
    }
  }

  /** Sends what is gathered and notes the size (and the truncation) in rec. */
  end() {
    this.flush(true);
    this.pending = [];
    const over = this.total > this.budget;
    if (this.part === 'request') {
      this.rec.requestBytes = this.total;
      if (over) this.rec.requestTruncated = true;
    } else {
      this.rec.responseBytes = this.total;
      if (over) this.rec.responseTruncated = true;
    }
  }
}

/**
 * Reads one body stream (a clone's) into chunk items of rec, at most
 * `budget` bytes; past it the reader is cancelled and the part marked
 * truncated. Never throws; resolves with the read error, or null.
 * @param {FetchRecord} rec
 * @param {'request'|'response'} part
 * @param {any} stream a ReadableStream of bytes
 * @returns {Promise<any>}
 */
export async function readBody(rec, part, stream) {
  let reader;
  try { reader = stream.getReader(); } catch (e) { return e; }
  const body = new BodyChunks(rec, part);
  /** @type {any} */
  let error = null;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      if (body.add(r.value)) {
        try { reader.cancel().catch(() => {}); } catch (e) { /* already closed */ }
        break;
      }
    }
  } catch (e) {
    error = e === undefined || e === null ? new Error('body read failed') : e;
  }
  body.end();
  return error;
}

/**
 * What a tapped Response says in place of its constructed self: a
 * constructed Response has url "", type "default", redirected false and
 * mutable headers.
 * @typedef {{url: string, redirected: boolean, type: string, headers: any}} ResponseMeta
 */

/**
 * How a tap reports what only the capture can word: a read error of the
 * original (the record's failed phase), and a cancel reason as text.
 * @typedef {{error: (e: any) => void, reason: (r: any) => string, aborted?: () => boolean}} TapReport
 *   aborted: whether the request's signal has aborted (Node's fetch then
 *   cancels a swapped body that nobody reads yet: not the app's cancel)
 */

/**
 * @typedef {{wrap: (rec: FetchRecord, res: any, report: TapReport, swap?: boolean) => any}} ResponseShape
 *   swap: the body may be swapped into the Response itself (swapBody)
 */

/**
 * The realm's tapped-Response maker, or null when the realm lacks what it
 * needs (the fetch capture then reads clones). A tapped Response is made
 * by the realm's own Response constructor (so its body, bodyUsed,
 * arrayBuffer(), json(), status and headers are the platform's) with a
 * prototype between it and Response.prototype that answers url,
 * redirected, type and headers as the original did, and clone() with a
 * clone that does the same. So `instanceof Response`, `constructor`,
 * Object.keys, JSON.stringify and for…in are as without capture; only
 * Object.getPrototypeOf(res) differs. What is not the original's: the
 * headers of a clone are mutable (a constructed Response's), and
 * platform code that reads a Response's internal URL list or type (Cache
 * API put, WebAssembly streaming compilation in browsers) sees the
 * constructed Response's (no URL, type "default").
 * @param {any} global
 * @returns {ResponseShape|null}
 */
export function responseShape(global) {
  const R = global.Response, RS = global.ReadableStream;
  if (typeof R !== 'function' || typeof RS !== 'function' || typeof Reflect !== 'object' || typeof WeakMap !== 'function') return null;
  const proto = R.prototype;
  const getter = (/** @type {string} */ name) => {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    return d && typeof d.get === 'function' ? d.get : null;
  };
  const getURL = getter('url'), getRedirected = getter('redirected'), getType = getter('type'), getHeaders = getter('headers');
  const nativeClone = proto.clone;
  if (!getURL || !getRedirected || !getType || !getHeaders || typeof nativeClone !== 'function') return null;
  /** @type {WeakMap<object, ResponseMeta>} */
  const metas = new WeakMap();
  // Accessors and a method shaped as the platform's (enumerable,
  // configurable, named "get url" / "clone", not constructors); on an
  // object that is not a tapped Response they are the platform's.
  const own = {
    get url() { const m = metas.get(this); return m ? m.url : getURL.call(this); },
    get redirected() { const m = metas.get(this); return m ? m.redirected : getRedirected.call(this); },
    get type() { const m = metas.get(this); return m ? m.type : getType.call(this); },
    get headers() { const m = metas.get(this); return m && m.headers ? m.headers : getHeaders.call(this); },
    clone() {
      const c = nativeClone.call(this);
      const m = metas.get(this);
      if (m) {
        Object.setPrototypeOf(c, shaped);
        metas.set(c, { url: m.url, redirected: m.redirected, type: m.type, headers: null });
      }
      return c;
    },
  };
  // Every enumerable member of Response.prototype again, in its order
  // (the rest as the same descriptors): for…in lists them as without
  // capture.
  const shaped = Object.create(proto);
  for (const k of Object.keys(proto)) {
    const d = Object.getOwnPropertyDescriptor(Object.prototype.hasOwnProperty.call(own, k) ? own : proto, k);
    if (d) Object.defineProperty(shaped, k, d);
  }
  for (const k of Object.keys(own)) {
    if (!Object.prototype.hasOwnProperty.call(shaped, k)) Object.defineProperty(shaped, k, /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(own, k)));
  }
  // The new.target of the constructions: its prototype is `shaped`.
  const Shaped = function Response() {};
  Shaped.prototype = shaped;
  const registry = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((/** @type {BodyTap} */ tap) => tap.abandoned())
    : null;
  // A swapped body (swapBody) is also held by Node's fetch itself, through
  // the Response's state, while the connection lives: the stream is then
  // never collected, so the Response is watched instead, as undici itself
  // does: collected with its body never read nor locked, the original is
  // cancelled (a body the application took and dropped half read stays
  // open, as without capture).
  const dropped = typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((/** @type {{tap: BodyTap, stream: any}} */ w) => {
      try { if (!w.stream.locked && !w.tap.pulled) w.tap.abandoned(); } catch (e) { /* ignore */ }
    })
    : null;
  return {
    wrap(rec, res, report, swap) {
      if (!(res instanceof R)) return null;
      const src = res.body;
      if (!src || src.locked || typeof src.getReader !== 'function') return null;
      // A byte stream (Node's and Chromium's fetch bodies) lets the
      // application read with a BYOB reader: the tap's stream is one too.
      let bytes = false;
      try {
        src.getReader({ mode: 'byob' }).releaseLock();
        bytes = true;
      } catch (e) { /* a default stream */ }
      const tap = new BodyTap(rec, report);
      /** @type {any} */
      const source = {
        start: (/** @type {any} */ c) => tap.attach(c),
        pull: (/** @type {any} */ c) => tap.pull(c),
        cancel: (/** @type {any} */ reason) => tap.cancel(reason),
      };
      if (bytes) source.type = 'bytes';
      const stream = new RS(source, { highWaterMark: 0 });
      const swapped = !!swap && swapBody(res, src, stream);
      let out = swapped ? res : null;
      if (!out) {
        out = Reflect.construct(R, [stream, { status: res.status, statusText: res.statusText, headers: res.headers }], Shaped);
        metas.set(out, { url: String(res.url), redirected: !!res.redirected, type: String(res.type), headers: res.headers });
      }
      // Nothing below throws: the original body is the tap's from here.
      tap.start(src.getReader());
      const reg = swapped ? dropped : registry;
      if (reg) {
        try {
          // Not the stream, whose wrapper Chromium may drop and remake
          // while it lives (see attach): its controller, made "modified"
          // there, which lives exactly as long as the stream.
          const c = tap.controller && tap.controller.deref();
          if (swapped) reg.register(res, { tap, stream }, tap); else reg.register(c || stream, tap, tap);
          tap.registry = reg;
        } catch (e) { /* not collected early */ }
      }
      return out;
    },
  };
}

/**
 * Node's fetch (undici) keeps a Response's body in an internal state
 * object (the own symbol "state": `{…, body: {stream, source, length}}`),
 * which `body`, `bodyUsed`, `clone()` and every body method read. Where
 * that holds, the tap's stream replaces the original stream there and the
 * application keeps the original Response: constructing a second Response
 * was half of what a 1 KiB fetch's capture cost (agent-note.md "Fetch
 * capture"), and the application's object is then the platform's own
 * (prototype, url, type, immutable headers, Cache API). Proven per
 * Response: the slot must hold the very stream `res.body` returned, and
 * after the swap `res.body` must return the tap's; anything else (a
 * browser, another undici) is left untouched and gets the constructed
 * Response.
 * @param {any} res
 * @param {any} src the original body stream (res.body)
 * @param {any} stream the tap's stream
 * @returns {boolean} whether res now answers with the tap's stream
 */
function swapBody(res, src, stream) {
  try {
    if (stateKey === null) {
      stateKey = undefined; // looked for once, on the first tapped Response
      for (const k of Object.getOwnPropertySymbols(res)) if (k.description === 'state') stateKey = k;
    }
    if (!stateKey) return false;
    const st = res[stateKey];
    const b = st && typeof st === 'object' ? st.body : null;
    if (!b || typeof b !== 'object' || b.stream !== src) return false;
    b.stream = stream;
    if (res.body === stream) return true;
    b.stream = src;
  } catch (e) { /* not undici's shape */ }
  return false;
}

/** @type {symbol|null|undefined} undici's Response state key: null not looked for yet, undefined absent */
let stateKey = null;

/**
 * Closes the application's stream; a BYOB read pending on a byte stream
 * is answered "done" (respond(0)), which close() alone leaves waiting.
 * @param {any} c
 */
function closeStream(c) {
  try {
    c.close();
    const b = c.byobRequest;
    if (b) b.respond(0);
  } catch (e) { /* closed already */ }
}

/** The property that keeps a tap's controller wrapper (attach). */
const TAP_HELD = Symbol('inspector-worker tap');

// A BodyTap's phases: reading ahead and recording; passing reads through
// (past the budget; the record is finished); ended.
const TAP_AHEAD = 0, TAP_PASS = 1, TAP_ENDED = 2;

/**
 * The underlying source of the application's response body. While the
 * record is open it reads the original body ahead of the application
 * (continuously, so a response the application never reads still shows
 * its body, up to the budget), records each chunk and enqueues it for
 * the application; past the budget it finishes the record and only reads
 * when the application does. The application's cancel cancels the
 * original at once, and so does the application's stream being collected.
 *
 * It holds the stream's controller only weakly (the registry's callback
 * needs the stream to become unreachable while a read of the original is
 * pending) and never the stream itself.
 */
class BodyTap {
  /**
   * @param {FetchRecord} rec
   * @param {TapReport} report
   */
  constructor(rec, report) {
    this.rec = rec;
    this.report = report;
    this.body = new BodyChunks(rec, 'response');
    /** @type {any} the original body's reader */
    this.reader = null;
    /** @type {{deref: () => any}|null} */
    this.controller = null;
    this.phase = TAP_AHEAD;
    /** @type {(() => void)|null} a pull of the application waiting for the next chunk */
    this.wake = null;
    /** @type {any} */
    this.registry = null;
    /** whether the application has read (pulled) from its stream */
    this.pulled = false;
  }

  /** @param {any} c the application stream's controller */
  attach(c) {
    // An own property makes the controller's wrapper "modified": Chromium
    // (V8's scavenger with Blink's wrappers) drops an unmodified wrapper
    // of a live C++ object and makes a new one when asked again, which
    // cleared this WeakRef while the stream lived: the read-ahead then
    // took the body for abandoned, cancelled it, and the application's
    // read never ended (a page's 1 MiB fetch hung, after a minor GC). The
    // controller is the capture's own: the page never sees the property.
    try { Object.defineProperty(c, TAP_HELD, { value: true }); } catch (e) { /* a frozen controller */ }
    this.controller = typeof WeakRef === 'function' ? new WeakRef(c) : { deref: () => c };
  }

  /** @param {any} reader */
  start(reader) {
    this.reader = reader;
    this.ahead();
  }

  /** The read-ahead loop; each step runs in step() (no controller held across an await). */
  async ahead() {
    try {
      while (this.phase === TAP_AHEAD) {
        const r = await this.reader.read();
        if (!this.step(r)) return;
      }
    } catch (e) {
      this.failed(e);
    }
  }

  /**
   * One chunk (or the end) of the original, read ahead.
   * @param {{done: boolean, value?: any}} r
   * @returns {boolean} whether to read on
   */
  step(r) {
    if (this.phase !== TAP_AHEAD) return false; // cancelled or collected meanwhile
    const c = this.controller && this.controller.deref();
    if (!c) {
      this.abandoned();
      return false;
    }
    if (r.done) {
      this.end();
      this.body.end();
      safe(() => this.rec.finish());
      closeStream(c);
      this.wakeUp();
      return false;
    }
    // Recorded first: enqueue may transfer the chunk's buffer.
    const over = this.body.add(r.value);
    try { c.enqueue(r.value); } catch (e) { /* the application's stream ended */ }
    if (over) {
      this.phase = TAP_PASS;
      this.body.end();
      safe(() => this.rec.finish());
    }
    this.wakeUp();
    return !over;
  }

  wakeUp() {
    const w = this.wake;
    this.wake = null;
    if (w) w();
  }

  /**
   * The application reads from an empty queue.
   * @param {any} c
   */
  pull(c) {
    this.pulled = true;
    if (this.phase === TAP_AHEAD) return new Promise((resolve) => { this.wake = () => resolve(undefined); });
    if (this.phase !== TAP_PASS) return undefined;
    return this.reader.read().then((/** @type {{done: boolean, value?: any}} */ r) => {
      if (r.done) {
        this.end();
        closeStream(c);
      } else {
        c.enqueue(r.value);
      }
    }, (/** @type {any} */ e) => {
      this.end();
      c.error(e);
    });
  }

  /**
   * The application cancelled its body (reader.cancel, body.cancel, a
   * `for await` left early, a pipe that stopped): the original is
   * cancelled now and the record ends as aborted with what was read.
   * @param {any} reason
   */
  cancel(reason) {
    const was = this.phase;
    this.end();
    this.wakeUp();
    if (was === TAP_AHEAD) {
      this.body.end();
      let why = '';
      try { why = reason === undefined ? '' : ': ' + this.report.reason(reason); } catch (e) { /* a throwing reason */ }
      let signal = false;
      try { signal = !!(this.report.aborted && this.report.aborted()); } catch (e) { /* no signal */ }
      const what = signal ? 'the request was aborted after ' : 'the application cancelled the response body after ';
      safe(() => this.rec.fail(what + this.body.total + ' bytes' + why, true));
    }
    if (was === TAP_ENDED) return undefined;
    return this.reader.cancel(reason);
  }

  /** The application's stream was collected before its end: the original is cancelled. */
  abandoned() {
    const was = this.phase;
    if (was === TAP_ENDED) return;
    this.end();
    if (was === TAP_AHEAD) {
      this.body.end();
      safe(() => this.rec.fail('the application dropped the response before its body ended (' + this.body.total + ' bytes read)', true));
    }
    try { this.reader.cancel().catch(() => {}); } catch (e) { /* released */ }
  }

  /**
   * The original failed while read ahead (a network error, an abort):
   * the application's stream fails with the same error.
   * @param {any} e
   */
  failed(e) {
    if (this.phase !== TAP_AHEAD) return;
    this.end();
    this.body.end();
    const err = e === undefined || e === null ? new Error('body read failed') : e;
    safe(() => this.report.error(err));
    const c = this.controller && this.controller.deref();
    try { if (c) c.error(e); } catch (x) { /* ended */ }
    this.wakeUp();
  }

  end() {
    this.phase = TAP_ENDED;
    const reg = this.registry;
    this.registry = null;
    if (reg) try { reg.unregister(this); } catch (e) { /* ignore */ }
  }
}
