// A fake browser for client.js: the shipped file runs unmodified in a vm
// context whose window, document, WebSocket, sessionStorage, history and
// fetch are test doubles. Node 20 has no WebSocket server without a
// package, so the fake WebSocket hands frames to a FakeWorker directly.

import vm from 'node:vm';
import { readFileSync } from 'node:fs';
import { FakeWorker } from './frames.mjs';

export const CLIENT_SOURCE = readFileSync(new URL('../client.js', import.meta.url), 'utf8');
export const CLIENT_URL = 'http://127.0.0.1:9229/client.js';
export const PAGE_URL = 'http://127.0.0.1:5173/';
export const APP_URL = 'http://127.0.0.1:5173/app.js';

/**
 * @param {{storage?: Map<string,string>, attrs?: Record<string,string>, refuse?: boolean,
 *          fetch?: (url: string, init: any) => Promise<Response>, worker?: FakeWorker, autoOpen?: boolean,
 *          transport?: {send: (text: string) => void, attach: (deliver: (text: string) => void) => void}}} [o]
 */
export function fakeBrowser(o = {}) {
  const storage = o.storage || new Map();
  /** @type {any[]} */
  const sockets = [];
  /** @type {any[]} */
  const consoleCalls = [];
  /** @type {Record<string, Function[]>} */
  const listeners = {};
  const env = { refuse: !!o.refuse, autoOpen: o.autoOpen !== false };
  const worker = o.worker || new FakeWorker();

  class FakeWebSocket {
    /** @param {string} url */
    constructor(url) {
      if (env.refuse) throw new Error('SecurityError: refused by the test');
      this.url = url;
      this.readyState = 0;
      this.bufferedAmount = 0;
      /** @type {string[]} */
      this.sent = [];
      /** @type {any} */ this.onopen = null;
      /** @type {any} */ this.onmessage = null;
      /** @type {any} */ this.onclose = null;
      /** @type {any} */ this.onerror = null;
      sockets.push(this);
      if (env.autoOpen) setImmediate(() => this.open());
    }
    /** @param {string} data */
    send(data) {
      if (this.readyState !== 1) throw new Error('InvalidStateError: still CONNECTING or closed');
      this.sent.push(data);
      if (this.peer) this.peer(data);
    }
    close() {
      if (this.readyState >= 2) return;
      this.readyState = 3;
      queueMicrotask(() => this.onclose && this.onclose({ code: 1000 }));
    }
    // Test drivers.
    open() {
      if (this.readyState !== 0) return;
      this.readyState = 1;
      if (o.transport) {
        this.peer = o.transport.send;
        o.transport.attach((/** @type {string} */ t) => this.message(t));
      } else {
        const w = worker;
        this.peer = (/** @type {string} */ t) => w.take(t);
        w.reply = (t) => setImmediate(() => this.message(t));
      }
      if (this.onopen) this.onopen({});
    }
    /** @param {string} text */
    message(text) {
      if (this.readyState === 1 && this.onmessage) this.onmessage({ data: text });
    }
    drop() {
      this.readyState = 3;
      if (this.onclose) this.onclose({ code: 1006 });
    }
  }

  /** @type {any} */
  const pageConsole = {};
  for (const m of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'dirxml', 'table', 'clear', 'assert',
    'group', 'groupCollapsed', 'groupEnd', 'count', 'countReset', 'time', 'timeLog', 'timeEnd']) {
    pageConsole[m] = function (/** @type {any[]} */ ...args) { consoleCalls.push([m, args]); return 'ret:' + m; };
  }

  const attrs = { 'data-endpoint': 'ws://127.0.0.1:9229/client', 'data-token': 'secret-token', ...(o.attrs || {}) };
  const clientScript = { src: CLIENT_URL, nodeName: 'SCRIPT', getAttribute: (/** @type {string} */ n) => (n in attrs ? attrs[n] : null) };
  const appScript = { src: APP_URL, nodeName: 'SCRIPT', getAttribute: () => null };
  /** @type {any} */
  const win = {
    console: pageConsole,
    WebSocket: FakeWebSocket,
    setTimeout, clearTimeout, queueMicrotask, performance, crypto, URL, TextDecoder, Response, btoa,
    location: { href: PAGE_URL, origin: 'http://127.0.0.1:5173' },
    sessionStorage: {
      getItem: (/** @type {string} */ k) => (storage.has(k) ? storage.get(k) : null),
      setItem: (/** @type {string} */ k, /** @type {string} */ v) => { storage.set(k, String(v)); },
    },
    addEventListener(/** @type {string} */ t, /** @type {Function} */ fn) { (listeners[t] = listeners[t] || []).push(fn); },
    removeEventListener(/** @type {string} */ t, /** @type {Function} */ fn) { listeners[t] = (listeners[t] || []).filter((f) => f !== fn); },
    history: {
      pushState(/** @type {any} */ _s, /** @type {string} */ _t, /** @type {string} */ url) { win.location.href = new URL(url, win.location.href).href; return 'pushed'; },
      replaceState(/** @type {any} */ _s, /** @type {string} */ _t, /** @type {string} */ url) { win.location.href = new URL(url, win.location.href).href; },
    },
    fetch: o.fetch,
  };
  win.window = win;
  win.document = {
    currentScript: clientScript,
    title: 'My app',
    scripts: [clientScript, appScript, { src: '', nodeName: 'SCRIPT' }],
    querySelectorAll: () => [clientScript],
    documentElement: {},
  };
  const ctx = vm.createContext(win);
  vm.runInContext(CLIENT_SOURCE, ctx, { filename: CLIENT_URL });
  return {
    win, ctx, sockets, consoleCalls, worker, storage, env, listeners,
    /** Runs page code as if from app.js. @param {string} code */
    run(code) { return vm.runInContext(code, ctx, { filename: APP_URL }); },
    /** @param {string} type @param {any} ev */
    dispatch(type, ev) { for (const fn of listeners[type] || []) fn(ev); },
    get socket() { return sockets[sockets.length - 1]; },
  };
}

/** Waits for I/O callbacks (the fake worker answers with setImmediate). */
export async function settle(n = 5) {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}
