// Test helpers: a strict reading of producer frames (the envelope rules of
// docs/protocol.md, "The envelope"), and a scripted fake worker.

import assert from 'node:assert/strict';
import { measureJSON, DEFAULT_LIMITS, MAX_FRAME_OBJECTS, MAX_DEPTH } from '../core.mjs';

const SEQUENCED = new Set(['replace', 'append', 'ack']);
const ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Parses one producer → worker frame and checks the envelope rules: one
 * line, the exact member set, v 1, a valid source id, gen absent on hello
 * only, seq on sequenced types only, size/object/depth/string limits.
 * @param {string} text
 */
export function parseFrame(text) {
  assert.equal(typeof text, 'string');
  assert.ok(!text.includes('\n'), 'a frame never contains a raw newline');
  const m = measureJSON(text);
  assert.ok(m.bytes <= DEFAULT_LIMITS.maxFrameBytes, 'frame over MaxFrameBytes: ' + m.bytes);
  assert.ok(m.objects <= MAX_FRAME_OBJECTS, 'frame over MaxFrameObjects: ' + m.objects);
  assert.ok(m.depth <= MAX_DEPTH, 'frame over MaxDepth');
  assert.ok(m.maxString <= DEFAULT_LIMITS.maxStringBytes, 'string over MaxStringBytes: ' + m.maxString);
  const f = JSON.parse(text);
  const keys = Object.keys(f).sort();
  const want = ['body', 'source', 'type', 'v'];
  if (f.type !== 'hello') want.push('gen');
  if (SEQUENCED.has(f.type)) want.push('seq');
  assert.deepEqual(keys, want.sort(), 'envelope members of ' + f.type);
  assert.equal(f.v, 1);
  assert.match(f.source, ID);
  if (f.type !== 'hello') assert.ok(Number.isSafeInteger(f.gen) && f.gen >= 1, 'gen');
  if (SEQUENCED.has(f.type)) assert.ok(Number.isSafeInteger(f.seq) && f.seq >= (f.type === 'append' ? 1 : 0), 'seq');
  assert.equal(typeof f.body, 'object');
  if (f.type === 'append') {
    assert.ok(Array.isArray(f.body.items) && f.body.items.length >= 1 && f.body.items.length <= DEFAULT_LIMITS.maxBatchItems);
    assert.deepEqual(Object.keys(f.body).filter((k) => k !== 'dropped' && k !== 'items'), []);
    if ('dropped' in f.body) assert.ok(f.body.dropped > 0, 'dropped omitted when 0');
  }
  if (f.type === 'replace') {
    assert.deepEqual(Object.keys(f.body).sort(), ['items', 'reason']);
    assert.ok(['initial', 'requested', 'producer'].includes(f.body.reason));
  }
  if (f.type === 'append' || f.type === 'replace') {
    for (const it of f.body.items) assert.equal(Object.keys(it).length, 1, 'an item has one member');
  }
  return f;
}

/**
 * A fake worker for one producer: records frames, answers hello with
 * welcome and (optionally) acks like sourceproto's Registry does.
 */
export class FakeWorker {
  /** @param {{autoAck?: boolean, gen?: number, topics?: string[]}} [o] */
  constructor(o = {}) {
    this.autoAck = o.autoAck !== false;
    this.gen = o.gen || 4;
    this.topics = o.topics;
    /** @type {any[]} */
    this.frames = [];
    /** @type {(text: string) => void} */
    this.reply = () => {};
    this.next = 1; // next expected seq, as the Registry tracks it
    /** @type {any[]} */
    this.gaps = [];
  }

  /** @param {string} text a producer frame */
  take(text) {
    const f = parseFrame(text);
    this.frames.push(f);
    if (f.type === 'hello') {
      this.source = f.source;
      this.next = 1;
      this.reply(JSON.stringify({ v: 1, type: 'welcome', source: f.source, gen: this.gen, body: {
        capabilities: f.body.capabilities, topics: this.topics || f.body.topics, limits: DEFAULT_LIMITS } }));
      return f;
    }
    assert.equal(f.gen, this.gen, 'frame of the current generation');
    if (f.type === 'replace') {
      assert.ok(f.seq + 1 >= this.next || this.frames.filter((x) => x.type === 'replace').length === 1, 'replace covers what was consumed');
      this.next = f.seq + 1;
      if (this.autoAck) this.ack(f.seq);
    } else if (f.type === 'append') {
      assert.ok(f.seq >= this.next, 'no sequence regression');
      const gap = f.seq - this.next;
      const dropped = f.body.dropped || 0;
      assert.ok(dropped <= gap, 'dropped ≤ gap');
      if (gap) this.gaps.push({ expected: this.next, received: f.seq, count: gap, explained: dropped });
      this.next = f.seq + f.body.items.length;
      if (this.autoAck) this.ack(this.next - 1, gap);
    }
    return f;
  }

  /** @param {number} seq @param {number} [dropped] */
  ack(seq, dropped) {
    this.reply(JSON.stringify({ v: 1, type: 'ack', source: this.source, gen: this.gen, seq, body: dropped ? { dropped } : {} }));
  }

  /** @param {string} type @param {any} body */
  send(type, body) {
    this.reply(JSON.stringify({ v: 1, type, source: this.source, gen: this.gen, body }));
  }

  /** @param {string} [type] */
  of(type) {
    return type ? this.frames.filter((f) => f.type === type) : this.frames;
  }

  /** every item of every append, in order */
  items() {
    return this.of('append').flatMap((f) => f.body.items);
  }
}
