// csstext.mjs — the CSS agent's text (css.mjs): a style sheet's rules as
// one line each, a declaration block's properties with their ranges, and
// the text a window gave a style (kept while the CSSOM leaves it). Inlined
// into client.js before cssforce.mjs, cssfont.mjs and css.mjs.

/** Style rules one answer looks at (a bigger page's later rules are not matched). */
export const MAX_RULES = 20000;

const G = /** @type {any} */ (globalThis);

/** @param {string} code @param {string} message */
export function failure(code, message) {
  const e = /** @type {any} */ (new Error(message));
  e.code = code;
  e.transport = true;
  return e;
}

/**
 * Splits text at top-level separators (outside brackets and quotes); each
 * part keeps its offset.
 * @param {string} text @param {string} sep one character
 * @returns {{text: string, at: number}[]}
 */
export function splitTop(text, sep) {
  const out = [];
  let depth = 0, quote = '', start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === '\'') quote = c;
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === sep && depth === 0) {
      out.push({ text: text.slice(start, i + 1), at: start });
      start = i + 1;
    }
  }
  if (text.slice(start).trim()) out.push({ text: text.slice(start), at: start });
  return out;
}

/**
 * An approximate selector specificity (ids, classes/attributes/pseudo-classes,
 * types/pseudo-elements) for the cascade order of matched rules.
 * @param {string} sel
 */
export function specificity(sel) {
  const s = sel.replace(/"[^"]*"|'[^']*'/g, '').replace(/:where\([^)]*\)/g, '');
  const a = (s.match(/#[\w-]+/g) || []).length;
  const b = (s.match(/\.[\w-]+/g) || []).length + (s.match(/\[[^\]]*\]/g) || []).length +
    (s.match(/(^|[^:]):(?!is\(|not\(|has\()[\w-]+/g) || []).length;
  const c = (s.replace(/\[[^\]]*\]/g, '').match(/(^|[\s>+~(,])[a-zA-Z][\w-]*/g) || []).length + (s.match(/::[\w-]+/g) || []).length;
  return a * 1e6 + b * 1e3 + c;
}

/**
 * A declaration block's parts: declarations (up to and with their ';') and
 * comments, each with its offset; separators inside brackets, quotes and
 * comments do not split.
 * @param {string} text
 * @returns {{text: string, at: number, comment: boolean}[]}
 */
export function declarations(text) {
  const out = [];
  let depth = 0, quote = '', start = 0;
  /** @param {number} end @param {boolean} comment */
  const part = (end, comment) => {
    const raw = text.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    if (raw.trim()) out.push({ text: raw.trim(), at: start + lead, comment });
    start = end;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '/' && text[i + 1] === '*' && depth === 0) {
      part(i, false);
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
      part(i, true);
      i--;
    } else if (c === '"' || c === '\'') quote = c;
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ';' && depth === 0) part(i + 1, false);
  }
  part(text.length, false);
  return out;
}

/**
 * Whether the page's CSS parser takes value for property name (a value
 * being typed is not yet valid: Chrome shows it struck out).
 * @param {string} name @param {string} value
 */
function parses(name, value) {
  if (name.startsWith('--') || !G.CSS || typeof G.CSS.supports !== 'function') return true;
  try { return G.CSS.supports(name, value); } catch (e) { return true; }
}

/**
 * CDP's CSSStyle for a declaration block whose text starts at column start
 * of line. A comment holding a declaration (how the Styles pane toggles a
 * property off) is that property, disabled.
 * @param {string} sheet @param {number} line @param {number} start @param {string} text
 */
export function styleJSON(sheet, line, start, text) {
  const props = [];
  for (const part of declarations(text)) {
    const decl = part.comment ? part.text.slice(2, part.text.endsWith('*/') ? -2 : undefined).trim() : part.text;
    const colon = decl.indexOf(':');
    if (colon <= 0 || (part.comment && !/^[\w-]+\s*:/.test(decl))) continue;
    let value = decl.slice(colon + 1).replace(/;\s*$/, '').trim();
    const important = /!\s*important$/i.test(value);
    if (important) value = value.replace(/\s*!\s*important$/i, '');
    const name = decl.slice(0, colon).trim();
    const from = start + part.at;
    props.push({
      name, value, important, implicit: false, text: part.text, parsedOk: part.comment || parses(name, value), disabled: part.comment,
      range: { startLine: line, startColumn: from, endLine: line, endColumn: from + part.text.length },
    });
  }
  return {
    styleSheetId: sheet, cssProperties: props, shorthandEntries: [], cssText: text,
    range: { startLine: line, startColumn: start, endLine: line, endColumn: start + text.length },
  };
}

/**
 * The text a window gave each style (setStyle), kept while the CSSOM's
 * text is still what applying it left: the CSSOM drops comments (a
 * property toggled off) and declarations it cannot parse (a value being
 * typed), which the Styles pane must get back as it sent them.
 * @type {WeakMap<object, {text: string, applied: string}>}
 */
const given = new WeakMap();

/** A style's text: as last given if the page has not changed it since. @param {any} style */
export function textOf(style) {
  const g = given.get(style);
  return g && g.applied === style.cssText ? g.text : String(style.cssText);
}

/** Sets a style's declarations from a window's text (one line). @param {any} style @param {string} text */
export function setText(style, text) {
  text = oneLine(text).trim();
  style.cssText = text;
  if (text === style.cssText) given.delete(style);
  else given.set(style, { text, applied: style.cssText });
}

/**
 * @typedef {object} Entry one style rule of a sheet's text
 * @property {any} rule the CSSStyleRule
 * @property {number} line
 * @property {number} start the column its declarations start at
 * @property {{rule: any, line: number}[]} groups its grouping rules, innermost first
 * @property {number} order its place among all entries of the answer
 */

/**
 * A sheet's text, one rule per line, and its style rules.
 * @param {any} sheet a readable CSSStyleSheet
 * @param {{n: number}} budget style rules left to look at
 */
export function flatten(sheet, budget) {
  /** @type {string[]} */
  const lines = [];
  /** @type {Entry[]} */
  const entries = [];
  /** @param {any} list @param {{rule: any, line: number}[]} groups */
  const walk = (list, groups) => {
    for (const r of list) {
      if (budget.n <= 0) return;
      const line = lines.length;
      if (r.type === 1 && r.style) {
        budget.n--;
        const sel = oneLine(String(r.selectorText));
        lines.push(sel + ' { ' + textOf(r.style) + ' }');
        entries.push({ rule: r, line, start: sel.length + 3, groups, order: 0 });
      } else if (r.cssRules && groupHeader(r) !== null) {
        lines.push(groupHeader(r) + ' {');
        walk(r.cssRules, [{ rule: r, line }, ...groups]);
        lines.push('}');
      } else {
        lines.push(oneLine(String(r.cssText)));
      }
    }
  };
  walk(sheet.cssRules, []);
  return { lines, entries };
}

/** @param {string} s */
export function oneLine(s) { return s.replace(/\s*\n\s*/g, ' '); }

/** A grouping rule's header as the text shows it, or null. @param {any} r */
export function groupHeader(r) {
  if (r.type === 4) return '@media ' + r.media.mediaText;
  if (r.type === 12) return '@supports ' + r.conditionText;
  if (G.CSSLayerBlockRule && r instanceof G.CSSLayerBlockRule) return '@layer' + (r.name ? ' ' + r.name : '');
  if (G.CSSContainerRule && r instanceof G.CSSContainerRule) return '@container ' + r.conditionText;
  const t = String(r.cssText);
  const brace = t.indexOf('{');
  return brace > 0 ? oneLine(t.slice(0, brace).trim()) : null;
}

/** Why the page may not read a sheet's rules, or '' if it may. @param {any} sheet */
export function unreadable(sheet) {
  try {
    void sheet.cssRules;
    return '';
  } catch (e) {
    return 'the style sheet ' + (sheet.href || '(no URL)') + ' is cross-origin: the page may not read its rules (CSSOM SecurityError); serve it with CORS and load it with crossorigin="anonymous" to inspect it';
  }
}
