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
//          http? (node:http.get instead of fetch)}
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

async function run(c) {
  if (c.http) return viaHTTP(c);
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
      Object.assign(out, await readSlowly(res.body, c.readDelayMs || 0));
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
})();
