// overlay.mjs — the page's overlay (docs/agent-note.md "Elements"): the box
// model of an element (DOM.getBoxModel), the highlight a window draws over
// it (Overlay.highlightNode / hideHighlight) and the nodes a window selected
// ($0–$4, DOM.setInspectedNode). Made by the DOM agent (dom.mjs) on the
// first domBox or domOverlay command; shipped inside client.js only.
//
// The highlight is drawn in a closed shadow root of an element of our own,
// <inspector-worker-overlay>, appended to <html> while a highlight shows and
// removed when it goes: pointer-events none, position fixed over the
// viewport, the top z-index. OWN marks it: the DOM agent leaves it out of
// every list it sends a window (so it is in no tree, no mutation event, no
// search), as Chrome's overlay is in no page tree. While shown, the boxes
// follow the element once per animation frame (it may move, scroll or
// resize); nothing runs when nothing is highlighted.
import { OWN_LISTENERS } from './listeners.mjs';

/** The page's own nodes the DOM agent never shows (the overlay's host). */
export const OWN = new WeakSet();

/** The most recently selected nodes a session keeps: $0 to $4, as Chrome. */
export const MAX_INSPECTED = 5;

/** The overlay host's tag: a custom element name, so attachShadow works on it. */
export const OVERLAY_TAG = 'inspector-worker-overlay';

/** Chrome's default highlight colours (InspectorOverlayAgent's highlight config). */
const COLORS = {
  content: 'rgba(111, 168, 220, 0.66)',
  padding: 'rgba(147, 196, 125, 0.55)',
  border: 'rgba(255, 229, 153, 0.66)',
  margin: 'rgba(246, 178, 107, 0.66)',
};

const SVG = 'http://www.w3.org/2000/svg';

/** The user's input inspect mode keeps from the page (the click picks). */
const PICK_SWALLOWED = ['pointerdown', 'pointerup', 'mousedown', 'mouseup', 'dblclick', 'auxclick', 'contextmenu', 'touchstart', 'touchend'];

/**
 * An error a person can act on (dom.mjs's DOMFailure shape: runtime.mjs
 * reports its code and message).
 */
class OverlayFailure extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) { super(message); this.code = code; this.transport = true; }
}

/**
 * CDP's DOM.BoxModel of element el: quads in the page's CSS pixels relative
 * to the viewport (getBoundingClientRect's frame), clockwise from the top
 * left; width and height of the border box. Throws for a node without a
 * layout box, with Chrome's message.
 * @param {any} el
 */
export function boxModel(el) {
  if (!el || el.nodeType !== 1 || !el.isConnected || !el.getClientRects().length) {
    throw new OverlayFailure('invalid-argument', 'Could not compute box model (the node is not a rendered element).');
  }
  const r = el.getBoundingClientRect();
  const cs = el.ownerDocument.defaultView.getComputedStyle(el);
  /** @param {string} k */
  const px = (k) => parseFloat(cs.getPropertyValue(k)) || 0;
  /** @param {string} k @param {string} [suffix] */
  const side = (k, suffix = '') => ['top', 'right', 'bottom', 'left'].map((d) => px(k + '-' + d + suffix));
  const bw = side('border', '-width');
  const pad = side('padding');
  const mar = side('margin');
  // An element of a same-origin frame: its frame's viewport is where
  // the frame's content box is in the page's (Chrome gives main-frame
  // coordinates too).
  let dx = 0, dy = 0;
  try {
    for (let w = el.ownerDocument.defaultView; w && w.frameElement; w = w.parent) {
      const fe = w.frameElement;
      const fr = fe.getBoundingClientRect();
      const fs = fe.ownerDocument.defaultView.getComputedStyle(fe);
      dx += fr.left + (parseFloat(fs.borderLeftWidth) || 0) + (parseFloat(fs.paddingLeft) || 0);
      dy += fr.top + (parseFloat(fs.borderTopWidth) || 0) + (parseFloat(fs.paddingTop) || 0);
    }
  } catch (e) { /* a cross-origin parent: its offset is unknown */ }
  const border = [r.left + dx, r.top + dy, r.right + dx, r.bottom + dy];
  const padding = inset(border, bw);
  const content = inset(padding, pad);
  const margin = inset(border, mar.map((v) => -v));
  return {
    content: quad(content), padding: quad(padding), border: quad(border), margin: quad(margin),
    width: Math.round(r.width), height: Math.round(r.height),
  };
}

/** @param {number[]} b left, top, right, bottom @param {number[]} s top, right, bottom, left */
function inset(b, s) {
  return [b[0] + s[3], b[1] + s[0], Math.max(b[0] + s[3], b[2] - s[1]), Math.max(b[1] + s[0], b[3] - s[2])];
}

/** @param {number[]} b left, top, right, bottom */
function quad(b) { return [b[0], b[1], b[2], b[1], b[2], b[3], b[0], b[3]]; }

/**
 * @typedef {object} OverlayOptions
 * @property {any} document the page's document
 * @property {(fn: () => void) => any} [frame] requestAnimationFrame
 */

export class Overlay {
  /** @param {OverlayOptions} o */
  constructor(o) {
    this.doc = o.document;
    const w = this.doc.defaultView;
    this.frame = o.frame || ((/** @type {() => void} */ fn) => w.requestAnimationFrame(fn));
    /** @type {any} the highlighted element, null when none */
    this.target = null;
    /** @type {string} the session whose highlight shows */
    this.owner = '';
    /** @type {any} */
    this.host = null;
    /** @type {any} */
    this.parts = null;
    this.ticking = false;
    /** @type {Map<string, Node[]>} each session's selected nodes, newest first */
    this.selected = new Map();
    this.draws = 0;
    /** @type {string} the session in inspect mode ('' none) */
    this.picker = '';
    /** @type {((session: string, el: Element) => void)|null} */
    this.onPick = null;
    /** @type {((session: string, el: Element) => void)|null} */
    this.onHover = null;
    /** @type {number[]|null} the rectangle shown (Overlay.highlightRect), in place of a node's boxes */
    this.box = null;
    /** @type {(() => void)|null} removes inspect mode's listeners */
    this.unlisten = null;
  }

  /** Counters for stats(). */
  stats() { return { shown: !!this.host, draws: this.draws, selected: this.selected.size, picking: !!this.picker, rect: this.box }; }

  /**
   * Shows session's highlight of n (replacing any other).
   * @param {string} session @param {any} n
   */
  highlight(session, n) {
    // A document: its <html>; a shadow root: its host (as Chrome); text:
    // its element.
    if (!n || n.nodeType !== 1) n = n && n.nodeType === 9 ? n.documentElement : n && n.nodeType === 11 ? n.host : n && n.parentElement;
    if (!n) { // a template's content: nothing to draw, as Chrome draws nothing
      this.hide(session);
      return;
    }
    this.box = null;
    this.target = n;
    this.owner = session;
    this.mount();
    this.draw();
    if (!this.ticking) {
      this.ticking = true;
      this.frame(() => this.tick());
    }
  }

  /**
   * Shows session's rectangle (Overlay.highlightRect: x, y, width, height
   * in the viewport's CSS pixels, fill and outline colors) in place of any
   * highlight. It stays where it is put: nothing follows it.
   * @param {string} session @param {number[]} rect @param {string[]} colors
   */
  rect(session, rect, colors) {
    if (!Array.isArray(rect) || rect.length !== 4 || !rect.every((v) => typeof v === 'number' && isFinite(v))) {
      throw new OverlayFailure('invalid-argument', 'a rect is x, y, width, height');
    }
    this.target = null;
    this.owner = session;
    this.box = rect;
    this.mount();
    const parts = this.parts;
    this.draws++;
    const [x, y, w, h] = rect;
    for (const k in parts.paths) parts.paths[k].setAttribute('d', '');
    const p = parts.paths.content;
    p.setAttribute('d', 'M' + x + ' ' + y + 'h' + w + 'v' + h + 'h' + (-w) + 'Z');
    p.setAttribute('fill', colors && colors[0] ? colors[0] : 'transparent');
    p.setAttribute('stroke', colors && colors[1] ? colors[1] : 'transparent');
    parts.label.style.display = 'none';
  }

  /** Hides session's highlight (another session's stays). @param {string} session */
  hide(session) {
    if (this.owner !== session) return;
    this.box = null;
    this.target = null;
    this.owner = '';
    if (this.host) {
      if (this.host.parentNode) this.host.parentNode.removeChild(this.host);
      this.host = null;
      this.parts = null;
    }
  }

  /** A window's session went: its highlight, selection and inspect mode with it. @param {string} session */
  forget(session) {
    this.unpick(session);
    this.hide(session);
    this.selected.delete(session);
  }

  /**
   * Inspect mode for session (Overlay.setInspectMode): the element under
   * the pointer is highlighted; a click on it goes to onPick, and neither
   * it nor the presses and releases around it reach the page's handlers
   * (listeners in the capture phase on the window, which run before any
   * the page added on its document or elements; the page's own capturing
   * listeners on the window, if added earlier, still run). Only the user's
   * input (isTrusted) is taken: the page's own el.click() runs as ever.
   * The element under the pointer goes to onHover too (the window's tree
   * follows it: nodeHighlightRequested).
   * @param {string} session @param {(session: string, el: Element) => void} onPick
   * @param {(session: string, el: Element) => void} [onHover]
   */
  pick(session, onPick, onHover) {
    this.picker = session;
    this.onPick = onPick;
    this.onHover = onHover || null;
    if (this.unlisten) return;
    const w = this.doc.defaultView;
    /** @param {Event} e */
    const swallow = (e) => {
      if (!e.isTrusted) return;
      e.preventDefault();
      e.stopImmediatePropagation();
    };
    // The innermost element, inside open shadow roots too (a closed
    // root's content is hidden from the window's listeners: its host).
    /** @param {Event} e */
    const under = (e) => /** @type {any} */ ((e.composedPath && e.composedPath()[0]) || e.target);
    /** @param {Event} e */
    const move = (e) => {
      const t = under(e);
      if (!e.isTrusted || !t || t.nodeType !== 1 || OWN.has(t) || t === this.target) return;
      this.highlight(this.picker, t);
      if (this.onHover) this.onHover(this.picker, t);
    };
    /** @param {Event} e */
    const click = (e) => {
      if (!e.isTrusted) return;
      swallow(e);
      const t = under(e);
      if (t && t.nodeType === 1 && this.onPick) this.onPick(this.picker, t);
    };
    /** @type {Array<[string, (e: Event) => void]>} */
    const on = PICK_SWALLOWED.map((type) => [type, swallow]);
    on.push(['click', click], ['mousemove', move]);
    for (const [type, fn] of on) { OWN_LISTENERS.add(fn); w.addEventListener(type, fn, true); }
    this.unlisten = () => { for (const [type, fn] of on) w.removeEventListener(type, fn, true); };
  }

  /** Ends session's inspect mode and its hover highlight. @param {string} session */
  unpick(session) {
    if (this.picker !== session || !this.unlisten) return;
    this.unlisten();
    this.unlisten = null;
    this.onPick = null;
    this.onHover = null;
    this.picker = '';
    this.hide(session);
  }

  /** @param {string} session @param {Node} n */
  inspect(session, n) {
    const list = (this.selected.get(session) || []).filter((x) => x !== n);
    list.unshift(n);
    this.selected.set(session, list.slice(0, MAX_INSPECTED));
  }

  /** $0…$4 of session. @param {string} session */
  inspected(session) { return this.selected.get(session) || []; }

  tick() {
    if (!this.target) { this.ticking = false; return; }
    this.draw();
    this.frame(() => this.tick());
  }

  mount() {
    if (this.host) {
      if (!this.host.isConnected && this.doc.documentElement) this.doc.documentElement.appendChild(this.host);
      return;
    }
    const d = this.doc;
    const host = d.createElement(OVERLAY_TAG);
    OWN.add(host);
    host.setAttribute('style', 'all: initial !important; position: fixed !important; inset: 0 !important; ' +
      'pointer-events: none !important; z-index: 2147483647 !important; display: block !important;');
    const root = host.attachShadow({ mode: 'closed' });
    const svg = d.createElementNS(SVG, 'svg');
    svg.setAttribute('style', 'position: absolute; left: 0; top: 0; width: 100%; height: 100%; overflow: visible;');
    /** @type {Record<string, any>} */
    const paths = {};
    for (const k of ['margin', 'border', 'padding', 'content']) {
      const p = d.createElementNS(SVG, 'path');
      p.setAttribute('fill', /** @type {any} */ (COLORS)[k]);
      p.setAttribute('fill-rule', 'evenodd');
      svg.appendChild(p);
      paths[k] = p;
    }
    const label = d.createElement('div');
    label.setAttribute('style', 'position: absolute; font: 12px/1.4 system-ui, sans-serif; color: #222; background: #fff; ' +
      'border-radius: 3px; padding: 3px 6px; box-shadow: 0 1px 4px rgba(0,0,0,.3); white-space: nowrap;');
    const name = d.createElement('span');
    name.setAttribute('style', 'color: #881280; font-weight: bold;');
    const size = d.createElement('span');
    size.setAttribute('style', 'color: #555; margin-left: 8px;');
    label.append(name, size);
    root.append(svg, label);
    this.host = host;
    this.parts = { paths, label, name, size };
    if (d.documentElement) d.documentElement.appendChild(host);
  }

  draw() {
    const t = this.target;
    const parts = this.parts;
    if (!t || !parts) return;
    let m;
    try { m = boxModel(t); } catch (e) { m = null; }
    this.draws++;
    parts.label.style.display = m ? '' : 'none';
    if (!m) {
      for (const k in parts.paths) parts.paths[k].setAttribute('d', '');
      return;
    }
    /** @param {number[]} q */
    const path = (q) => 'M' + q[0] + ' ' + q[1] + 'L' + q[2] + ' ' + q[3] + 'L' + q[4] + ' ' + q[5] + 'L' + q[6] + ' ' + q[7] + 'Z';
    // Each box is a ring: its quad minus the one inside it (evenodd).
    parts.paths.margin.setAttribute('d', path(m.margin) + path(m.border));
    parts.paths.border.setAttribute('d', path(m.border) + path(m.padding));
    parts.paths.padding.setAttribute('d', path(m.padding) + path(m.content));
    parts.paths.content.setAttribute('d', path(m.content));
    parts.paths.content.setAttribute('fill', COLORS.content); // a rect (rect()) may have changed it
    parts.paths.content.removeAttribute('stroke');
    const r = t.getBoundingClientRect();
    parts.name.textContent = describe(t);
    parts.size.textContent = fmt(r.width) + ' × ' + fmt(r.height);
    // Below the element, or above it when that leaves the viewport.
    const vh = this.doc.documentElement.clientHeight || 0;
    const below = m.margin[5] + 6;
    parts.label.style.left = Math.max(0, m.border[0]) + 'px';
    parts.label.style.top = (below + 28 > vh && m.margin[1] > 34 ? m.margin[1] - 30 : below) + 'px';
  }
}

/** tag#id.class, as Chrome's label. @param {any} el */
function describe(el) {
  let s = String(el.localName || el.nodeName).toLowerCase();
  if (el.id) s += '#' + el.id;
  const cls = typeof el.className === 'string' ? el.className.trim().split(/\s+/).filter(Boolean) : [];
  if (cls.length) s += '.' + cls.slice(0, 3).join('.');
  return s.length > 80 ? s.slice(0, 79) + '…' : s;
}

/** @param {number} v */
function fmt(v) { return String(Math.round(v * 100) / 100); }
