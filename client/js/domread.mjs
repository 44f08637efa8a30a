// domread.mjs — the DOM agent's reads of the page's DOM that keep no state
// (dom.mjs holds the sessions): Ctrl-F's search, a node's markup in parts,
// attributes typed as text. Shipped inside client.js only (build.mjs
// inlines it before dom.mjs); it runs against real pages in Chromium
// (cdpserver/dom_chromium_test.go, dom_trees_chromium_test.go).
import { OWN } from './overlay.mjs';
import { rootOf, frameDocOf } from './shadow.mjs';

/** Characters per outerHTML part (a part is one JSON string, under MaxStringBytes). */
export const HTML_PART = 8192;
/** Nodes one search keeps. */
export const MAX_SEARCH_RESULTS = 10000;

/**
 * DOM.performSearch in one page: a CSS selector's elements, an XPath's
 * nodes (a query starting with / or ( ), and nodes whose tag name,
 * attribute or text contains the query (case-insensitive), in the order
 * the tree shows them, each once, at most MAX_SEARCH_RESULTS. As Chrome:
 * the text search goes into shadow roots (open, and closed ones the client
 * saw) and same-origin frames, the selector into the frames' documents
 * too, the XPath runs on the page's document.
 * @param {any} doc @param {string} q
 * @returns {Node[]}
 */
export function search(doc, q) {
  /** @type {Set<Node>} */
  const hits = new Set();
  try { for (const el of doc.querySelectorAll(q)) hits.add(el); } catch (e) { /* not a selector */ }
  if (/^[/(]/.test(q)) {
    try {
      const r = doc.evaluate(q, doc, null, 7 /* ORDERED_NODE_SNAPSHOT_TYPE */, null);
      for (let i = 0; i < r.snapshotLength; i++) hits.add(r.snapshotItem(i));
    } catch (e) { /* not an XPath */ }
  }
  const text = q.toLowerCase();
  const tag = text.replace(/^<|>$/g, '');
  /** @type {Map<Node, number>} each node's place in the tree as shown */
  const order = new Map();
  /** @param {Node} top */
  const walk = (top) => {
    const walker = doc.createTreeWalker(top, 1 | 4 | 8 /* elements, text, comments */);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      order.set(n, order.size);
      if (n.nodeType === 1) {
        if (OWN.has(n)) continue;
        let hit = tag !== '' && n.nodeName.toLowerCase() === tag;
        for (const a of n.attributes) if (hit || a.name.toLowerCase().includes(text) || a.value.toLowerCase().includes(text)) { hit = true; break; }
        if (hit) hits.add(n);
        const root = rootOf(n);
        if (root) walk(root);
        const frame = frameDocOf(n);
        if (frame) {
          try { for (const el of frame.querySelectorAll(q)) hits.add(el); } catch (e) { /* not a selector */ }
          order.set(frame, order.size);
          walk(frame);
        }
      } else if (/\S/.test(n.data) && n.data.toLowerCase().includes(text)) hits.add(n);
    }
  };
  walk(doc);
  const out = [...hits].filter((n) => order.has(n) && !OWN.has(n));
  out.sort((a, b) => /** @type {number} */ (order.get(a)) - /** @type {number} */ (order.get(b)));
  return out.slice(0, MAX_SEARCH_RESULTS);
}

/**
 * n's markup (DOM.getOuterHTML): a document's children's, a shadow
 * root's children's (as Chrome).
 * @param {any} n
 */
export function outerHTML(n) {
  switch (n.nodeType) {
    case 1: return n.outerHTML;
    case 9: {
      let s = '';
      for (let c = n.firstChild; c; c = c.nextSibling) s += outerHTML(c);
      return s;
    }
    case 10: return '<!DOCTYPE ' + n.name + (n.publicId ? ' PUBLIC "' + n.publicId + '"' : '') + (n.systemId ? ' "' + n.systemId + '"' : '') + '>';
    case 8: return '<!--' + n.data + '-->';
    case 11: return n.innerHTML !== undefined ? n.innerHTML : ''; // a shadow root (as Chrome: its children's markup)
    default: return String(n.nodeValue || '');
  }
}

/** s in parts of HTML_PART characters. @param {string} s */
export function parts(s) {
  const out = [];
  for (let i = 0; i < s.length; i += HTML_PART) out.push(s.slice(i, i + HTML_PART));
  return out;
}

/**
 * Attributes typed as text (`a="1" b`), parsed inertly as the attributes
 * of an element in a template (no script runs, nothing loads).
 * @param {any} doc @param {string} text
 * @returns {Array<[string, string]>}
 */
export function parseAttributes(doc, text) {
  const t = doc.createElement('template');
  t.innerHTML = '<span ' + text + '></span>';
  const el = t.content.firstElementChild;
  /** @type {Array<[string, string]>} */
  const out = [];
  if (el) for (const a of el.attributes) out.push([a.name, a.value]);
  return out;
}
