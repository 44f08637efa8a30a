// core.mjs — the protocol core shared by every producer of inspector-worker's
// internal observation protocol (docs/protocol.md, package sourceproto).
//
// This file is the single source of truth. It is not shipped on its own:
// build.mjs inlines it (wrapped in a function, `export` stripped) into the
// three shipped files, client.js, preload.cjs and embed.mjs, so that each of
// them stays ONE self-contained file (a plain <script src>, a `node
// --require` path, an importable module). Edit this file, then run
//
//	node client/js/build.mjs
//
// build.test.mjs fails when a shipped file holds a stale copy. The tests
// import this module directly.
//
// Rules this code keeps on every path: it never blocks (everything is a
// bounded in-memory queue), never throws into its caller (producer entry
// points catch), and never writes a frame the worker's decoder would refuse
// (sizes, nesting, object counts and string lengths are measured before a
// frame is built). It must run unchanged in a browser and in Node, so it
// uses only the language and queueMicrotask/Buffer/btoa when present.

/** Protocol version (sourceproto.Version). */
export const PROTOCOL_VERSION = 1;

/** Version string producers put in hello.agent.version. */
export const AGENT_VERSION = '0.1.0';

/**
 * What the worker's welcome carries (sourceproto.CurrentLimits); used until
 * a welcome arrives, then replaced by the worker's values.
 * @typedef {{maxFrameBytes:number, maxBatchItems:number, maxStringBytes:number, maxChunkBytes:number, maxValueBytes:number}} Limits
 * @type {Readonly<Limits>}
 */
export const DEFAULT_LIMITS = Object.freeze({
  maxFrameBytes: 1 << 20,
  maxBatchItems: 512,
  maxStringBytes: 64 << 10,
  maxChunkBytes: 48 << 10,
  maxValueBytes: 256 << 10,
});

// Limits that the welcome does not carry (sourceproto/limits.go).
export const MAX_FRAME_OBJECTS = 1 << 14;
export const MAX_DEPTH = 64;
export const MAX_ID_BYTES = 128;
export const MAX_CONSOLE_ARGS = 64;
export const MAX_STACK_FRAMES = 64;
export const MAX_PREVIEW_ITEMS = 128;
export const MAX_SCRIPT_BYTES = 16 << 20;

/** The producer queue's bounds: the oldest items go first when either is hit. */
export const QUEUE_MAX_ITEMS = 10000;
export const QUEUE_MAX_BYTES = 16 << 20;
/**
 * Queued bytes that go at once even within a pace interval (Producer
 * `pace`), so that pacing never makes a heavy logger's queue overflow. By
 * the queue's own count, which for a deferred console item is an estimate
 * made before it is built, 2–3 times its size: 128 KiB is a frame of
 * 40–60 KiB. At 32 KiB a page logging 200 calls/s (half with an object)
 * tripped it within each interval and sent 8–9 frames/s where a 200 ms
 * pace meant 5: each frame costs the page and the browser's network
 * service ~0.2 ms of CPU whatever its size up to ~16 KiB, a byte ~6 ns
 * (ChromiumWebSocketCost, docs/performance.md).
 */
export const PACE_BYTES = 128 << 10;

/**
 * How long past its due time a pending flush may wait for the page's task
 * before a console call sends by itself (Producer.sendIfLate): the Long
 * Tasks API's threshold.
 */
export const LONG_TASK_MS = 50;

/** Preview bounds (V8's own: 5 properties, 100 indices, 100-char values). */
export const PREVIEW_PROPERTIES = 5;
export const PREVIEW_INDICES = 100;
export const PREVIEW_ENTRIES = 5;
export const PREVIEW_TEXT = 100;

// Bytes an envelope adds around a batch's items, generously: `{"v":1,
// "type":"replace","source":…,"gen":N,"seq":N,"body":{"dropped":N,
// "reason":"requested","items":[…]}}` with 16-digit numbers is < 160.
const ENVELOPE_OVERHEAD = 160;
// Nesting an item sits at inside a frame: envelope {, body {, items [.
const ITEM_DEPTH = 3;

// ---------------------------------------------------------------------------
// JSON measurement

/**
 * Measures a JSON text as the worker's envelope scanner will: UTF-8 bytes,
 * number of objects, maximum nesting, and the longest string in raw
 * (escaped) UTF-8 bytes. The text must come from JSON.stringify (which
 * escapes lone surrogates, so every surrogate in it is half of a pair).
 * @param {string} s
 * @returns {{bytes:number, objects:number, depth:number, maxString:number}}
 */
export function measureJSON(s) {
  let bytes = 0, objects = 0, depth = 0, maxDepth = 0, maxString = 0, str = -1;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    const b = c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c <= 0xdfff) ? 2 : 3;
    bytes += b;
    if (str >= 0) {
      if (c === 0x5c) { // backslash: the escaped character is ASCII
        i++;
        bytes++;
        str += 2;
      } else if (c === 0x22) {
        if (str > maxString) maxString = str;
        str = -1;
      } else {
        str += b;
      }
      continue;
    }
    if (c === 0x22) {
      str = 0;
    } else if (c === 0x7b || c === 0x5b) {
      if (c === 0x7b) objects++;
      if (++depth > maxDepth) maxDepth = depth;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return { bytes, objects, depth: maxDepth, maxString };
}

// How deep a console item (with its stack tail) can nest, by
// construction: item{ console{ args[ RemoteObject{ preview{ entries[
// entry{ value{ properties[ {…} — 10 levels; a stack tail stops at 5.
const SHALLOW_DEPTH = 12;

/**
 * measureJSON for a text known to nest at most SHALLOW_DEPTH deep, without
 * its character loop, or null when that is not enough (a non-ASCII text,
 * or one too long for the bounds): an ASCII text's UTF-8 bytes are its
 * length; its objects are bounded by its '{' count (braces inside strings
 * count too: batches end a little early, never late); any string in it
 * is shorter than it, and 3 × its length is within the limits.
 * @param {string} s
 * @param {Limits} lim
 * @returns {{bytes:number, objects:number, depth:number, maxString:number}|null}
 */
function shallowMeasure(s, lim) {
  if (!shallowFits(s.length, lim) || NON_ASCII.test(s)) return null;
  return { bytes: s.length, objects: braces(s), depth: SHALLOW_DEPTH, maxString: s.length };
}
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Whether a text of len UTF-16 units fits an item and a string, whatever
 * it holds: at most 3 UTF-8 bytes per unit (JSON.stringify's escapes are
 * ASCII).
 * @param {number} len
 * @param {Limits} lim
 */
function shallowFits(len, lim) {
  return len * 3 <= Math.min(lim.maxFrameBytes - ENVELOPE_OVERHEAD - 256, lim.maxStringBytes);
}

/**
 * UTF-8 length of a string whose surrogates are paired (JSON.stringify
 * output, or any string measured after capString).
 * @param {string} s
 */
export function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c <= 0xdfff) ? 2 : 3;
  }
  return n;
}

/**
 * Returns s, or a prefix of s followed by "…", whose JSON-escaped UTF-8 form
 * (without the quotes) is at most maxBytes. A surrogate pair is never split.
 * @param {string} s
 * @param {number} maxBytes
 */
export function capString(s, maxBytes) {
  if (s.length * 6 <= maxBytes) return s;
  const limit = maxBytes - 3; // room for "…"
  let used = 0, i = 0;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    let cost, step = 1;
    if (c < 0x20) cost = (c === 8 || c === 9 || c === 10 || c === 12 || c === 13) ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) cost = 2;
    else if (c < 0x80) cost = 1;
    else if (c < 0x800) cost = 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { cost = 4; step = 2; } else cost = 6;
    } else if (c >= 0xd800 && c <= 0xdfff) cost = 6;
    else cost = 3;
    if (used + cost > limit) {
      // Everything fits after all when the rest is within maxBytes.
      return used + cost + restCost(s, i + step) <= maxBytes ? s : s.slice(0, i) + '\u2026';
    }
    used += cost;
    i += step;
  }
  return s;
}

/** @param {string} s @param {number} from */
function restCost(s, from) {
  const j = JSON.stringify(s.slice(from));
  return utf8Length(j) - 2;
}

/** @param {string} s */
export function isIdentifier(s) {
  return typeof s === 'string' && s.length > 0 && s.length <= MAX_ID_BYTES && /^[A-Za-z0-9._:-]+$/.test(s);
}

/**
 * Makes any value a protocol identifier (1–128 of [A-Za-z0-9._:-]).
 * @param {unknown} s
 * @param {string} fallback
 */
export function toIdentifier(s, fallback) {
  let t = '';
  try { t = String(s); } catch (e) { t = ''; }
  t = t.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, MAX_ID_BYTES);
  return t || fallback;
}

/** A random source id suffix: 16 hex digits. */
export function randomHex() {
  let out = '';
  try {
    const c = globalThis.crypto;
    if (c && typeof c.getRandomValues === 'function') {
      const b = c.getRandomValues(new Uint8Array(8));
      for (let i = 0; i < b.length; i++) out += (b[i] < 16 ? '0' : '') + b[i].toString(16);
      return out;
    }
  } catch (e) { /* fall through */ }
  for (let i = 0; i < 16; i++) out += Math.floor(Math.random() * 16).toString(16);
  return out;
}

/**
 * The clock nowMs reads, looked up once: every console call stamps its
 * time, and timeOrigin is a getter into the browser that does not change.
 */
const clock = (() => {
  try {
    const p = globalThis.performance;
    if (p && typeof p.now === 'function' && typeof p.timeOrigin === 'number') return { perf: p, now: p.now, origin: p.timeOrigin };
  } catch (e) { /* fall through */ }
  return null;
})();

/** Milliseconds since the epoch with sub-millisecond precision when available. */
export function nowMs() {
  if (clock) {
    try { return clock.origin + clock.now.call(clock.perf); } catch (e) { /* fall through */ }
  }
  return Date.now();
}

// Uint8Array.prototype.toBase64 as the realm had it when the client
// loaded (a page's later patch of it is not called).
const nativeToBase64 = typeof Uint8Array === 'function' && typeof (/** @type {any} */ (Uint8Array.prototype)).toBase64 === 'function'
  ? /** @type {any} */ (Uint8Array.prototype).toBase64 : null;

/**
 * Base64 of bytes (Buffer in Node, btoa in a browser).
 * @param {Uint8Array} u8
 */
export function bytesToBase64(u8) {
  const B = /** @type {any} */ (globalThis).Buffer;
  if (B && typeof B.from === 'function') return B.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');
  // Native where the browser has it (Chromium 140+, Firefox 133+, Safari
  // 18.2+): a page's captured 1 MiB fetch took 83 ms with fromCharCode and
  // btoa, 23 ms with it (plain: 9 ms).
  if (nativeToBase64) return nativeToBase64.call(u8);
  let bin = '';
  for (let i = 0; i < u8.length; i += 0x2000) {
    bin += String.fromCharCode.apply(null, /** @type {any} */ (u8.subarray(i, i + 0x2000)));
  }
  return btoa(bin);
}

// ---------------------------------------------------------------------------
// A FIFO with O(1) amortized shift.

export class Deque {
  constructor() {
    /** @type {any[]} */
    this.a = [];
    this.h = 0;
  }
  get length() { return this.a.length - this.h; }
  /** @param {any} x */
  push(x) { this.a.push(x); }
  peek() { return this.a[this.h]; }
  shift() {
    const x = this.a[this.h];
    this.a[this.h] = undefined;
    this.h++;
    if (this.h >= 1024 && this.h * 2 >= this.a.length) {
      this.a = this.a.slice(this.h);
      this.h = 0;
    }
    return x;
  }
  clear() { this.a = []; this.h = 0; }
}

// ---------------------------------------------------------------------------
// Producer: one source of the protocol, independent of its carrier.

/**
 * @typedef {object} ProducerOptions
 * @property {'host'|'client'} role
 * @property {string} source the source id (1–128 of [A-Za-z0-9._:-])
 * @property {string} [token] the per-run client token (clients only)
 * @property {string[]} [capabilities]
 * @property {string[]} [topics]
 * @property {{name:string, version:string}} [agent]
 * @property {() => ({url:string, title:string}|undefined)} [page] the hello's page (clients)
 * @property {() => Array<Record<string, any>>} [snapshot] the retained state a replace carries: items such as {page:{…}}
 * @property {number} [maxInFlight] sequenced frames (append/replace) sent and not yet acked or rejected; the host pipe requires 1
 * @property {number} [ackDelay] ms the worker may hold acks back to answer several appends
 *   with one (the hello's ackDelayMs, at most 1000; default 0: one ack per append). Only
 *   for a window (maxInFlight) above the worker's AckCoalesceFrames (8): the page client.
 * @property {number} [maxQueueItems]
 * @property {number} [maxQueueBytes]
 * @property {() => boolean} [writable] false while the carrier's own buffer is too full
 * @property {(fn: () => void) => void} [retryLater] called with flush when writable() said false
 * @property {(fn: () => void) => void} [schedule] defers a flush (default queueMicrotask)
 * @property {number} [pace] ms per append at the sustained rate (default 0: each append as
 *   soon as the window allows). A token bucket: up to `paceBurst` appends go back to back,
 *   then one per `pace` ms, the items that come meanwhile waiting to go as one frame; a
 *   queue of PACE_BYTES or more goes at once. Each frame costs its sender and the browser's
 *   network service a fixed price (a send, a mojo hop, an ack back), so a page logging from
 *   a 10 ms timer no longer pays it a hundred times a second, while a page that logs now
 *   and then never waits.
 * @property {number} [paceBurst] appends that may go back to back (default 1)
 * @property {(fn: () => void, ms: number) => void} [timer] runs fn after ms (default
 *   setTimeout, unref'd in Node): the paced flush
 * @property {number} [batchWindow] ms a flush for `fetch` items waits for more items, also after an ack
 *   (default 0: at once): a host doing many small fetches then writes one batch per window, not a frame
 *   (and an ack) per fetch; any other item still flushes at once
 * @property {(type: string, body: any) => void} [onRequest] worker → producer frames the core does not handle (script.read, …)
 * @property {(code: string, reason?: string) => void} [onClose] the worker closed this generation
 * @property {(gen: number) => void} [onOpen] a welcome arrived
 * @property {(code: string) => void} [onRefused] the hello was rejected
 */

/**
 * One producer source. The carrier calls connect(send) for every new
 * connection (each is a new generation: a new hello, a new replace),
 * receive(text) for every frame from the worker, and disconnect() when the
 * connection is lost. Observations go in with enqueue/enqueueJSON at any
 * time, connected or not; they wait in a bounded queue that drops the
 * oldest items and reports them in the next append's `dropped`.
 *
 * Sequence numbers are assigned when a batch is sent: a dropped item
 * still consumes one (the gap the worker sees is then exactly the
 * `dropped` count, an "explained" gap), including items dropped while
 * disconnected, which the next generation's first append reports.
 */
export class Producer {
  /** @param {ProducerOptions} o */
  constructor(o) {
    this.role = o.role;
    this.source = o.source;
    this.token = o.token;
    this.capabilities = o.capabilities || [];
    this.topics = o.topics || [];
    this.agent = o.agent || { name: 'inspector-worker-producer', version: AGENT_VERSION };
    this.pageInfo = o.page || null;
    this.snapshotItems = o.snapshot || null;
    this.maxInFlight = o.maxInFlight || 1;
    this.ackDelay = o.ackDelay || 0;
    this.maxQueueItems = o.maxQueueItems || QUEUE_MAX_ITEMS;
    this.maxQueueBytes = o.maxQueueBytes || QUEUE_MAX_BYTES;
    this.writable = o.writable || null;
    this.retryLater = o.retryLater || null;
    this.batchWindow = o.batchWindow || 0;
    this.schedule = o.schedule || defaultSchedule;
    this.pace = o.pace || 0;
    this.paceBurst = Math.max(1, o.paceBurst || 1);
    this.timer = o.timer || defaultTimer;
    this.paceTokens = this.paceBurst; // appends that may go now (refilled at 1 per pace ms)
    this.paceAt = nowMs(); // when paceTokens was last refilled
    this.paceTimerSet = false;
    this.paceOver = false; // the pace timer fired: the next append goes (a timer may fire a little early)
    this.paceDue = 0; // when the pace timer is due
    this.scheduledAt = 0; // when the pending flush microtask was scheduled
    this.lateSent = false; // a call sent an append while the pace timer was overdue (sendIfLate)
    this.lazySchedule = this.batchWindow ? windowSchedule(this.batchWindow) : null;
    this.lazyScheduled = false;
    this.onRequest = o.onRequest || null;
    this.onClose = o.onClose || null;
    this.onOpen = o.onOpen || null;
    this.onRefused = o.onRefused || null;

    /** @type {Limits} */
    this.limits = Object.assign({}, DEFAULT_LIMITS);
    this.queue = new Deque();
    this.queueBytes = 0;
    /** 'idle' | 'hello' | 'open' | 'closed' */
    this.state = 'idle';
    this.gen = 0;
    /** @type {((frame: string) => boolean|void) | null} */
    this.sendFn = null;
    this.lastSeq = 0; // last item sequence number sent in this generation
    this.pendingDropped = 0; // dropped since the last append (reported in the next)
    /** @type {Array<{kind:string, first:number, last:number, count:number}>} */
    this.inFlight = [];
    this.needInitial = false;
    this.needSnapshot = false;
    this.replaceFailures = 0;
    this.replaceAcked = false;
    /** @type {Set<string>} */
    this.granted = new Set(this.topics);
    /** @type {Set<string>} DevTools sessions that sent console.enable */
    this.consoleSessions = new Set();
    this.flushScheduled = false;
    this.retryPending = false;
    this.lastRefusal = '';
    // Counters for stats().
    this.dropped = 0;
    this.sent = 0;
    this.acked = 0;
    this.refused = 0;
    this.rejects = 0;
    this.workerGaps = 0;
  }

  /**
   * Starts a new generation on a new connection: sends the hello.
   * @param {(frame: string) => boolean|void} send writes one frame; false if it could not
   */
  connect(send) {
    this.sendFn = send;
    this.state = 'hello';
    this.gen = 0;
    this.lastSeq = 0;
    this.inFlight = [];
    this.needInitial = false;
    this.needSnapshot = false;
    this.replaceFailures = 0;
    this.replaceAcked = false;
    this.consoleSessions.clear();
    /** @type {Record<string, any>} */
    const body = { role: this.role };
    if (this.token) body.token = this.token;
    body.capabilities = this.capabilities;
    body.topics = this.topics;
    body.agent = this.agent;
    if (this.ackDelay) body.ackDelayMs = this.ackDelay;
    if (this.pageInfo) {
      const p = safeCall(this.pageInfo);
      if (p) body.page = this.capPage(p);
    }
    return this.write('{"v":1,"type":"hello","source":' + JSON.stringify(this.source) + ',"body":' + JSON.stringify(body) + '}');
  }

  /** The connection is gone. The queue (and its drop count) survives for the next generation. */
  disconnect() {
    this.sendFn = null;
    this.state = 'idle';
    this.gen = 0;
    this.inFlight = [];
    this.consoleSessions.clear();
  }

  /**
   * Sends close and ends the generation (the carrier then hangs up).
   * @param {string} code
   * @param {string} [reason]
   */
  close(code, reason) {
    if (this.state !== 'open') return false;
    /** @type {Record<string,string>} */
    const body = { code };
    if (reason) body.reason = reason;
    const ok = this.write(this.envelope('close', -1, JSON.stringify(body)));
    this.state = 'closed';
    return ok;
  }

  /**
   * One frame from the worker.
   * @param {string} text
   */
  receive(text) {
    let f;
    try { f = JSON.parse(text); } catch (e) { return; }
    try { this.handle(f); } catch (e) { /* a producer never throws into its carrier */ }
  }

  /** @param {any} f */
  handle(f) {
    if (!f || typeof f !== 'object' || f.v !== PROTOCOL_VERSION || typeof f.type !== 'string') return;
    const body = f.body && typeof f.body === 'object' ? f.body : {};
    if (f.type === 'welcome') {
      if (this.state === 'hello' && f.source === this.source && typeof f.gen === 'number' && f.gen >= 1) this.welcome(f.gen, body);
      return;
    }
    if (f.type === 'reject' && this.state === 'hello') {
      this.rejects++;
      this.lastRefusal = typeof body.code === 'string' ? body.code : '';
      if (this.onRefused) this.onRefused(this.lastRefusal);
      return;
    }
    if (this.state !== 'open' && this.state !== 'closed') return;
    if (f.source !== undefined && f.source !== this.source) return;
    if (f.gen !== undefined && f.gen !== this.gen) return;
    switch (f.type) {
      case 'ack':
        this.ack(f.seq, body);
        return;
      case 'reject':
        this.reject(body);
        return;
      case 'snapshot-request':
        this.needSnapshot = true;
        this.flush();
        return;
      case 'close':
        this.state = 'closed';
        if (this.onClose) this.onClose(String(body.code || ''), typeof body.reason === 'string' ? body.reason : undefined);
        return;
      case 'console.enable':
        if (typeof body.session === 'string') this.consoleSessions.add(body.session);
        break; // and on to onRequest: a realm with handles keeps a console group per session
      case 'console.disable':
        if (typeof body.session === 'string') this.consoleSessions.delete(body.session);
        break;
      case 'console.discard':
        break;
    }
    if (this.state === 'open' && this.onRequest) this.onRequest(f.type, body);
  }

  /** @param {number} gen @param {any} body */
  welcome(gen, body) {
    this.gen = gen;
    this.state = 'open';
    const l = body.limits && typeof body.limits === 'object' ? body.limits : {};
    for (const k of Object.keys(DEFAULT_LIMITS)) {
      const v = l[k];
      /** @type {any} */ (this.limits)[k] = typeof v === 'number' && v > 0 && Number.isSafeInteger(v) ? v : /** @type {any} */ (DEFAULT_LIMITS)[k];
    }
    this.granted = new Set(Array.isArray(body.topics) ? body.topics : this.topics);
    this.needInitial = true;
    this.lastRefusal = '';
    if (this.onOpen) safeCall(() => this.onOpen && this.onOpen(gen));
    this.flush();
  }

  /** @param {unknown} seq @param {any} body */
  ack(seq, body) {
    if (typeof seq !== 'number') return;
    if (typeof body.dropped === 'number') this.workerGaps += body.dropped;
    let released = false;
    while (this.inFlight.length && this.inFlight[0].last <= seq) {
      const b = /** @type {{kind:string, count:number}} */ (this.inFlight.shift());
      if (b.kind === 'append') this.acked += b.count;
      else { this.replaceAcked = true; this.replaceFailures = 0; }
      released = true;
    }
    if (released) {
      if (this.lazySchedule && this.queue.length < this.limits.maxBatchItems && !this.needSnapshot) this.kick(true);
      else this.flush();
    }
  }

  /** @param {any} body */
  reject(body) {
    this.rejects++;
    const t = body.refType;
    if (t !== undefined && t !== 'append' && t !== 'replace') return;
    if (!this.inFlight.length) return;
    // The worker answers in order: the reject is for the oldest batch
    // unless it names a later one.
    let i = 0;
    if (typeof body.refSeq === 'number') {
      const j = this.inFlight.findIndex((b) => b.first === body.refSeq && (t === undefined || b.kind === t));
      if (j > 0) i = j;
    }
    const gone = this.inFlight.splice(0, i + 1);
    const b = gone[gone.length - 1];
    if (b.kind === 'replace') {
      // Items of a rejected append are lost: the worker sees an
      // unexplained gap at the next append and asks for a snapshot. A
      // rejected replace is retried once with the page item only.
      if (++this.replaceFailures > 1) {
        // Give this generation up; the carrier hangs up (and a client
        // reconnects later, as a new generation).
        this.close('normal', 'replace refused');
        if (this.onClose) this.onClose('normal', 'replace refused');
        return;
      }
      if (this.replaceAcked) this.needSnapshot = true; else this.needInitial = true;
    }
    this.flush();
  }

  /**
   * Queues one item built from a plain body object.
   * @param {string} topic
   * @param {any} body
   * @returns {boolean} false if the item could not be queued
   */
  enqueue(topic, body) {
    let json;
    try { json = '{' + JSON.stringify(topic) + ':' + JSON.stringify(body) + '}'; } catch (e) { this.refused++; return false; }
    return this.enqueueJSON(topic, json);
  }

  /**
   * Queues one item given as its JSON text ({"topic":{…}}). `tail`, when
   * given, is called once when the item is about to be sent and returns
   * more members (",\"name\":…", or '') for the item's object: work the
   * caller does not want on its own hot path (a console call's stack is
   * formatted and parsed then, not during the call).
   * @param {string} topic
   * @param {string} json
   * @param {() => string} [tail]
   * @param {{bytes:number, objects:number, depth:number, maxString:number}} [measured]
   *   json's measurement when the caller knows it exactly (a fetch body
   *   chunk: ASCII of a known shape), so a large item is not scanned
   */
  enqueueJSON(topic, json, tail, measured) {
    try {
      // consoleItemJSON has just measured the text it returned (not twice),
      // or proven it fits: then it is measured once, with its tail, when
      // sent, and counts its UTF-16 length (a lower bound) until then.
      const known = !measured && lastItem.json === json;
      const m = measured || (known ? lastItem.m : measureJSON(json));
      if (!m) {
        this.queue.push({ topic, json, bytes: json.length, objects: 1, depth: 1, maxString: 0, tail, unmeasured: true, shallow: true });
        this.queueBytes += json.length;
      } else {
        if (!this.itemFits(m)) { this.refused++; return false; }
        this.queue.push({ topic, json, bytes: m.bytes, objects: m.objects, depth: m.depth, maxString: m.maxString, tail });
        this.queueBytes += m.bytes;
      }
      while (this.queue.length > this.maxQueueItems || (this.queueBytes > this.maxQueueBytes && this.queue.length > 1)) {
        const old = this.queue.shift();
        this.queueBytes -= old.bytes;
        this.pendingDropped++;
        this.dropped++;
      }
      this.kick(topic === 'fetch');
      return true;
    } catch (e) {
      return false;
    }
  }

  /**
   * Queues one item whose JSON text is built only when it is about to be
   * sent: for observations made of immutable values (a console call with
   * primitive arguments only), so the page's call pays for no
   * serialization at all. `bytes` estimates its size for the queue's byte
   * bound; an item that turns out not to fit is refused then.
   * @param {string} topic
   * @param {() => string} build
   * @param {number} bytes
   * @param {boolean} [shallow] the caller vouches that the text (and a
   *   tail) nests at most SHALLOW_DEPTH deep: a console item, whose
   *   previews stop at one level of entries (consoleItemJSON). Such an item
   *   is measured without the full scan when small and ASCII (shallowMeasure).
   * @param {number} [now] nowMs() as the caller just read it (a console
   *   call's timestamp), which spares the pace a second read
   */
  enqueueLater(topic, build, bytes, shallow, now) {
    try {
      this.queue.push({ topic, json: '', bytes, objects: 1, depth: 1, maxString: 0, build, shallow: !!shallow });
      this.queueBytes += bytes;
      while (this.queue.length > this.maxQueueItems || (this.queueBytes > this.maxQueueBytes && this.queue.length > 1)) {
        const old = this.queue.shift();
        this.queueBytes -= old.bytes;
        this.pendingDropped++;
        this.dropped++;
      }
      this.kick(topic === 'fetch', now);
      return true;
    } catch (e) {
      return false;
    }
  }

  /** @param {{bytes:number, objects:number, depth:number, maxString:number}} m */
  itemFits(m) {
    return m.bytes <= this.limits.maxFrameBytes - ENVELOPE_OVERHEAD - utf8Length(this.source) &&
      m.objects <= MAX_FRAME_OBJECTS - 2 && m.depth <= MAX_DEPTH - ITEM_DEPTH && m.maxString <= this.limits.maxStringBytes;
  }

  /**
   * Sends one unsequenced producer → worker frame (script.*, runtime.result,
   * close) stamped with the current generation.
   * @param {string} type
   * @param {any} body an object, or its JSON text (already measured by the caller)
   */
  sendFrame(type, body) {
    if (this.state !== 'open') return false;
    let text;
    try { text = this.envelope(type, -1, typeof body === 'string' ? body : JSON.stringify(body)); } catch (e) { return false; }
    if (text.length * 3 > this.limits.maxFrameBytes && utf8Length(text) > this.limits.maxFrameBytes) return false;
    return this.write(text);
  }

  /**
   * @param {boolean} [lazy] may wait batchWindow for more items
   * @param {number} [now] nowMs(), when the caller has just read it
   */
  kick(lazy, now) {
    if (this.state !== 'open') return;
    const later = this.lazySchedule;
    if (lazy && later) {
      if (this.lazyScheduled || this.flushScheduled) return;
      this.lazyScheduled = true;
      later(() => { this.lazyScheduled = false; this.flush(); });
      return;
    }
    // While the pace timer is set it flushes: a page logging steadily
    // then costs no microtask per task, until a frame's worth is queued.
    if (this.flushScheduled || (this.paceTimerSet && this.queueBytes < PACE_BYTES)) {
      if (this.pace) this.sendIfLate(now || nowMs());
      return;
    }
    this.flushScheduled = true;
    if (this.pace) this.scheduledAt = now || nowMs();
    this.schedule(() => { this.flushScheduled = false; this.flush(); });
  }

  /**
   * A flush is pending (its microtask, or the pace timer), but the page's
   * current task has run on LONG_TASK_MS past the time it was due: a long
   * or hung task, which the microtask and the timer wait for. The call
   * then sends one append itself, at most once per LONG_TASK_MS, so what a
   * page logs while it loops reaches the window as it runs (as V8's own
   * console messages do), and what it logged just before is not held
   * back by the pace. Paced producers only (the page client).
   * @param {number} now nowMs()
   */
  sendIfLate(now) {
    if (now - (this.flushScheduled ? this.scheduledAt : this.paceDue) < LONG_TASK_MS) return;
    this.scheduledAt = this.paceDue = now;
    if (this.paceTimerSet) this.lateSent = true; // the timer, when it fires, waits a new interval
    try {
      if (this.state === 'open' && !this.needInitial && !this.needSnapshot && this.queue.length &&
        this.inFlight.length < this.maxInFlight && !(this.writable && !this.writable())) this.sendAppend();
    } catch (e) { /* never throw into the page */ }
  }

  /**
   * Sends what the window allows: the initial or requested replace first,
   * then appends, while fewer than maxInFlight sequenced frames are unacked.
   * @param {boolean} [drain] ignore the window and writable() (page unload)
   */
  flush(drain) {
    try {
      while (this.state === 'open' && (drain || this.inFlight.length < this.maxInFlight)) {
        if (!drain && this.writable && !this.writable()) {
          if (this.retryLater && !this.retryPending) {
            this.retryPending = true;
            this.retryLater(() => { this.retryPending = false; this.flush(); });
          }
          return;
        }
        if (this.needInitial || this.needSnapshot) {
          if (!this.sendReplace()) return;
          continue;
        }
        if (!this.queue.length || (!drain && this.paced()) || !this.sendAppend()) return;
      }
    } catch (e) { /* never throw into the carrier or the page */ }
  }

  /**
   * True when the next append must wait for the pace interval; then a
   * timer flushes at its end (one at a time).
   */
  paced() {
    if (!this.pace || this.paceOver || this.queueBytes >= PACE_BYTES) return false;
    this.refillPace();
    if (this.paceTokens >= 1) return false;
    if (!this.paceTimerSet) {
      this.paceTimerSet = true;
      const ms = Math.ceil((1 - this.paceTokens) * this.pace);
      this.paceDue = this.paceAt + ms;
      this.timer(() => {
        this.paceTimerSet = false;
        // After a late send (sendIfLate) the next append waits its interval.
        if (this.lateSent) this.lateSent = false; else this.paceOver = true;
        this.flush();
      }, ms);
    }
    return true;
  }

  refillPace() {
    const now = nowMs();
    if (now > this.paceAt) this.paceTokens = Math.min(this.paceBurst, this.paceTokens + (now - this.paceAt) / this.pace);
    this.paceAt = now; // a clock that went back refills nothing
  }

  sendReplace() {
    const reason = this.needInitial ? 'initial' : 'requested';
    const minimal = this.replaceFailures > 0;
    this.needInitial = false;
    this.needSnapshot = false;
    /** @type {any[]} */
    let items = [];
    if (this.snapshotItems) items = safeCall(this.snapshotItems) || [];
    if (minimal) items = items.filter((it) => it && it.page).slice(0, 1);
    const parts = [];
    let bytes = ENVELOPE_OVERHEAD + utf8Length(this.source), objects = 2;
    for (const it of items) {
      const topic = it && Object.keys(it)[0];
      if (!topic || !this.granted.has(topic) || parts.length >= this.limits.maxBatchItems) continue;
      let json;
      try { json = JSON.stringify(it); } catch (e) { continue; }
      const m = measureJSON(json);
      if (!this.itemFits(m) || bytes + m.bytes + 1 > this.limits.maxFrameBytes || objects + m.objects > MAX_FRAME_OBJECTS) continue;
      parts.push(json);
      bytes += m.bytes + 1;
      objects += m.objects;
    }
    const seq = this.lastSeq;
    this.inFlight.push({ kind: 'replace', first: seq, last: seq, count: 0 });
    return this.write(this.envelope('replace', seq, '{"reason":"' + reason + '","items":[' + parts.join(',') + ']}'));
  }

  sendAppend() {
    const lim = this.limits;
    const parts = [];
    let bytes = ENVELOPE_OVERHEAD + utf8Length(this.source), objects = 2;
    while (this.queue.length && parts.length < lim.maxBatchItems) {
      const e = this.queue.peek();
      if (e.build || e.tail || e.unmeasured) this.completeItem(e);
      if (!e.json) { // a deferred item that could not be built within the limits
        this.queue.shift();
        this.queueBytes -= e.bytes;
        this.refused++;
        continue;
      }
      if (!this.granted.has(e.topic)) { // not granted by the welcome: never sequenced
        this.queue.shift();
        this.queueBytes -= e.bytes;
        this.refused++;
        continue;
      }
      if (!this.itemFits(e)) { // limits shrank with the welcome
        this.queue.shift();
        this.queueBytes -= e.bytes;
        this.pendingDropped++;
        this.dropped++;
        continue;
      }
      if (bytes + e.bytes + 1 > lim.maxFrameBytes || objects + e.objects > MAX_FRAME_OBJECTS) break;
      this.queue.shift();
      this.queueBytes -= e.bytes;
      parts.push(e.json);
      bytes += e.bytes + 1;
      objects += e.objects;
    }
    if (!parts.length) return false;
    const dropped = this.pendingDropped;
    const seq = this.lastSeq + dropped + 1;
    this.lastSeq = seq + parts.length - 1;
    this.pendingDropped = 0;
    this.sent += parts.length;
    this.inFlight.push({ kind: 'append', first: seq, last: this.lastSeq, count: parts.length });
    if (this.pace) {
      // A frame sent without waiting (a full queue, a drain) takes a
      // token too, but never runs the bucket into debt.
      this.refillPace();
      this.paceTokens = Math.max(0, this.paceTokens - 1);
      this.paceOver = false;
    }
    // The frame in one join: its envelope's head and tail go onto the
    // first and last items, so the items are copied once into one flat
    // text for the send, not joined and then copied again into the
    // envelope (a page's young garbage costs it a page fault per 4 KiB).
    const head = this.envelope('append', seq, '{' + (dropped ? '"dropped":' + dropped + ',' : '') + '"items":[', true);
    parts[0] = head + parts[0];
    parts[parts.length - 1] += ']}}';
    return this.write(parts.join(','));
  }

  /**
   * Builds a deferred item, adds its deferred members (the item stays as
   * it was when they do not fit) and measures it: once, with its members,
   * when that fits.
   * @param {any} e a queue entry
   */
  completeItem(e) {
    let json = e.json, unmeasured = !!e.unmeasured;
    e.unmeasured = false;
    if (e.build) {
      const build = e.build;
      e.build = undefined;
      try { json = build(); } catch (x) { json = ''; }
      if (!json) return;
      unmeasured = true;
    }
    const tail = e.tail;
    e.tail = undefined;
    let more = '';
    if (tail) {
      try { more = tail(); } catch (x) { more = ''; }
    }
    if (more) {
      const full = json.slice(0, -2) + more + '}}';
      const m = (e.shallow && shallowMeasure(full, this.limits)) || measureJSON(full);
      if (this.itemFits(m)) return this.setItem(e, full, m);
    }
    if (!unmeasured) return;
    const m = (lastItem.json === json && lastItem.m) || (e.shallow && shallowMeasure(json, this.limits)) || measureJSON(json);
    if (!e.json && !this.itemFits(m)) return; // built, too large: e.json stays '' (refused)
    // Proven to fit when queued: only limits that shrank since (a
    // welcome) fail it, and sendAppend then drops it as it drops others.
    this.setItem(e, json, m);
  }

  /**
   * @param {any} e a queue entry
   * @param {string} json
   * @param {{bytes:number, objects:number, depth:number, maxString:number}} m
   */
  setItem(e, json, m) {
    this.queueBytes += m.bytes - e.bytes;
    e.json = json;
    e.bytes = m.bytes;
    e.objects = m.objects;
    e.depth = m.depth;
    e.maxString = m.maxString;
  }

  /**
   * @param {string} type
   * @param {number} seq -1 for unsequenced types
   * @param {string} body JSON text
   * @param {boolean} [open] leave the frame's object open (its caller ends it)
   */
  envelope(type, seq, body, open) {
    return '{"v":1,"type":"' + type + '","source":' + JSON.stringify(this.source) + ',"gen":' + this.gen +
      (seq >= 0 ? ',"seq":' + seq : '') + ',"body":' + body + (open ? '' : '}');
  }

  /** @param {string} text */
  write(text) {
    const send = this.sendFn;
    if (!send) return false;
    try { return send(text) !== false; } catch (e) { return false; }
  }

  /** @param {{url?:unknown, title?:unknown}} p */
  capPage(p) {
    const max = Math.min(this.limits.maxStringBytes, 8192);
    return { url: capString(String(p.url || ''), max), title: capString(String(p.title || ''), 1024) };
  }

  /** Counters: items queued now, dropped, sent and acked in total. */
  stats() {
    return {
      source: this.source,
      gen: this.gen,
      state: this.state,
      queued: this.queue.length,
      dropped: this.dropped,
      sent: this.sent,
      acked: this.acked,
      inFlight: this.inFlight.length,
    };
  }
}

/**
 * A schedule that waits ms (a Node timer that does not keep the process alive).
 * @param {number} ms
 */
function windowSchedule(ms) {
  return (/** @type {() => void} */ fn) => defaultTimer(fn, ms);
}

/**
 * Runs fn after ms, a timer that does not keep a Node process alive.
 * @param {() => void} fn
 * @param {number} ms
 */
function defaultTimer(fn, ms) {
  const t = /** @type {any} */ (setTimeout(fn, ms));
  if (t && typeof t.unref === 'function') t.unref();
}

/** @param {() => void} fn */
function defaultSchedule(fn) {
  if (typeof queueMicrotask === 'function') queueMicrotask(fn);
  else Promise.resolve().then(fn);
}

/**
 * @template T
 * @param {() => T} fn
 * @returns {T|undefined}
 */
function safeCall(fn) {
  try { return fn(); } catch (e) { return undefined; }
}

// ---------------------------------------------------------------------------
// Newline-framed carrier (the host pipe on fd 3).

/**
 * Wires a producer to a Node duplex stream speaking one JSON frame per
 * line, and calls producer.connect. The stream dying (error, end, close)
 * disconnects the producer; onDead is told once.
 * @param {Producer} producer
 * @param {any} stream a net.Socket-like duplex
 * @param {() => void} [onDead]
 */
export function attachLineStream(producer, stream, onDead) {
  let buf = '';
  let skipping = false;
  let dead = false;
  const die = () => {
    if (dead) return;
    dead = true;
    producer.disconnect();
    try { stream.destroy(); } catch (e) { /* already gone */ }
    if (onDead) safeCall(onDead);
  };
  try { stream.setEncoding('utf8'); } catch (e) { /* not a readable */ }
  stream.on('data', (/** @type {string} */ chunk) => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf('\n', start);
      if (nl < 0) break;
      const piece = chunk.slice(start, nl);
      start = nl + 1;
      if (skipping) { skipping = false; buf = ''; continue; }
      const line = buf ? buf + piece : piece;
      buf = '';
      if (line) producer.receive(line);
    }
    if (start < chunk.length && !skipping) {
      buf += chunk.slice(start);
      // A line longer than MaxFrameBytes is refused, not buffered.
      if (buf.length > producer.limits.maxFrameBytes) { buf = ''; skipping = true; }
    }
  });
  stream.on('error', die);
  stream.on('end', die);
  stream.on('close', die);
  producer.connect((frame) => {
    if (dead) return false;
    try {
      stream.write(frame + '\n');
      return true;
    } catch (e) {
      die();
      return false;
    }
  });
  return { get dead() { return dead; }, destroy: die };
}

// ---------------------------------------------------------------------------
// Values: CDP RemoteObject / ObjectPreview shapes; handles only when a
// realm with the "runtime" capability (runtime.mjs) passes opts.handle.

const objToString = Object.prototype.toString;
const hasOwn = Object.prototype.hasOwnProperty;

/** @param {Function|undefined} ctor @param {string} name */
function getter(ctor, name) {
  try {
    const d = ctor && Object.getOwnPropertyDescriptor(ctor.prototype, name);
    return d && d.get;
  } catch (e) { return undefined; }
}
const G = typeof globalThis !== 'undefined' ? /** @type {any} */ (globalThis) : {};
const mapSize = getter(G.Map, 'size');
const setSize = getter(G.Set, 'size');
const regexpSource = getter(G.RegExp, 'source');
const regexpFlags = getter(G.RegExp, 'flags');
const abByteLength = getter(G.ArrayBuffer, 'byteLength');
const sabByteLength = getter(G.SharedArrayBuffer, 'byteLength');
const dvByteLength = getter(G.DataView, 'byteLength');
const typedArrayLength = G.Uint8Array ? getter(Object.getPrototypeOf(G.Uint8Array), 'length') : undefined;
const dateGetTime = G.Date && G.Date.prototype.getTime;
const dateToString = G.Date && G.Date.prototype.toString;
const fnToString = Function.prototype.toString;
const symToString = G.Symbol && G.Symbol.prototype.toString;

/**
 * Calls a brand-checking intrinsic: its result, or undefined when v is not
 * of that kind (intrinsics throw TypeError on the wrong receiver, and never
 * run page code).
 * @param {Function|undefined} f
 * @param {any} v
 */
function brand(f, v) {
  if (!f) return undefined;
  try { return f.call(v); } catch (e) { return undefined; }
}

/** @param {any} v */
function tagOf(v) {
  try { return objToString.call(v).slice(8, -1); } catch (e) { return 'Object'; }
}

/** @param {any} v */
function classNameOf(v) {
  try {
    const p = Object.getPrototypeOf(v);
    if (p === null) return 'Object';
    const d = Object.getOwnPropertyDescriptor(p, 'constructor');
    const c = d && d.value;
    if (typeof c === 'function') {
      const nd = Object.getOwnPropertyDescriptor(c, 'name');
      if (nd && typeof nd.value === 'string' && nd.value) return nd.value;
    }
  } catch (e) { /* a proxy trap threw */ }
  return tagOf(v) || 'Object';
}

/**
 * Classifies an object: subtype (or '' for a plain object), class name and
 * a short description, the way V8 describes it.
 * @param {object} v
 * @param {number} descBytes
 * @returns {{subtype:string, className:string, description:string, size:number}}
 */
function classify(v, descBytes) {
  // The common case first: a plain object or array, named as V8 names
  // them (by the map's constructor, not a patched .constructor), without
  // the descriptor reads and brand checks below. An own Symbol.toStringTag
  // (tagOf) takes the long way, which honours it.
  let proto;
  try { proto = getProto(v); } catch (e) { proto = undefined; }
  if (proto === ObjectProto && tagOf(v) === 'Object') return PLAIN_OBJECT;
  if (proto === ArrayProto && Array.isArray(v)) {
    let len = 0;
    try { len = /** @type {any} */ (v).length >>> 0; } catch (e) { /* proxy */ }
    return { subtype: 'array', className: 'Array', description: 'Array(' + len + ')', size: len };
  }
  const className = classNameOf(v);
  const tag = tagOf(v);
  /** @type {any} */
  const o = v;
  let n;
  if (Array.isArray(v)) {
    let len = 0;
    try { len = o.length >>> 0; } catch (e) { /* proxy */ }
    return { subtype: 'array', className, description: className + '(' + len + ')', size: len };
  }
  // Intrinsic brand checks only where the tag says they will pass: a
  // failing one throws a TypeError, and a throw (with its stack capture)
  // costs more than the rest of a console call. A spoofed tag fails the
  // brand check and falls through.
  switch (tag) {
    case 'Map':
      if ((n = brand(mapSize, v)) !== undefined) return { subtype: 'map', className, description: className + '(' + n + ')', size: n };
      break;
    case 'Set':
      if ((n = brand(setSize, v)) !== undefined) return { subtype: 'set', className, description: className + '(' + n + ')', size: n };
      break;
    case 'Date':
      if (brand(dateGetTime, v) !== undefined) return { subtype: 'date', className, description: String(brand(dateToString, v)), size: 0 };
      break;
    case 'RegExp': {
      const src = brand(regexpSource, v);
      if (src !== undefined && v !== G.RegExp.prototype) {
        return { subtype: 'regexp', className, description: capString('/' + src + '/' + (brand(regexpFlags, v) || ''), descBytes), size: 0 };
      }
      break;
    }
    case 'ArrayBuffer':
    case 'SharedArrayBuffer':
      if ((n = brand(tag === 'ArrayBuffer' ? abByteLength : sabByteLength, v)) !== undefined) {
        return { subtype: 'arraybuffer', className, description: className + '(' + n + ')', size: 0 };
      }
      break;
    case 'DataView':
      if ((n = brand(dvByteLength, v)) !== undefined) return { subtype: 'dataview', className, description: className + '(' + n + ')', size: 0 };
      break;
    case 'WeakMap':
      if (G.WeakMap && tryBool(() => { G.WeakMap.prototype.has.call(v, {}); return true; })) return { subtype: 'weakmap', className, description: className, size: 0 };
      break;
    case 'WeakSet':
      if (G.WeakSet && tryBool(() => { G.WeakSet.prototype.has.call(v, {}); return true; })) return { subtype: 'weakset', className, description: className, size: 0 };
      break;
    default:
      if (/Array$/.test(tag) && (n = brand(typedArrayLength, v)) !== undefined) return { subtype: 'typedarray', className, description: className + '(' + n + ')', size: n };
  }
  if (tag === 'Error' || isInstance(v, G.Error)) {
    return { subtype: 'error', className, description: capString(errorText(v), descBytes), size: 0 };
  }
  if (tag === 'Promise' || isInstance(v, G.Promise)) return { subtype: 'promise', className, description: 'Promise', size: 0 };
  if (tag === 'Generator' || tag === 'AsyncGenerator') return { subtype: 'generator', className, description: className, size: 0 };
  if (/ Iterator$/.test(tag)) return { subtype: 'iterator', className: tag, description: tag, size: 0 };
  if (isInstance(v, G.Node)) return { subtype: 'node', className, description: capString(nodeText(v), descBytes), size: 0 };
  if (G.WebAssembly && isInstance(v, G.WebAssembly.Memory)) {
    return { subtype: 'webassemblymemory', className, description: 'Memory', size: 0 };
  }
  return { subtype: '', className, description: className, size: 0 };
}

/** classify's answer for a plain object (shared: callers only read it). */
const PLAIN_OBJECT = Object.freeze({ subtype: '', className: 'Object', description: 'Object', size: 0 });
const getProto = Object.getPrototypeOf;
const ObjectProto = Object.prototype;
const ArrayProto = Array.prototype;

/**
 * v instanceof C, false when C is missing or a proxy's trap throws
 * (no closure per check, unlike tryBool).
 * @param {any} v
 * @param {any} C
 */
function isInstance(v, C) {
  if (typeof C !== 'function') return false;
  try { return v instanceof C; } catch (e) { return false; }
}

/** @param {() => boolean} f */
function tryBool(f) {
  try { return !!f(); } catch (e) { return false; }
}

/** @param {any} e */
function errorText(e) {
  try {
    const s = e.stack;
    if (typeof s === 'string' && s) return s;
  } catch (x) { /* fall through */ }
  try {
    const name = e.name, msg = e.message;
    return String(name || 'Error') + (msg ? ': ' + String(msg) : '');
  } catch (x) {
    return 'Error';
  }
}

/** @param {any} n */
function nodeText(n) {
  try {
    if (n.nodeType === 1) {
      let s = String(n.nodeName).toLowerCase();
      if (n.id) s += '#' + n.id;
      const cls = typeof n.className === 'string' ? n.className.trim() : '';
      if (cls) s += '.' + cls.split(/\s+/).join('.');
      return s;
    }
    return String(n.nodeName);
  } catch (e) {
    return 'Node';
  }
}

/**
 * @typedef {object} SerializeOptions
 * @property {number} [stringBytes] cap for string values and descriptions (escaped UTF-8 bytes)
 * @property {boolean} [preview] attach ObjectPreviews (default true)
 * @property {(v: any) => string} [handle] a handle for an object, function or symbol ('' = none); only a realm with the "runtime" capability passes it
 */

/**
 * Serializes one value to a RemoteObject (a handle only with opts.handle).
 * @param {any} v
 * @param {SerializeOptions} [opts]
 * @returns {Record<string, any>}
 */
export function remoteObject(v, opts) {
  const cap = (opts && opts.stringBytes) || DEFAULT_LIMITS.maxStringBytes - 16;
  const withPreview = !opts || opts.preview !== false;
  try {
    switch (typeof v) {
      case 'undefined':
        return { type: 'undefined' };
      case 'boolean':
        return { type: 'boolean', value: v };
      case 'number': {
        const u = unserializableNumber(v);
        if (u) return { type: 'number', unserializableValue: u, description: u };
        return { type: 'number', value: v, description: String(v) };
      }
      case 'bigint': {
        const t = v.toString() + 'n';
        if (t.length > cap) return { type: 'bigint', description: capString(t, cap) };
        return { type: 'bigint', unserializableValue: t, description: t };
      }
      case 'string':
        return { type: 'string', value: capString(v, cap) };
      case 'symbol': {
        /** @type {Record<string, any>} */
        const r = { type: 'symbol', description: capString(String(symToString.call(v)), cap) };
        addHandle(r, v, opts);
        return r;
      }
      case 'function': {
        let src = 'function';
        try { src = fnToString.call(v); } catch (e) { /* revoked proxy */ }
        /** @type {Record<string, any>} */
        const r = { type: 'function', className: classNameOf(v) || 'Function', description: capString(src, cap) };
        addHandle(r, v, opts);
        return r;
      }
    }
    if (v === null) return { type: 'object', subtype: 'null' };
    const c = classify(v, cap);
    /** @type {Record<string, any>} */
    const r = { type: 'object' };
    if (c.subtype) r.subtype = c.subtype;
    r.className = capString(c.className, 1024);
    r.description = c.description;
    addHandle(r, v, opts);
    if (withPreview && c.subtype !== 'node') r.preview = objectPreview(v, c, 0);
    return r;
  } catch (e) {
    return { type: 'object', className: 'Object', description: 'Object' };
  }
}

/**
 * @param {Record<string, any>} r
 * @param {any} v
 * @param {SerializeOptions|undefined} opts
 */
function addHandle(r, v, opts) {
  if (!opts || !opts.handle) return;
  const h = opts.handle(v);
  if (h) r.handle = h;
}

/** @param {number} v */
function unserializableNumber(v) {
  if (v !== v) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  if (v === 0 && 1 / v < 0) return '-0';
  return '';
}

/** @param {string} s */
function abbreviate(s) {
  return s.length > PREVIEW_TEXT ? s.slice(0, PREVIEW_TEXT - 1) + '\u2026' : s;
}

/**
 * A short preview of v: at most PREVIEW_PROPERTIES own enumerable
 * properties (PREVIEW_INDICES for arrays), PREVIEW_ENTRIES map/set entries,
 * never running getters.
 * @param {any} v
 * @param {{subtype:string, description:string, size:number}} c
 * @param {number} depth
 */
function objectPreview(v, c, depth) {
  /** @type {Record<string, any>} */
  const p = { type: 'object' };
  if (c.subtype) p.subtype = c.subtype;
  p.description = capString(abbreviate(c.description), PREVIEW_TEXT * 6);
  p.overflow = false;
  /** @type {any[]} */
  const props = [];
  p.properties = props;
  if (c.subtype === 'map' || c.subtype === 'set') {
    if (depth > 0) { // V8 nests one level: a nested map shows its size only
      p.overflow = c.size > 0;
      return p;
    }
    /** @type {any[]} */
    const entries = [];
    try {
      const it = c.subtype === 'map' ? G.Map.prototype.entries.call(v) : G.Set.prototype.values.call(v);
      for (let step = it.next(); !step.done; step = it.next()) {
        if (entries.length >= PREVIEW_ENTRIES) { p.overflow = true; break; }
        if (c.subtype === 'map') entries.push({ key: valuePreview(step.value[0], depth + 1), value: valuePreview(step.value[1], depth + 1) });
        else entries.push({ value: valuePreview(step.value, depth + 1) });
      }
    } catch (e) { /* a patched iterator threw */ }
    p.entries = entries;
    return p;
  }
  if (c.subtype === 'array' || c.subtype === 'typedarray') {
    const n = Math.min(c.size, PREVIEW_INDICES);
    for (let i = 0; i < n; i++) {
      const pp = propertyPreview(v, String(i));
      if (pp) props.push(pp);
    }
    if (c.size > n) p.overflow = true;
    return p;
  }
  if (c.subtype === 'promise' || c.subtype === 'node' || c.subtype === 'arraybuffer' || c.subtype === 'dataview') return p;
  try {
    for (const k in v) {
      if (!hasOwn.call(v, k)) continue;
      if (props.length >= PREVIEW_PROPERTIES) { p.overflow = true; break; }
      const pp = propertyPreview(v, k);
      if (pp) props.push(pp);
    }
  } catch (e) { /* a proxy trap threw */ }
  return p;
}

/**
 * @param {any} obj
 * @param {string} key
 */
function propertyPreview(obj, key) {
  let d;
  try { d = Object.getOwnPropertyDescriptor(obj, key); } catch (e) { return null; }
  if (!d) return null;
  const name = capString(abbreviate(key), PREVIEW_TEXT * 6);
  if (d.get || d.set) return { name, type: 'accessor' };
  const v = d.value;
  const t = typeof v;
  if (v === null) return { name, type: 'object', value: 'null', subtype: 'null' };
  if (t === 'object') {
    const c = classify(v, PREVIEW_TEXT * 6);
    /** @type {Record<string, any>} */
    const pp = { name, type: 'object', value: capString(abbreviate(c.description), PREVIEW_TEXT * 6) };
    if (c.subtype) pp.subtype = c.subtype;
    return pp;
  }
  if (t === 'function') return { name, type: 'function', value: '' };
  return { name, type: t, value: primitiveText(v) };
}

/** @param {any} v */
function primitiveText(v) {
  switch (typeof v) {
    case 'string': return capString(abbreviate(v), PREVIEW_TEXT * 6);
    case 'number': return unserializableNumber(v) || String(v);
    case 'bigint': return abbreviate(v.toString() + 'n');
    case 'symbol': return capString(abbreviate(String(symToString.call(v))), PREVIEW_TEXT * 6);
    default: return String(v);
  }
}

/**
 * An ObjectPreview of any value (EntryPreview keys and values).
 * @param {any} v
 * @param {number} depth
 */
function valuePreview(v, depth) {
  const t = typeof v;
  if (v === null) return { type: 'object', subtype: 'null', description: 'null', overflow: false, properties: [] };
  if (t === 'object') return objectPreview(v, classify(v, PREVIEW_TEXT * 6), depth);
  if (t === 'function') return { type: 'function', description: capString(abbreviate(safeFnText(v)), PREVIEW_TEXT * 6), overflow: false, properties: [] };
  return { type: t, description: primitiveText(v), overflow: false, properties: [] };
}

/** @param {Function} f */
function safeFnText(f) {
  try { return fnToString.call(f); } catch (e) { return 'function'; }
}

// ---------------------------------------------------------------------------
// Stack traces

/**
 * Parses an Error().stack text (V8, and SpiderMonkey/JavaScriptCore's
 * "fn@url:line:col") into CDP call frames, 0-based.
 * @param {unknown} stack
 * @returns {Array<{functionName:string, url:string, lineNumber:number, columnNumber:number}>}
 */
export function parseStack(stack) {
  /** @type {Array<{functionName:string, url:string, lineNumber:number, columnNumber:number}>} */
  const out = [];
  if (typeof stack !== 'string') return out;
  const lines = stack.split('\n');
  const v8 = /^\s*at /m.test(stack);
  for (const raw of lines) {
    const line = raw.trim();
    let fn = '', url = '', ln = 0, col = 0, m;
    if (v8) {
      if (!(m = /^at (?:(.+?) \((.+):(\d+):(\d+)\)|(.+):(\d+):(\d+))$/.exec(line))) continue;
      if (m[2] !== undefined) { fn = m[1]; url = m[2]; ln = +m[3]; col = +m[4]; } else { url = m[5]; ln = +m[6]; col = +m[7]; }
      fn = fn.replace(/^async /, '').replace(/^new /, '');
      if (fn === '<anonymous>') fn = '';
      if (/^eval at |, <anonymous>$/.test(url)) url = '';
    } else if ((m = /^(.*?)@(.+):(\d+):(\d+)$/.exec(line))) {
      fn = m[1].replace(/[/<]+$/, ''); url = m[2]; ln = +m[3]; col = +m[4];
    } else {
      continue;
    }
    out.push({ functionName: capString(fn, 1024), url: capString(url, 8192), lineNumber: Math.max(0, ln - 1), columnNumber: Math.max(0, col - 1) });
    if (out.length >= MAX_STACK_FRAMES) break;
  }
  return out;
}

/**
 * Captures the current stack, dropping the leading frames that belong to
 * the producer itself (isOwn). undefined when nothing is left.
 * @param {(frame: {url:string}) => boolean} isOwn
 */
export function captureStack(isOwn) {
  const E = /** @type {any} */ (Error);
  const lim = E.stackTraceLimit;
  if (typeof lim === 'number' && lim <= 0) return undefined;
  let stack;
  try {
    if (typeof lim === 'number') E.stackTraceLimit = Math.min(lim, MAX_STACK_FRAMES) + 8;
    stack = new Error().stack;
  } catch (e) {
    return undefined;
  } finally {
    if (typeof lim === 'number') E.stackTraceLimit = lim;
  }
  const frames = parseStack(stack);
  let i = 0;
  while (i < frames.length && isOwn(frames[i])) i++;
  const rest = frames.slice(i, i + (typeof lim === 'number' ? Math.min(lim, MAX_STACK_FRAMES) : MAX_STACK_FRAMES));
  return rest.length ? { callFrames: rest } : undefined;
}

/**
 * The cheap half of captureStack, for a hot path: an Error made now (V8
 * records its frames but formats no text until .stack is read), to be
 * turned into call frames later by stackOfHolder. undefined when the
 * page's Error.stackTraceLimit is 0.
 * @param {number} [own] frames above the caller's that belong to the
 *   producer (and are dropped by stackOfHolder's isOwn); default 5
 * @param {Function} [below] the producer's outermost function on the stack
 *   (the console wrapper the page called): where V8's
 *   Error.captureStackTrace exists, the stack starts below it and `own`
 *   is not needed
 * @returns {{error: any, keep: number, frames?: any}|undefined}
 */
export function stackHolder(own, below) {
  const E = /** @type {any} */ (Error);
  const lim = E.stackTraceLimit;
  if (typeof lim === 'number' && lim <= 0) return undefined;
  const keep = typeof lim === 'number' ? Math.min(lim, MAX_STACK_FRAMES) : MAX_STACK_FRAMES;
  if (below && captureStackTrace && lim === keep) {
    // V8 leaves out `below` and the frames above it (ours) by itself, so
    // the page's own limit applies as it is: no two writes to
    // Error.stackTraceLimit per call. Formatted lazily, like new Error().
    // The holder carries the capture itself: one object per call.
    /** @type {{error: any, keep: number, frames?: any}} */
    const h = { error: null, keep, frames: undefined };
    try { captureStackTrace(h, below); } catch (e) { return undefined; }
    h.error = h;
    return h;
  }
  try {
    // The producer's own frames above the page's: the console wrapper,
    // its hook, the emitter, this function.
    if (typeof lim === 'number') E.stackTraceLimit = keep + (own === undefined ? 5 : own);
    return { error: new Error(), keep };
  } catch (e) {
    return undefined;
  } finally {
    if (typeof lim === 'number') E.stackTraceLimit = lim;
  }
}

/** The realm's Error, taken at load: its stackTraceLimit is the one V8 reads. */
const NativeError = /** @type {any} */ (Error);

/** V8's, taken at load (a page that patches Error later does not reach us). */
const captureStackTrace = typeof Error.captureStackTrace === 'function' ? Error.captureStackTrace : null;

/**
 * The StackTrace of a stackHolder (computed once, then cached on it),
 * without the producer's own leading frames.
 * @param {{error: any, keep: number, frames?: any}} h
 * @param {(frame: {url:string}) => boolean} isOwn
 * @returns {{callFrames: any[]}|undefined}
 */
export function stackOfHolder(h, isOwn) {
  if (h.frames === undefined) {
    let stack;
    try { stack = h.error.stack; } catch (e) { stack = undefined; }
    h.error = null;
    const c = stackCache;
    if (h.keep !== c.keep || isOwn !== c.isOwn) {
      c.keep = h.keep;
      c.isOwn = isOwn;
      c.frames.clear();
    }
    // A page logs from a few call sites, in turns (a loop with two
    // console.log lines): parse each site's stack once.
    let frames = typeof stack === 'string' ? c.frames.get(stack) : undefined;
    if (!frames) {
      const all = parseStack(stack);
      let i = 0;
      while (i < all.length && isOwn(all[i])) i++;
      frames = all.slice(i, i + h.keep);
      if (typeof stack === 'string') {
        if (c.frames.size >= STACK_CACHE_SITES) c.frames.clear(); // overflow: start over
        c.frames.set(stack, frames);
      }
    }
    h.frames = frames;
  }
  return h.frames.length ? { callFrames: h.frames } : undefined;
}

/** Stack texts stackOfHolder keeps parsed; beyond it the cache starts over. */
const STACK_CACHE_SITES = 128;

/**
 * The call frames of the last STACK_CACHE_SITES stack texts stackOfHolder
 * parsed (shared, never mutated: callers only serialize them), for one
 * frame limit and one isOwn (either changing clears it).
 * @type {{keep: number, isOwn: any, frames: Map<string, any[]>}}
 */
const stackCache = { keep: -1, isOwn: null, frames: new Map() };

// ---------------------------------------------------------------------------
// Console events

/**
 * The last console item text consoleItemJSON returned, with its
 * measurement, which Producer.enqueueJSON reuses when handed that text;
 * m null = proven to fit but not measured yet (completeItem measures it
 * when it is sent).
 * @type {{json: string, m: {bytes:number, objects:number, depth:number, maxString:number}|null}}
 */
const lastItem = { json: '', m: null };

/**
 * Handles for one console event's arguments, in one DevTools session's
 * console group (runtime.mjs makes them); rollback releases those made so
 * far when an attempt is thrown away.
 * @typedef {{make: (v: any) => string, rollback: () => void}} ConsoleHandles
 */

/**
 * Builds the JSON text of one console item ({"console":{…}}), within the
 * limits: at most MAX_CONSOLE_ARGS arguments, strings shortened so the
 * item fits a frame. Falls back to previews-off, short strings, and at
 * last a placeholder message. With `session` and `handles` the objects
 * among the arguments carry handles of that session's console group.
 * @param {string} type a ConsoleType (log, warning, startGroup, …)
 * @param {ArrayLike<any>} args
 * @param {{timestamp?:number, stackTrace?:any, url?:string, context?:string, limits?:Limits, session?:string, handles?:ConsoleHandles}} [extra]
 */
export function consoleItemJSON(type, args, extra) {
  return consoleItemFrom(type, args, extra || {}, null);
}

/**
 * consoleItemJSON in two halves: the arguments' RemoteObjects (previews,
 * handles: what the values are now) are made at once, on the page's call;
 * the returned function makes the JSON text when the item is sent. The
 * RemoteObjects hold only primitives and objects of ours, so the text is
 * the one consoleItemJSON would have made at the call. Only an item too
 * large for a frame is redone from the arguments then (as they are then:
 * such an item is cut down anyway).
 * @param {string} type
 * @param {ArrayLike<any>} args
 * @param {{timestamp?:number, stackTrace?:any, url?:string, context?:string, limits?:Limits, session?:string, handles?:ConsoleHandles}} x
 *   owned by the returned function from now on
 * @returns {() => string}
 */
export function consoleItemLater(type, args, x) {
  const lim = x.limits || DEFAULT_LIMITS;
  const n = Math.min(args.length, MAX_CONSOLE_ARGS);
  const o = { stringBytes: consoleStringCap(lim, n), preview: true, handle: x.handles && x.session ? x.handles.make : undefined };
  /** @type {any[]} */
  const list = [];
  for (let i = 0; i < n; i++) list.push(remoteObject(args[i], o));
  if (x.timestamp === undefined) x.timestamp = nowMs();
  return () => consoleItemFrom(type, args, x, list);
}

/** @param {Limits} lim @param {number} n arguments */
function consoleStringCap(lim, n) {
  return Math.max(1024, Math.min(lim.maxStringBytes - 16, Math.floor(lim.maxValueBytes / Math.max(1, n))));
}

/**
 * @param {string} type
 * @param {ArrayLike<any>} args
 * @param {{timestamp?:number, stackTrace?:any, url?:string, context?:string, limits?:Limits, session?:string, handles?:ConsoleHandles}} x
 * @param {any[]|null} first the first attempt's RemoteObjects, when made already
 */
function consoleItemFrom(type, args, x, first) {
  const lim = x.limits || DEFAULT_LIMITS;
  const n = Math.min(args.length, MAX_CONSOLE_ARGS);
  const itemBytes = lim.maxFrameBytes - ENVELOPE_OVERHEAD - 256;
  const stringCap = consoleStringCap(lim, n);
  const handle = x.handles && x.session ? x.handles.make : undefined;
  // Two attempts: as asked, then without previews and with short strings.
  // Their options are made only when used: a console call's item whose
  // RemoteObjects were made at the call (first) and fits needs none.
  for (let attempt = 0; attempt < 2; attempt++) {
    let list = first;
    first = null;
    if (!list) {
      const o = attempt === 0 ? { stringBytes: stringCap, preview: true, handle } : { stringBytes: 1024, preview: false, handle };
      list = [];
      for (let i = 0; i < n; i++) list.push(remoteObject(args[i], o));
    }
    const json = consoleJSON(type, list, x, lim);
    // Bounds without a scan, for the common small item: JSON.stringify
    // output has at most 3 UTF-8 bytes per UTF-16 unit (its escapes are
    // ASCII) and at least 2 units per object, and an item nests at most
    // ~10 deep by construction (previews stop at one level of entries).
    // Its exact measurement waits for the send (Producer.completeItem),
    // off the page's call.
    if (shallowFits(json.length, lim) && json.length <= 2 * (MAX_FRAME_OBJECTS - 2)) {
      lastItem.json = json;
      lastItem.m = null;
      return json;
    }
    const m = measureJSON(json);
    if (m.bytes <= itemBytes && m.objects <= MAX_FRAME_OBJECTS - 2 && m.maxString <= lim.maxStringBytes) {
      lastItem.json = json;
      lastItem.m = m;
      return json;
    }
    if (x.handles) x.handles.rollback();
  }
  return consoleJSON(type, [{ type: 'string', value: '[inspector-worker: console call too large to forward]' }], x, lim);
}

/**
 * A console item's text (consoleItemJSON's) with more members spliced in
 * at its end (a call's ',"stackTrace":…', made once per call site), and
 * its measurement made from the two flat parts, for completeItem: the
 * joined text (a cons string) is then neither scanned nor flattened
 * before the frame's join copies it, once. A large or non-ASCII item is
 * left unmeasured (measured when sent, as before).
 * @param {string} json
 * @param {string} tail
 * @param {Limits} lim
 */
export function spliceTail(json, tail, lim) {
  const full = json.slice(0, -2) + tail + '}}';
  lastItem.json = '';
  lastItem.m = null;
  if (shallowFits(full.length, lim) && !NON_ASCII.test(json) && !NON_ASCII.test(tail)) {
    // As shallowMeasure would: ASCII, so bytes = length; objects ≤ '{'s.
    lastItem.json = full;
    lastItem.m = { bytes: full.length, objects: braces(json) + braces(tail), depth: SHALLOW_DEPTH, maxString: full.length };
  }
  return full;
}

/** @param {string} s */
function braces(s) {
  let n = 0;
  for (let i = s.indexOf('{'); i >= 0; i = s.indexOf('{', i + 1)) n++;
  return n;
}

/**
 * @param {string} type
 * @param {any[]} args
 * @param {{timestamp?:number, stackTrace?:any, url?:string, context?:string, session?:string}} x
 * @param {Limits} lim
 */
function consoleJSON(type, args, x, lim) {
  /** @type {Record<string, any>} */
  const ev = x.session ? { session: x.session, type, args } : { type, args };
  ev.timestamp = typeof x.timestamp === 'number' && x.timestamp >= 0 ? x.timestamp : nowMs();
  if (x.stackTrace && x.stackTrace.callFrames && x.stackTrace.callFrames.length) ev.stackTrace = x.stackTrace;
  if (x.context) ev.context = capString(String(x.context), 1024);
  if (x.url) ev.url = capString(String(x.url), Math.min(8192, lim.maxStringBytes));
  // One text, made once: not the event's and then a copy inside the item's.
  return JSON.stringify({ console: ev });
}

/** console method → protocol ConsoleType; null = no event of its own. */
export const CONSOLE_METHODS = Object.freeze({
  log: 'log', info: 'info', warn: 'warning', error: 'error', debug: 'debug', trace: 'trace',
  dir: 'dir', dirxml: 'dirxml', table: 'table', clear: 'clear', assert: 'assert',
  group: 'startGroup', groupCollapsed: 'startGroupCollapsed', groupEnd: 'endGroup',
  count: 'count', countReset: null, time: null, timeLog: 'log', timeEnd: 'timeEnd',
});

// V8's default argument for calls made without arguments.
/** @type {Record<string, string>} */
const DEFAULT_ARG = {
  trace: 'console.trace', group: 'console.group', groupCollapsed: 'console.groupCollapsed',
  groupEnd: 'console.groupEnd', clear: 'console.clear', assert: 'console.assert',
};

/**
 * Wraps a console object's methods. Each wrapper calls the original first,
 * with the caller's `this` and arguments, and returns exactly what it
 * returned (an exception from the original propagates unchanged and no
 * event is emitted); only then does it call emit(type, args), inside a
 * try/catch: nothing emit does can reach the caller. Re-entrant calls
 * (a getter logging while we serialize) are not emitted.
 * @param {any} con the console object
 * @param {(type: string, args: any[], wrapper: Function, holder?: {error: any, keep: number, frames?: any}) => void} emit
 *   wrapper: the function the page called (for stackHolder's `below`);
 *   holder: the call's stack, taken in the wrapper (stackOfHolder's input:
 *   its first frame is the wrapper's own), or undefined when it could not
 *   be (the page's Error.stackTraceLimit is 0, not a number, or fixed)
 * @param {{now?: () => number}} [opts]
 * @returns {() => void} restores the originals (only those still ours)
 */
export function wrapConsole(con, emit, opts) {
  const now = (opts && opts.now) || (() => (G.performance && typeof G.performance.now === 'function' ? G.performance.now() : Date.now()));
  /** @type {Map<string, number>} */
  const counts = new Map();
  /** @type {Map<string, number>} */
  const timers = new Map();
  let busy = false;
  /** @type {Array<[string, Function, Function]>} */
  const installed = [];

  /** @param {any} l */
  const labelOf = (l) => {
    if (l === undefined) return 'default';
    try { return String(l); } catch (e) { return 'default'; }
  };

  /**
   * @param {string} method
   * @param {any[]} a the call's arguments, in an array of ours (the wrapper's rest parameter)
   * @param {Function} wrapper
   * @param {any} holder
   */
  const hook = (method, a, wrapper, holder) => {
    /** @type {string} */
    let type = /** @type {any} */ (CONSOLE_METHODS)[method];
    /** @type {any[]} */
    let args;
    switch (method) {
      case 'assert':
        if (a[0]) return;
        args = Array.prototype.slice.call(a, 1);
        break;
      case 'count': {
        const label = labelOf(a[0]);
        const n = (counts.get(label) || 0) + 1;
        counts.set(label, n);
        args = [label + ': ' + n];
        break;
      }
      case 'countReset':
        counts.set(labelOf(a[0]), 0);
        return;
      case 'time':
        timers.set(labelOf(a[0]), now());
        return;
      case 'timeLog':
      case 'timeEnd': {
        const label = labelOf(a[0]);
        const t0 = timers.get(label);
        if (t0 === undefined) {
          type = 'warning';
          args = ["Timer '" + label + "' does not exist"];
        } else {
          args = [label + ': ' + (now() - t0) + ' ms'];
          if (method === 'timeLog') for (let i = 1; i < a.length; i++) args.push(a[i]);
          else timers.delete(label);
        }
        break;
      }
      default:
        args = a;
    }
    if (!args.length && DEFAULT_ARG[method]) args = [DEFAULT_ARG[method]];
    emit(type, args, wrapper, holder);
  };

  for (const method of Object.keys(CONSOLE_METHODS)) {
    /** @type {any} */
    let orig;
    try { orig = con[method]; } catch (e) { continue; }
    if (typeof orig !== 'function') continue;
    // Methods that make no event (time, countReset, a passing assert) take no stack.
    const emits = /** @type {any} */ (CONSOLE_METHODS)[method] !== null, assert = method === 'assert';
    // The rest parameter is the arguments' one copy: the native call and
    // the event share it (no arguments object, no slice).
    const wrapper = function (/** @type {any[]} */ ...args) {
      // @ts-ignore -- `this` is whatever the caller used
      const result = orig.apply(this, args);
      if (!busy) {
        busy = true;
        try {
          // The call's stack, taken here: a new Error() with one frame more
          // than the page's limit (this wrapper's, which stackOfHolder
          // drops as our own) costs ~40% less than V8's
          // Error.captureStackTrace(h, wrapper), which defines an accessor
          // on a plain object per call. Formatted when the item is sent.
          let holder;
          const lim = emits && !(assert && args[0]) ? NativeError.stackTraceLimit : 0;
          if (typeof lim === 'number' && lim > 0) {
            const keep = Math.min(lim, MAX_STACK_FRAMES);
            try {
              NativeError.stackTraceLimit = keep + 1;
              holder = { error: new NativeError(), keep, frames: undefined };
            } catch (e) {
              holder = undefined; // a page's fixed Error.stackTraceLimit: emit takes it its way
            } finally {
              try { NativeError.stackTraceLimit = lim; } catch (e) { /* fixed: unchanged */ }
            }
          }
          hook(method, args, wrapper, holder);
        } catch (e) { /* swallowed: the page's console is untouched */ } finally { busy = false; }
      }
      return result;
    };
    try { Object.defineProperty(wrapper, 'name', { value: orig.name, configurable: true }); } catch (e) { /* ignore */ }
    try { Object.defineProperty(wrapper, 'length', { value: orig.length, configurable: true }); } catch (e) { /* ignore */ }
    try {
      con[method] = wrapper;
      installed.push([method, orig, wrapper]);
    } catch (e) { /* a frozen console */ }
  }
  return () => {
    for (const [method, orig, wrapper] of installed) {
      try { if (con[method] === wrapper) con[method] = orig; } catch (e) { /* ignore */ }
    }
    installed.length = 0;
  };
}

/**
 * JSON text of any value for an `app` item's data: JSON.stringify, with
 * bigints as strings and cycles as "[Circular]" when plain stringify fails;
 * undefined for values JSON has no text for (undefined, functions).
 * @param {unknown} v
 * @returns {string|undefined}
 */
export function jsonOf(v) {
  try { return JSON.stringify(v); } catch (e) { /* a cycle, a bigint, a throwing toJSON */ }
  try {
    const seen = new WeakSet();
    return JSON.stringify(v, (_k, x) => {
      if (typeof x === 'bigint') return x.toString();
      if (x !== null && typeof x === 'object') {
        if (seen.has(x)) return '[Circular]';
        seen.add(x);
      }
      return x;
    });
  } catch (e) {
    return '"[unserializable]"';
  }
}

/**
 * The JSON text of one `app` item {"app":{name, timestamp, data?}}. The
 * name is made an identifier; data over MaxValueBytes (or too deep, or
 * with a string over maxStringBytes) becomes {"truncated":true,"bytes":N}.
 * @param {unknown} name
 * @param {unknown} data
 * @param {Limits} [limits]
 */
export function appItemJSON(name, data, limits) {
  const lim = limits || DEFAULT_LIMITS;
  const head = '{"app":{"name":' + JSON.stringify(toIdentifier(name, 'app')) + ',"timestamp":' + nowMs();
  let json = data === undefined ? undefined : jsonOf(data);
  if (json === undefined) return head + '}}';
  const m = measureJSON(json);
  if (m.bytes > lim.maxValueBytes || m.depth > MAX_DEPTH - 8 || m.maxString > lim.maxStringBytes || m.objects > MAX_FRAME_OBJECTS / 2) {
    json = '{"truncated":true,"bytes":' + m.bytes + '}';
  }
  return head + ',"data":' + json + '}}';
}

/**
 * The frames a script read answers with, as [type, body] pairs: meta, the
 * chunks (base64 of at most maxChunkBytes each; the base64 text also stays
 * within maxStringBytes), and end.
 * @param {number} id
 * @param {string} url
 * @param {Uint8Array} bytes
 * @param {{content?:boolean, limits?:Limits, contentType?:string, sourceMapURL?:string, hash?:string}} [o]
 * @returns {Array<[string, any]>}
 */
export function scriptReadFrames(id, url, bytes, o) {
  const x = o || {};
  const lim = x.limits || DEFAULT_LIMITS;
  if (bytes.length > MAX_SCRIPT_BYTES) return [['script.end', { id, length: 0, error: { code: 'too-large', message: 'script over MaxScriptBytes' } }]];
  /** @type {Record<string, any>} */
  const meta = { id, url, length: bytes.length };
  if (x.sourceMapURL && x.sourceMapURL.length <= 8192) meta.sourceMapURL = x.sourceMapURL;
  if (x.hash) meta.hash = x.hash;
  if (x.contentType) meta.contentType = capString(x.contentType, 1024);
  /** @type {Array<[string, any]>} */
  const out = [['script.meta', meta]];
  if (!x.content) {
    out.push(['script.end', { id, length: 0 }]);
    return out;
  }
  const chunk = Math.max(3, Math.min(lim.maxChunkBytes, Math.floor(lim.maxStringBytes / 4) * 3));
  for (let off = 0; off < bytes.length; off += chunk) {
    out.push(['script.chunk', { id, offset: off, data: bytesToBase64(bytes.subarray(off, Math.min(bytes.length, off + chunk))) }]);
  }
  out.push(['script.end', { id, length: bytes.length }]);
  return out;
}
