// cssforce.mjs — forced states for the CSS agent (css.mjs):
// CSS.forcePseudoState in a page. Inlined into client.js after csstext.mjs.

import { MAX_RULES, failure, splitTop, flatten, groupHeader, unreadable } from './csstext.mjs';

const G = /** @type {any} */ (globalThis);

// Forced states (CSS.forcePseudoState). A page cannot set an element's
// :hover, so each readable style rule whose selector uses a forced
// pseudo-class is mirrored into a constructed sheet adopted by the
// document (never in the DOM tree, never listed as a sheet), with the
// pseudo-class replaced by a match on the forced elements: their
// positions from :root (":root > :nth-child(2) > :nth-child(1)"), under
// :where() so it counts nothing, then :not(.FORCED_NONE) for the
// pseudo-class's own (0,1,0). The mirror keeps the rule's @media,
// @supports, @layer and @container around it. It is rebuilt when a
// window forces or unforces, edits a rule, when the page's element tree
// changes (the positions move) and when a window goes.

/** The pseudo-classes a window may force (the Styles pane's :hov). */
export const FORCIBLE = ['active', 'focus', 'focus-within', 'focus-visible', 'hover', 'target', 'visited'];
/** A class no element has: :not() of it adds a pseudo-class's specificity. */
const FORCED_NONE = 'inspector-worker-forced-none';
/** The mirror sheets (left out of every list of the page's sheets). */
const forcedSheets = new WeakSet();

/** Whether sheet is a mirror sheet (never listed as the page's). @param {any} sheet */
export function isForcedSheet(sheet) { return forcedSheets.has(sheet); }

/**
 * @typedef {object} Forced the page's forced states, over every session
 * @property {Map<any, Map<any, string[]>>} by per session: element → states
 * @property {any} [sheet] the adopted mirror sheet
 * @property {any} [observer] watches the element tree while anything is forced
 * @property {string} [text] the mirror's text now
 */

/** @param {any} agent @returns {Forced} */
function forcedOf(agent) {
  if (!agent.forced) agent.forced = { by: new Map() };
  return agent.forced;
}

/**
 * Sets el's forced states for session s (states: comma-separated; none
 * clears them).
 * @param {any} agent @param {any} s @param {any} el @param {string} states
 */
export function forceStates(agent, s, el, states) {
  const list = states ? states.split(',') : [];
  for (const st of list) if (!FORCIBLE.includes(st)) throw failure('invalid-argument', 'cannot force :' + st + ' (only :' + FORCIBLE.join(', :') + ')');
  if (list.length && el.getRootNode() !== agent.doc) throw failure('invalid-argument', 'a state can be forced on an element of the document only (not inside a shadow root or detached)');
  const f = forcedOf(agent);
  let mine = f.by.get(s);
  if (!mine) f.by.set(s, (mine = new Map()));
  if (list.length) mine.set(el, list);
  else mine.delete(el);
  if (!mine.size) f.by.delete(s);
  refreshForced(agent);
}

/**
 * Forgets the forced states of sessions the agent no longer has (a window
 * went, or asked for a new document). dom.mjs calls it when it drops one.
 * @param {any} agent
 */
export function forgetForced(agent) {
  if (!agent.forced) return;
  const live = new Set(agent.sessions.values());
  for (const s of [...agent.forced.by.keys()]) if (!live.has(s)) agent.forced.by.delete(s);
  refreshForced(agent);
}

/**
 * What is forced now: each state's elements, and a test for selectors that
 * use one of them; null if nothing is.
 * @param {any} agent
 * @returns {{states: Map<string, any[]>, re: RegExp} | null}
 */
export function forcedNow(agent) {
  if (!agent.forced || !agent.forced.by.size) return null;
  /** @type {Map<string, any[]>} */
  const states = new Map();
  for (const mine of agent.forced.by.values()) {
    for (const [el, list] of mine) {
      if (!el.isConnected) continue;
      for (const st of list) {
        if (!states.has(st)) states.set(st, []);
        const els = /** @type {any[]} */ (states.get(st));
        if (!els.includes(el)) els.push(el);
      }
    }
  }
  if (!states.size) return null;
  return { states, re: new RegExp(':(' + [...states.keys()].join('|') + ')(?![\\w(-])') };
}

/** el's position from :root, as a selector. @param {any} el */
export function positionOf(el) {
  const parts = [];
  for (let n = el; n.parentElement; n = n.parentElement) {
    let i = 1;
    for (let c = n.previousElementSibling; c; c = c.previousElementSibling) i++;
    parts.unshift(':nth-child(' + i + ')');
  }
  return [':root', ...parts].join(' > ');
}

/**
 * sel with each forced pseudo-class replaced by a match on its elements.
 * @param {string} sel @param {{states: Map<string, any[]>}} forced
 */
export function substitute(sel, forced) {
  return sel.replace(new RegExp(':(' + [...forced.states.keys()].join('|') + ')(?![\\w(-])', 'g'),
    (_, st) => ':where(' + /** @type {any[]} */ (forced.states.get(st)).map(positionOf).join(', ') + '):not(.' + FORCED_NONE + ')');
}

/** The mirror sheet's text for what is forced now. @param {any} agent @param {{states: Map<string, any[]>, re: RegExp}} forced */
function mirrorText(agent, forced) {
  const out = [];
  const budget = { n: MAX_RULES };
  for (const sheet of [...agent.doc.styleSheets, ...(agent.doc.adoptedStyleSheets || [])]) {
    if (forcedSheets.has(sheet) || sheet.disabled || unreadable(sheet)) continue;
    for (const e of flatten(sheet, budget).entries) {
      const sels = splitTop(String(e.rule.selectorText), ',').map((p) => p.text.replace(/,$/, '').trim()).filter((x) => forced.re.test(x));
      if (!sels.length) continue;
      let text = sels.map((x) => substitute(x, forced)).join(', ') + ' { ' + e.rule.style.cssText + ' }';
      for (const g of e.groups) text = (groupHeader(g.rule) || '') + ' { ' + text + ' }';
      out.push(text);
    }
  }
  return out.join('\n');
}

/**
 * Brings the mirror sheet up to date (adopts it on the first forced
 * state, takes it away with the last).
 * @param {any} agent
 */
export function refreshForced(agent) {
  const f = agent.forced;
  if (!f) return;
  const doc = agent.doc;
  const forced = forcedNow(agent);
  if (!forced) {
    if (f.sheet) doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((/** @type {any} */ x) => x !== f.sheet);
    if (f.observer) f.observer.disconnect();
    agent.forced = undefined;
    return;
  }
  if (!G.CSSStyleSheet || !Array.isArray(doc.adoptedStyleSheets)) throw failure('unsupported', 'this browser has no constructed style sheets (adoptedStyleSheets): states cannot be forced');
  if (!f.sheet) {
    f.sheet = new G.CSSStyleSheet();
    forcedSheets.add(f.sheet);
  }
  if (!doc.adoptedStyleSheets.includes(f.sheet)) doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, f.sheet];
  if (!f.observer && G.MutationObserver) {
    let queued = false;
    f.observer = new G.MutationObserver(() => {
      if (queued) return;
      queued = true;
      queueMicrotask(() => { queued = false; if (agent.forced === f) refreshForced(agent); });
    });
    f.observer.observe(doc, { childList: true, subtree: true });
  }
  const text = mirrorText(agent, forced);
  if (text !== f.text) {
    f.sheet.replaceSync(text);
    f.text = text;
  }
}
