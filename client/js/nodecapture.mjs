// nodecapture.mjs — the host's outgoing node:http / node:https requests,
// seen through Node's diagnostics_channel (what axios, got and most SDKs
// use; fetch is undici, which never goes through node:http, so nothing is
// reported twice). Inlined by build.mjs into preload.cjs and embed.mjs as IWNodeCapture.
//
// Channels, by Node version (feature-detected; verified here on v20.20):
//   http.client.request.start     ({request}) — Node ≥ 19, backported to
//                                  16.18 / 18.x (nodejs/node#43580);
//                                  published when the request has been
//                                  written out (ClientRequest._finish)
//   http.client.response.finish   ({request, response}) — same versions;
//                                  despite its name, published when the
//                                  response HEAD is parsed
//   http.client.request.created   ({request}) — Node 22.12 / 23.2: published
//                                  inside http.request(), so the caller's
//                                  stack is taken there; on older Node the
//                                  start event runs on a later tick with
//                                  only Node's frames, and the item has no
//                                  stackTrace (no Initiator stack)
//   http.client.request.error     — Node 22.6 / 20.17 (#54054); not needed:
//                                  errors are seen on every version through
//                                  events.errorMonitor, which observes an
//                                  'error' without handling it (an app
//                                  without an error listener still crashes
//                                  exactly as before)
// Without the first two (older Node) nothing is captured, and captureHTTP
// says so by returning null.
//
// Bodies are NOT read: reading would consume the application's streams.
// The request item says so (bodiesNotRead), and finished carries 0 bytes.
// The end of a response is seen through 'end'/'close' listeners on the
// IncomingMessage, which do not switch it to flowing mode; a response
// the application never reads never ends, and its entry stays open.

import { nowMs, stackHolder } from './core.mjs';
import { FetchRecord, headerList, errorMessage } from './capture.mjs';

// Frames above the application's when http.client.request.start is
// published: the subscriber, the channel, _finish, end, … (Node's own,
// dropped as "own" along with the preload's).
const HTTP_OWN_FRAMES = 16;

/**
 * Subscribes to the http.client channels. Returns an unsubscribe function,
 * or null when this Node does not publish them.
 * @param {any} dc node:diagnostics_channel
 * @param {any} events node:events
 * @param {import('./capture.mjs').CaptureSink & {enabled?: () => boolean}} sink
 */
export function captureHTTP(dc, events, sink) {
  if (!dc || typeof dc.channel !== 'function') return null;
  const monitor = events && events.errorMonitor;
  const enabled = sink.enabled || (() => true);
  const isOwn = (/** @type {{url:string}} */ f) => sink.isOwn(f) || f.url.startsWith('node:');
  const httpSink = { producer: sink.producer, isOwn, budget: 0 };
  /** @type {WeakMap<object, {rec: FetchRecord, responded: boolean}>} */
  const live = new WeakMap();
  /** @type {WeakMap<object, any>} stacks taken by http.client.request.created */
  const stacks = new WeakMap();

  const onCreated = (/** @type {any} */ msg) => {
    try {
      const req = msg && msg.request;
      if (req && enabled()) stacks.set(req, stackHolder(HTTP_OWN_FRAMES));
    } catch (e) { /* never into the application */ }
  };

  const onStart = (/** @type {any} */ msg) => {
    try {
      const req = msg && msg.request;
      if (!req || live.has(req) || !enabled()) return;
      // Only the created event's: where Node does not publish it, this
      // runs on a later tick with Node's frames only (all dropped as own),
      // so a stack taken here would cost every request and show nothing.
      const holder = stacks.get(req);
      const rec = new FetchRecord(httpSink);
      const st = { rec, responded: false };
      live.set(req, st);
      rec.request({ url: requestURL(req), method: String(req.method || 'GET'), headers: requestHeaders(req), kind: 'http', bodiesNotRead: true }, nowMs(), holder);
      if (monitor) req.on(monitor, (/** @type {any} */ e) => { try { rec.fail(errorMessage(e), !!req.destroyed && isAbortError(e)); } catch (x) { /* ignore */ } });
      req.once('close', () => {
        try { if (!st.responded) rec.fail('request closed before a response', true); } catch (x) { /* ignore */ }
      });
    } catch (e) { /* never into the application */ }
  };

  const onResponse = (/** @type {any} */ msg) => {
    try {
      const req = msg && msg.request, res = msg && msg.response;
      const st = req && live.get(req);
      if (!st || !res) return;
      st.responded = true;
      const rec = st.rec;
      rec.response({
        url: requestURL(req),
        status: Number(res.statusCode) || 0,
        statusText: String(res.statusMessage || ''),
        headers: lazyRawHeaders(res.rawHeaders),
      }, nowMs());
      res.once('end', () => { try { rec.finish(); } catch (x) { /* ignore */ } });
      if (monitor) res.on(monitor, (/** @type {any} */ e) => { try { rec.fail(errorMessage(e), isAbortError(e)); } catch (x) { /* ignore */ } });
      res.once('close', () => {
        try {
          if (res.complete) rec.finish();
          else rec.fail('response closed before its end', true);
        } catch (x) { /* ignore */ }
      });
    } catch (e) { /* never into the application */ }
  };

  // created first: a Node without it never publishes it (harmless).
  const names = [['http.client.request.created', onCreated], ['http.client.request.start', onStart], ['http.client.response.finish', onResponse]];
  /** @type {Array<() => void>} */
  const undo = [];
  for (const [name, fn] of /** @type {Array<[string, (m: any) => void]>} */ (names)) {
    try {
      if (typeof dc.subscribe === 'function') {
        dc.subscribe(name, fn);
        undo.push(() => dc.unsubscribe(name, fn));
      } else {
        // Node < 18.7: the channel object must stay referenced, or it may
        // be collected with its subscribers.
        const ch = dc.channel(name);
        ch.subscribe(fn);
        undo.push(() => ch.unsubscribe(fn));
      }
    } catch (e) {
      for (const u of undo) safeRun(u);
      return null;
    }
  }
  return () => { for (const u of undo) safeRun(u); };
}

/** @param {() => void} f */
function safeRun(f) {
  try { f(); } catch (e) { /* ignore */ }
}

/** @param {any} e */
function isAbortError(e) {
  try { return !!e && (e.name === 'AbortError' || e.code === 'ABORT_ERR' || e.code === 'ECONNRESET' && e.message === 'socket hang up'); } catch (x) { return false; }
}

/**
 * protocol//host[:port]/path of a ClientRequest (the Host header carries
 * the port when it is not the default).
 * @param {any} req
 */
function requestURL(req) {
  let host = '';
  try { host = String(req.getHeader('host') || ''); } catch (e) { host = ''; }
  if (!host) host = String(req.host || 'localhost');
  return String(req.protocol || 'http:') + '//' + host + String(req.path || '/');
}

/**
 * The request's headers as the application set them (original case, arrays
 * as repeats).
 * @param {any} req
 */
function requestHeaders(req) {
  /** @type {Array<[string, string]>} */
  const pairs = [];
  try {
    const names = typeof req.getRawHeaderNames === 'function' ? req.getRawHeaderNames() : Object.keys(req.getHeaders());
    for (const n of names) {
      const v = req.getHeader(n);
      if (Array.isArray(v)) for (const x of v) pairs.push([n, String(x)]);
      else if (v !== undefined) pairs.push([n, String(v)]);
    }
  } catch (e) { /* what we have */ }
  return headerList(pairs);
}

/**
 * The response's headers, listed when its item is sent: Node fills
 * rawHeaders once, from the parsed head, and never changes it.
 * @param {any} raw
 */
function lazyRawHeaders(raw) {
  return Array.isArray(raw) ? () => rawHeaders(raw) : [];
}

/** @param {any} raw IncomingMessage.rawHeaders: [name, value, name, value, …] */
function rawHeaders(raw) {
  /** @type {Array<[string, string]>} */
  const pairs = [];
  if (Array.isArray(raw)) for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]]);
  return headerList(pairs);
}
