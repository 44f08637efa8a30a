// dom.test.mjs — the DOM agent's pure parts; the agent itself runs against
// real pages in Chromium (cdpserver/dom_chromium_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inOrder } from './dom.mjs';

test('inOrder keeps the longest run of children in their old order', () => {
  const cases = [
    { pos: [], want: [] },
    { pos: [0, 1, 2, 3], want: [0, 1, 2, 3] },
    // The first child moved to the end: only it moves.
    { pos: [1, 2, 3, 0], want: [0, 1, 2] },
    // The last child moved to the front: only it moves.
    { pos: [3, 0, 1, 2], want: [1, 2, 3] },
    // New nodes (-1) never stay; known ones around them do.
    { pos: [-1, 0, -1, 1, -1], want: [1, 3] },
    { pos: [2, 1, 0], want: [2] },
  ];
  for (const { pos, want } of cases) {
    const got = [...inOrder(pos)].sort((a, b) => a - b);
    if (pos.join() === '2,1,0') assert.equal(got.length, 1, 'a reversed list keeps one');
    else assert.deepEqual(got, want, JSON.stringify(pos));
  }
});

test('inOrder over 100,000 children with one moved keeps the other 99,999', () => {
  const pos = Array.from({ length: 100000 }, (_, i) => (i + 1) % 100000);
  const t = process.hrtime.bigint();
  const stay = inOrder(pos);
  assert.equal(stay.size, 99999);
  assert.equal(stay.has(pos.length - 1), false, 'the moved child is not kept');
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  console.log(`# inOrder over 100,000 positions: ${ms.toFixed(1)} ms`);
});
