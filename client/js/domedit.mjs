// domedit.mjs — the DOM agent's edits that make a node anew and its
// queries by point and by class (docs/agent-note.md "Elements"): domPlace
// (DOM.setNodeName, DOM.moveTo, DOM.copyTo), domLocate
// (DOM.getNodeForLocation) and domClasses (DOM.collectClassNamesFromSubtree).
// Shipped inside client.js (build.mjs inlines it before dom.mjs, which
// calls these with its agent and session: dom.mjs's DOMAgent and Session).
//
// As Chrome: an edit's node is a new node for the window (a moved node
// leaves its old list and enters its new one: childNodeRemoved, then
// childNodeInserted, as the mutation diff sends them), and the answer is
// its id with its path pushed (setChildNodes for each parent the window
// was not sent), as Chrome's PushNodePathToFrontend.
import { OWN } from './overlay.mjs';

/** sourceproto.MaxDOMClassNames: class names in one domClasses answer. */
export const MAX_CLASS_NAMES = 4096;
/** Elements one domClasses walk visits (a subtree past it answers what it saw). */
export const MAX_CLASS_WALK = 100000;

/**
 * An error the window reads (dom.mjs's DOMFailure shape: code, message,
 * transport).
 * @param {string} code @param {string} message
 */
function failure(code, message) {
  const e = /** @type {any} */ (new Error(message));
  e.code = code;
  e.transport = true;
  return e;
}

/**
 * domPlace: setNodeName, moveTo or copyTo of p.node; the edit's events go
 * first (the agent flushes), then the answer: the node's new id and the
 * setChildNodes of its path.
 * @param {any} agent dom.mjs's DOMAgent @param {any} s its Session @param {any} p DOMParams
 */
export function place(agent, s, p) {
  const n = /** @type {any} */ (agent.node(s, p.node));
  let made;
  try {
    if (p.edit === 'setNodeName') made = rename(agent.doc, n, String(p.name));
    else if (p.edit === 'moveTo' || p.edit === 'copyTo') made = moveOrCopy(agent, s, n, p);
    else throw failure('unsupported', 'domPlace edit ' + p.edit);
  } catch (e) {
    if (e && /** @type {any} */ (e).transport) throw e;
    throw failure('invalid-argument', 'the page refused the edit: ' + (e && /** @type {any} */ (e).message));
  }
  agent.flush(); // the edit's removals and insertions go before its answer
  /** @type {any[]} */
  const children = [];
  const id = agent.pushPath(s, made, children);
  if (children.length) agent.observe();
  if (!id) throw failure('invalid-argument', 'the ' + p.edit + ' was made, but its node is not in the page\'s document (whitespace-only text, or the page moved it at once)');
  return children.length ? { nodes: [id], children } : { nodes: [id] };
}

/**
 * The element n renamed (Chrome's DOMEditor: a new element of that name
 * with n's attributes and children takes n's place). The name of n
 * itself answers n.
 * @param {any} doc @param {any} n @param {string} name
 */
function rename(doc, n, name) {
  if (n.nodeType !== 1) throw failure('invalid-argument', 'only an element can be renamed (node is a ' + n.nodeName + ')');
  if (n === doc.documentElement) throw failure('invalid-argument', 'the <html> element cannot be renamed');
  if (n.nodeName.toLowerCase() === name.toLowerCase() && n.localName === name.toLowerCase()) return n;
  if (!n.parentNode) throw failure('invalid-argument', 'the element is not in the page');
  const el = n.namespaceURI && n.namespaceURI !== 'http://www.w3.org/1999/xhtml' ? doc.createElementNS(n.namespaceURI, name) : doc.createElement(name);
  for (const a of n.attributes) {
    if (a.namespaceURI) el.setAttributeNS(a.namespaceURI, a.name, a.value);
    else el.setAttribute(a.name, a.value);
  }
  while (n.firstChild) el.appendChild(n.firstChild);
  n.parentNode.replaceChild(el, n);
  return el;
}

/**
 * n (moveTo) or a deep copy of it (copyTo) put into p.nodes[0] before
 * p.nodes[1] (none: last).
 * @param {any} agent @param {any} s @param {any} n @param {any} p
 */
function moveOrCopy(agent, s, n, p) {
  const target = /** @type {any} */ (agent.node(s, p.nodes[0]));
  const before = p.nodes.length > 1 ? /** @type {any} */ (agent.node(s, p.nodes[1])) : null;
  if (n === agent.doc) throw failure('invalid-argument', 'the document cannot be moved or copied');
  if (target.nodeType !== 1 && target.nodeType !== 9 && target.nodeType !== 11) throw failure('invalid-argument', 'the target is a ' + target.nodeName + ', which has no children');
  if (before && before.parentNode !== target) throw failure('invalid-argument', 'insertBeforeNodeId is not a child of targetNodeId');
  const node = p.edit === 'copyTo' ? n.cloneNode(true) : n;
  if (node === before) return node; // already there
  target.insertBefore(node, before);
  return node;
}

/**
 * domLocate: the element at (p.x, p.y) of the page's viewport, as
 * document.elementsFromPoint sees it (pointer-events: none elements are
 * skipped, as Chrome's hit test does, unless ignorePointerEventsNone),
 * never the overlay's own element. The answer is its id with its path,
 * or nothing when no element is there.
 * @param {any} agent @param {any} s @param {any} p
 */
export function locate(agent, s, p) {
  const doc = agent.doc;
  const x = Number(p.x) || 0, y = Number(p.y) || 0;
  let sheet = null;
  if (p.ignorePointerEventsNone && doc.adoptedStyleSheets && typeof CSSStyleSheet === 'function') {
    // An adopted sheet, not a <style>: no node enters the page's tree (so
    // no mutation event), and it goes again before the page's next task.
    // The overlay's own element keeps its inline !important none.
    try {
      sheet = new CSSStyleSheet();
      sheet.replaceSync('* { pointer-events: auto !important; }');
      doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
    } catch (e) { sheet = null; }
  }
  let hit = null;
  try {
    for (const el of doc.elementsFromPoint(x, y)) {
      if (!ownOrInOwn(el)) { hit = el; break; }
    }
  } finally {
    if (sheet) doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((/** @type {any} */ x) => x !== sheet);
  }
  if (!hit) return {};
  /** @type {any[]} */
  const children = [];
  const id = agent.pushPath(s, hit, children);
  if (children.length) agent.observe();
  if (!id) return {};
  return children.length ? { nodes: [id], children } : { nodes: [id] };
}

/** @param {any} el */
function ownOrInOwn(el) {
  for (let n = el; n; n = n.parentNode || n.host) if (OWN.has(n)) return true;
  return false;
}

/**
 * domClasses: the class names of the elements in p.node's subtree (the
 * node included), each once, sorted, at most MAX_CLASS_NAMES.
 * @param {any} agent @param {any} s @param {any} p
 */
export function classNames(agent, s, p) {
  const root = /** @type {any} */ (agent.node(s, p.node));
  const names = new Set();
  const doc = agent.doc;
  const walker = doc.createTreeWalker(root, 1 /* elements */);
  let seen = 0;
  for (let el = root.nodeType === 1 ? root : walker.nextNode(); el && seen < MAX_CLASS_WALK; el = walker.nextNode(), seen++) {
    if (OWN.has(el)) continue;
    const list = el.classList;
    if (!list) continue;
    for (const c of list) {
      names.add(c);
      if (names.size >= MAX_CLASS_NAMES) return { classNames: [...names].sort() };
    }
  }
  return names.size ? { classNames: [...names].sort() } : {};
}
