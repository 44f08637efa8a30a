// The shipped files carry a current copy of core.mjs (see build.mjs), and
// each loads standalone.

import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { stale, TARGETS } from './build.mjs';

test('client.js, preload.cjs and embed.mjs hold the current core.mjs (run `node client/js/build.mjs`)', () => {
  assert.deepEqual(stale(), []);
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

test('the shipped files do not require siblings', () => {
  for (const t of TARGETS) {
    const src = readFileSync(new URL(t, import.meta.url), 'utf8');
    assert.ok(!/^\s*import\b.*['"]\./m.test(src) && !/\brequire\(['"]\./.test(src), t);
  }
});
