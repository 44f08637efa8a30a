// css.mjs — the page's CSS agent (docs/protocol.md "DOM", member domCSS):
// matched, computed and inline styles of a node, a style sheet's text, and
// editing a rule's or an inline style's declarations, in CDP's CSS types.
// Part of the DOM agent (dom.mjs calls cssCommand with the session's node
// table), so it runs nothing until a window asks; shipped inside client.js
// (build.mjs inlines it before dom.mjs).
//
// The CSSOM keeps no source text or positions, so the text of a style
// sheet is the page's serialization of its rules, one rule per line
// (a grouping rule's header and its closing brace on lines of their own),
// and every range points into that text: a rule is named by its sheet and
// line, which is how setStyle finds it again. Style sheet ids are "s<n>"
// per session and document epoch, and "i<node>" for a node's inline style;
// the worker puts its window's namespace in front.
//
// Cross-origin sheets: the CSSOM refuses their rules (SecurityError), so
// they are announced by URL and their text is refused with that reason.

import { measureJSON, MAX_FRAME_OBJECTS } from './core.mjs';
import { MAX_RULES, failure, splitTop, specificity, styleJSON, textOf, setText, flatten, oneLine, groupHeader, unreadable } from './csstext.mjs';
import { forceStates, forcedNow, substitute, refreshForced, isForcedSheet } from './cssforce.mjs';
import { background, fonts } from './cssfont.mjs';
/** Characters of one style sheet's text sent (the rest is cut at a line). */
export const MAX_SHEET_TEXT = 262144;
/** Characters per text part (a part is one JSON string, under MaxStringBytes). */
export const TEXT_PART = 8192;
/** Ancestors whose rules an answer lists as inherited. */
export const MAX_INHERITED = 64;
/**
 * What a matched answer may take of a frame (half the default 1 MiB frame
 * and half its objects: the envelope and the worker's limits keep the rest).
 * Overflow policy: the farthest ancestors' inherited rules are left out
 * first, then the pseudo-elements'; past that the answer is refused.
 */
export const MATCHED_BUDGET = { bytes: 1 << 19, objects: MAX_FRAME_OBJECTS / 2 };

const G = /** @type {any} */ (globalThis);
/** The inspector sheets (newSheet): their rules' origin is "inspector". */
const inspectorSheets = new WeakSet();

/**
 * The CDP arrays of a rule's grouping rules (innermost first), and whether
 * its conditions hold now.
 * @param {string} id @param {{rule: any, line: number}[]} groups
 */
function conditions(id, groups) {
  /** @type {Record<string, any[]>} */
  const c = { media: [], supports: [], layers: [], containerQueries: [], ruleTypes: [] };
  let active = true;
  for (const { rule: g, line } of groups) {
    const q = groupJSON(id, g, line);
    if (!q) continue;
    active = active && q.on;
    c[q.kind].push(q.json);
    c.ruleTypes.push(q.type);
  }
  return { c, active };
}

/**
 * CDP's description of grouping rule g on line of sheet id (CSSMedia,
 * CSSSupports, CSSLayer, CSSContainerQuery), and whether its condition
 * holds now; null for other rules.
 * @param {string} id @param {any} g @param {number} line
 */
function groupJSON(id, g, line) {
  const head = groupHeader(g) || '';
  const text = head.replace(/^@[\w-]+\s*/, '');
  const range = { startLine: line, startColumn: head.length - text.length, endLine: line, endColumn: head.length };
  if (g.type === 4) {
    return { kind: 'media', type: 'MediaRule', on: !!G.matchMedia && G.matchMedia(g.media.mediaText).matches, json: { text: g.media.mediaText, source: 'mediaRule', styleSheetId: id, range } };
  }
  if (g.type === 12) {
    const on = !!G.CSS && G.CSS.supports(g.conditionText);
    return { kind: 'supports', type: 'SupportsRule', on, json: { text: g.conditionText, active: on, styleSheetId: id, range } };
  }
  if (G.CSSLayerBlockRule && g instanceof G.CSSLayerBlockRule) return { kind: 'layers', type: 'LayerRule', on: true, json: { text: g.name, styleSheetId: id, range } };
  if (G.CSSContainerRule && g instanceof G.CSSContainerRule) {
    // Whether a container query holds is not readable from the page: the
    // rule is listed as Chrome lists one that applies.
    return { kind: 'containerQueries', type: 'ContainerRule', on: true, json: { conditionText: g.conditionText, name: g.containerName || '', styleSheetId: id, range } };
  }
  return null;
}

/**
 * CDP's SelectorList of a rule whose selector text starts line (each
 * selector with its range, so the Styles pane can edit it).
 * @param {any} rule @param {number} line
 */
function selectorsJSON(rule, line) {
  const text = oneLine(String(rule.selectorText));
  const selectors = splitTop(text, ',').map((p) => {
    const t = p.text.replace(/,$/, '');
    const from = p.at + t.length - t.trimStart().length;
    return { text: t.trim(), range: { startLine: line, startColumn: from, endLine: line, endColumn: from + t.trim().length } };
  });
  return { selectors, text };
}

/**
 * CDP's CSSRule for an entry.
 * @param {string} id @param {Entry} e
 */
function ruleJSON(id, e) {
  /** @type {Record<string, any>} */
  const r = {
    styleSheetId: id, selectorList: selectorsJSON(e.rule, e.line),
    origin: inspectorSheets.has(e.rule.parentStyleSheet) ? 'inspector' : 'regular', style: styleJSON(id, e.line, e.start, textOf(e.rule.style)),
  };
  const { c } = conditions(id, e.groups);
  for (const k of Object.keys(c)) if (c[k].length) r[k] = c[k];
  return r;
}

/**
 * @typedef {object} CSSState a session's style sheets
 * @property {Map<any, string>} ids
 * @property {Map<string, any>} sheets
 * @property {number} next
 * @property {string} [inspector] the inspector sheet's id (newSheet)
 */

/** @param {any} s the DOM session */
function state(s) {
  if (!s.css) s.css = { ids: new Map(), sheets: new Map(), next: 1 };
  return /** @type {CSSState} */ (s.css);
}


/**
 * The document's sheets, with ids; headers of those new to the session.
 * @param {any} doc @param {any} s
 */
function sheets(doc, s) {
  const st = state(s);
  const all = [...doc.styleSheets, ...(doc.adoptedStyleSheets || [])].filter((x) => !isForcedSheet(x));
  const added = [];
  for (const sheet of all) {
    if (st.ids.has(sheet)) continue;
    const id = 's' + st.next++;
    st.ids.set(sheet, id);
    st.sheets.set(id, sheet);
    const owner = sheet.ownerNode;
    added.push({
      styleSheetId: id, frameId: '', sourceURL: sheet.href || String(doc.URL), origin: 'regular', title: sheet.title || '',
      disabled: !!sheet.disabled, hasSourceURL: false, isInline: !sheet.href && !!owner, isMutable: !unreadable(sheet),
      isConstructed: !owner, startLine: 0, startColumn: 0, length: 0, endLine: 0, endColumn: 0, loadingFailed: false,
    });
  }
  return { all, added };
}

/**
 * The rules matching el (and, apart, its ::before/::after/::marker), in
 * cascade order (least specific first, as CDP lists them).
 * @param {any} el @param {{id: string, e: Entry}[]} rules
 */
function matches(el, rules, forced) {
  /** @type {{m: any, key: number[]}[]} */
  const own = [];
  /** @type {Map<string, {m: any, key: number[]}[]>} */
  const pseudo = new Map();
  for (const { id, e } of rules) {
    const sels = splitTop(String(e.rule.selectorText), ',').map((p) => p.text.replace(/,$/, '').trim());
    const hit = [];
    /** @type {Map<string, number[]>} */
    const ph = new Map();
    let spec = 0;
    for (let i = 0; i < sels.length; i++) {
      const m = /::?(before|after|marker)$/.exec(sels[i]);
      const base = m ? sels[i].slice(0, m.index) || '*' : sels[i];
      let ok = false;
      try { ok = el.matches(base) || (!!forced && forced.re.test(base) && el.matches(substitute(base, forced))); } catch (err) { ok = false; }
      if (!ok) continue;
      spec = Math.max(spec, specificity(sels[i]));
      if (m) ph.set(m[1], [...(ph.get(m[1]) || []), i]);
      else hit.push(i);
    }
    if (!hit.length && !ph.size) continue;
    if (!conditions(id, e.groups).active) continue;
    // Layered rules lose to unlayered ones of the same origin.
    const key = [e.groups.some((g) => G.CSSLayerBlockRule && g.rule instanceof G.CSSLayerBlockRule) ? 0 : 1, spec, e.order];
    if (hit.length) own.push({ m: { rule: ruleJSON(id, e), matchingSelectors: hit }, key });
    for (const [type, idx] of ph) {
      if (!pseudo.has(type)) pseudo.set(type, []);
      /** @type {any[]} */ (pseudo.get(type)).push({ m: { rule: ruleJSON(id, e), matchingSelectors: idx }, key });
    }
  }
  /** @param {{m: any, key: number[]}[]} l */
  const sorted = (l) => l.sort((x, y) => x.key[0] - y.key[0] || x.key[1] - y.key[1] || x.key[2] - y.key[2]).map((x) => x.m);
  return { own: sorted(own), pseudo: [...pseudo].map(([type, l]) => ({ pseudoType: type, matches: sorted(l) })) };
}

/** @param {any} n */
function element(n) {
  if (!n || n.nodeType !== 1) throw failure('invalid-argument', 'styles are an element\'s: this node is not an element');
  return n;
}

/** Whether n is an element (other nodes have empty styles, as the frontend asks for them too). @param {any} n */
function isElement(n) { return !!n && n.nodeType === 1; }

/** An element's inline style. @param {any} el @param {number} id the page's node id */
function inline(el, id) {
  return styleJSON('i' + id, 0, 0, el.style ? textOf(el.style) : '');
}

/** @param {string} text */
function parts(text) {
  if (text.length > MAX_SHEET_TEXT) text = text.slice(0, text.lastIndexOf('\n', MAX_SHEET_TEXT) + 1);
  const out = [];
  for (let i = 0; i < text.length; i += TEXT_PART) out.push(text.slice(i, i + TEXT_PART));
  return out.length ? out : [''];
}

/**
 * Runs one domCSS command of DOM session s; returns the result member.
 * @param {any} agent the DOMAgent (node ids, the document)
 * @param {any} s the DOM session
 * @param {any} p the params (sourceproto.DOMParams)
 */
export function cssCommand(agent, s, p) {
  const doc = agent.doc;
  switch (p.css) {
    case 'matched': {
      const el = agent.node(s, p.node);
      if (!isElement(el)) return { css: { matched: { matchedCSSRules: [], pseudoElements: [], inherited: [] } } };
      const { all, added } = sheets(doc, s);
      const st = state(s);
      const budget = { n: MAX_RULES };
      /** @type {{id: string, e: Entry}[]} */
      const rules = [];
      for (const sheet of all) {
        if (sheet.disabled || unreadable(sheet)) continue;
        if (sheet.media && sheet.media.mediaText && G.matchMedia && !G.matchMedia(sheet.media.mediaText).matches) continue;
        const id = /** @type {string} */ (st.ids.get(sheet));
        for (const e of flatten(sheet, budget).entries) rules.push({ id, e });
      }
      rules.forEach((r, i) => { r.e.order = i; });
      const forced = forcedNow(agent);
      const m = matches(el, rules, forced);
      /** @type {Record<string, any>} */
      const out = { inlineStyle: inline(el, p.node), matchedCSSRules: m.own, pseudoElements: m.pseudo, inherited: [] };
      let up = el.parentElement;
      for (let i = 0; up && i < MAX_INHERITED; i++, up = up.parentElement) {
        /** @type {Record<string, any>} */
        const entry = { matchedCSSRules: matches(up, rules, forced).own };
        if (up.hasAttribute('style')) entry.inlineStyle = inline(up, agent.idOf(s, up));
        out.inherited.push(entry);
      }
      const answer = { css: added.length ? { sheets: added, matched: out } : { matched: out } };
      return withinBudget(answer, out);
    }
    case 'computed': {
      const n = agent.node(s, p.node);
      if (!isElement(n)) return { css: { computed: [] } };
      const cs = G.getComputedStyle(n);
      const computed = [];
      for (let i = 0; i < cs.length; i++) computed.push({ name: cs[i], value: cs.getPropertyValue(cs[i]) });
      return { css: { computed } };
    }
    case 'inline': {
      const n = agent.node(s, p.node);
      return isElement(n) ? { css: { inline: inline(n, p.node) } } : { css: {} };
    }
    case 'sheetText': {
      if (p.sheet[0] === 'i') return { css: { text: parts(textOf(element(agent.node(s, Number(p.sheet.slice(1)))).style)) } };
      const sheet = sheetOf(s, p.sheet);
      return { css: { text: parts(flatten(sheet, { n: MAX_RULES }).lines.join('\n')) } };
    }
    case 'setStyle': {
      const text = String(p.text || '');
      if (p.sheet[0] === 'i') {
        const id = Number(p.sheet.slice(1));
        const el = element(agent.node(s, id));
        setText(el.style, text);
        agent.flush(); // the style attribute's change goes before the answer
        return { css: { style: inline(el, id) } };
      }
      const sheet = sheetOf(s, p.sheet);
      const e = ruleAt(sheet, p.sheet, p.line || 0);
      setText(e.rule.style, text);
      refreshForced(agent);
      const again = flatten(sheet, { n: MAX_RULES }).entries.find((x) => x.rule === e.rule);
      if (!again) throw failure('invalid-argument', 'the rule is gone from style sheet ' + p.sheet);
      return { css: { style: styleJSON(p.sheet, again.line, again.start, textOf(again.rule.style)) } };
    }
    case 'newSheet': return newSheet(doc, s);
    case 'addRule': {
      const rule = addRule(sheetOf(s, p.sheet), p.sheet, p.line || 0, String(p.text || ''));
      refreshForced(agent);
      return { css: { rule } };
    }
    case 'setSelector': {
      const e = ruleAt(sheetOf(s, p.sheet), p.sheet, p.line || 0);
      const before = e.rule.selectorText;
      e.rule.selectorText = String(p.text || '');
      if (e.rule.selectorText === before && oneLine(String(p.text || '')).trim() !== before) {
        throw failure('invalid-argument', 'the page\'s CSS parser refused the selector ' + JSON.stringify(String(p.text || '').slice(0, 200)));
      }
      refreshForced(agent);
      return { css: { selectorList: selectorsJSON(e.rule, e.line) } };
    }
    case 'setMedia':
    case 'setSupports': {
      const sheet = sheetOf(s, p.sheet);
      const q = setCondition(sheet, p.sheet, p.line || 0, String(p.text || ''), p.css === 'setMedia' ? 4 : 12);
      refreshForced(agent);
      return { css: p.css === 'setMedia' ? { media: q } : { supports: q } };
    }
    case 'background': {
      const n = agent.node(s, p.node);
      return { css: { background: isElement(n) ? background(n) : {} } };
    }
    case 'fonts': {
      const n = agent.node(s, p.node);
      return isElement(n) ? { css: { fonts: fonts(agent.doc, n) } } : { css: {} };
    }
    case 'force': {
      forceStates(agent, s, element(agent.node(s, p.node)), String(p.text || ''));
      return { css: {} };
    }
  }
  throw failure('unsupported', 'css query ' + p.css + ' is not in the page CSS agent');
}

/**
 * The style rule on line of a sheet's text.
 * @param {any} sheet @param {string} id @param {number} line
 */
function ruleAt(sheet, id, line) {
  const e = flatten(sheet, { n: MAX_RULES }).entries.find((x) => x.line === line);
  if (!e) throw failure('invalid-argument', 'no style rule on line ' + line + ' of style sheet ' + id + ' (the page\'s rules changed): reselect the element');
  return e;
}

/**
 * Sets the condition of the @media (type 4) or @supports (type 12) rule
 * on line; answers its CSSMedia or CSSSupports. A media list is writable;
 * a @supports condition is not, so that rule is replaced by one with the
 * new condition and the same rules inside.
 * @param {any} sheet @param {string} id @param {number} line @param {string} text @param {number} type
 */
function setCondition(sheet, id, line, text, type) {
  /** @type {{rule: any, line: number} | undefined} */
  let found;
  const visit = (/** @type {any} */ list, /** @type {number} */ at) => {
    for (const r of list) {
      if (found) return at;
      if (at === line && r.type === type) { found = { rule: r, line: at }; return at; }
      if (r.cssRules && groupHeader(r) !== null && !(r.type === 1 && r.style)) at = visit(r.cssRules, at + 1) + 1;
      else at++;
    }
    return at;
  };
  visit(sheet.cssRules, 0);
  if (!found) throw failure('invalid-argument', 'no ' + (type === 4 ? '@media' : '@supports') + ' rule on line ' + line + ' of style sheet ' + id + ' (the page\'s rules changed): reselect the element');
  let g = found.rule;
  text = oneLine(text).trim();
  if (type === 4) {
    g.media.mediaText = text;
  } else {
    const parent = g.parentRule || g.parentStyleSheet;
    const index = [...parent.cssRules].indexOf(g);
    const inner = [...g.cssRules].map((r) => r.cssText).join('\n');
    parent.deleteRule(index);
    try {
      parent.insertRule('@supports ' + text + ' {\n' + inner + '\n}', index);
    } catch (e) {
      parent.insertRule(g.cssText, index);
      throw failure('invalid-argument', 'the page\'s CSS parser refused the condition ' + JSON.stringify(text.slice(0, 200)) + ': ' + String(/** @type {any} */ (e).message || e));
    }
    g = parent.cssRules[index];
  }
  const q = groupJSON(id, g, found.line);
  return q ? q.json : null;
}

/**
 * The session's inspector sheet (CSS.createStyleSheet): a constructed sheet
 * in document.adoptedStyleSheets, so it applies like the page's own and
 * never shows in the Elements tree (a <style> element would).
 * @param {any} doc @param {any} s
 */
function newSheet(doc, s) {
  const st = state(s);
  if (st.inspector) return { css: { sheet: st.inspector } };
  if (!G.CSSStyleSheet || !Array.isArray(doc.adoptedStyleSheets)) throw failure('unsupported', 'this browser has no constructed style sheets (adoptedStyleSheets): new rules cannot be added');
  const sheet = new G.CSSStyleSheet();
  inspectorSheets.add(sheet);
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  const id = 's' + st.next++;
  st.ids.set(sheet, id);
  st.sheets.set(id, sheet);
  st.inspector = id;
  const header = {
    styleSheetId: id, frameId: '', sourceURL: '', origin: 'inspector', title: '', disabled: false, hasSourceURL: false, isInline: false,
    isMutable: true, isConstructed: true, startLine: 0, startColumn: 0, length: 0, endLine: 0, endColumn: 0, loadingFailed: false,
  };
  return { css: { sheets: [header], sheet: id } };
}

/** Lines a rule takes in a sheet's text (flatten's layout). @param {any} r */
function linesOf(r) {
  if (r.type === 1 && r.style) return 1;
  if (r.cssRules && groupHeader(r) !== null) {
    let n = 2;
    for (const c of r.cssRules) n += linesOf(c);
    return n;
  }
  return 1;
}

/**
 * Inserts a style rule at the top level of sheet before the rule that
 * starts at or after line; answers it as CDP's CSSRule.
 * @param {any} sheet @param {string} id @param {number} line @param {string} text
 */
function addRule(sheet, id, line, text) {
  let index = 0;
  for (let at = 0; index < sheet.cssRules.length && at < line; index++) at += linesOf(sheet.cssRules[index]);
  try {
    sheet.insertRule(text, index);
  } catch (e) {
    throw failure('invalid-argument', 'the page could not add the rule ' + JSON.stringify(text.slice(0, 200)) + ': ' + String(/** @type {any} */ (e).message || e));
  }
  const rule = sheet.cssRules[index];
  const e = flatten(sheet, { n: MAX_RULES }).entries.find((x) => x.rule === rule);
  if (!e) {
    sheet.deleteRule(index);
    throw failure('invalid-argument', 'CSS.addRule adds a style rule (selector { declarations }), not ' + JSON.stringify(text.slice(0, 200)));
  }
  return ruleJSON(id, e);
}

/**
 * The matched answer cut to MATCHED_BUDGET (its overflow policy).
 * @param {any} answer @param {Record<string, any>} out its matched member
 */
export function withinBudget(answer, out) {
  const fits = () => {
    const m = measureJSON(JSON.stringify(answer));
    return m.bytes <= MATCHED_BUDGET.bytes && m.objects <= MATCHED_BUDGET.objects;
  };
  while (!fits()) {
    if (out.inherited.length) out.inherited.pop();
    else if (out.pseudoElements.length) out.pseudoElements.pop();
    else throw failure('too-large', 'the element\'s matched rules are over the frame limits (' + MATCHED_BUDGET.bytes + ' bytes, ' + MATCHED_BUDGET.objects + ' objects): too many rules match it');
  }
  return answer;
}

/** A readable sheet the session was told of. @param {any} s @param {string} id */
function sheetOf(s, id) {
  const sheet = state(s).sheets.get(id);
  if (!sheet) throw failure('no-such-handle', 'no style sheet ' + id + ' in this page for this window (ask CSS.getMatchedStylesForNode first)');
  const why = unreadable(sheet);
  if (why) throw failure('invalid-argument', why);
  return sheet;
}
