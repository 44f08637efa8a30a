// runtime.mjs — the page's Runtime realm: answers the closed Runtime frame
// family (docs/protocol.md "Runtime") and keeps the handle tables behind
// console arguments ("Console"). Shipped inside client.js only (build.mjs
// inlines it after core.mjs); the tests import it directly.
//
// Handles live in one table per DevTools session: a handle is found only in
// the session that received it, so one window's release never invalidates
// another's, and a handle passed by another session is refused. Handles made
// for a command's answer are provisional until the worker's runtime.ack
// (accepted:false, a runtime.cancel, or a new generation frees them), so a
// deadline or a late answer never leaves unreachable objects behind. An
// answer waiting for its ack is never freed otherwise: the worker may have
// given its handles to a window already. What bounds the answers waiting is
// the worker's window of commands in flight to a page (64,
// pagerealm/flow.go) and, whatever a worker does, the per-session
// handle bound below.
//
// What the page cannot do: stop its own JavaScript. A command that loops
// forever blocks the page; the worker's deadline answers DevTools, and if
// the loop ever ends its late answer is nacked and its handles freed.
//
// Bounds: MAX_HANDLES_PER_SESSION handles per session (beyond it values
// are still described, with previews, but carry no handle); MAX_PROPERTIES
// descriptors per getProperties answer; every answer measured against the
// frame limits before it is sent (previews dropped, then descriptors
// halved, then error "too-large").
import { remoteObject, measureJSON, parseStack, capString, DEFAULT_LIMITS, MAX_FRAME_OBJECTS, MAX_DEPTH, MAX_ID_BYTES } from './core.mjs';
import { evaluatePath } from './sideeffect.mjs';
import { ListenerLog } from './listeners.mjs';
import { domOf } from './frameworks.mjs';

/** Handles one DevTools session may hold in this page (provisional included). */
export const MAX_HANDLES_PER_SESSION = 65536;
/** sourceproto.MaxProperties: descriptors in one getProperties answer, internal ones included. */
export const MAX_PROPERTIES = 4096;
/** sourceproto.MaxCallArguments. */
export const MAX_CALL_ARGUMENTS = 64;
/** What V8 throws for throwOnSideEffect; DevTools' eager evaluation shows nothing for it. */
export const SIDE_EFFECT_TEXT = 'EvalError: Possible side-effect in debug-evaluate';
/** V8's eval origin in a stack line: "eval at NAME (URL:L:C), <anonymous>:L:C". */
const EVAL_ORIGIN = /eval at [^()]*\((\S+?):\d+:\d+\), (<anonymous>:\d+:\d+)/;
/** The object group a session's console arguments live in (V8's name). */
export const CONSOLE_GROUP = 'console';

const METHODS = new Set(['evaluate', 'getProperties', 'callFunctionOn', 'awaitPromise', 'releaseObject', 'releaseObjectGroup', 'globalLexicalScopeNames',
  'domChildren', 'domDescribe', 'domPush', 'domResolve', 'domOuterHTML', 'domEdit', 'domDisable', 'domSearch', 'domResults',
  'domBox', 'domOverlay', 'domCSS', 'domListeners', 'domPlace', 'domLocate', 'domClasses']);
const G = /** @type {any} */ (globalThis);
const promiseThen = G.Promise.prototype.then;
const getProto = Object.getPrototypeOf;
const ownKeys = Reflect.ownKeys;
const gopd = Object.getOwnPropertyDescriptor;
const symToString = G.Symbol.prototype.toString;

/** @param {Function|undefined} f @param {any} v */
function brand(f, v) {
  if (!f) return undefined;
  try { return f.call(v); } catch (e) { return undefined; }
}
/** @param {any} ctor @param {string} name */
function getterOf(ctor, name) {
  try { const d = ctor && gopd(ctor.prototype, name); return d && d.get; } catch (e) { return undefined; }
}
const mapSize = getterOf(G.Map, 'size');
const setSize = getterOf(G.Set, 'size');
/** @type {Array<[string, Function|undefined]>} */
const PRIMITIVE_WRAPPERS = [
  ['Number', G.Number.prototype.valueOf], ['String', G.String.prototype.valueOf],
  ['Boolean', G.Boolean.prototype.valueOf], ['Symbol', G.Symbol.prototype.valueOf],
  ['BigInt', G.BigInt && G.BigInt.prototype.valueOf],
];

/** @param {any} v */
function isPromise(v) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return false;
  try { return Object.prototype.toString.call(v) === '[object Promise]' || v instanceof G.Promise; } catch (e) { return false; }
}

/** @param {any} v */
function isObjectLike(v) {
  return (v !== null && typeof v === 'object') || typeof v === 'function' || typeof v === 'symbol';
}

/** @param {string|symbol} k */
function isIndex(k) {
  return typeof k === 'string' && /^(?:0|[1-9][0-9]*)$/.test(k) && +k < 4294967295;
}

/**
 * An error a person can act on, sent as runtime.result's `error` member.
 */
class TransportFailure extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) { super(message); this.code = code; }
}

/**
 * @typedef {object} RealmOptions
 * @property {(type: string, json: string) => boolean} send writes one producer → worker frame body (JSON text)
 * @property {() => import('./core.mjs').Limits} [limits] the welcome's limits
 * @property {(code: string) => any} [evaluate] global (indirect) eval; default (0, eval)
 * @property {any} [global] the realm's global object
 * @property {(frame: {url: string}) => boolean} [isOwn] stack frames of the producer itself, dropped from exception stacks
 * @property {number} [maxHandles] handles per session (default MAX_HANDLES_PER_SESSION; tests lower it)
 * @property {() => any} [dom] makes the page's DOM agent (dom.mjs) on the first dom* command; none: dom* is unsupported
 * @property {ListenerLog|null} [listeners] the listeners added since client.js loaded (listeners.mjs); none: on* handlers only
 */

/**
 * @typedef {object} Ctx one command in progress
 * @property {string} session
 * @property {number} id
 * @property {string} method
 * @property {string[]} made handles made for the answer (provisional)
 * @property {boolean} done answered (result or cancelled)
 */

/**
 * @typedef {{v: any, group: string}} Entry
 * @typedef {{handles: Map<string, Entry>, groups: Map<string, Set<string>>}} SessionTable
 */

export class Realm {
  /** @param {RealmOptions} o */
  constructor(o) {
    this.sendFn = o.send;
    this.limitsFn = o.limits || (() => DEFAULT_LIMITS);
    this.evalFn = o.evaluate || ((/** @type {string} */ code) => (0, eval)(code));
    this.global = o.global || G;
    this.isOwn = o.isOwn || (() => false);
    this.maxHandles = o.maxHandles || MAX_HANDLES_PER_SESSION;
    this.makeDOM = o.dom;
    this.listenerLog = o.listeners || null;
    /** @type {any} the DOM agent, made on the first dom* command (nothing runs before) */
    this.domAgent = null;
    /** @type {Map<string, SessionTable>} */
    this.sessions = new Map();
    /** @type {Map<string, Ctx>} commands not yet answered, by session + id */
    this.running = new Map();
    /** @type {Map<string, Ctx>} answers whose handles wait for runtime.ack, oldest first */
    this.awaiting = new Map();
    this.nextHandle = 0;
    this.exceptionId = 0;
    this.lastResult = undefined;
    // Counters for stats().
    this.answered = 0;
    this.freedUnacked = 0;
    this.noHandle = 0;
  }

  /** A new generation (or none): every handle and command of the old one is gone. */
  reset() {
    this.sessions.clear();
    if (this.domAgent) this.domAgent.reset();
    for (const c of this.running.values()) c.done = true;
    this.running.clear();
    this.awaiting.clear();
    this.lastResult = undefined;
  }

  /**
   * One worker → producer frame of the Runtime or console families; false
   * for any other type.
   * @param {string} type
   * @param {any} body
   */
  handle(type, body) {
    try {
      switch (type) {
        case 'runtime.command': this.command(body); return true;
        case 'runtime.cancel': this.cancel(body); return true;
        case 'runtime.ack': this.ack(body); return true;
        case 'console.disable':
        case 'console.discard':
          if (typeof body.session === 'string') this.releaseGroup(body.session, CONSOLE_GROUP);
          return true;
        case 'console.enable': return true;
      }
    } catch (e) { /* never throw into the carrier */ }
    return false;
  }

  /**
   * The handle maker for one console event of one session.
   * @param {string} session
   * @returns {import('./core.mjs').ConsoleHandles}
   */
  consoleHandles(session) {
    /** @type {string[]} */
    const made = [];
    return {
      make: (v) => {
        const h = this.makeHandle(session, v, CONSOLE_GROUP);
        if (h) made.push(h);
        return h;
      },
      rollback: () => {
        for (const h of made) this.release(session, h);
        made.length = 0;
      },
    };
  }

  /** Counters for tests and the page's __inspectorWorkerClient.stats(). */
  stats() {
    let handles = 0;
    /** @type {Record<string, number>} */
    const perSession = {};
    for (const [s, t] of this.sessions) { handles += t.handles.size; perSession[s] = t.handles.size; }
    let provisional = 0;
    for (const c of this.awaiting.values()) provisional += c.made.length;
    return {
      handles, perSession, provisional, running: this.running.size, awaitingAck: this.awaiting.size,
      answered: this.answered, freedUnacked: this.freedUnacked, noHandle: this.noHandle,
    };
  }

  /** The DOM agent, made on first use. */
  dom() {
    if (!this.domAgent) {
      if (!this.makeDOM) throw new TransportFailure('unsupported', 'this agent has no DOM (not a page)');
      this.domAgent = this.makeDOM();
    }
    return this.domAgent;
  }

  // -------------------------------------------------------------------------
  // Handle tables

  /**
   * @param {string} session
   * @param {any} v
   * @param {string} group
   * @returns {string} '' when the session's table is full
   */
  makeHandle(session, v, group) {
    let t = this.sessions.get(session);
    if (!t) { t = { handles: new Map(), groups: new Map() }; this.sessions.set(session, t); }
    if (t.handles.size >= this.maxHandles) { this.noHandle++; return ''; }
    const h = 'h:' + (++this.nextHandle);
    t.handles.set(h, { v, group });
    let g = t.groups.get(group);
    if (!g) { g = new Set(); t.groups.set(group, g); }
    g.add(h);
    return h;
  }

  /** @param {string} session @param {string} h */
  release(session, h) {
    const t = this.sessions.get(session);
    const e = t && t.handles.get(h);
    if (!t || !e) return;
    t.handles.delete(h);
    const g = t.groups.get(e.group);
    if (g) { g.delete(h); if (!g.size) t.groups.delete(e.group); }
    if (!t.handles.size) this.sessions.delete(session);
  }

  /** @param {string} session @param {string} group */
  releaseGroup(session, group) {
    const t = this.sessions.get(session);
    const g = t && t.groups.get(group);
    if (!t || !g) return;
    for (const h of g) t.handles.delete(h);
    t.groups.delete(group);
    if (!t.handles.size) this.sessions.delete(session);
  }

  /**
   * The entry behind a handle of this session; a handle of another session
   * (or a released one) is refused by name.
   * @param {string} session
   * @param {unknown} h
   * @returns {Entry}
   */
  lookup(session, h) {
    if (typeof h !== 'string' || !h) throw new TransportFailure('invalid-argument', 'no handle given');
    const t = this.sessions.get(session);
    const e = t && t.handles.get(h);
    if (e) return e;
    for (const [s, o] of this.sessions) {
      if (s !== session && o.handles.has(h)) throw new TransportFailure('no-such-handle', 'handle ' + h + ' belongs to another DevTools session; a session can use only the handles it received');
    }
    throw new TransportFailure('no-such-handle', 'no object with handle ' + h + ' in this page (released, or from an earlier page load)');
  }

  // -------------------------------------------------------------------------
  // Event listeners (DOMDebugger.getEventListeners)

  /**
   * The listeners of the object a handle names (a node, the window …) and,
   * to p.depth, of the nodes below it; handlers join the object's group.
   * @param {Ctx} ctx
   * @param {any} p DOMParams: doc, handle, depth, pierce
   */
  eventListeners(ctx, p) {
    const e = this.lookup(ctx.session, p.handle);
    const group = typeof p.objectGroup === 'string' && p.objectGroup ? p.objectGroup : e.group;
    const agent = this.dom();
    const s = agent.session(ctx.session, p.doc);
    const depth = typeof p.depth === 'number' && p.depth !== 0 ? p.depth : 1;
    const log = this.listenerLog || new ListenerLog({ global: this.global });
    return promiseThen.call(log.collect(e.v, depth, !!p.pierce), (/** @type {any[]} */ list) => {
      if (ctx.done) return {};
      const out = list.map((f) => {
        /** @type {Record<string, any>} */
        const l = { type: capString(f.type, 1024) };
        if (f.useCapture) l.useCapture = true;
        if (f.passive) l.passive = true;
        if (f.once) l.once = true;
        l.handler = this.ro(ctx, f.handler, group, false);
        l.originalHandler = this.ro(ctx, f.original, group, false);
        if (f.url) { l.url = f.url; l.line = f.line; l.column = f.column; }
        if (f.node) { try { l.node = agent.idOf(s, f.node); } catch (x) { /* over the session's node bound */ } }
        return l;
      });
      return out.length ? { listeners: out } : {};
    });
  }

  // -------------------------------------------------------------------------
  // Commands

  /** @param {any} b */
  command(b) {
    if (!b || typeof b.session !== 'string' || typeof b.id !== 'number' || typeof b.method !== 'string') return;
    const ctx = { session: b.session, id: b.id, method: b.method, made: [], done: false };
    const key = b.session + '\n' + b.id;
    if (!METHODS.has(b.method)) { this.answerError(ctx, new TransportFailure('unsupported', 'method ' + b.method + ' is not in the client Runtime subset')); return; }
    const p = b[b.method];
    if (!p || typeof p !== 'object') { this.answerError(ctx, new TransportFailure('invalid-argument', 'the ' + b.method + ' member is missing')); return; }
    this.running.set(key, ctx);
    let out;
    try {
      out = this.run(ctx, p);
    } catch (e) {
      this.finish(key, ctx, null, e);
      return;
    }
    if (out && typeof out.then === 'function') {
      promiseThen.call(out, (/** @type {any} */ r) => this.finish(key, ctx, r, null), (/** @type {any} */ e) => this.finish(key, ctx, null, e));
    } else {
      this.finish(key, ctx, out, null);
    }
  }

  /**
   * @param {Ctx} ctx
   * @param {any} p the method's params
   * @returns {any} the result member, or a promise of it
   */
  run(ctx, p) {
    switch (ctx.method) {
      case 'evaluate': return this.evaluate(ctx, p);
      case 'getProperties': return this.getProperties(ctx, p);
      case 'callFunctionOn': return this.callFunctionOn(ctx, p);
      case 'awaitPromise': {
        const e = this.lookup(ctx.session, p.handle);
        return this.settle(ctx, e.v, true, p, e.group);
      }
      case 'releaseObject':
        if (typeof p.handle === 'string') this.release(ctx.session, p.handle);
        return {};
      case 'releaseObjectGroup':
        if (typeof p.objectGroup === 'string') this.releaseGroup(ctx.session, p.objectGroup);
        return {};
      case 'globalLexicalScopeNames':
        // JavaScript has no way to list the global lexical scope
        // (let/const/class of classic scripts): the answer is empty, and
        // DevTools' completion falls back to the global object's properties.
        return { names: [] };
      case 'domResolve':
        return { object: this.ro(ctx, this.dom().resolve(ctx.session, p), typeof p.objectGroup === 'string' ? p.objectGroup : '', false) };
    }
    if (ctx.method === 'domDisable' && !this.domAgent) return {}; // nothing to forget: never made
    if (ctx.method === 'domListeners') return this.eventListeners(ctx, p);
    if (ctx.method.startsWith('dom')) {
      return this.dom().command(ctx.session, ctx.method, p, (/** @type {string} */ s, /** @type {string} */ h) => this.lookup(s, h).v);
    }
    throw new TransportFailure('unsupported', 'method ' + ctx.method);
  }

  /**
   * @param {string} key
   * @param {Ctx} ctx
   * @param {any} result
   * @param {any} err
   */
  finish(key, ctx, result, err) {
    if (ctx.done) { // cancelled, or a new generation: nobody will ack these
      this.freeMade(ctx);
      return;
    }
    ctx.done = true;
    this.running.delete(key);
    if (err) { this.answerError(ctx, err); return; }
    this.answer(ctx, result);
  }

  /** @param {Ctx} ctx */
  freeMade(ctx) {
    if (ctx.made.length) this.freedUnacked += ctx.made.length;
    for (const h of ctx.made) this.release(ctx.session, h);
    ctx.made.length = 0;
  }

  /**
   * Sends the result, after measuring it; handles stay provisional until
   * the ack.
   * @param {Ctx} ctx
   * @param {any} result
   */
  answer(ctx, result) {
    const lim = this.limitsFn();
    let json = this.resultJSON(ctx, result);
    if (!this.fits(json, lim) && ctx.method === 'getProperties') json = this.shrinkProperties(ctx, result, lim);
    if (!json || !this.fits(json, lim)) {
      this.freeMade(ctx);
      this.answerError(ctx, new TransportFailure('too-large', 'the answer is over the frame limits (' + lim.maxFrameBytes + ' bytes, ' + MAX_FRAME_OBJECTS + ' objects); ask for less, e.g. returnByValue off or fewer properties'));
      return;
    }
    if (!this.sendFn('runtime.result', json)) { this.freeMade(ctx); return; }
    this.answered++;
    if (ctx.method === 'releaseObject' || ctx.method === 'releaseObjectGroup') return;
    if (!ctx.made.length) return;
    this.awaiting.set(ctx.session + '\n' + ctx.id, ctx);
  }

  /** @param {Ctx} ctx @param {any} result */
  resultJSON(ctx, result) {
    try {
      return '{"session":' + JSON.stringify(ctx.session) + ',"id":' + ctx.id + ',"method":"' + ctx.method + '","' + ctx.method + '":' + JSON.stringify(result) + '}';
    } catch (e) {
      return '';
    }
  }

  /** @param {string} json @param {import('./core.mjs').Limits} lim */
  fits(json, lim) {
    if (!json) return false;
    const m = measureJSON(json);
    return m.bytes <= lim.maxFrameBytes - 256 - MAX_ID_BYTES && m.objects <= MAX_FRAME_OBJECTS - 1 && m.depth <= MAX_DEPTH - 1 && m.maxString <= lim.maxStringBytes;
  }

  /**
   * A getProperties answer too big for one frame: previews go first, then
   * half the descriptors at a time (DevTools pages big objects itself).
   * @param {Ctx} ctx
   * @param {any} r
   * @param {import('./core.mjs').Limits} lim
   */
  shrinkProperties(ctx, r, lim) {
    /** @param {any} o */
    const strip = (o) => { if (o && o.preview) delete o.preview; };
    for (const d of r.result) { strip(d.value); strip(d.get); strip(d.set); }
    if (r.internalProperties) for (const d of r.internalProperties) strip(d.value);
    let json = this.resultJSON(ctx, r);
    while (!this.fits(json, lim) && r.result.length > 1) {
      r.result = r.result.slice(0, r.result.length >> 1);
      json = this.resultJSON(ctx, r);
    }
    return json;
  }

  /** @param {Ctx} ctx @param {any} err */
  answerError(ctx, err) {
    ctx.done = true;
    this.running.delete(ctx.session + '\n' + ctx.id);
    const known = err instanceof TransportFailure || (err instanceof Error && /** @type {any} */ (err).transport === true); // dom.mjs's DOMFailure
    const code = known ? /** @type {any} */ (err).code : 'internal';
    const message = capString(known ? err.message : 'the page failed to answer: ' + safeText(err), 1024);
    this.sendFn('runtime.result', '{"session":' + JSON.stringify(ctx.session) + ',"id":' + ctx.id + ',"method":' + JSON.stringify(ctx.method) +
      ',"error":' + JSON.stringify({ code, message }) + '}');
  }

  /** @param {any} b */
  cancel(b) {
    if (!b || typeof b.session !== 'string' || typeof b.id !== 'number') return;
    const key = b.session + '\n' + b.id;
    const ctx = this.running.get(key);
    if (ctx) {
      // Still running (an await): answer now; whatever it makes later is freed in finish.
      this.answerError(ctx, new TransportFailure('cancelled', 'cancelled by the worker'));
      this.freeMade(ctx);
      ctx.done = true;
      return;
    }
    // Already answered: the worker withdrew the command, so it will not map the handles.
    const a = this.awaiting.get(key);
    if (a) { this.awaiting.delete(key); this.freeMade(a); }
  }

  /** @param {any} b */
  ack(b) {
    if (!b || typeof b.session !== 'string' || typeof b.id !== 'number') return;
    const key = b.session + '\n' + b.id;
    const a = this.awaiting.get(key);
    if (!a) return;
    this.awaiting.delete(key);
    if (b.accepted !== true) this.freeMade(a);
  }

  // -------------------------------------------------------------------------
  // Values

  /**
   * A RemoteObject whose handle (if any) is provisional for ctx.
   * @param {Ctx} ctx
   * @param {any} v
   * @param {string} group
   * @param {boolean} preview
   */
  ro(ctx, v, group, preview) {
    const opts = {
      preview,
      handle: (/** @type {any} */ x) => {
        const h = this.makeHandle(ctx.session, x, group);
        if (h) ctx.made.push(h);
        return h;
      },
    };
    return remoteObject(v, opts);
  }

  /**
   * A RemoteObject by value (returnByValue): primitives as usual, objects as
   * their JSON value within maxValueBytes.
   * @param {any} v
   */
  byValue(v) {
    const t = typeof v;
    if (v === null || (t !== 'object' && t !== 'function')) return remoteObject(v, { preview: false });
    if (t === 'function') return { type: 'function', value: {} }; // V8 sends an empty object
    let json;
    try { json = JSON.stringify(v); } catch (e) {
      throw new TransportFailure('invalid-argument', "Object couldn't be returned by value: " + safeText(e));
    }
    const r = /** @type {Record<string, any>} */ (remoteObject(v, { preview: false }));
    delete r.description;
    delete r.className;
    if (json === undefined) return r;
    const lim = this.limitsFn();
    const m = measureJSON(json);
    if (m.bytes > lim.maxValueBytes || m.depth > MAX_DEPTH - 8 || m.maxString > lim.maxStringBytes) {
      throw new TransportFailure('too-large', 'the value is over MaxValueBytes (' + lim.maxValueBytes + ' bytes): return a smaller value, or a handle');
    }
    r.value = JSON.parse(json);
    return r;
  }

  /**
   * ExceptionDetails for a thrown value.
   * @param {Ctx} ctx
   * @param {any} err
   * @param {string} text 'Uncaught' or 'Uncaught (in promise)'
   * @param {string} group
   * @param {boolean} preview
   */
  exception(ctx, err, text, group, preview) {
    /** @type {Record<string, any>} */
    const d = { exceptionId: ++this.exceptionId, text, lineNumber: 0, columnNumber: 0 };
    let stack;
    try { stack = err !== null && typeof err === 'object' ? err.stack : undefined; } catch (e) { /* a getter threw */ }
    if (typeof stack === 'string') {
      // Eval'd code is "<anonymous>:line:col" in V8's stack text.
      const m = /<anonymous>:(\d+):(\d+)/.exec(stack);
      if (m) { d.lineNumber = Math.max(0, +m[1] - 1); d.columnNumber = Math.max(0, +m[2] - 1); }
      const frames = parseStack(stack).filter((f) => !this.isOwn(f));
      if (frames.length) d.stackTrace = { callFrames: frames };
    }
    d.exception = this.ro(ctx, err, group, preview);
    if (typeof d.exception.description === 'string') d.exception.description = this.withoutOwnFrames(d.exception.description);
    return d;
  }

  /**
   * An error's description (its stack text) without the agent's own frames
   * below the evaluated code, as V8 shows an evaluation's exception. The
   * error object itself is not touched.
   * @param {string} text
   */
  withoutOwnFrames(text) {
    const lines = text.split('\n');
    let changed = false;
    const kept = [];
    for (let line of lines) {
      if (!/^\s*at /.test(line)) { kept.push(line); continue; }
      // Code evaluated by the agent: "at f (eval at g (<agent url>:l:c),
      // <anonymous>:L:C)"; V8 shows an evaluation's code as "<anonymous>:L:C".
      const clean = line.replace(EVAL_ORIGIN, (m, url, loc) => (this.isOwn({ url }) ? loc : m))
        .replace(/^(\s*at )eval \((<anonymous>:\d+:\d+)\)$/, '$1$2');
      if (clean !== line) { changed = true; line = clean; }
      const f = parseStack(line)[0];
      if (f && f.url && this.isOwn(f)) { changed = true; continue; }
      kept.push(line);
    }
    // The indirect eval that ran it, and what called that (the agent), are
    // below the evaluated code: cut at the outermost bare eval frame.
    if (changed) {
      let cut = -1;
      for (let i = 0; i < kept.length; i++) if (/^\s*at eval \(<anonymous>\)$/.test(kept[i])) cut = i;
      if (cut > 0) kept.length = cut;
    }
    return changed ? kept.join('\n') : text;
  }

  /**
   * Awaits v when asked and it is a promise; the evaluate-shaped result.
   * @param {Ctx} ctx
   * @param {any} v
   * @param {boolean} wait
   * @param {{returnByValue?: boolean, generatePreview?: boolean}} p
   * @param {string} group
   */
  settle(ctx, v, wait, p, group) {
    if (!wait || !isPromise(v)) return this.valueResult(ctx, v, p, group);
    return new Promise((resolve, reject) => {
      promiseThen.call(v,
        (/** @type {any} */ x) => { try { resolve(this.valueResult(ctx, x, p, group)); } catch (e) { reject(e); } },
        (/** @type {any} */ e) => {
          try {
            resolve({ result: this.ro(ctx, e, group, !!p.generatePreview), exceptionDetails: this.exception(ctx, e, 'Uncaught (in promise)', group, !!p.generatePreview) });
          } catch (x) { reject(x); }
        });
    });
  }

  /**
   * @param {Ctx} ctx
   * @param {any} v
   * @param {{returnByValue?: boolean, generatePreview?: boolean}} p
   * @param {string} group
   */
  valueResult(ctx, v, p, group) {
    if (ctx.done) return { result: { type: 'undefined' } }; // cancelled meanwhile: make no handles
    return { result: p.returnByValue ? this.byValue(v) : this.ro(ctx, v, group, !!p.generatePreview) };
  }

  /**
   * @param {Ctx} ctx
   * @param {any} err
   * @param {{generatePreview?: boolean}} p
   * @param {string} group
   */
  thrown(ctx, err, p, group) {
    return { result: this.ro(ctx, err, group, !!p.generatePreview), exceptionDetails: this.exception(ctx, err, 'Uncaught', group, !!p.generatePreview) };
  }

  // -------------------------------------------------------------------------
  // evaluate

  sideEffectRefusal() {
    const ex = { type: 'object', subtype: 'error', className: 'EvalError', description: SIDE_EFFECT_TEXT };
    return { result: ex, exceptionDetails: { exceptionId: ++this.exceptionId, text: 'Uncaught', lineNumber: 0, columnNumber: 0, exception: ex } };
  }

  /**
   * Runs code with the page's global eval; a page whose CSP forbids eval
   * is a transport failure that says so.
   * @param {string} code
   */
  globalEval(code) {
    try {
      return { ok: true, v: this.evalFn(code) };
    } catch (e) {
      if (this.evalBlocked(e)) {
        throw new TransportFailure('unsupported', "this page's Content-Security-Policy forbids eval (no 'unsafe-eval' in script-src): the Console cannot evaluate here; allow 'unsafe-eval' for development");
      }
      return { ok: false, v: e };
    }
  }

  /** @param {any} e */
  evalBlocked(e) {
    let isEvalError = false;
    try { isEvalError = e instanceof G.EvalError || (e && e.name === 'EvalError'); } catch (x) { /* ignore */ }
    if (!isEvalError) return false;
    // Our probe: eval of a literal throws only when eval itself is refused.
    try { this.evalFn('0'); return false; } catch (x) { return true; }
  }

  /**
   * @param {Ctx} ctx
   * @param {any} p EvaluateParams
   */
  evaluate(ctx, p) {
    if (typeof p.expression !== 'string') throw new TransportFailure('invalid-argument', 'expression must be a string');
    const group = typeof p.objectGroup === 'string' ? p.objectGroup : '';
    if (p.throwOnSideEffect) {
      // Completions and the eager preview: a property path is read without
      // running page code (sideeffect.mjs); anything else refuses as V8 does.
      const r = evaluatePath(p.expression, this.global, this.evalFn);
      if (r === null) return this.sideEffectRefusal();
      if (!r.ok) return this.thrown(ctx, r.v, p, group);
      return this.settle(ctx, r.v, false, p, group);
    }
    const undo = p.includeCommandLineAPI ? this.installCommandLineAPI(ctx.session) : null;
    let r;
    try {
      r = this.globalEval(p.expression);
      // Top-level await (the Console's replMode): retry as an async arrow.
      if (!r.ok && isSyntaxError(r.v) && /\bawait\b/.test(p.expression)) {
        const again = this.globalEval('(async () => (' + p.expression + '\n))()');
        if (again.ok) r = { ok: true, v: again.v, awaited: true };
      }
    } finally {
      if (undo) undo();
    }
    if (!r.ok) return this.thrown(ctx, r.v, p, group);
    const out = this.settle(ctx, r.v, !!(p.awaitPromise || r.awaited), p, group);
    if (p.includeCommandLineAPI) {
      if (out && typeof out.then === 'function') promiseThen.call(out, (/** @type {any} */ x) => { if (!x.exceptionDetails) this.lastResult = r.v; }, () => {});
      else this.lastResult = r.v;
    }
    return out;
  }

  /**
   * DevTools' Command Line API, best effort: the names the page does not
   * define itself, installed on the global object for the synchronous part
   * of one evaluation and removed afterwards. $0–$4 are the nodes the
   * session's window selected in Elements, newest first (DOM.setInspectedNode).
   * @param {string} session
   * @returns {() => void}
   */
  installCommandLineAPI(session) {
    const g = this.global;
    const doc = g.document;
    const con = g.console;
    /** @type {Record<string, any>} */
    const api = {
      $_: this.lastResult,
      keys: (/** @type {any} */ o) => Object.keys(o),
      values: (/** @type {any} */ o) => Object.values(o),
      dir: (/** @type {any[]} */ ...a) => con && con.dir(...a),
      dirxml: (/** @type {any[]} */ ...a) => con && con.dirxml(...a),
      table: (/** @type {any[]} */ ...a) => con && con.table(...a),
      clear: () => con && con.clear(),
    };
    const picked = this.domAgent ? this.domAgent.inspected(session) : [];
    for (let i = 0; i < 5; i++) api['$' + i] = picked[i];
    if (doc) {
      api.$ = (/** @type {string} */ s, /** @type {any} */ root) => (root || doc).querySelector(s);
      api.$$ = (/** @type {string} */ s, /** @type {any} */ root) => Array.from((root || doc).querySelectorAll(s));
      api.$x = (/** @type {string} */ xp, /** @type {any} */ root) => {
        const out = [];
        const it = doc.evaluate(xp, root || doc, null, 0, null);
        if (it.resultType === 4 || it.resultType === 5) for (let n = it.iterateNext(); n; n = it.iterateNext()) out.push(n);
        else out.push(it.numberValue !== undefined && it.resultType === 1 ? it.numberValue : it.resultType === 2 ? it.stringValue : it.booleanValue);
        return out;
      };
    }
    /** @type {string[]} */
    const added = [];
    for (const k of Object.keys(api)) {
      try {
        if (k in g) continue; // the page's own $ (jQuery) wins
        Object.defineProperty(g, k, { value: api[k], configurable: true, writable: true, enumerable: false });
        added.push(k);
      } catch (e) { /* a frozen global */ }
    }
    return () => {
      for (const k of added) {
        try { const d = gopd(g, k); if (d && d.value === api[k]) delete g[k]; } catch (e) { /* ignore */ }
      }
    };
  }

  // -------------------------------------------------------------------------
  // callFunctionOn

  /**
   * @param {Ctx} ctx
   * @param {any} p CallFunctionOnParams
   */
  callFunctionOn(ctx, p) {
    if (p.throwOnSideEffect) return this.sideEffectRefusal();
    if (typeof p.functionDeclaration !== 'string') throw new TransportFailure('invalid-argument', 'functionDeclaration must be a string');
    let group = typeof p.objectGroup === 'string' ? p.objectGroup : '';
    let receiver = this.global;
    if (p.handle) {
      const e = this.lookup(ctx.session, p.handle);
      receiver = e.v;
      if (!p.objectGroup) group = e.group;
    }
    const list = Array.isArray(p.arguments) ? p.arguments : [];
    if (list.length > MAX_CALL_ARGUMENTS) throw new TransportFailure('invalid-argument', 'more than ' + MAX_CALL_ARGUMENTS + ' arguments (MaxCallArguments)');
    const args = list.map((a) => this.argument(ctx, a));
    const f = this.globalEval('(' + p.functionDeclaration + '\n)');
    if (!f.ok) return this.thrown(ctx, f.v, p, group);
    if (typeof f.v !== 'function') throw new TransportFailure('invalid-argument', 'functionDeclaration does not evaluate to a function');
    let v;
    try {
      v = Reflect.apply(f.v, receiver, args);
    } catch (e) {
      return this.thrown(ctx, e, p, group);
    }
    return this.settle(ctx, v, !!p.awaitPromise, p, group);
  }

  /**
   * A CallArgument's value. `{"value":null}` is null here (the one place
   * where JSON null is a value, not an absent member).
   * @param {Ctx} ctx
   * @param {any} a
   */
  argument(ctx, a) {
    if (!a || typeof a !== 'object') return undefined;
    if (typeof a.handle === 'string' && a.handle) return this.lookup(ctx.session, a.handle).v;
    if (typeof a.unserializableValue === 'string' && a.unserializableValue) return unserializable(a.unserializableValue);
    if ('value' in a) return a.value;
    return undefined;
  }

  // -------------------------------------------------------------------------
  // getProperties

  /**
   * @param {Ctx} ctx
   * @param {any} p GetPropertiesParams
   */
  getProperties(ctx, p) {
    const e = this.lookup(ctx.session, p.handle);
    const v = e.v;
    const preview = !!p.generatePreview;
    /** @type {any[]} */
    const result = [];
    /** @type {any[]} */
    const internal = [];
    if (typeof v === 'symbol') return { result };
    const seen = new Set();
    let o = v, own = true;
    while (o !== null && o !== undefined && result.length < MAX_PROPERTIES) {
      let keys;
      try { keys = ownKeys(o); } catch (x) { return this.thrown(ctx, x, p, e.group); } // a proxy trap threw
      for (const k of keys) {
        if (result.length >= MAX_PROPERTIES) break;
        if (seen.has(k) || (p.nonIndexedPropertiesOnly && isIndex(k))) continue;
        seen.add(k);
        let d;
        try { d = gopd(o, k); } catch (x) { continue; }
        if (!d) continue;
        const accessor = 'get' in d || 'set' in d;
        if (p.accessorPropertiesOnly && !accessor) continue;
        /** @type {Record<string, any>} */
        const pd = { name: typeof k === 'symbol' ? String(symToString.call(k)) : k };
        if (accessor) {
          pd.get = this.ro(ctx, d.get, e.group, false);
          pd.set = this.ro(ctx, d.set, e.group, false);
        } else {
          pd.value = this.ro(ctx, d.value, e.group, preview);
          pd.writable = !!d.writable;
        }
        pd.configurable = !!d.configurable;
        pd.enumerable = !!d.enumerable;
        pd.isOwn = own;
        if (typeof k === 'symbol') pd.symbol = this.ro(ctx, k, e.group, false);
        result.push(pd);
      }
      if (p.ownProperties) break;
      try { o = getProto(o); } catch (x) { break; }
      own = false;
    }
    if (p.accessorPropertiesOnly) return { result };
    return this.internals(ctx, v, e.group, preview, result, internal);
  }

  /**
   * V8's internal properties: [[Prototype]], [[Entries]] of a Map/Set,
   * [[PromiseState]]/[[PromiseResult]], [[PrimitiveValue]]; and ours,
   * [[DOM]] of a framework object (frameworks.mjs).
   * @param {Ctx} ctx
   * @param {any} v
   * @param {string} group
   * @param {boolean} preview
   * @param {any[]} result
   * @param {any[]} internal
   */
  internals(ctx, v, group, preview, result, internal) {
    const room = () => result.length + internal.length < MAX_PROPERTIES;
    const add = (/** @type {string} */ name, /** @type {any} */ x) => { if (room()) internal.push({ name, value: this.ro(ctx, x, group, preview) }); };
    /** @returns {any} */
    const done = () => (internal.length ? { result, internalProperties: internal } : { result });
    for (const [, valueOf] of PRIMITIVE_WRAPPERS) {
      if (typeof v !== 'object' || !valueOf) break;
      let pv;
      try { pv = valueOf.call(v); } catch (x) { continue; }
      add('[[PrimitiveValue]]', pv);
      break;
    }
    const entries = this.entriesOf(v);
    if (entries) add('[[Entries]]', entries);
    // A React Fiber or component, a Vue component: the DOM it stands for
    // (frameworks.mjs), one node as itself, several as an array.
    const dom = domOf(v);
    if (dom) add('[[DOM]]', dom.length === 1 ? dom[0] : dom);
    if (isPromise(v)) {
      return this.promiseState(v).then((s) => {
        if (ctx.done) return done();
        add('[[PromiseState]]', s.state);
        if (s.state !== 'pending') add('[[PromiseResult]]', s.value);
        this.addPrototype(v, add);
        return done();
      });
    }
    this.addPrototype(v, add);
    return done();
  }

  /** @param {any} v @param {(name: string, x: any) => void} add */
  addPrototype(v, add) {
    let proto = null;
    try { proto = getProto(v); } catch (x) { /* a proxy trap threw */ }
    if (proto !== null) add('[[Prototype]]', proto);
  }

  /**
   * A Map's entries as an array of {key, value}, a Set's as an array of
   * values; undefined for anything else. Iterated with the intrinsic
   * iterators, so a page's patched Map.prototype is not called.
   * @param {any} v
   */
  entriesOf(v) {
    const out = [];
    try {
      if (brand(mapSize, v) !== undefined) {
        const it = G.Map.prototype.entries.call(v);
        for (let s = it.next(); !s.done && out.length < MAX_PROPERTIES; s = it.next()) out.push({ key: s.value[0], value: s.value[1] });
        return out;
      }
      if (brand(setSize, v) !== undefined) {
        const it = G.Set.prototype.values.call(v);
        for (let s = it.next(); !s.done && out.length < MAX_PROPERTIES; s = it.next()) out.push(s.value);
        return out;
      }
    } catch (e) { /* an exotic receiver */ }
    return undefined;
  }

  /**
   * A promise's state. JavaScript cannot read it synchronously: this
   * attaches a reaction and looks after the reactions already queued ran.
   * (Attaching marks a rejected promise handled, as expanding it in
   * DevTools would not; the price of asking.)
   * @param {any} p
   * @returns {Promise<{state: string, value?: any}>}
   */
  promiseState(p) {
    /** @type {{state: string, value?: any}} */
    const s = { state: 'pending' };
    try {
      promiseThen.call(p, (/** @type {any} */ x) => { s.state = 'fulfilled'; s.value = x; }, (/** @type {any} */ e) => { s.state = 'rejected'; s.value = e; });
    } catch (e) { return G.Promise.resolve(s); }
    // Two turns: a settled promise's reaction job runs before the second.
    return G.Promise.resolve().then(() => undefined).then(() => s);
  }
}

/** @param {any} e */
function isSyntaxError(e) {
  try { return e instanceof G.SyntaxError || (e && e.name === 'SyntaxError'); } catch (x) { return false; }
}

/** @param {string} u */
function unserializable(u) {
  switch (u) {
    case 'NaN': return NaN;
    case 'Infinity': return Infinity;
    case '-Infinity': return -Infinity;
    case '-0': return -0;
  }
  if (/^-?[0-9]+n$/.test(u) && G.BigInt) return G.BigInt(u.slice(0, -1));
  throw new TransportFailure('invalid-argument', 'unserializableValue ' + capString(u, 64) + ' is not Infinity, -Infinity, NaN, -0 or a bigint literal');
}

/** @param {any} e */
function safeText(e) {
  try { return capString(String(e && e.message !== undefined ? e.message : e), 512); } catch (x) { return 'unknown error'; }
}

/**
 * Whether a console call needs per-session events: some argument is an
 * object, function or symbol (typeof only: no brand checks, nothing that
 * runs page code or throws).
 * @param {ArrayLike<any>} args
 */
export function anyNeedsHandles(args) {
  for (let i = 0; i < args.length; i++) if (isObjectLike(args[i])) return true;
  return false;
}
