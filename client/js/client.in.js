/*
 * inspector-worker browser client — a producer of the internal observation
 * protocol (docs/protocol.md) for one page.
 *
 * Load it with
 *
 *   <script src="http://127.0.0.1:PORT/client.js"
 *           data-endpoint="ws://127.0.0.1:PORT/client" data-token="…"></script>
 *
 * (optional data-source="id" fixes the source id). It is one self-contained
 * file with no import/export, so it works as a classic <script> and as a
 * module script alike (a module has no document.currentScript: the config
 * is then read from the last <script data-endpoint> in the page).
 *
 * What it does: keeps a source id in sessionStorage (a reload is a new
 * generation of the same source), connects to the worker's /client
 * WebSocket, says hello, sends the initial replace (the page and its
 * <script src> list), then appends console events in batches from a
 * bounded queue (10,000 items / 16 MiB; the oldest go first and are
 * reported as `dropped`). It reconnects with backoff (250 ms doubling to
 * 10 s, with jitter), each time as a new generation, and sends what was
 * logged meanwhile after the new replace. It answers snapshot-request with
 * a replace and script.read with script.meta/chunk/end.
 *
 * It also captures the page's fetch and XMLHttpRequest calls as `fetch`
 * items (capture.mjs; kind "xhr" for XHR): the page gets the same
 * responses, errors and events; bodies are read from clones, at most 1 MiB
 * each (data-capture-body-bytes="N" changes it).
 *
 * The page's console keeps working identically whatever happens here: each
 * wrapper calls the original first and returns its result; everything of
 * ours runs afterwards inside try/catch, and a socket is only ever written
 * when it is OPEN (never an InvalidStateError).
 *
 * client.js is generated, whole, by build.mjs: its own code is written in
 * client.in.js, the modules it carries (core.mjs …) are inlined between
 * BEGIN/END comments. Edit those, never client.js, then run
 * `node client/js/build.mjs` (or `go generate ./client/js/`).
 */
(function () {
  'use strict';
  /** @type {any} */
  var w = typeof window !== 'undefined' ? window : undefined;
  if (!w || typeof document === 'undefined' || w.__inspectorWorkerClient) return;

// build.mjs inlines core.mjs here

// build.mjs inlines sideeffect.mjs here
// build.mjs inlines listeners.mjs here
// build.mjs inlines frameworks.mjs here
// build.mjs inlines runtime.mjs here
// build.mjs inlines overlay.mjs here
// build.mjs inlines shadow.mjs here
// build.mjs inlines domread.mjs here
// build.mjs inlines csstext.mjs here
// build.mjs inlines cssforce.mjs here
// build.mjs inlines cssfont.mjs here
// build.mjs inlines css.mjs here
// build.mjs inlines domedit.mjs here
// build.mjs inlines dom.mjs here

// build.mjs inlines bodytap.mjs here

// build.mjs inlines capture.mjs here

  var MIN_BACKOFF = 250;
  var MAX_BACKOFF = 10000;
  var BUFFER_HIGH = 4 << 20; // ws.bufferedAmount above which we wait
  // Append frames: up to PACE_BURST back to back, then one per PACE_MS
  // while the page keeps logging (Producer `pace`, a token bucket). Each
  // frame costs the page and the browser's network service ~0.2 ms of CPU
  // whatever its size (docs/performance.md). 400, not 200: 5% less Chromium
  // CPU for 20 pages logging steadily (same-run A/B both ways), for items
  // that wait up to 0.4 s while a page logs steadily. A page in a long or
  // hung task sends from its own calls (Producer.sendIfLate), so the pace
  // never holds back what it logs while it loops.
  var PACE_MS = 400, PACE_BURST = 4;
  // Acks: the worker answers up to 8 appends with one ack, at most
  // ACK_DELAY_MS after the first (the hello's ackDelayMs). Each ack is a
  // message the page wakes for; the window (16) never waits for them.
  var ACK_DELAY_MS = 500;
  var STORAGE_KEY = 'inspector-worker:source';

  /** @type {any} */
  var script = document.currentScript || lastConfiguredScript();
  var endpoint = attr('data-endpoint');
  if (!endpoint) return; // not configured: leave the page alone
  var token = attr('data-token') || '';
  var configured = attr('data-source');
  if (!IWCore.isIdentifier(configured || '')) configured = null;

  // Captured now: a page that later patches these does not reach us.
  var WS = w.WebSocket;
  var fetchFn = typeof w.fetch === 'function' ? w.fetch.bind(w) : null;
  var setT = w.setTimeout.bind(w);
  var clearT = w.clearTimeout.bind(w);

  // Our own URL, for dropping our frames from console stack traces: the
  // first frame of a stack taken here is this file.
  var ownFrame = IWCore.parseStack(new Error().stack)[0];
  var ownUrl = (ownFrame && ownFrame.url) || (script && script.src) || '';
  var isOwn = function (/** @type {{url: string}} */ f) { return !!ownUrl && f.url === ownUrl; };

  var source = loadSource();
  /** @type {WebSocket|null} */
  var ws = null;
  var attempts = 0;
  var timer = 0;
  var stopped = false;
  var paused = false;
  /** @type {Set<string>} */
  var knownScripts = new Set();
  var lastPage = pageInfo();

  /** @type {InstanceType<typeof IWCore.Producer>} */
  var producer = new IWCore.Producer({
    role: 'client',
    source: source,
    token: token,
    capabilities: ['console', 'scripts', 'runtime', 'dom'],
    topics: ['console', 'page', 'script', 'fetch'],
    agent: { name: 'inspector-worker-client', version: IWCore.AGENT_VERSION },
    page: pageInfo,
    snapshot: snapshot,
    // The WebSocket has no flow control of its own in the protocol; a
    // window of unacked batches and the socket's buffer bound what we
    // hand to the browser, the queue bounds the rest.
    maxInFlight: 16,
    ackDelay: ACK_DELAY_MS,
    // A page logging steadily sends one frame per PACE_MS, not one per
    // task: each frame costs the page and the browser's network service a
    // send and a mojo hop (~0.4 ms of CPU on the benchmark's machine with
    // its ack), whatever its size. A page that logs now and then (a few
    // frames in a row, PACE_BURST) never waits.
    pace: PACE_MS,
    paceBurst: PACE_BURST,
    timer: function (fn, ms) { setT(fn, ms); },
    writable: function () { return !ws || !(ws.bufferedAmount > BUFFER_HIGH); },
    retryLater: function (fn) { setT(fn, 50); },
    onRequest: onRequest,
    onClose: onWorkerClose,
    onOpen: function () { attempts = 0; realm.reset(); },
  });

  // The page's Runtime realm: evaluations and handle tables, one per
  // DevTools session (runtime.mjs). Reset with every generation.
  /** @type {InstanceType<typeof IWRuntime.Realm>} */
  var realm = new IWRuntime.Realm({
    send: function (type, json) { return producer.sendFrame(type, json); },
    limits: function () { return producer.limits; },
    global: w,
    isOwn: isOwn,
    // The DOM agent (dom.mjs) is made on the worker's first dom* command:
    // until a window asks for this page's nodes, no DOM code runs.
    dom: function () {
      return new IWDOM.DOMAgent({
        send: function (type, json) { return producer.sendFrame(type, json); },
        timer: function (fn, ms) { setT(fn, ms); },
        frame: function (fn) { return w.requestAnimationFrame(fn); },
      });
    },
  });

  var unwrapConsole = IWCore.wrapConsole(w.console, emit);
  var unhook = installObservers();
  // addEventListener/removeEventListener noted from here on, for the
  // Event Listeners pane (listeners.mjs): after our own listeners above,
  // so none of those is noted.
  realm.listenerLog = IWListeners.installListenerLog(w, fetchFn || undefined, function (fn, ms) { setT(fn, ms); });
  // The page's fetch and XMLHttpRequest (capture.mjs): always on in a page;
  // each body keeps at most data-capture-body-bytes bytes (default 1 MiB).
  // The capture's items wait behind held load-time console calls too
  // (afterHeld): the stream keeps the page's order.
  var heldProducer = {
    enqueueJSON: function (/** @type {string} */ t, /** @type {string} */ j, /** @type {any} */ tail, /** @type {any} */ m) {
      if (!(holding && held.length)) return producer.enqueueJSON(t, j, tail, m);
      held.push(function () { producer.enqueueJSON(t, j, tail, m); });
      return true;
    },
    enqueueLater: function (/** @type {string} */ t, /** @type {() => string} */ b, /** @type {number} */ n) {
      if (!(holding && held.length)) return producer.enqueueLater(t, b, n);
      held.push(function () { producer.enqueueLater(t, b, n); });
      return true;
    },
    get limits() { return producer.limits; },
  };
  var captureSink = { producer: /** @type {any} */ (heldProducer), isOwn: isOwn, budget: IWCapture.bodyBudget(attr('data-capture-body-bytes')) };
  var unwrapFetch = safeInstall(function () { return IWCapture.wrapFetch(w, captureSink); });
  var unwrapXHR = safeInstall(function () { return IWCapture.wrapXHR(w, captureSink); });
  // Closed shadow roots made from now on, kept for the Elements panel
  // (shadow.mjs): one WeakMap write per attachShadow, no DOM work.
  var unwrapShadow = safeInstall(function () { return IWShadow.watchShadowRoots(w); });
  connect();

  try {
    Object.defineProperty(w, '__inspectorWorkerClient', {
      configurable: true,
      enumerable: false,
      value: Object.freeze({
        source: function () { return source; },
        stats: function () { var s = /** @type {any} */ (producer.stats()); s.runtime = realm.stats(); s.dom = realm.domAgent ? realm.domAgent.stats() : null; s.held = held.length; s.holding = holding; return s; },
        stop: stop,
      }),
    });
  } catch (e) { /* a frozen window */ }

  /** @param {() => (null | (() => void))} install @returns {() => void} */
  function safeInstall(install) {
    try { return install() || function () {}; } catch (e) { return function () {}; }
  }

  /** @param {string} name @returns {string|null} */
  function attr(name) {
    try { return script ? script.getAttribute(name) : null; } catch (e) { return null; }
  }

  function lastConfiguredScript() {
    try {
      var list = document.querySelectorAll('script[data-endpoint]');
      return list.length ? list[list.length - 1] : null;
    } catch (e) {
      return null;
    }
  }

  function storage() {
    try { return w.sessionStorage || null; } catch (e) { return null; } // SecurityError in sandboxed frames
  }

  function loadSource() {
    if (configured) return configured;
    var s = storage();
    try {
      var id = s && s.getItem(STORAGE_KEY);
      if (IWCore.isIdentifier(id)) return id;
    } catch (e) { /* storage disabled */ }
    return newSource();
  }

  // A fresh id, kept for this tab's later reloads.
  function newSource() {
    var id = (configured || 'client') + '-' + IWCore.randomHex();
    var s = storage();
    try { if (s) s.setItem(STORAGE_KEY, id); } catch (e) { /* quota, disabled */ }
    return id;
  }

  function pageInfo() {
    var url = '', title = '';
    try { url = String(w.location.href); } catch (e) { /* ignore */ }
    try { title = String(document.title || ''); } catch (e) { /* ignore */ }
    return { url: url, title: title };
  }

  // Page and script items only while a generation is open: until then the
  // coming replace carries the current page and scripts anyway.
  function checkPage() {
    var p = pageInfo();
    if (p.url === lastPage.url && p.title === lastPage.title) return;
    lastPage = p;
    afterHeld(function () { if (producer.state === 'open') producer.enqueue('page', producer.capPage(p)); });
  }

  /** @param {any} el a <script> element */
  function scriptUrl(el) {
    try {
      var src = el.src;
      return typeof src === 'string' && src && src !== ownUrl && src.length <= 8192 ? src : '';
    } catch (e) {
      return '';
    }
  }

  /** @param {any} el */
  function noteScript(el) {
    var url = scriptUrl(el);
    if (!url || knownScripts.has(url) || producer.state !== 'open') return;
    knownScripts.add(url);
    afterHeld(function () { producer.enqueue('script', { url: url }); });
  }

  // The retained state a replace carries: the page and its scripts.
  /** @returns {Array<Record<string, any>>} */
  function snapshot() {
    /** @type {Array<Record<string, any>>} */
    var items = [{ page: producer.capPage(lastPage = pageInfo()) }];
    knownScripts = new Set();
    /** @type {ArrayLike<any>} */
    var list = [];
    try { list = document.scripts || document.querySelectorAll('script'); } catch (e) { /* ignore */ }
    for (var i = 0; i < list.length; i++) {
      var url = scriptUrl(list[i]);
      if (!url || knownScripts.has(url)) continue;
      knownScripts.add(url);
      items.push({ script: { url: url } });
    }
    return items;
  }

  /** @param {string} type @param {any[]} args @param {Function} wrapper @param {any} [holder] the stack wrapConsole took */
  function emit(type, args, wrapper, holder) {
    consoleItems(type, args, holder || IWCore.stackHolder(undefined, wrapper), undefined);
  }

  // One event for everyone while no DevTools session enabled console or
  // no argument is an object (primitives need no handle: the hot path of
  // a string-only log stays one serialization); else one event per
  // enabled session, its objects carrying handles of that session's
  // console group. The call's stack is taken now and formatted when the
  // item is sent (Producer.enqueueJSON's tail), off the page's call.
  // The ,"stackTrace":… text of each call site's frames (stackOfHolder
  // shares one frames array per site), made once.
  /** @type {WeakMap<any[], string>} */
  var tailText = new WeakMap();

  // Load-time calls. What a page logs before its connection knows the
  // DevTools windows (console.enable comes after the initial replace) would
  // carry no handles, so a window open before the page loaded could not
  // expand it. Such calls are held, in order, until the windows are known:
  // the first console.enable + HOLD_AFTER_ENABLE_MS (the others come in the
  // same instant), or HOLD_QUIET_MS after the initial replace was acked
  // with none, and at most HOLD_MAX_MS after the client started or
  // HOLD_MAX_CALLS calls. An object call is serialized at the call (its
  // preview shows the values then, as V8's does) with placeholder handles,
  // which become each window's handles when it is sent.
  var HOLD_MAX_MS = 3000, HOLD_MAX_CALLS = 1000, HOLD_QUIET_MS = 250, HOLD_AFTER_ENABLE_MS = 20;
  var holding = true;
  /** @type {Array<() => void>} */
  var held = [];
  var holdStart = IWCore.nowMs(), ackedAt = 0, enabledAt = 0;
  var holdTimer = setT(checkHold, 10);
  var HELD_SESSION = '\u0002';
  var HELD_SESSION_RE = /^\{"console":\{"session":"\\u0002",/;
  var HELD_HANDLE_RE = /,"handle":"\\u0001(\d+)"/g;

  function checkHold() {
    holdTimer = 0;
    if (!holding) return;
    var now = IWCore.nowMs();
    if (producer.state === 'open' && producer.replaceAcked) {
      if (!ackedAt) ackedAt = now;
      if (producer.consoleSessions.size && !enabledAt) enabledAt = now;
    }
    if (now - holdStart >= HOLD_MAX_MS || (enabledAt && now - enabledAt >= HOLD_AFTER_ENABLE_MS) ||
      (ackedAt && !enabledAt && now - ackedAt >= HOLD_QUIET_MS)) {
      releaseHeld();
      return;
    }
    holdTimer = setT(checkHold, 10);
  }

  /**
   * Runs fn now, or after the held calls when some are held: every item the
   * page makes keeps its place in the stream.
   * @param {() => void} fn
   */
  function afterHeld(fn) {
    if (holding && held.length) held.push(fn);
    else fn();
  }

  function releaseHeld() {
    holding = false;
    if (holdTimer) { clearT(holdTimer); holdTimer = 0; }
    var list = held;
    held = [];
    for (var i = 0; i < list.length; i++) { try { list[i](); } catch (e) { /* never throw into the page */ } }
  }

  /**
   * A held object call: its item text now, with placeholders; sent later
   * to each window then enabled, or without handles to none.
   * @param {string} type @param {any[]} args @param {any} tail @param {any} x
   */
  function holdObjectCall(type, args, tail, x) {
    /** @type {any[]} */
    var values = [];
    x.session = HELD_SESSION;
    x.handles = {
      make: function (/** @type {any} */ v) { values.push(v); return '\u0001' + (values.length - 1); },
      rollback: function () { values.length = 0; },
    };
    var json = IWCore.consoleItemJSON(type, args, x);
    if (!HELD_SESSION_RE.test(json)) return; // the call was too large: consoleItemJSON's placeholder message
    held.push(function () {
      if (!producer.consoleSessions.size) {
        producer.enqueueJSON('console', json.replace(HELD_SESSION_RE, '{"console":{').replace(HELD_HANDLE_RE, ''), tail);
        return;
      }
      producer.consoleSessions.forEach(function (session) {
        var hs = realm.consoleHandles(session);
        producer.enqueueJSON('console', json.replace(HELD_SESSION_RE, '{"console":{"session":' + JSON.stringify(session) + ',')
          .replace(HELD_HANDLE_RE, function (_m, n) {
            var h = hs.make(values[+n]);
            return h ? ',"handle":' + JSON.stringify(h) : '';
          }), tail);
      });
    });
  }

  /** @param {string} type @param {any[]} args @param {any} holder @param {any} stackTrace @param {number} [timestamp] */
  function consoleItems(type, args, holder, stackTrace, timestamp) {
    if (holding && held.length >= HOLD_MAX_CALLS) releaseHeld();
    var objects = IWRuntime.anyNeedsHandles(args);
    if (!objects && !(holding && held.length)) {
      // The common call, primitives only: nothing can change before the
      // item is sent, so it is built then, off the page's call; one
      // closure is all the call allocates here.
      var ts = timestamp || IWCore.nowMs();
      producer.enqueueLater('console', function () { return primitiveItem(type, args, holder, stackTrace, ts); }, primitiveBytes(args), true, ts);
      return;
    }
    // No url: the worker knows the page's from the page items, which keep
    // their place among the console items (a copy per item was ~10% of
    // its bytes, for a field nothing reads).
    var x = { timestamp: timestamp || IWCore.nowMs(), stackTrace: stackTrace, limits: producer.limits, session: '', handles: undefined };
    var tail = holder ? function () { return stackTail(holder); } : undefined;
    // Holding starts with the first object call: a page that logs only
    // strings at load is never delayed.
    if (holding && (held.length || objects)) {
      if (objects) holdObjectCall(type, args, tail, x);
      else held.push(function () { consoleItems(type, args, holder, stackTrace, x.timestamp); });
      return;
    }
    // The arguments' RemoteObjects (previews, handles) are made now, as
    // V8 takes its preview at the call; their JSON text when sent.
    if (!producer.consoleSessions.size) {
      objectItem(IWCore.consoleItemLater(type, args, x), tail, args, x.timestamp);
      return;
    }
    producer.consoleSessions.forEach(function (session) {
      var xs = { timestamp: x.timestamp, stackTrace: stackTrace, limits: x.limits, session: session, handles: realm.consoleHandles(session) };
      objectItem(IWCore.consoleItemLater(type, args, xs), tail, args, x.timestamp);
    });
  }

  /**
   * Queues a console item with objects, whose text item() makes when it is
   * sent, with the call's stack (tail) after it.
   * @param {() => string} item @param {(() => string)|undefined} tail @param {any[]} args
   * @param {number} ts the call's time
   */
  function objectItem(item, tail, args, ts) {
    producer.enqueueLater('console', function () {
      var json = item(), more = tail ? tail() : '';
      return more ? IWCore.spliceTail(json, more, producer.limits) : json;
    }, objectBytes(args), true, ts);
  }

  // A size estimate of a console item with objects, for the queue's byte
  // bound before it is built (previews are bounded: a few hundred bytes
  // per object).
  /** @param {any[]} args */
  function objectBytes(args) {
    var n = 256;
    for (var i = 0; i < args.length; i++) n += typeof args[i] === 'string' ? args[i].length + 32 : 512;
    return n;
  }

  /**
   * The JSON text of a primitive-only console item, built when it is sent.
   * @param {string} type @param {any[]} args @param {any} holder @param {any} stackTrace @param {number} ts
   */
  function primitiveItem(type, args, holder, stackTrace, ts) {
    var json = IWCore.consoleItemJSON(type, args, { timestamp: ts, stackTrace: stackTrace, limits: producer.limits });
    var more = holder ? stackTail(holder) : '';
    return more ? IWCore.spliceTail(json, more, producer.limits) : json;
  }

  /**
   * The ,"stackTrace":… members of a console item whose stack a holder
   * took, or ''.
   * @param {any} holder
   */
  function stackTail(holder) {
    var st = IWCore.stackOfHolder(holder, isOwn);
    if (!st) return '';
    var json = tailText.get(st.callFrames);
    if (json === undefined) {
      json = ',"stackTrace":' + JSON.stringify(st);
      tailText.set(st.callFrames, json);
    }
    return json;
  }

  // A size estimate of a primitive-only console item, for the queue's byte
  // bound before it is built.
  /** @param {any[]} args */
  function primitiveBytes(args) {
    var n = 256;
    for (var i = 0; i < args.length; i++) n += typeof args[i] === 'string' ? args[i].length + 32 : 48;
    return n;
  }

  // An exception's own stack, or undefined.
  /** @param {any} err */
  function stackOf(err) {
    try {
      var frames = IWCore.parseStack(err && err.stack);
      return frames.length ? { callFrames: frames } : undefined;
    } catch (e) {
      return undefined;
    }
  }

  /** @param {any[]} args @param {any} stackTrace */
  function uncaught(args, stackTrace) {
    consoleItems('error', args, undefined, stackTrace);
  }

  function installObservers() {
    /** @type {Array<() => void>} */
    var undo = [];
    /** @param {any} target @param {string} name @param {(ev: any) => void} fn */
    var on = function (target, name, fn) {
      try {
        target.addEventListener(name, fn);
        undo.push(function () { target.removeEventListener(name, fn); });
      } catch (e) { /* ignore */ }
    };
    // Uncaught errors and unhandled rejections: observed, never prevented.
    on(w, 'error', function (/** @type {any} */ ev) {
      try {
        if (!ev || (typeof ev.message !== 'string' && !('error' in ev))) return; // a resource load error
        var err = ev.error;
        var st = err !== null && typeof err === 'object' ? stackOf(err) : undefined;
        if (!st && ev.filename) {
          st = { callFrames: [{ functionName: '', url: String(ev.filename), lineNumber: Math.max(0, (ev.lineno | 0) - 1), columnNumber: Math.max(0, (ev.colno | 0) - 1) }] };
        }
        uncaught(err !== null && err !== undefined ? ['Uncaught', err] : [String(ev.message || 'Uncaught error')], st);
      } catch (e) { /* ignore */ }
    });
    on(w, 'unhandledrejection', function (/** @type {any} */ ev) {
      try {
        var reason = ev ? ev.reason : undefined;
        uncaught(['Uncaught (in promise)', reason], reason !== null && typeof reason === 'object' ? stackOf(reason) : undefined);
      } catch (e) { /* ignore */ }
    });
    // Single-page navigation and title changes become page items.
    on(w, 'popstate', function () { try { checkPage(); } catch (e) { /* ignore */ } });
    on(w, 'hashchange', function () { try { checkPage(); } catch (e) { /* ignore */ } });
    /** @type {any} */
    var h = w.history;
    ['pushState', 'replaceState'].forEach(function (name) {
      /** @type {any} */
      var orig;
      try { orig = h && h[name]; } catch (e) { return; }
      if (typeof orig !== 'function') return;
      /** @this {any} */
      var wrapper = function () {
        var r = orig.apply(this, arguments);
        try { checkPage(); } catch (e) { /* ignore */ }
        return r;
      };
      try {
        h[name] = wrapper;
        undo.push(function () { if (h[name] === wrapper) h[name] = orig; });
      } catch (e) { /* ignore */ }
    });
    // Scripts added later become script items; a new <title> text a page item.
    if (typeof w.MutationObserver === 'function') {
      try {
        var mo = new w.MutationObserver(function (/** @type {any[]} */ records) {
          try {
            var title = false;
            for (var i = 0; i < records.length; i++) {
              var r = records[i];
              if (r.target && r.target.nodeName === 'TITLE') title = true;
              var added = r.addedNodes || [];
              for (var j = 0; j < added.length; j++) {
                var n = added[j];
                if (n.nodeName === 'SCRIPT') noteScript(n);
                else if (n.nodeName === 'TITLE') title = true;
              }
            }
            if (title) checkPage();
          } catch (e) { /* ignore */ }
        });
        mo.observe(document.documentElement || document, { childList: true, subtree: true });
        undo.push(function () { mo.disconnect(); });
      } catch (e) { /* ignore */ }
    }
    // Unload: send what is queued and close; a page restored from the
    // back/forward cache reconnects as a new generation.
    on(w, 'pagehide', function () {
      try {
        paused = true;
        if (timer) { clearT(timer); timer = 0; }
        if (holding) releaseHeld();
        producer.flush(true);
        producer.close('going-away', 'pagehide');
        hangUp();
      } catch (e) { /* ignore */ }
    });
    on(w, 'pageshow', function (/** @type {any} */ ev) {
      try {
        if (ev && ev.persisted && !stopped) {
          paused = false;
          attempts = 0;
          connect();
        }
      } catch (e) { /* ignore */ }
    });
    return function () { for (var i = undo.length - 1; i >= 0; i--) { try { undo[i](); } catch (e) { /* ignore */ } } };
  }

  function connect() {
    timer = 0;
    if (stopped || paused || ws || typeof WS !== 'function') return;
    /** @type {WebSocket} */
    var sock;
    try {
      sock = new WS(endpoint);
    } catch (e) { // SyntaxError, SecurityError (ws: from an https page)
      scheduleReconnect();
      return;
    }
    ws = sock;
    sock.onopen = function () {
      if (ws !== sock) return;
      producer.connect(function (/** @type {string} */ text) {
        if (ws !== sock || sock.readyState !== 1) return false;
        sock.send(text);
        return true;
      });
    };
    sock.onmessage = function (/** @type {MessageEvent} */ ev) {
      if (ws === sock && typeof ev.data === 'string') producer.receive(ev.data);
    };
    sock.onclose = function () {
      if (ws !== sock) return;
      ws = null;
      producer.disconnect();
      realm.reset();
      scheduleReconnect();
    };
    sock.onerror = function () { /* a close event follows */ };
  }

  function hangUp() {
    var s = ws;
    ws = null;
    producer.disconnect();
    realm.reset();
    if (s) {
      try { s.close(1000); } catch (e) { /* ignore */ }
    }
  }

  function scheduleReconnect() {
    if (stopped || paused || timer) return;
    var refused = producer.lastRefusal;
    var base = refused === 'unauthorized' || refused === 'unsupported-version'
      ? MAX_BACKOFF // a stale token or bundle: retrying fast cannot help
      : Math.min(MAX_BACKOFF, MIN_BACKOFF * Math.pow(2, attempts));
    attempts++;
    timer = setT(connect, base / 2 + Math.random() * (base / 2));
  }

  // The worker closed this generation.
  /** @param {string} code */
  function onWorkerClose(code) {
    if (code === 'replaced') {
      // Another connection took our id (a duplicated tab copies
      // sessionStorage): take a new one rather than fight over it.
      source = newSource();
      producer.source = source;
    }
    var s = ws;
    ws = null;
    producer.disconnect();
    realm.reset();
    if (s) {
      try { s.close(1000); } catch (e) { /* ignore */ }
    }
    scheduleReconnect();
  }

  function stop() {
    stopped = true;
    if (timer) { clearT(timer); timer = 0; }
    if (holdTimer) { clearT(holdTimer); holdTimer = 0; }
    holding = false;
    held = [];
    try { producer.close('normal', 'stopped'); } catch (e) { /* ignore */ }
    hangUp();
    unwrapConsole();
    unwrapFetch();
    unwrapXHR();
    unwrapShadow();
    unhook();
    if (realm.listenerLog) realm.listenerLog.undo();
    try { delete w.__inspectorWorkerClient; } catch (e) { /* ignore */ }
  }

  /** @param {string} type @param {any} body */
  function onRequest(type, body) {
    if (type === 'script.read') readScript(body);
    else realm.handle(type, body);
  }

  /** @param {number} ms */
  function sleep(ms) {
    return new Promise(function (resolve) { setT(resolve, ms); });
  }

  // script.read: fetch the script (same origin only) and answer
  // script.meta, script.chunk…, script.end — or script.end with an error.
  /** @param {any} req */
  async function readScript(req) {
    var id = req && req.id;
    if (typeof id !== 'number') return;
    var gen = producer.gen;
    var url = typeof req.url === 'string' ? req.url : '';
    var fail = function (/** @type {string} */ code, /** @type {string} */ message) {
      producer.sendFrame('script.end', { id: id, length: 0, error: { code: code, message: message } });
    };
    try {
      var abs;
      try { abs = new URL(url, w.location.href); } catch (e) { return fail('invalid-argument', 'not a URL'); }
      if (abs.origin !== w.location.origin) return fail('unsupported', 'cross-origin script: the client reads same-origin scripts only');
      if (!fetchFn) return fail('unsupported', 'no fetch in this page');
      var res;
      var isDocument = abs.href.split('#')[0] === String(w.location.href).split('#')[0];
      try {
        // The browser's cache first (a script the page loaded is normally in
        // it): the app's server does not see a second request.
        res = await fetchFn(abs.href, isDocument
          ? { credentials: 'same-origin', mode: 'same-origin', cache: 'only-if-cached' }
          : { credentials: 'same-origin', cache: 'force-cache' });
      } catch (e) {
        if (!isDocument) return fail('no-such-script', 'fetch failed');
        res = null;
      }
      var bytes, contentType;
      var fromDOM = isDocument && (!res || !res.ok);
      if (fromDOM) {
        // The page's own HTML is not in the cache (e.g. no-store): fetching it
        // again could have effects on the server, so the page describes its
        // current DOM instead, and says so.
        bytes = new TextEncoder().encode('<!-- inspector-worker: the browser cache holds no copy of this page\'s HTML; ' +
          'this is the page\'s current DOM -->\n<!DOCTYPE html>\n' + (document.documentElement ? document.documentElement.outerHTML : ''));
        contentType = 'text/html';
      } else {
        if (!res || !res.ok) return fail('no-such-script', 'HTTP ' + (res ? res.status : 0));
        var declared = Number(res.headers.get('content-length'));
        if (declared > IWCore.MAX_SCRIPT_BYTES) return fail('too-large', 'script over MaxScriptBytes');
        bytes = new Uint8Array(await res.arrayBuffer());
        contentType = res.headers.get('content-type') || '';
      }
      if (producer.gen !== gen) return;
      var frames = IWCore.scriptReadFrames(id, url, bytes, {
        content: !!req.content,
        limits: producer.limits,
        contentType: contentType,
        sourceMapURL: fromDOM || !res ? '' : (res.headers.get('sourcemap') || res.headers.get('x-sourcemap') || sourceMappingURL(bytes)),
        hash: await sha256(bytes),
      });
      for (var i = 0; i < frames.length; i++) {
        while (ws && ws.bufferedAmount > BUFFER_HIGH && producer.gen === gen) await sleep(50);
        if (producer.gen !== gen || !producer.sendFrame(frames[i][0], frames[i][1])) return;
      }
    } catch (e) {
      if (producer.gen === gen) fail('internal', 'script read failed');
    }
  }

  /** @param {Uint8Array} bytes */
  function sourceMappingURL(bytes) {
    try {
      var tail = new TextDecoder().decode(bytes.subarray(Math.max(0, bytes.length - 4096)));
      var m = /\/\/[#@]\s*sourceMappingURL=(\S+)\s*$/.exec(tail);
      return m ? m[1] : '';
    } catch (e) {
      return '';
    }
  }

  /** @param {Uint8Array} bytes */
  async function sha256(bytes) {
    try {
      var subtle = w.crypto && w.crypto.subtle;
      if (!subtle) return ''; // not a secure context
      var d = new Uint8Array(await subtle.digest('SHA-256', bytes));
      var hex = '';
      for (var i = 0; i < d.length; i++) hex += (d[i] < 16 ? '0' : '') + d[i].toString(16);
      return hex;
    } catch (e) {
      return '';
    }
  }
})();
