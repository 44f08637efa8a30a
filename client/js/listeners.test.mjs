// listeners.test.mjs — the listener log on Node's own EventTarget (the same
// WebIDL semantics as a page's for add, remove, once and signal) and the
// handler location search; the pane itself runs against real pages in
// Chromium (cdpserver/listeners_chromium_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ListenerLog, installListenerLog, onlyPlace, OWN_LISTENERS } from './listeners.mjs';

/** A window-like global over Node's EventTarget; scripts served by fetch. */
function fakeWindow(scripts = {}, inline = []) {
  const win = {
    EventTarget,
    location: { origin: 'http://page.test', href: 'http://page.test/' },
    document: {
      scripts: [...Object.keys(scripts).map((src) => ({ src, text: '' })), ...inline.map((text) => ({ src: '', text }))],
    },
    performance: { getEntriesByType: () => [] },
  };
  let fetches = 0;
  const fetch = async (url) => {
    fetches++;
    const text = scripts[url];
    return text === undefined ? { ok: false } : { ok: true, headers: { get: () => null }, text: async () => text };
  };
  return { win, fetch, fetches: () => fetches };
}

/** Runs f with the log installed on Node's EventTarget, then undoes it. */
async function withLog(fw, f) {
  const log = installListenerLog(fw.win, fw.fetch, () => 0);
  try { await f(log); } finally { log.undo(); }
}

test('the log lists what was added since install, as the target holds it', async () => {
  const fw = fakeWindow();
  const nativeAdd = EventTarget.prototype.addEventListener;
  await withLog(fw, async (log) => {
    assert.notEqual(EventTarget.prototype.addEventListener, nativeAdd, 'wrapped');
    assert.equal(EventTarget.prototype.addEventListener.length, nativeAdd.length, 'the native length');
    assert.equal(EventTarget.prototype.addEventListener.name, 'addEventListener');
    const t = new EventTarget();
    let calls = 0;
    const f = () => { calls++; };
    t.addEventListener('click', f);
    t.addEventListener('click', f); // a repeat: the browser ignores it
    t.addEventListener('click', f, true); // another phase: a second listener
    t.addEventListener('keydown', f, { passive: true });
    let list = await log.collect(t, 1, false);
    assert.deepEqual(list.map((l) => [l.type, l.useCapture, l.passive]), [['click', false, false], ['click', true, false], ['keydown', false, true]]);
    t.dispatchEvent(new Event('click'));
    assert.equal(calls, 2, 'the page sees its listeners as ever');
    t.removeEventListener('click', f, { capture: true });
    list = await log.collect(t, 1, false);
    assert.deepEqual(list.map((l) => [l.type, l.useCapture]), [['click', false], ['keydown', false]]);

    // once: gone after its event; signal: gone on abort.
    const o = new EventTarget();
    o.addEventListener('ping', f, { once: true });
    const ac = new AbortController();
    o.addEventListener('pong', f, { signal: ac.signal });
    assert.deepEqual((await log.collect(o, 1, false)).map((l) => [l.type, l.once]), [['ping', true], ['pong', false]]);
    o.dispatchEvent(new Event('ping'));
    ac.abort();
    assert.deepEqual(await log.collect(o, 1, false), [], 'a fired once listener and an aborted one are gone');
    const aborted = AbortSignal.abort();
    o.addEventListener('x', f, { signal: aborted });
    assert.deepEqual(await log.collect(o, 1, false), [], 'an already aborted signal adds nothing');

    // A listener object: its handleEvent is the handler.
    const obj = { handleEvent() {} };
    o.addEventListener('obj', obj);
    const [l] = await log.collect(o, 1, false);
    assert.equal(l.handler, obj.handleEvent);
    assert.equal(l.original, obj);

    // The client's own listeners are never listed.
    const own = () => {};
    OWN_LISTENERS.add(own);
    o.addEventListener('own', own);
    assert.equal((await log.collect(o, 1, false)).some((x) => x.type === 'own'), false);

    // What the native method throws, the wrapper throws (nothing noted).
    assert.throws(() => EventTarget.prototype.addEventListener.call({}, 'x', f), TypeError);
  });
  assert.equal(EventTarget.prototype.addEventListener, nativeAdd, 'undo puts the native method back');
});

test('on* handlers are read from the target: platform accessors only', async () => {
  const fw = fakeWindow();
  await withLog(fw, async (log) => {
    // As WebIDL defines it: an enumerable accessor on the prototype.
    class Target extends EventTarget {}
    Object.defineProperty(Target.prototype, 'onclick', {
      enumerable: true, configurable: true,
      get() { return this._h || null; }, set(v) { this._h = v; },
    });
    const t = new Target();
    t.onboarding = () => {}; // a data property named on…: no handler
    assert.deepEqual(await log.collect(t, 1, false), []);
    const h = () => {};
    t.onclick = h;
    const list = await log.collect(t, 1, false);
    assert.equal(list.length, 1);
    assert.equal(list[0].type, 'click');
    assert.equal(list[0].handler, h);
  });
});

test('a handler is placed only where its text occurs exactly once', async () => {
  const src = 'function one() {}\n  const onClick = (e) => { console.log("clicked", e.type); };\n';
  assert.deepEqual(onlyPlace('(e) => { console.log("clicked", e.type); }', [{ url: 'http://page.test/a.js', text: src }]),
    { url: 'http://page.test/a.js', line: 1, column: 18 });
  assert.equal(onlyPlace('function one() {}', [{ url: 'u', text: src + src }]), null, 'twice in one script');
  assert.equal(onlyPlace('function one() {}', [{ url: 'u', text: src }, { url: 'v', text: src }]), null, 'in two scripts');
  assert.equal(onlyPlace('function one() {}', [{ url: '', text: src }, { url: 'v', text: src }]), null, 'also inline');
  assert.equal(onlyPlace('function one() {}', [{ url: '', text: src }]), null, 'inline only: no script id to name');
  assert.equal(onlyPlace('function two() {}', [{ url: 'u', text: src }]), null, 'nowhere');

  // End to end: the handler's text read from a served script.
  const code = '\n\nwindow.h = function handler(e) {\n  return e.type + 1;\n};\n';
  const fw = fakeWindow({ 'http://page.test/app.js': code }, ['var x = 1;']);
  await withLog(fw, async (log) => {
    const handler = (0, eval)('(' + code.slice(code.indexOf('function'), code.lastIndexOf('}') + 1) + ')');
    const t = new EventTarget();
    t.addEventListener('click', handler);
    t.addEventListener('click', () => {}, true); // defined here: not in app.js
    const [a, b] = await log.collect(t, 1, false);
    assert.deepEqual([a.url, a.line, a.column], ['http://page.test/app.js', 2, 11]);
    assert.equal(b.url, '', 'not found: no place');
    await log.collect(t, 1, false);
    assert.equal(fw.fetches(), 1, 'the script text is kept between asks');
  });
});

test('cost of addEventListener with the log (Node, 20,000 targets)', async () => {
  const N = 20000;
  const f = () => {};
  const run = () => {
    const ts = Array.from({ length: N }, () => new EventTarget());
    const t0 = process.hrtime.bigint();
    for (const t of ts) t.addEventListener('click', f);
    for (const t of ts) t.removeEventListener('click', f);
    return Number(process.hrtime.bigint() - t0) / N;
  };
  const native = [], logged = [];
  for (let r = 0; r < 5; r++) {
    native.push(run());
    const log = new ListenerLog({ global: { EventTarget } });
    log.undo = log.install();
    try { logged.push(run()); } finally { log.undo(); }
  }
  const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
  console.log(`# add+remove per target: native ${med(native).toFixed(0)} ns, with the log ${med(logged).toFixed(0)} ns (${(med(logged) / med(native)).toFixed(2)}x)`);
  assert.ok(med(logged) > 0);
});
