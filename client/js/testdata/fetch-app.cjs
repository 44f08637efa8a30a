'use strict';
// A host app for capture.test.mjs, run as `node --require ../preload.cjs
// fetch-app.cjs` (or without the preload, for the reference run). CASES (a
// JSON list) says what to fetch; it prints one JSON line per case with what
// the APP saw (status, headers, sha256 of the body, the error's identity),
// then {done, stats} once everything the preload queued was acked (or at
// once without a preload).
//
// A case: {name, url, method?, body? ("bytes:N" | text), headers?,
//          abortAfterMs?, abortReason? (a custom reason object),
//          readDelayMs? (the app reads its body slowly, one chunk per delay),
//          unhandled? (no catch: the rejection must stay unhandled),
//          http? (node:http.get instead of fetch),
//          byob? (the body read with a BYOB reader), clone? (res.clone() read first),
//          text? (the body read with res.text(), the body mixin's own reader),
//          textAfterMs? (text, but only after this long: the body unread meanwhile),
//          cancel? ("reader" | "body" | "break" | "pipe": how the app stops
//            a streamed body, see cancelBody), untilBytes? (read this much
//            before cancelling), drop? (the app drops the response unread
//            and runs the GC: needs --expose-gc)}
// EXIT_WHEN_DONE=1: exit after the done line even if a stream keeps the
// event loop alive.
const crypto = require('node:crypto');
const http = require('node:http');
const CASES = JSON.parse(process.env.CASES || '[]');

/** @type {any[]} */
const unhandled = [];
process.on('unhandledRejection', (reason) => {
  unhandled.push({ message: reason && reason.message, cause: reason && reason.cause && reason.cause.code });
});

function errInfo(e, reason) {
  return {
    ctor: e && e.constructor && e.constructor.name,
    name: e && e.name,
    message: e && e.message,
    cause: e && e.cause ? { code: e.cause.code, message: e.cause.message } : null,
    isReason: reason !== undefined && e === reason,
  };
}

async function readSlowly(body, delay) {
  const reader = body.getReader();
  const hash = crypto.createHash('sha256');
  let length = 0, chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hash.update(value);
    length += value.length;
    chunks++;
    if (delay) await new Promise((r) => setTimeout(r, delay));
  }
  return { sha256: hash.digest('hex'), length, chunks };
}

// A BYOB reader with small views (the body must be a byte stream).
async function readBYOB(body) {
  const reader = body.getReader({ mode: 'byob' });
  const hash = crypto.createHash('sha256');
  let length = 0, buf = new ArrayBuffer(1000);
  for (;;) {
    const { done, value } = await reader.read(new Uint8Array(buf));
    if (done) break;
    hash.update(value);
    length += value.length;
    buf = value.buffer;
  }
  return { sha256: hash.digest('hex'), length, chunks: 0 };
}

function viaHTTP(c) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const req = http.get(c.url, { headers: c.headers || {} }, (res) => {
      const hash = crypto.createHash('sha256');
      let length = 0;
      res.on('data', (d) => { hash.update(d); length += d.length; });
      res.on('end', () => resolve({ name: c.name, status: res.statusCode, sha256: hash.digest('hex'), length, ms: Date.now() - t0 }));
    });
    req.on('error', (e) => resolve({ name: c.name, error: errInfo(e) }));
  });
}

// The longest the app waits for a cancel to settle before it reports it
// as not settled (the test's bound is below it): the app goes on instead
// of hanging.
const SETTLE_GUARD_MS = 6000;

/**
 * Stops reading a streamed body in one of the ways an app does, and
 * reports how long the stop took to settle. "reader": reader.cancel()
 * after the first chunk (or untilBytes); "body": res.body.cancel() before
 * any read; "break": a `for await` left after the first chunk; "pipe":
 * the reader of res.body.pipeThrough(TextDecoderStream) cancelled after
 * the first chunk.
 */
async function cancelBody(c, res) {
  let stop;
  let got = 0;
  let cancelAt = 0, t0 = 0n;
  const until = c.untilBytes || 1;
  if (c.cancel === 'reader') {
    const reader = res.body.getReader();
    while (got < until) {
      const r = await reader.read();
      if (r.done) break;
      got += r.value.length;
    }
    stop = () => reader.cancel();
  } else if (c.cancel === 'body') {
    stop = () => res.body.cancel();
  } else if (c.cancel === 'break') {
    let atBreak;
    const breaking = new Promise((r) => { atBreak = r; });
    const loop = (async () => {
      for await (const chunk of res.body) {
        got += chunk.length;
        cancelAt = Date.now();
        t0 = process.hrtime.bigint();
        atBreak();
        break;
      }
    })();
    await breaking;
    stop = () => loop;
  } else {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const r = await reader.read();
    got += r.done ? 0 : r.value.length;
    stop = () => reader.cancel();
  }
  if (!cancelAt) {
    cancelAt = Date.now();
    t0 = process.hrtime.bigint();
  }
  const settled = await Promise.race([
    stop().then(() => true, () => true),
    new Promise((r) => setTimeout(() => r(false), SETTLE_GUARD_MS)),
  ]);
  const settleMs = settled ? Number(process.hrtime.bigint() - t0) / 1e6 : null;
  const closeMs = settled ? await serverClosed(c.url, cancelAt, false) : null;
  return { settled, settleMs, closeMs, readBeforeCancel: got > 0, bodyUsed: res.bodyUsed };
}

/**
 * Milliseconds from `since` until the test's server says the connection
 * of `url` closed (its /closed route), or null after SETTLE_GUARD_MS.
 * With `gc`, garbage is collected between the polls.
 */
async function serverClosed(url, since, gc) {
  const u = new URL(url);
  const ask = u.origin + '/closed?u=' + encodeURIComponent(u.pathname + u.search);
  for (;;) {
    if (gc) globalThis.gc();
    const r = await fetch(ask);
    const said = await r.text();
    if (said !== 'no') return Number(said) - since;
    if (Date.now() - since > SETTLE_GUARD_MS) return null;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The app drops an unread response and collects garbage until the server saw the close. */
async function dropBody(c) {
  let res = await fetch(c.url);
  const out = { name: c.name, status: res.status };
  await new Promise((r) => setTimeout(r, 100));
  res = null;
  const droppedAt = Date.now();
  return Object.assign(out, { closeMs: await serverClosed(c.url, droppedAt, true) });
}

async function run(c) {
  if (c.http) return viaHTTP(c);
  if (c.drop) return dropBody(c);
  if (c.cancel) {
    const res = await fetch(c.url);
    const head = { name: c.name, status: res.status, url: res.url, type: res.type, redirected: res.redirected, bodyUsed: res.bodyUsed };
    return Object.assign(head, await cancelBody(c, res));
  }
  /** @type {any} */
  const init = { method: c.method || 'GET', headers: c.headers || {} };
  if (c.body !== undefined) {
    init.body = c.body.startsWith('bytes:') ? new Uint8Array(Number(c.body.slice(6))).map((_, i) => (i * 31 + 7) & 255) : c.body;
  }
  let reason;
  if (c.abortAfterMs !== undefined) {
    const ac = new AbortController();
    init.signal = ac.signal;
    if (c.abortReason) reason = new RangeError('custom abort reason');
    setTimeout(() => ac.abort(reason), c.abortAfterMs);
  }
  if (c.unhandled) {
    fetch(c.url, init); // no catch: Node must report it as unhandled
    await new Promise((r) => setTimeout(r, 300));
    return { name: c.name, unhandled: unhandled.slice() };
  }
  try {
    const res = await fetch(c.url, init);
    const out = {
      name: c.name, status: res.status, statusText: res.statusText, url: res.url, redirected: res.redirected,
      type: res.type, contentType: res.headers.get('content-type'), bodyUsed: res.bodyUsed,
    };
    try {
      if (c.clone) {
        const k = res.clone();
        out.clone = { url: k.url, type: k.type, redirected: k.redirected, status: k.status, bodyUsed: k.bodyUsed, length: (await k.arrayBuffer()).byteLength };
      }
      if (c.textAfterMs) await new Promise((r) => setTimeout(r, c.textAfterMs));
      if (c.text || c.textAfterMs) out.textLength = (await res.text()).length;
      else Object.assign(out, c.byob ? await readBYOB(res.body) : await readSlowly(res.body, c.readDelayMs || 0));
    } catch (e) {
      out.bodyError = errInfo(e, reason);
    }
    return out;
  } catch (e) {
    return { name: c.name, error: errInfo(e, reason) };
  }
}

(async () => {
  for (const c of CASES) process.stdout.write(JSON.stringify(await run(c)) + '\n');
  const iw = globalThis.inspectorWorker;
  const until = Date.now() + 20000;
  while (iw && Date.now() < until) {
    const s = iw.stats();
    if (s.queued === 0 && s.acked === s.sent) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  process.stdout.write(JSON.stringify({ done: true, stats: iw ? iw.stats() : null, fetchName: fetch.name, fetchLength: fetch.length }) + '\n');
  if (process.env.EXIT_WHEN_DONE) process.exit(0);
})();
