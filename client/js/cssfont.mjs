// cssfont.mjs — CSS.getBackgroundColors and CSS.getPlatformFontsForNode
// for the CSS agent (css.mjs): what the page can tell (docs/agent-note.md
// "Styles of pages" says which parts are guesses). Inlined into client.js
// after csstext.mjs.

import { splitTop } from './csstext.mjs';

const G = /** @type {any} */ (globalThis);

/** @param {string} c a computed color @returns {number[] | null} r, g, b, a */
function rgba(c) {
  const m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(c);
  if (!m) return null;
  const a = m[4] === undefined ? 1 : m[4].endsWith('%') ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
  return [Number(m[1]), Number(m[2]), Number(m[3]), a];
}

/** top over bottom (bottom opaque). @param {number[]} top @param {number[]} bottom */
function over(top, bottom) {
  const a = top[3];
  return [0, 1, 2].map((i) => Math.round(top[i] * a + bottom[i] * (1 - a))).concat(1);
}

/**
 * CSS.getBackgroundColors: the background-colors of el and its ancestors
 * down to the first opaque one (or the white canvas), blended into one;
 * an empty list for a gradient (Chrome lists its stops) or a color the
 * page serializes other than rgb(); no colors for an element without text.
 * @param {any} el
 */
export function background(el) {
  const cs = G.getComputedStyle(el);
  /** @type {Record<string, any>} */
  const out = { computedFontSize: cs.fontSize, computedFontWeight: cs.fontWeight };
  if (!/\S/.test(String(el.textContent || ''))) return out;
  const layers = [];
  for (let n = el; n; n = n.parentElement) {
    const c = n === el ? cs : G.getComputedStyle(n);
    if (/gradient\(/.test(String(c.backgroundImage))) return { ...out, backgroundColors: [] };
    const col = rgba(String(c.backgroundColor));
    if (!col) return { ...out, backgroundColors: [] };
    if (col[3] > 0) layers.push(col);
    if (col[3] >= 1) break;
  }
  let acc = [255, 255, 255, 1];
  for (const l of layers.reverse()) acc = over(l, acc);
  return { ...out, backgroundColors: ['rgb(' + acc.slice(0, 3).join(', ') + ')'] };
}

/** The generic font families (a platform font stands behind each). */
const GENERIC = new Set(['serif', 'sans-serif', 'monospace', 'cursive', 'fantasy', 'system-ui', 'ui-serif', 'ui-sans-serif', 'ui-monospace', 'ui-rounded', 'math', 'emoji', 'fangsong']);

/** Text that tells fonts apart by width. */
const PROBE = 'mmmmmmmmmmlli WwQ@#0';

/**
 * Whether the platform has font family fam: text in fam falls back to
 * none of three generic families (it measures differently from each).
 * @param {any} doc @param {string} fam
 */
function installed(doc, fam) {
  const canvas = G.OffscreenCanvas ? new G.OffscreenCanvas(1, 1) : doc.createElement('canvas');
  const ctx = canvas.getContext && canvas.getContext('2d');
  if (!ctx) return false;
  for (const base of ['monospace', 'serif', 'sans-serif']) {
    ctx.font = '72px ' + base;
    const w = ctx.measureText(PROBE).width;
    ctx.font = '72px ' + JSON.stringify(fam) + ', ' + base;
    if (ctx.measureText(PROBE).width !== w) return true;
  }
  return false;
}

/**
 * CSS.getPlatformFontsForNode: the first family of el's computed
 * font-family the page finds (a loaded @font-face face: isCustomFont; a
 * generic family; an installed one by measurement), with el's own text's
 * characters as the glyph count; none if no family is found.
 * @param {any} doc @param {any} el
 */
export function fonts(doc, el) {
  let text = '';
  for (let c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 3) text += c.data;
  text = text.replace(/\s+/g, ' ').trim();
  if (!text) return [];
  const glyphCount = [...text].length;
  const cs = G.getComputedStyle(el);
  for (const part of splitTop(String(cs.fontFamily), ',')) {
    const fam = part.text.replace(/,$/, '').trim().replace(/^(["'])(.*)\1$/, '$2');
    if (!fam) continue;
    let custom = false;
    if (doc.fonts && typeof doc.fonts.forEach === 'function') {
      doc.fonts.forEach((/** @type {any} */ f) => { if (f.status === 'loaded' && f.family.replace(/^(["'])(.*)\1$/, '$2') === fam) custom = true; });
    }
    if (custom || GENERIC.has(fam.toLowerCase()) || installed(doc, fam)) {
      return [{ familyName: fam, postScriptName: '', isCustomFont: custom, glyphCount }];
    }
  }
  return [];
}
