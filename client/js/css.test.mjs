// css.test.mjs — the CSS agent's text helpers (the queries themselves run
// against real Chromium pages: cdpserver/css_chromium_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitTop, specificity, styleJSON, flatten } from './csstext.mjs';

test('splitTop keeps separators inside brackets and quotes', () => {
  assert.deepEqual(splitTop('a, b:is(c, d), [x=","], e', ',').map((p) => p.text.replace(/,$/, '').trim()), ['a', 'b:is(c, d)', '[x=","]', 'e']);
  assert.deepEqual(splitTop('color: red; background: url("a;b"); x: y', ';').map((p) => p.at), [0, 11, 35]);
});

test('specificity orders ids over classes over types', () => {
  assert.ok(specificity('#a') > specificity('.a.b.c'));
  assert.ok(specificity('.a') > specificity('div span'));
  assert.ok(specificity('h1::before') > specificity('h1'));
  assert.equal(specificity(':where(#a) p'), specificity('p'));
});

test('styleJSON ranges point into the line', () => {
  const line = '#t { margin-left: 7px; color: red !important; }';
  const text = 'margin-left: 7px; color: red !important;';
  const s = styleJSON('s1', 3, 5, text);
  assert.equal(line.slice(s.range.startColumn, s.range.endColumn), text);
  assert.deepEqual(s.cssProperties.map((p) => [p.name, p.value, p.important, line.slice(p.range.startColumn, p.range.endColumn)]),
    [['margin-left', '7px', false, 'margin-left: 7px;'], ['color', 'red', true, 'color: red !important;']]);
  assert.equal(s.cssProperties[0].range.startLine, 3);
});

test('flatten: one rule per line, grouping rules around, within the budget', () => {
  const style = (/** @type {string} */ sel, /** @type {string} */ css) => ({ type: 1, selectorText: sel, style: { cssText: css } });
  const sheet = { cssRules: [style('body', 'color: red;'), { type: 4, media: { mediaText: '(min-width: 1px)' }, cssText: '', cssRules: [style('#t', 'margin: 0px;')] },
    { type: 5, cssText: '@font-face {\n  font-family: x;\n}' }] };
  const f = flatten(sheet, { n: 10 });
  assert.deepEqual(f.lines, ['body { color: red; }', '@media (min-width: 1px) {', '#t { margin: 0px; }', '}', '@font-face { font-family: x; }']);
  assert.deepEqual(f.entries.map((e) => [e.line, e.start, e.groups.map((g) => g.line)]), [[0, 7, []], [2, 5, [1]]]);
  assert.equal(flatten(sheet, { n: 1 }).entries.length, 1);
});

test('a matched answer over its budget loses the farthest inherited rules first, then the pseudo-elements', async () => {
  const { withinBudget, MATCHED_BUDGET } = await import('./css.mjs');
  const big = (/** @type {number} */ n) => ({ matchedCSSRules: [{ rule: { selectorList: { text: 'x'.repeat(n) } } }] });
  const out = { matchedCSSRules: [], pseudoElements: [{ pseudoType: 'before', matches: [] }], inherited: [big(10), big(MATCHED_BUDGET.bytes / 2), big(MATCHED_BUDGET.bytes / 2)] };
  withinBudget({ css: { matched: out } }, out);
  assert.equal(out.inherited.length, 2);
  assert.equal(out.pseudoElements.length, 1);
  const huge = { matchedCSSRules: [big(MATCHED_BUDGET.bytes)], pseudoElements: [], inherited: [] };
  assert.throws(() => withinBudget({ css: { matched: huge } }, huge), /over the frame limits/);
});

test('styleJSON: a commented-out declaration is that property, disabled, at its range', () => {
  const text = 'margin-left: 7px; /* color: red; */ padding: 1px';
  const s = styleJSON('s1', 0, 0, text);
  assert.deepEqual(s.cssProperties.map((p) => [p.name, p.value, p.disabled, text.slice(p.range.startColumn, p.range.endColumn)]),
    [['margin-left', '7px', false, 'margin-left: 7px;'], ['color', 'red', true, '/* color: red; */'], ['padding', '1px', false, 'padding: 1px']]);
  assert.deepEqual(styleJSON('s1', 0, 0, '/* just a note */ a: b;').cssProperties.map((p) => p.name), ['a']);
});
