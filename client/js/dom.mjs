// dom.mjs — the page's DOM agent (docs/protocol.md "DOM"): answers the
// Runtime union's dom* methods and sends the page's mutations as dom.event
// frames. Shipped inside client.js only (build.mjs inlines it); the tests
// import it directly.
//
// Costs nothing until used: client.js constructs no agent, walks no node
// and observes nothing until the worker sends the first dom* command for a
// window (a window expanded this page's document, or revealed one of its
// nodes). The MutationObserver runs while some session holds nodes whose
// children it was sent, and is disconnected when the last one goes
// (domDisable: the window closed, disabled DOM or asked for a new document).
//
// Node ids are per DevTools session and per document epoch (`doc`, given
// by the worker): the page's document is always 1; a command with a new doc
// drops the session's old table first. The worker maps these ids into its
// window's namespace; a page never sees another page's ids.
//
// Mutations are coalesced: records mark what changed (a parent's children,
// an element's attribute, a text node), and a flush at most every FLUSH_MS
// compares each changed parent's children with the list the session was
// last sent and sends the difference (removals first, then insertions in
// order), then the attributes' and texts' current values. So a burst of any
// size costs one pass over what it touched, and what a window shows always
// converges to the page's DOM. A command flushes first, so its answer
// follows the events before it. Overflow policy: a flush with more than
// MAX_EVENTS_PER_FLUSH events for a session sends that session one
// documentUpdated instead and forgets its table (the window asks for the
// document again).
//
// Like Chrome's Elements panel, whitespace-only text nodes are not shown.
//
// Shadow roots and <template> contents (shadow.mjs) are nodes of the same
// session table: described on their host (`shadowRoots`, `templateContent`)
// and observed by the same MutationObserver, one observe() call per root or
// content a window was sent. A root attached to a host the window holds
// goes as shadowRootPushed in the next flush. The DOM has no way to detach
// a shadow root, so shadowRootPopped is never sent: a host that goes takes
// its root with it (childNodeRemoved).
//
// A same-origin <iframe>'s document is its `contentDocument`, in the same
// table, observed too. When the frame loads another document (a `load`
// event on the owner, caught in the capture phase of each document the
// window was sent), the owner goes out and in again with its new document,
// as Chrome's InvalidateFrameOwnerElement does.
import { capString, measureJSON, MAX_FRAME_OBJECTS, MAX_DEPTH } from './core.mjs';
import { OWN, Overlay, boxModel } from './overlay.mjs';
import { HOOKS, TEMPLATE_OF, rootOf, contentOf, frameDocOf, up, inTree } from './shadow.mjs';
import { search, outerHTML, parts, parseAttributes } from './domread.mjs';
import { cssCommand } from './css.mjs';
import { forgetForced } from './cssforce.mjs';
import { place, locate, classNames } from './domedit.mjs';

/** The coalescing window: mutations are sent at most this often per page. */
export const FLUSH_MS = 50;
/** Events one flush may send a session; past it, documentUpdated (see above). */
export const MAX_EVENTS_PER_FLUSH = 2000;
/** sourceproto.MaxDOMEvents: events in one dom.event frame. */
export const MAX_EVENTS_PER_FRAME = 512;
/** Node ids one session may hold in this page; past it the session is reset. */
export const MAX_NODES_PER_SESSION = 100000;
/** The deepest subtree one answer describes (depth -1 included). */
export const MAX_DESCRIBE_DEPTH = 16;
/** Bytes of one text or attribute value sent (Chrome sends all; one JSON string is bounded by MaxStringBytes). */
export const MAX_TEXT = 16384;
/**
 * Searches a session keeps: the frontend searches as the user types and may
 * still ask for an earlier one's results; older ones are forgotten.
 */
export const MAX_SEARCHES_PER_SESSION = 4;
/**
 * Ids a session may hold for nodes only DOM.describeNode named (no list the
 * window holds has them, so no removal frees them): past it the oldest are
 * forgotten before the next describeNode. Without it 10,000 nodes described
 * and removed held 10,000 ids and their detached nodes
 * (TestDOMDescribedNodesFreed). A forgotten id's node is gone for the
 * window (pushNodesByBackendIdsToFrontend answers 0).
 */
export const MAX_LOOSE_NODES = 1000;
/** The page document's id in every session. */
export const DOCUMENT_ID = 1;
/** What the MutationObserver watches, in the document and in each root. */
const OBSERVED = { childList: true, subtree: true, attributes: true, characterData: true };

const G = /** @type {any} */ (globalThis);

/**
 * An error a person can act on (runtime.mjs's TransportFailure shape).
 */
export class DOMFailure extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) { super(message); this.code = code; this.transport = true; }
}

/**
 * @typedef {object} Session one DevTools session's view of this page
 * @property {number} doc the worker's document epoch
 * @property {Map<Node, number>} ids
 * @property {Map<number, Node>} nodes
 * @property {Map<number, number[]>} kids the children each parent was sent, in order
 * @property {Map<number, number>} counts the child count a node was sent with, while its children were not
 * @property {number} next
 * @property {Map<string, Node[]>} searches the last searches' nodes, oldest first
 * @property {Set<number>} loose ids only describeNode answers named, oldest first (MAX_LOOSE_NODES)
 * @property {Map<number, Document>} frames the document each frame owner was sent with
 */

/**
 * @typedef {object} AgentOptions
 * @property {(type: string, json: string) => boolean} send writes one producer → worker frame
 * @property {(fn: () => void, ms: number) => any} [timer] setTimeout
 * @property {any} [document] the page's document (tests pass their own)
 * @property {(cb: MutationCallback) => MutationObserver} [observe] makes the observer (default: the page's MutationObserver)
 * @property {(fn: () => void) => any} [frame] requestAnimationFrame (overlay.mjs)
 */

export class DOMAgent {
  /** @param {AgentOptions} o */
  constructor(o) {
    this.sendFn = o.send;
    this.timer = o.timer || ((/** @type {() => void} */ fn, /** @type {number} */ ms) => G.setTimeout(fn, ms));
    this.doc = o.document || G.document;
    this.makeObserver = o.observe || ((/** @type {MutationCallback} */ cb) => new G.MutationObserver(cb));
    /** @type {Map<string, Session>} */
    this.sessions = new Map();
    /** @type {MutationObserver|null} */
    this.observer = null;
    /** @type {Set<Node>} parents whose children changed */
    this.dirty = new Set();
    /** @type {Map<Node, Set<string>>} */
    this.attrs = new Map();
    /** @type {Set<Node>} */
    this.texts = new Set();
    /** @type {Set<Element>} hosts that got a shadow root since the last flush */
    this.attached = new Set();
    /** @type {Set<Element>} frame owners that loaded a document since the last flush */
    this.loaded = new Set();
    /** @param {Event} e */
    this.onFrameLoad = (e) => {
      const t = /** @type {any} */ (e.target);
      if (!this.observer || !t || (t.localName !== 'iframe' && t.localName !== 'frame')) return;
      this.loaded.add(t);
      this.schedule();
    };
    this.scheduled = false;
    // Counters for stats().
    this.flushes = 0;
    this.events = 0;
    this.overflows = 0;
    this.observers = 0;
    this.maxFlush = 0; // the most events one flush sent one session
    this.frame = o.frame;
    /** @type {Overlay|null} highlight and $0 (overlay.mjs), made on first use */
    this.overlayAgent = null;
  }

  /** The overlay, made on first use. */
  overlay() {
    if (!this.overlayAgent) this.overlayAgent = new Overlay({ document: this.doc, frame: this.frame });
    return this.overlayAgent;
  }

  /**
   * The user picked el in inspect mode: the window hears its id
   * (inspectNodeRequested) and asks for its path (domPush).
   * @param {string} session @param {Element} el
   */
  picked(session, el) {
    this.flush(); // the window's tree first, then the pick
    const s = this.sessions.get(session);
    if (!s) return;
    let id;
    try { id = this.idOf(s, el); } catch (e) { return; } // over MAX_NODES_PER_SESSION: the click picks nothing
    this.sendEvents(session, s.doc, [{ kind: 'inspectNodeRequested', node: id }]);
  }

  /**
   * Inspect mode's pointer is over el: the window gets its path, then
   * nodeHighlightRequested, so its tree follows the pointer as Chrome's.
   * @param {string} session @param {Element} el
   */
  hovered(session, el) {
    this.flush();
    const s = this.sessions.get(session);
    if (!s) return;
    /** @type {any[]} */
    const children = [];
    let id;
    try { id = this.pushPath(s, el, children); } catch (e) { return; } // over MAX_NODES_PER_SESSION
    if (children.length) this.observe();
    const events = children.map((c) => ({ kind: 'setChildNodes', parent: c.parent, nodes: c.nodes }));
    if (id) events.push({ kind: 'nodeHighlightRequested', node: id });
    if (events.length) this.sendEvents(session, s.doc, events);
  }

  /**
   * A shadow root was attached to host (shadow.mjs): sessions that hold
   * the host get shadowRootPushed in the next flush.
   * @param {Element} host
   */
  hostAttached(host) {
    if (OWN.has(host)) return; // the overlay's own root
    this.attached.add(host);
    this.schedule();
  }

  /** $0…$4 of session (none before the window selected a node). @param {string} session */
  inspected(session) { return this.overlayAgent ? this.overlayAgent.inspected(session) : []; }

  /** Counters for tests and __inspectorWorkerClient.stats(). */
  stats() {
    let nodes = 0;
    for (const s of this.sessions.values()) nodes += s.nodes.size;
    return { observing: !!this.observer, sessions: this.sessions.size, nodes, flushes: this.flushes, events: this.events, overflows: this.overflows, observers: this.observers, maxFlush: this.maxFlush, overlay: this.overlayAgent ? this.overlayAgent.stats() : null };
  }

  /** A new generation (or none): every session's table is gone. */
  reset() {
    this.sessions.clear();
    forgetForced(this);
    this.stopObserving();
    if (this.overlayAgent) for (const name of [...this.overlayAgent.selected.keys(), this.overlayAgent.owner, this.overlayAgent.picker]) this.overlayAgent.forget(name);
  }

  /**
   * Runs one dom* command of session; returns its result member.
   * @param {string} session
   * @param {string} method
   * @param {any} p the params (sourceproto.DOMParams)
   * @param {(session: string, h: string) => any} lookup the value behind a Runtime handle
   */
  command(session, method, p, lookup) {
    if (typeof p.doc !== 'number' || !(p.doc > 0)) throw new DOMFailure('invalid-argument', 'a DOM command needs doc');
    if (method === 'domDisable') {
      const old = this.sessions.get(session);
      if (old && old.doc === p.doc) this.sessions.delete(session);
      forgetForced(this); // its forced :hover and the like go with it
      if (!this.sessions.size) this.stopObserving();
      if (this.overlayAgent && (!old || old.doc === p.doc)) this.overlayAgent.forget(session);
      return {};
    }
    this.flush();
    const s = this.session(session, p.doc);
    switch (method) {
      case 'domChildren': {
        const n = this.node(s, p.node);
        this.observe();
        return { children: [{ parent: p.node, nodes: this.childList(s, n, depthOf(p.depth, 1), !!p.pierce) }] };
      }
      case 'domDescribe':
        this.trimLoose(s);
        return { node: this.describe(s, this.target(s, p, session, lookup), depthOf(p.depth, 0), false, !!p.pierce) };
      case 'domPush': return this.push(s, p, session, lookup);
      case 'domOuterHTML': return { html: parts(outerHTML(this.target(s, p, session, lookup))) };
      case 'domEdit': {
        this.edit(s, p);
        this.flush(); // the edit's events go before its answer
        return {};
      }
      case 'domSearch': {
        const nodes = search(this.doc, String(p.text));
        s.searches.delete(p.search);
        while (s.searches.size >= MAX_SEARCHES_PER_SESSION) s.searches.delete(/** @type {string} */ (s.searches.keys().next().value));
        s.searches.set(p.search, nodes);
        return nodes.length ? { count: nodes.length } : {};
      }
      case 'domBox': return { box: boxModel(this.target(s, p, session, lookup)) };
      case 'domOverlay': {
        const o = this.overlay();
        if (p.overlay === 'hide') o.hide(session);
        else if (p.overlay === 'highlight') o.highlight(session, this.target(s, p, session, lookup));
        else if (p.overlay === 'inspect') o.inspect(session, this.target(s, p, session, lookup));
        else if (p.overlay === 'pick') o.pick(session, (name, el) => this.picked(name, el), (name, el) => this.hovered(name, el));
        else if (p.overlay === 'unpick') o.unpick(session);
        else if (p.overlay === 'rect') o.rect(session, p.rect, p.colors);
        else throw new DOMFailure('invalid-argument', 'overlay ' + p.overlay);
        return {};
      }
      case 'domResults': {
        const found = s.searches.get(p.search);
        if (!found) throw new DOMFailure('no-such-handle', 'search ' + p.search + ' is gone (the page keeps the last ' + MAX_SEARCHES_PER_SESSION + '): search again');
        /** @type {any[]} */
        const children = [];
        const nodes = found.slice(p.from, p.to).map((n) => this.pushPath(s, n, children));
        if (!nodes.length) throw new DOMFailure('invalid-argument', 'the search found ' + found.length + ' nodes');
        if (children.length) this.observe();
        return children.length ? { nodes, children } : { nodes };
      }
      case 'domCSS': return cssCommand(this, s, p);
      case 'domPlace': return place(this, s, p);
      case 'domLocate': return locate(this, s, p);
      case 'domClasses': return classNames(this, s, p);
    }
    throw new DOMFailure('unsupported', 'method ' + method + ' is not in the page DOM agent');
  }

  /**
   * The node a domResolve names.
   * @param {string} session @param {any} p
   */
  resolve(session, p) {
    this.flush();
    return this.node(this.session(session, p.doc), p.node);
  }

  // -------------------------------------------------------------------------
  // Sessions and ids

  /** @param {string} name @param {number} doc */
  session(name, doc) {
    let s = this.sessions.get(name);
    if (!s || s.doc !== doc) {
      s = { doc, ids: new Map(), nodes: new Map(), kids: new Map(), next: DOCUMENT_ID + 1, searches: new Map(), counts: new Map(), loose: new Set(), frames: new Map() };
      s.ids.set(this.doc, DOCUMENT_ID);
      s.nodes.set(DOCUMENT_ID, this.doc);
      this.sessions.set(name, s);
      forgetForced(this); // the session's earlier document's states
    }
    return s;
  }

  /** @param {Session} s @param {Node} n */
  idOf(s, n) {
    let id = s.ids.get(n);
    if (id) return id;
    if (s.nodes.size >= MAX_NODES_PER_SESSION) {
      throw new DOMFailure('too-large', 'this window holds ' + MAX_NODES_PER_SESSION + ' nodes of the page (MAX_NODES_PER_SESSION): collapse the tree or reopen the Elements panel');
    }
    id = s.next++;
    s.ids.set(n, id);
    s.nodes.set(id, n);
    return id;
  }

  /** Forgets the oldest loose ids past MAX_LOOSE_NODES. @param {Session} s */
  trimLoose(s) {
    for (const id of s.loose) {
      if (s.loose.size <= MAX_LOOSE_NODES) break;
      s.loose.delete(id);
      const n = s.nodes.get(id);
      if (n) this.unbind(s, n);
    }
  }

  /** @param {Session} s @param {unknown} id */
  node(s, id) {
    const n = typeof id === 'number' ? s.nodes.get(id) : undefined;
    if (!n) throw new DOMFailure('no-such-handle', 'no node with id ' + id + ' in this page for this window (removed from the page, or never sent)');
    return n;
  }

  /**
   * The node a command names by id or by Runtime handle.
   * @param {Session} s @param {any} p @param {string} session
   * @param {(session: string, h: string) => any} lookup
   */
  target(s, p, session, lookup) {
    if (p.node) return this.node(s, p.node);
    const v = lookup(session, p.handle);
    if (!isNode(v)) throw new DOMFailure('invalid-argument', 'the object is not a DOM node');
    return v;
  }

  /**
   * Forgets n and every descendant the session knows (its shadow root and
   * template content included). @param {Session} s @param {Node} n
   */
  unbind(s, n) {
    const id = s.ids.get(n);
    if (!id) return;
    s.ids.delete(n);
    s.nodes.delete(id);
    s.loose.delete(id);
    s.counts.delete(id);
    const kids = s.kids.get(id);
    s.kids.delete(id);
    if (kids) for (const k of kids) { const c = s.nodes.get(k); if (c) this.unbind(s, c); }
    const root = rootOf(n);
    if (root) this.unbind(s, root);
    const content = contentOf(n);
    if (content) this.unbind(s, content);
    const frame = s.frames.get(id);
    s.frames.delete(id);
    if (frame) this.unbind(s, frame);
  }

  // -------------------------------------------------------------------------
  // Describing nodes

  /**
   * A node's children, described to depth, recorded as sent.
   * @param {Session} s @param {Node} n @param {number} depth @param {boolean} [pierce]
   */
  childList(s, n, depth, pierce = false) {
    const out = [];
    const ids = [];
    for (const c of shown(n)) {
      const d = this.describe(s, c, depth - 1, true, pierce);
      out.push(d);
      ids.push(d.nodeId);
    }
    const id = this.idOf(s, n);
    s.kids.set(id, ids);
    s.counts.delete(id);
    return out;
  }

  /**
   * CDP's DOM.Node for n, with children to depth (recorded as sent when
   * record: describeNode sends nothing the window keeps). A shadow root
   * and a template's content come with their element as Chrome sends them:
   * unexpanded unless pierce (then the root to depth - 1: each level of
   * nesting is one level of the frame's JSON depth too); the content
   * always unexpanded.
   * @param {Session} s @param {Node} n @param {number} depth @param {boolean} record @param {boolean} [pierce]
   * @returns {Record<string, any>}
   */
  describe(s, n, depth, record, pierce = false) {
    const a = /** @type {any} */ (n);
    /** @type {Record<string, any>} */
    const known = s.ids.has(n);
    const d = { nodeId: this.idOf(s, n), nodeType: a.nodeType, nodeName: a.nodeName };
    // A node sent in a list is freed when it leaves it; one only described
    // is loose until then (trimLoose).
    if (record) s.loose.delete(d.nodeId);
    else if (!known) s.loose.add(d.nodeId);
    if (a.localName) d.localName = a.localName;
    if (a.nodeType === 3 || a.nodeType === 4 || a.nodeType === 7 || a.nodeType === 8) d.nodeValue = capString(String(a.nodeValue), MAX_TEXT);
    if (a.nodeType === 1) {
      const attrs = [];
      for (const at of a.attributes) attrs.push(at.name, capString(at.value, MAX_TEXT));
      if (attrs.length) d.attributes = attrs;
      const root = OWN.has(a) ? null : rootOf(a);
      if (root) {
        d.shadowRoots = [this.describe(s, root, pierce && depth > 0 ? depth - 1 : 0, record, pierce)];
        if (record) this.watch(root);
      }
      const content = contentOf(a);
      if (content) {
        TEMPLATE_OF.set(content, a);
        d.templateContent = this.describe(s, content, 0, record, pierce);
        if (record) this.watch(content);
      }
      const frame = frameDocOf(a);
      if (frame) {
        d.contentDocument = this.describe(s, frame, pierce && depth > 0 ? depth - 1 : 0, record, pierce);
        if (record) {
          s.frames.set(d.nodeId, frame);
          this.watch(frame);
        }
      }
    } else if (a.nodeType === 11) {
      if (a.host && (a.mode === 'open' || a.mode === 'closed')) d.shadowRootType = a.mode;
    } else if (a.nodeType === 9) {
      d.documentURL = String(a.URL || '');
      d.baseURL = String(a.baseURI || '');
    } else if (a.nodeType === 10) {
      d.publicId = a.publicId || '';
      d.systemId = a.systemId || '';
    }
    const kids = shown(n);
    if (kids.length) d.childNodeCount = kids.length;
    // As Chrome does: an element's only text child comes with it, so the
    // tree shows <h1>Title</h1> on one line without asking.
    if (depth === 0 && record && kids.length === 1 && kids[0].nodeType === 3 && a.nodeType === 1) depth = 1;
    if (depth !== 0 && kids.length) {
      if (record) d.children = this.childList(s, n, depth, pierce);
      else d.children = kids.map((c) => this.describe(s, c, depth - 1, false, pierce));
    } else if (record) s.counts.set(d.nodeId, kids.length);
    return d;
  }

  /**
   * Observes a shadow root, template content or frame's document the
   * window was sent (the document's observer does not see inside them);
   * a document's frames' loads too.
   * @param {Node} root
   */
  watch(root) {
    this.observe();
    /** @type {MutationObserver} */ (this.observer).observe(root, OBSERVED);
    if (root.nodeType === 9) root.addEventListener('load', this.onFrameLoad, true);
  }

  /**
   * domPush: makes nodes known to the window with every ancestor on the
   * way (one setChildNodes per parent not yet sent), as Chrome's
   * requestNode does. Unknown or detached nodes are 0.
   * @param {Session} s @param {any} p @param {string} session
   * @param {(session: string, h: string) => any} lookup
   */
  push(s, p, session, lookup) {
    /** @type {any[]} */
    const children = [];
    const list = p.handle ? [this.target(s, p, session, lookup)] : p.nodes.map((/** @type {number} */ id) => s.nodes.get(id));
    const nodes = list.map((/** @type {Node|undefined} */ n) => (n ? this.pushPath(s, n, children) : 0));
    if (children.length) this.observe();
    return children.length ? { nodes, children } : { nodes };
  }

  /**
   * Through shadow roots (host, then root), template contents and
   * same-origin frames (owner, then document) too. A node the window
   * cannot be sent is 0: in our overlay, in a closed root made before the
   * client loaded, or in the content of a template not described yet.
   * @param {Session} s @param {Node} n @param {any[]} children
   */
  pushPath(s, n, children) {
    if (n === this.doc) return DOCUMENT_ID;
    const path = [];
    let top = n;
    for (let a = up(n); a; a = up(a)) { path.unshift(a); top = a; }
    if (top !== this.doc || OWN.has(n)) return 0;
    for (const a of path) {
      // A root or content is sent with its element (the step before).
      if (OWN.has(a) || ((a.nodeType === 11 || (a.nodeType === 9 && a !== this.doc)) && !s.ids.has(a))) return 0;
      const id = this.idOf(s, a);
      if (s.kids.has(id)) continue;
      children.push({ parent: id, nodes: this.childList(s, a, 1) });
    }
    const id = s.ids.get(n);
    if (n.nodeType === 11 || n.nodeType === 9) return id || 0;
    // A whitespace-only text node is in no list the window holds.
    const siblings = s.kids.get(/** @type {number} */ (s.ids.get(/** @type {Node} */ (n.parentNode))));
    return id && siblings && siblings.includes(id) ? id : 0;
  }

  // -------------------------------------------------------------------------
  // Edits

  /** @param {Session} s @param {any} p */
  edit(s, p) {
    const n = /** @type {any} */ (this.node(s, p.node));
    const el = () => {
      if (n.nodeType !== 1) throw new DOMFailure('invalid-argument', 'node ' + p.node + ' is not an element');
      return n;
    };
    try {
      switch (p.edit) {
        case 'setAttributeValue': el().setAttribute(p.name, p.value || ''); return;
        case 'removeAttribute': el().removeAttribute(p.name); return;
        case 'setAttributesAsText': {
          const e = el();
          const parsed = parseAttributes(this.doc, p.text || '');
          if (p.name && !parsed.some((x) => x[0] === String(p.name).toLowerCase())) e.removeAttribute(p.name);
          for (const [k, v] of parsed) e.setAttribute(k, v);
          return;
        }
        case 'setNodeValue':
          if (n.nodeType !== 3 && n.nodeType !== 8 && n.nodeType !== 4) throw new DOMFailure('invalid-argument', 'node ' + p.node + ' has no value to set (not text or a comment)');
          n.nodeValue = p.value || '';
          return;
        case 'removeNode':
          if (n.nodeType === 9) throw new DOMFailure('invalid-argument', 'a document cannot be removed');
          if (n.nodeType === 11) throw new DOMFailure('invalid-argument', 'a shadow root or template content cannot be removed (remove its element)');
          n.parentNode && n.parentNode.removeChild(n);
          return;
        case 'setOuterHTML':
          if (n === this.doc.documentElement || n.nodeType !== 1) throw new DOMFailure('invalid-argument', 'setOuterHTML works on elements below <html>');
          el().outerHTML = p.text || '';
          return;
      }
    } catch (e) {
      if (e instanceof DOMFailure) throw e;
      throw new DOMFailure('invalid-argument', 'the page refused the edit: ' + (e && /** @type {any} */ (e).message));
    }
    throw new DOMFailure('unsupported', 'edit ' + p.edit);
  }

  // -------------------------------------------------------------------------
  // Mutations

  observe() {
    if (this.observer) return;
    this.observer = this.makeObserver((records) => this.record(records));
    this.observers++;
    this.observer.observe(this.doc, OBSERVED);
    this.doc.addEventListener('load', this.onFrameLoad, true);
    HOOKS.add(this);
  }

  stopObserving() {
    if (!this.observer) return;
    this.observer.disconnect();
    this.observer = null;
    HOOKS.delete(this);
    // A frame document's listener stays with it, idle (onFrameLoad checks).
    this.doc.removeEventListener('load', this.onFrameLoad, true);
    this.loaded.clear();
    this.dirty.clear();
    this.attrs.clear();
    this.texts.clear();
    this.attached.clear();
  }

  /** A flush within FLUSH_MS, if none is due. */
  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    this.timer(() => { this.scheduled = false; this.flush(); }, FLUSH_MS);
  }

  /** @param {MutationRecord[]} records */
  record(records) {
    for (const r of records) {
      if (r.type === 'childList') this.dirty.add(r.target);
      else if (r.type === 'attributes') {
        let names = this.attrs.get(r.target);
        if (!names) this.attrs.set(r.target, (names = new Set()));
        names.add(/** @type {string} */ (r.attributeName));
      } else {
        this.texts.add(r.target);
        // A text node that becomes (or stops being) whitespace only
        // appears or disappears in its parent's list.
        if (r.target.parentNode) this.dirty.add(r.target.parentNode);
      }
    }
    this.schedule();
  }

  /** Sends what changed since the last flush to every session. */
  flush() {
    if (!this.observer) return;
    const pending = this.observer.takeRecords();
    if (pending.length) this.record(pending);
    if (!this.dirty.size && !this.attrs.size && !this.texts.size && !this.attached.size && !this.loaded.size) return;
    this.flushes++;
    for (const [name, s] of this.sessions) {
      let events;
      try {
        events = this.diff(s);
      } catch (e) {
        events = null; // over MAX_NODES_PER_SESSION
      }
      if (!events || events.length > MAX_EVENTS_PER_FLUSH) {
        this.overflows++;
        this.sessions.delete(name);
        forgetForced(this);
        this.sendEvents(name, s.doc, [{ kind: 'documentUpdated' }]);
        continue;
      }
      if (events.length) this.sendEvents(name, s.doc, events);
      if (events.length > this.maxFlush) this.maxFlush = events.length;
    }
    this.dirty.clear();
    this.attrs.clear();
    this.texts.clear();
    this.attached.clear();
    this.loaded.clear();
    if (!this.sessions.size) this.stopObserving();
  }

  /**
   * The events that bring session s up to date: removals, then insertions
   * in order, then attribute and text values.
   * @param {Session} s
   */
  diff(s) {
    /** @type {any[]} */
    const events = [];
    const lists = [];
    for (const parent of this.dirty) {
      const pid = s.ids.get(parent);
      if (!pid) continue;
      const known = s.kids.get(pid);
      const now = inTree(parent, this.doc) ? shown(parent) : [];
      if (!known) {
        // Only a count the window holds that changed (a text edit inside
        // marks the parent too).
        if (s.counts.get(pid) !== now.length) {
          s.counts.set(pid, now.length);
          events.push({ kind: 'childNodeCountUpdated', parent: pid, count: now.length });
        }
        continue;
      }
      const here = new Set(now);
      const kept = [];
      for (const id of known) {
        const c = s.nodes.get(id);
        if (c && here.has(c)) { kept.push(id); continue; }
        events.push({ kind: 'childNodeRemoved', parent: pid, node: id });
        if (c) this.unbind(s, c);
      }
      lists.push({ parent, pid, now, kept });
    }
    for (const { parent, pid, now, kept } of lists) {
      if (s.ids.get(parent) !== pid) continue; // removed above, with an ancestor
      // The children that stay where they were: the longest run of them in
      // their old order (a node moved within the parent is out and in
      // again, as a new node; the rest keep their ids).
      const at = new Map(kept.map((id, i) => [id, i]));
      const pos = now.map((c) => { const id = s.ids.get(c); const i = id === undefined ? undefined : at.get(id); return i === undefined ? -1 : i; });
      const stay = inOrder(pos);
      const ids = [];
      let prev = 0;
      now.forEach((c, i) => {
        const id = s.ids.get(c);
        if (id && stay.has(i)) { ids.push(id); prev = id; return; }
        if (pos[i] >= 0) { // the window has it here, out of order
          events.push({ kind: 'childNodeRemoved', parent: pid, node: /** @type {number} */ (id) });
          this.unbind(s, c);
        }
        const d = this.describe(s, c, 0, true);
        events.push({ kind: 'childNodeInserted', parent: pid, previous: prev, inserted: d });
        ids.push(d.nodeId);
        prev = d.nodeId;
      });
      s.kids.set(pid, ids);
    }
    for (const owner of this.loaded) this.frameLoaded(s, owner, events);
    for (const host of this.attached) {
      const hid = s.ids.get(host);
      const root = rootOf(host);
      if (hid && root && !s.ids.has(root) && inTree(host, this.doc)) {
        events.push({ kind: 'shadowRootPushed', parent: hid, inserted: this.describe(s, root, 0, true) });
        this.watch(root);
      }
    }
    for (const [n, names] of this.attrs) {
      const id = s.ids.get(n);
      if (!id) continue;
      for (const name of names) {
        const v = /** @type {any} */ (n).getAttribute(name);
        if (v === null) events.push({ kind: 'attributeRemoved', node: id, name });
        else events.push({ kind: 'attributeModified', node: id, name, value: capString(v, MAX_TEXT) });
      }
    }
    for (const n of this.texts) {
      const id = s.ids.get(n);
      if (id) events.push({ kind: 'characterDataModified', node: id, value: capString(String(/** @type {any} */ (n).nodeValue), MAX_TEXT) });
    }
    return events;
  }

  /**
   * A frame owner the session holds loaded another document: the owner
   * out and in again, with a new id and its new document (as Chrome).
   * @param {Session} s @param {Element} owner @param {any[]} events
   */
  frameLoaded(s, owner, events) {
    const id = s.ids.get(owner);
    if (!id || s.frames.get(id) === (frameDocOf(owner) || undefined)) return;
    const parent = up(owner);
    const pid = parent && s.ids.get(parent);
    const list = pid ? s.kids.get(pid) : undefined;
    const at = list ? list.indexOf(id) : -1;
    if (!pid || !list || at < 0) return; // not in a list the window holds
    events.push({ kind: 'childNodeRemoved', parent: pid, node: id });
    this.unbind(s, owner);
    const d = this.describe(s, owner, 0, true);
    events.push({ kind: 'childNodeInserted', parent: pid, previous: at > 0 ? list[at - 1] : 0, inserted: d });
    list[at] = d.nodeId;
  }

  /** @param {string} session @param {number} doc @param {any[]} events */
  sendEvents(session, doc, events) {
    this.events += events.length;
    for (let i = 0; i < events.length;) {
      let n = Math.min(MAX_EVENTS_PER_FRAME, events.length - i);
      for (;;) {
        const json = '{"session":' + JSON.stringify(session) + ',"doc":' + doc + ',"events":' + JSON.stringify(events.slice(i, i + n)) + '}';
        const m = measureJSON(json);
        if (n === 1 || (m.bytes < (1 << 20) - 4096 && m.objects < MAX_FRAME_OBJECTS - 8 && m.depth < MAX_DEPTH - 4)) {
          this.sendFn('dom.event', json);
          break;
        }
        n = n >> 1;
      }
      i += n;
    }
  }
}

/**
 * The indices of a longest strictly increasing run of positions (-1: not
 * a candidate), in O(n log n): the children that keep their place.
 * @param {number[]} pos
 * @returns {Set<number>}
 */
export function inOrder(pos) {
  /** @type {number[]} */
  const tails = []; // index into pos of the smallest tail of each run length
  const back = new Array(pos.length).fill(-1);
  for (let i = 0; i < pos.length; i++) {
    const p = pos[i];
    if (p < 0) continue;
    let lo = 0, hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pos[tails[mid]] < p) lo = mid + 1; else hi = mid;
    }
    if (lo > 0) back[i] = tails[lo - 1];
    tails[lo] = i;
  }
  const out = new Set();
  for (let i = tails.length ? tails[tails.length - 1] : -1; i >= 0; i = back[i]) out.add(i);
  return out;
}

/**
 * Whether v is a node of the page or of one of its same-origin frames
 * (a frame's nodes are instances of its own realm's Node).
 * @param {any} v
 */
function isNode(v) {
  try {
    if (!v || typeof v !== 'object' || typeof v.nodeType !== 'number') return false;
    if (G.Node && v instanceof G.Node) return true;
    const d = v.nodeType === 9 ? v : v.ownerDocument;
    const w = d && d.defaultView;
    return !!(w && w !== G && w.Node && v instanceof w.Node);
  } catch (e) { return false; }
}

/** @param {unknown} d @param {number} dflt */
function depthOf(d, dflt) {
  if (typeof d !== 'number' || d === 0) return dflt;
  if (d < 0 || d > MAX_DESCRIBE_DEPTH) return MAX_DESCRIBE_DEPTH;
  return d;
}

/**
 * The children the Elements panel shows: whitespace-only text left out.
 * @param {Node} n
 * @returns {Node[]}
 */
export function shown(n) {
  const out = [];
  for (let c = n.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3 && !/\S/.test(/** @type {any} */ (c).data)) continue;
    if (OWN.has(c)) continue; // the overlay's host (overlay.mjs)
    out.push(c);
  }
  return out;
}
