// listeners.mjs — the page's event listeners for DevTools' Event Listeners
// pane (DOMDebugger.getEventListeners; docs/agent-note.md "Event
// listeners"). Shipped inside client.js only (build.mjs inlines it); the
// tests import it directly.
//
// A script cannot ask the browser which listeners an EventTarget has. So
// client.js wraps EventTarget.prototype.addEventListener and
// removeEventListener when it loads (installListenerLog) and keeps, per
// target, in a WeakMap, the listeners added since: the least bookkeeping
// that answers the pane (an array per target that has listeners, freed with
// the target). Listeners added before client.js ran are not known; `on*`
// handlers (attributes and properties) are read from the target when asked,
// whenever they were set.
//
// Where a handler is: JavaScript cannot ask V8 for a function's script
// position. The page looks for the handler's source text
// (Function.prototype.toString gives the exact slice of its script) in the
// page's scripts — inline <script> texts, and same-origin script files read
// through the browser's cache — and gives a place only when the text occurs
// exactly once in all of them; otherwise none (the worker then sends V8's
// "no script", scriptId "0"), never a guess. Nothing of this runs until a
// window asks.
import { MAX_SCRIPT_BYTES } from './core.mjs';

/** sourceproto.MaxDOMListeners: listeners in one answer. */
export const MAX_LISTENERS = 4096;
/** Nodes one answer walks below the target (depth -1 on a large page). */
export const MAX_WALK = 100000;
/** Script files read to find handlers (the page's <script src> and script resources). */
export const MAX_SOURCE_SCRIPTS = 64;
/** Bytes of script text the page keeps between two asks (MAX_SOURCE_SCRIPTS files, bounded). */
export const MAX_SOURCE_BYTES = 32 << 20;
/** The script texts read are dropped this long after the last ask (the pane asks again on every change). */
export const SOURCE_TTL_MS = 30000;

/** Functions the client itself listens with: never listed. */
export const OWN_LISTENERS = new WeakSet();

const G = /** @type {any} */ (globalThis);
const fnToString = G.Function.prototype.toString;

/**
 * @typedef {{type: string, fn: any, capture: boolean, once: boolean, passive: boolean}} Entry
 * @typedef {{url: string, text: string}} SourceText
 * @typedef {{type: string, useCapture: boolean, passive: boolean, once: boolean, handler: any, original: any, url: string, line: number, column: number, node: any}} Found
 */

/**
 * The options' capture flag (a boolean third argument is capture).
 * @param {any} o
 */
function captureOf(o) {
  if (o === null || o === undefined) return false;
  if (typeof o !== 'object' && typeof o !== 'function') return !!o;
  return !!o.capture;
}

export class ListenerLog {
  /**
   * @param {object} o
   * @param {any} o.global the page's window
   * @param {(url: string, init: any) => Promise<any>} [o.fetch] the fetch captured at load (not the page's, nor our capture's)
   * @param {(fn: () => void, ms: number) => any} [o.timer] setTimeout
   */
  constructor(o) {
    this.global = o.global;
    this.fetchFn = o.fetch || null;
    this.timer = o.timer || ((/** @type {() => void} */ fn, /** @type {number} */ ms) => G.setTimeout(fn, ms));
    /** @type {WeakMap<object, Entry|Entry[]>} listeners added since load, per target (one as itself: most targets have one) */
    this.log = new WeakMap();
    /** @type {Map<string, string>|null} script files read, by URL (dropped SOURCE_TTL_MS after the last ask) */
    this.files = null;
    this.lastAsk = 0;
    this.sweeping = false;
    this.add = null;
    this.remove = null;
    /** @type {() => void} puts the page's methods back (installListenerLog) */
    this.undo = () => {};
  }

  /**
   * Wraps the page's EventTarget methods; returns the undo. The native
   * method runs first, with the page's arguments as given, so what it
   * throws, ignores or deduplicates is the page's as ever; only then is
   * the listener noted.
   */
  install() {
    const ET = this.global.EventTarget;
    const proto = ET && ET.prototype;
    const add = proto && proto.addEventListener;
    const remove = proto && proto.removeEventListener;
    if (typeof add !== 'function' || typeof remove !== 'function') return () => {};
    this.add = add;
    this.remove = remove;
    const self = this;
    const win = this.global;
    // The natives called as callAdd(target, …): no arguments object, and
    // immune to a page that patches Function.prototype.call later. An
    // explicit undefined options argument is the same as none (WebIDL);
    // fewer than two arguments go as given, for the native's own TypeError.
    const uncurry = G.Function.prototype.bind.bind(G.Function.prototype.call);
    const callAdd = uncurry(add), callRemove = uncurry(remove);
    // Declared with two parameters: `length` 2, as the natives'.
    /** @this {any} @param {any} type @param {any} fn */
    const wrappedAdd = function addEventListener(type, fn) {
      if (arguments.length < 2) return Reflect.apply(add, this, arguments);
      const opts = arguments[2];
      callAdd(this, type, fn, opts);
      if (fn !== null && fn !== undefined) {
        try { self.added(this === null || this === undefined ? win : this, type, fn, opts); } catch (e) { /* never the page's problem */ }
      }
    };
    /** @this {any} @param {any} type @param {any} fn */
    const wrappedRemove = function removeEventListener(type, fn) {
      if (arguments.length < 2) return Reflect.apply(remove, this, arguments);
      const opts = arguments[2];
      callRemove(this, type, fn, opts);
      try { self.removed(this === null || this === undefined ? win : this, '' + type, fn, captureOf(opts)); } catch (e) { /* ignore */ }
    };
    try {
      proto.addEventListener = wrappedAdd;
      proto.removeEventListener = wrappedRemove;
    } catch (e) { return () => {}; }
    return () => {
      try {
        if (proto.addEventListener === wrappedAdd) proto.addEventListener = add;
        if (proto.removeEventListener === wrappedRemove) proto.removeEventListener = remove;
      } catch (e) { /* ignore */ }
    };
  }

  /**
   * @param {object} target @param {any} type @param {any} fn @param {any} opts
   */
  added(target, type, fn, opts) {
    const t = '' + type;
    const capture = captureOf(opts);
    let once = false, passive = false, signal = null;
    if (opts !== null && typeof opts === 'object') {
      once = !!opts.once;
      passive = !!opts.passive;
      signal = opts.signal || null;
      if (signal && signal.aborted) return; // the browser added nothing
    }
    const e = { type: t, fn, capture, once, passive };
    const cur = this.log.get(target);
    if (cur === undefined) this.log.set(target, e);
    else if (Array.isArray(cur)) {
      for (const x of cur) if (x.type === t && x.fn === fn && x.capture === capture) return; // the browser ignores a repeat
      cur.push(e);
    } else {
      if (cur.type === t && cur.fn === fn && cur.capture === capture) return;
      this.log.set(target, [cur, e]);
    }
    if (!this.add) return;
    // A once listener goes after its first event; an aborted signal
    // removes it: a listener of our own after it (same target, type and
    // phase, so it runs right after) forgets it. Limit: a page listener
    // that stops immediate propagation keeps ours from running.
    if (once) {
      const forget = () => this.removed(target, t, fn, capture);
      OWN_LISTENERS.add(forget);
      Reflect.apply(this.add, target, [t, forget, { capture, once: true }]);
    }
    if (signal) {
      const forget = () => this.removed(target, t, fn, capture);
      OWN_LISTENERS.add(forget);
      Reflect.apply(this.add, signal, ['abort', forget, { once: true }]);
    }
  }

  /** @param {object} target @param {string} type @param {any} fn @param {boolean} capture */
  removed(target, type, fn, capture) {
    const cur = this.log.get(target);
    if (cur === undefined) return;
    if (!Array.isArray(cur)) {
      if (cur.type === type && cur.fn === fn && cur.capture === capture) this.log.delete(target);
      return;
    }
    for (let i = 0; i < cur.length; i++) {
      const e = cur[i];
      if (e.type === type && e.fn === fn && e.capture === capture) {
        cur.splice(i, 1);
        if (cur.length === 1) this.log.set(target, cur[0]);
        return;
      }
    }
  }

  /**
   * The listeners of target and, to depth (1: the target only, -1: all),
   * of the nodes below it; pierce goes into open shadow roots and
   * same-origin frames. Their places are looked up in the page's scripts.
   * @param {any} target
   * @param {number} depth
   * @param {boolean} pierce
   * @returns {Promise<Found[]>}
   */
  async collect(target, depth, pierce) {
    /** @type {Found[]} */
    const out = [];
    this.listOf(target, null, out);
    if (depth !== 1 && target && typeof target.nodeType === 'number') this.walk(target, depth, pierce, out);
    await this.locate(out);
    return out;
  }

  /** @param {any} target @param {any} node @param {Found[]} out */
  listOf(target, node, out) {
    const cur = this.log.get(target);
    const list = cur === undefined ? null : Array.isArray(cur) ? cur : [cur];
    if (list) {
      for (const e of list) {
        if (out.length >= MAX_LISTENERS) return;
        if (OWN_LISTENERS.has(e.fn)) continue;
        out.push(found(e.type, e.capture, e.passive, e.once, e.fn, node));
      }
    }
    // on* handlers: an attribute (onclick="…") or a property the page set,
    // read now (reading compiles an attribute handler, as the event would).
    // Only the platform's event handler attributes (accessors): a page's
    // own `onboarding` data property is no handler.
    /** @type {string[]} */
    const names = [];
    try { for (const k in target) if (k.length > 2 && k.charCodeAt(0) === 111 && k.charCodeAt(1) === 110) names.push(k); } catch (e) { return; }
    for (const k of names) {
      if (out.length >= MAX_LISTENERS) return;
      let v;
      try {
        if (!isAccessor(target, k)) continue;
        v = target[k];
      } catch (e) { continue; }
      if (typeof v === 'function' && !OWN_LISTENERS.has(v)) out.push(found(k.slice(2), false, false, false, v, node));
    }
  }

  /**
   * The nodes below root to depth, breadth first, at most MAX_WALK.
   * @param {any} root @param {number} depth @param {boolean} pierce @param {Found[]} out
   */
  walk(root, depth, pierce, out) {
    /** @type {Array<[any, number]>} */
    let level = [[root, 1]];
    let seen = 0;
    while (level.length && out.length < MAX_LISTENERS) {
      /** @type {Array<[any, number]>} */
      const next = [];
      for (const [n, d] of level) {
        if (depth >= 0 && d >= depth) continue;
        for (const k of kids(n, pierce)) {
          if (++seen > MAX_WALK) return;
          this.listOf(k, k, out);
          next.push([k, d + 1]);
        }
      }
      level = next;
    }
  }

  /**
   * Fills in each listener's place: the one place in the page's scripts
   * whose text is its handler's source, if there is exactly one.
   * @param {Found[]} list
   */
  async locate(list) {
    /** @type {Map<string, Found[]>} */
    const byText = new Map();
    for (const f of list) {
      let text;
      try { text = fnToString.call(f.handler); } catch (e) { continue; } // not a function (a handleEvent object)
      if (typeof text !== 'string' || text.endsWith('[native code] }')) continue;
      let l = byText.get(text);
      if (!l) { l = []; byText.set(text, l); }
      l.push(f);
    }
    if (!byText.size) return;
    const sources = await this.sources();
    for (const [text, fs] of byText) {
      const at = onlyPlace(text, sources);
      if (!at) continue;
      for (const f of fs) { f.url = at.url; f.line = at.line; f.column = at.column; }
    }
  }

  /**
   * The page's script texts: inline scripts (url "": the page's document,
   * which has no script id) and same-origin script files, read through
   * the browser's cache and kept for SOURCE_TTL_MS after the last ask.
   * @returns {Promise<SourceText[]>}
   */
  async sources() {
    const doc = this.global.document;
    /** @type {SourceText[]} */
    const out = [];
    /** @type {string[]} */
    const urls = [];
    const origin = this.global.location.origin;
    /** @param {string} u */
    const note = (u) => {
      try {
        const abs = new URL(u, this.global.location.href);
        if (abs.origin === origin && !urls.includes(abs.href) && urls.length < MAX_SOURCE_SCRIPTS) urls.push(abs.href);
      } catch (e) { /* not a URL */ }
    };
    const scripts = doc ? doc.scripts || doc.querySelectorAll('script') : [];
    for (const s of scripts) {
      if (s.src) note(s.src);
      else if (s.text) out.push({ url: '', text: s.text });
    }
    // Scripts that are not <script> elements (module imports, scripts
    // added and removed): the resource timing list names them. They make
    // a text ambiguous even when the worker knows no id for them.
    try {
      for (const r of this.global.performance.getEntriesByType('resource')) {
        if (r.initiatorType === 'script' || /\.m?js(?:[?#]|$)/.test(r.name)) note(r.name);
      }
    } catch (e) { /* no resource timing */ }
    this.lastAsk = Date.now();
    if (!this.files) this.files = new Map();
    let bytes = 0;
    for (const t of this.files.values()) bytes += t.length;
    for (const u of urls) {
      let text = this.files.get(u);
      if (text === undefined && this.fetchFn && bytes < MAX_SOURCE_BYTES) {
        text = await this.read(u);
        if (text) { this.files.set(u, text); bytes += text.length; }
      }
      if (text) out.push({ url: u, text });
    }
    this.sweepLater();
    return out;
  }

  /** @param {string} url @returns {Promise<string>} '' when it cannot be read */
  async read(url) {
    try {
      const res = await /** @type {any} */ (this.fetchFn)(url, { credentials: 'same-origin', cache: 'force-cache' });
      if (!res || !res.ok) return '';
      if (Number(res.headers.get('content-length')) > MAX_SCRIPT_BYTES) return '';
      const text = await res.text();
      return text.length <= MAX_SCRIPT_BYTES ? text : '';
    } catch (e) {
      return '';
    }
  }

  /** Drops the script texts once nobody asked for SOURCE_TTL_MS. */
  sweepLater() {
    if (this.sweeping) return;
    this.sweeping = true;
    this.timer(() => {
      this.sweeping = false;
      if (Date.now() - this.lastAsk >= SOURCE_TTL_MS) this.files = null;
      else this.sweepLater();
    }, SOURCE_TTL_MS);
  }

  /** Counters for tests. */
  stats() { return { files: this.files ? this.files.size : 0 }; }
}

/**
 * @param {string} type @param {boolean} capture @param {boolean} passive @param {boolean} once @param {any} fn @param {any} node
 * @returns {Found}
 */
function found(type, capture, passive, once, fn, node) {
  // A listener object's handler is its handleEvent (as Chrome reports it).
  let handler = fn;
  if (typeof fn !== 'function') {
    try { handler = fn.handleEvent; } catch (e) { handler = undefined; }
    if (typeof handler !== 'function') handler = fn;
  }
  return { type, useCapture: capture, passive, once, handler, original: fn, url: '', line: 0, column: 0, node };
}

/**
 * Whether o's property k (own or inherited) is an accessor.
 * @param {any} o @param {string} k
 */
function isAccessor(o, k) {
  for (let p = o; p !== null && p !== undefined; p = Object.getPrototypeOf(p)) {
    const d = Object.getOwnPropertyDescriptor(p, k);
    if (d) return typeof d.get === 'function';
  }
  return false;
}

/**
 * A node's children as the Elements panel shows them (elements, and with
 * pierce an open shadow root's and a same-origin frame's document).
 * @param {any} n @param {boolean} pierce
 * @returns {any[]}
 */
function kids(n, pierce) {
  /** @type {any[]} */
  const out = [];
  try {
    if (pierce && n.shadowRoot) out.push(n.shadowRoot);
    if (pierce && n.contentDocument) out.push(n.contentDocument);
    for (let c = n.firstElementChild !== undefined ? n.firstElementChild : n.firstChild; c; c = c.nextElementSibling) out.push(c);
  } catch (e) { /* a cross-origin frame */ }
  return out;
}

/**
 * The one place text occurs in sources, or null when it occurs nowhere or
 * more than once. An inline script's place has url "": the worker has no
 * script for the page's document, so the place is not sent.
 * @param {string} text @param {SourceText[]} sources
 * @returns {{url: string, line: number, column: number}|null}
 */
export function onlyPlace(text, sources) {
  /** @type {{url: string, line: number, column: number}|null} */
  let at = null;
  for (const s of sources) {
    const i = s.text.indexOf(text);
    if (i < 0) continue;
    if (at || s.text.indexOf(text, i + 1) >= 0) return null;
    let line = 0, lineStart = 0;
    for (let j = s.text.indexOf('\n'); j >= 0 && j < i; j = s.text.indexOf('\n', j + 1)) { line++; lineStart = j + 1; }
    at = { url: s.url, line, column: i - lineStart };
  }
  return at && at.url ? at : null;
}

/**
 * Installs the log in a page (client.js at load); null where the page has
 * no EventTarget to wrap.
 * @param {any} win @param {(url: string, init: any) => Promise<any>} [fetchFn] @param {(fn: () => void, ms: number) => any} [timer]
 */
export function installListenerLog(win, fetchFn, timer) {
  const log = new ListenerLog({ global: win, fetch: fetchFn, timer });
  log.undo = log.install();
  return log;
}
