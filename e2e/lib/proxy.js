// Recording CDP proxy: DevTools frontend -> proxy -> worker, every frame logged both
// ways, per connection. analyze() checks the conversation the way the design asks
// ("every CDP request gets exactly one response") and lists the methods that were
// answered with an error.
import fs from 'node:fs';
import { WebSocket, WebSocketServer } from 'ws';

/** Frames up to this size pass; a host script source or a heap chunk can be large. */
const MAX_FRAME_BYTES = 256 << 20;

/**
 * @typedef {{conn: number, dir: '>' | '<', t: number, text: string}} Frame
 *   dir '>' is frontend -> worker, '<' is worker -> frontend.
 */

/**
 * @param {{upstreamPort: number, logFile?: string}} opts
 */
export async function startProxy({ upstreamPort, logFile }) {
  /** @type {Frame[]} */
  const frames = [];
  const log = logFile ? fs.createWriteStream(logFile) : null;
  let nextConn = 1;
  /** @type {Set<WebSocket>} */
  const sockets = new Set();
  /** @type {Map<number, {opened: number, closed?: number, closeCode?: number, closedBy?: string}>} */
  const conns = new Map();

  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: MAX_FRAME_BYTES });
  await new Promise((resolve, reject) => {
    wss.once('listening', resolve);
    wss.once('error', reject);
  });
  const port = /** @type {import('node:net').AddressInfo} */ (wss.address()).port;

  /** @param {number} conn @param {'>'|'<'} dir @param {string} text */
  const record = (conn, dir, text) => {
    const f = { conn, dir, t: Date.now(), text };
    frames.push(f);
    log?.write(JSON.stringify(f) + '\n');
  };

  wss.on('connection', (down, req) => {
    const conn = nextConn++;
    conns.set(conn, { opened: Date.now() });
    sockets.add(down);
    // Forward the frontend's Origin: the worker's origin check must see what it would
    // see without the proxy.
    const up = new WebSocket(`ws://127.0.0.1:${upstreamPort}${req.url}`, {
      perMessageDeflate: false,
      maxPayload: MAX_FRAME_BYTES,
      ...(req.headers.origin ? { origin: req.headers.origin } : {}),
    });
    sockets.add(up);
    /** @type {string[]} */
    const pending = [];
    const closeBoth = (/** @type {string} */ by, /** @type {number} */ code) => {
      const c = conns.get(conn);
      if (c && !c.closed) Object.assign(c, { closed: Date.now(), closeCode: code, closedBy: by });
      const sendable = code >= 3000 || [1000, 1001, 1008, 1011].includes(code) ? code : 1000;
      for (const s of [up, down]) {
        if (s.readyState === WebSocket.OPEN || s.readyState === WebSocket.CONNECTING) {
          try { s.readyState === WebSocket.OPEN ? s.close(sendable) : s.terminate(); } catch { s.terminate(); }
        }
      }
    };
    down.on('message', (data, isBinary) => {
      const text = data.toString();
      record(conn, '>', text);
      if (up.readyState === WebSocket.OPEN) up.send(text, { binary: isBinary });
      else pending.push(text);
    });
    up.on('open', () => {
      for (const text of pending.splice(0)) up.send(text);
    });
    up.on('message', (data, isBinary) => {
      const text = data.toString();
      record(conn, '<', text);
      if (down.readyState === WebSocket.OPEN) down.send(text, { binary: isBinary });
    });
    up.on('unexpected-response', (_req, res) => {
      record(conn, '<', JSON.stringify({ proxyNote: `upstream refused the WebSocket: HTTP ${res.statusCode}` }));
      closeBoth('worker', 1011);
    });
    up.on('close', (code) => closeBoth('worker', code));
    down.on('close', (code) => closeBoth('frontend', code));
    up.on('error', () => closeBoth('worker', 1011));
    down.on('error', () => closeBoth('frontend', 1011));
  });

  return {
    port,
    frames,
    conns,
    /** host:port/path for the frontend's ws= parameter. */
    wsHostPath(/** @type {string} */ path) {
      return `127.0.0.1:${port}${path}`;
    },
    /**
     * Waits until no request is outstanding (or the deadline passes) and returns the
     * analysis; requests still open then are the unanswered ones.
     */
    async settle({ timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      let a = analyze(frames);
      while (a.unanswered.length && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        a = analyze(frames);
      }
      return a;
    },
    analyze: () => analyze(frames),
    async close() {
      for (const s of sockets) s.terminate();
      await new Promise((r) => wss.close(r));
      await new Promise((r) => (log ? log.end(r) : r(undefined)));
    },
  };
}

/**
 * @typedef {{conn: number, sessionId: string, id: number, method: string, t: number}} Req
 * @typedef {{
 *   requests: number,
 *   responses: number,
 *   events: number,
 *   methodsSent: Map<string, number>,
 *   unanswered: Req[],
 *   duplicateAnswers: Array<Req & {count: number}>,
 *   unsolicited: Array<{conn: number, sessionId: string, id: number, text: string}>,
 *   reusedIds: Req[],
 *   errors: Map<string, {code: number, message: string, count: number, params: string}>,
 *   unparsable: Frame[],
 *   idless: string[],
 * }} Analysis
 */

/**
 * @param {Frame[]} frames
 * @returns {Analysis}
 */
export function analyze(frames) {
  /** @type {Map<string, Req & {answers: number, params: string}>} */
  const open = new Map();
  /** @type {Analysis} */
  const a = {
    requests: 0, responses: 0, events: 0, methodsSent: new Map(), unanswered: [],
    duplicateAnswers: [], unsolicited: [], reusedIds: [], errors: new Map(), unparsable: [], idless: [],
  };
  /** @type {Map<string, Req & {answers: number, params: string}>} */
  const all = new Map();
  for (const f of frames) {
    let msg;
    try {
      msg = JSON.parse(f.text);
    } catch {
      a.unparsable.push(f);
      continue;
    }
    if (msg && msg.proxyNote) continue;
    const sessionId = msg.sessionId || '';
    const key = `${f.conn}/${sessionId}/${msg.id}`;
    if (f.dir === '>') {
      if (typeof msg.id !== 'number' || typeof msg.method !== 'string') {
        a.unparsable.push(f);
        continue;
      }
      a.requests++;
      a.methodsSent.set(msg.method, (a.methodsSent.get(msg.method) || 0) + 1);
      const req = { conn: f.conn, sessionId, id: msg.id, method: msg.method, t: f.t, answers: 0, params: JSON.stringify(msg.params ?? {}) };
      if (open.has(key)) a.reusedIds.push(req);
      open.set(key, req);
      all.set(key, req);
      continue;
    }
    if (msg.id === undefined) {
      if (msg.error || msg.result) a.idless.push(f.text.slice(0, 300));
      else a.events++;
      continue;
    }
    a.responses++;
    const req = all.get(key);
    if (!req) {
      a.unsolicited.push({ conn: f.conn, sessionId, id: msg.id, text: f.text.slice(0, 300) });
      continue;
    }
    req.answers++;
    open.delete(key);
    if (req.answers === 2) a.duplicateAnswers.push({ ...req, count: 2 });
    if (msg.error) {
      const e = a.errors.get(req.method);
      if (e) e.count++;
      else a.errors.set(req.method, { code: msg.error.code, message: String(msg.error.message), count: 1, params: req.params.slice(0, 200) });
    }
  }
  a.unanswered = [...open.values()];
  return a;
}

/** A readable summary of an analysis for test output. */
export function formatAnalysis(/** @type {Analysis} */ a) {
  const lines = [
    `CDP log: ${a.requests} requests, ${a.responses} responses, ${a.events} events, ${a.methodsSent.size} distinct methods sent`,
  ];
  const errs = [...a.errors.entries()].sort(([x], [y]) => x.localeCompare(y));
  lines.push(`methods answered with an error (${errs.length}):`);
  for (const [method, e] of errs) lines.push(`  ${method}  [${e.code}] ${e.message}${e.count > 1 ? `  (x${e.count})` : ''}`);
  if (a.unanswered.length) {
    lines.push(`UNANSWERED requests (${a.unanswered.length}):`);
    for (const r of a.unanswered) lines.push(`  conn ${r.conn} id ${r.id}${r.sessionId ? ` session ${r.sessionId}` : ''} ${r.method}`);
  }
  for (const r of a.duplicateAnswers) lines.push(`ANSWERED TWICE: conn ${r.conn} id ${r.id} ${r.method}`);
  for (const r of a.unsolicited) lines.push(`UNSOLICITED response on conn ${r.conn}: ${r.text}`);
  for (const r of a.idless) lines.push(`ANSWER WITHOUT id: ${r}`);
  for (const r of a.reusedIds) lines.push(`frontend reused an open id: conn ${r.conn} id ${r.id} ${r.method}`);
  return lines.join('\n');
}
