// The shipped files are exactly what build.mjs makes of their sources, and
// each loads standalone.

import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { build, MARKER, readSource, stale, TARGETS } from './build.mjs';

const SHIPPED = Object.keys(TARGETS);

test('client.js, preload.cjs and embed.mjs are current (run `node client/js/build.mjs`)', () => {
  assert.deepEqual(stale(), []);
});

test('a hand edit of a shipped file is stale', () => {
  for (const t of SHIPPED) {
    /** @param {string} f */
    const read = (f) => (f === t ? readSource(f) + 'hand();\n' : readSource(f));
    assert.deepEqual(stale(read), [t], t);
  }
});

test('an edit of a frame or a module without a rebuild is stale', () => {
  /** @param {string} changed */
  const staleAfter = (changed) => stale((f) => (f === changed ? readSource(f) + '// edited\n' : readSource(f)));
  assert.deepEqual(staleAfter('client.in.js'), ['client.js']);
  assert.deepEqual(staleAfter('preload.in.cjs'), ['preload.cjs']);
  assert.deepEqual(staleAfter('runtime.mjs'), ['client.js']);
  assert.deepEqual(staleAfter('nodecapture.mjs'), ['preload.cjs', 'embed.mjs']);
  assert.deepEqual(staleAfter('inject.mjs'), ['preload.cjs']);
  assert.deepEqual(staleAfter('core.mjs'), SHIPPED);
});

test('each shipped file starts with the generated marker', () => {
  for (const t of SHIPPED) assert.equal(readSource(t).split('\n', 1)[0], MARKER, t);
});

test('a module that imports one its frame has not inlined before it fails the build', () => {
  /** @param {string} f */
  const read = (f) => (f === 'client.in.js' ? readSource(f).replace('// build.mjs inlines core.mjs here\n', '') : readSource(f));
  assert.throws(() => build('client.js', read), /\.mjs: imports core\.mjs, which its frame does not inline before it/);
});

test('client.js is one classic script: no import/export, parses as a script', () => {
  const src = readFileSync(new URL('client.js', import.meta.url), 'utf8');
  assert.doesNotThrow(() => new vm.Script(src, { filename: 'client.js' }));
  assert.ok(!/^\s*(import|export)\b/m.test(src));
  // Outside a browser it does nothing at all.
  const ctx = vm.createContext({});
  vm.runInContext(src, ctx);
  assert.deepEqual(Object.keys(ctx), []);
});

test('preload.cjs runs in strict mode under its marker line', () => {
  const src = readFileSync(new URL('preload.cjs', import.meta.url), 'utf8');
  // A directive counts only before the first statement: the marker is a
  // comment, so 'use strict' still applies (assigning to an undeclared name throws).
  const head = src.slice(0, src.indexOf("'use strict';") + "'use strict';".length);
  assert.throws(() => vm.runInNewContext(head + '\nundeclaredName = 1;'), /undeclaredName is not defined/);
});

test('the shipped files do not require siblings', () => {
  for (const t of SHIPPED) {
    const src = readFileSync(new URL(t, import.meta.url), 'utf8');
    assert.ok(!/^\s*import\b.*['"]\./m.test(src) && !/\brequire\(['"]\./.test(src), t);
  }
});
