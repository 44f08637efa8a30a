/*
 * inspector-worker, embedded: start the worker from inside a Node app.
 *
 *   import { startInspectorWorker } from './embed.mjs';
 *   const iw = await startInspectorWorker({ binary: 'inspector-worker', port: 0 });
 *   console.log(iw.frontendURL);   // open it in Chrome
 *   iw.observe('ready', { pid: process.pid });
 *   await iw.close();
 *
 * It opens this process's own inspector on 127.0.0.1 (a random port; an
 * inspector that is already open is reused), spawns
 * `<binary> serve --host-inspector <inspector url> --port <port>` with a
 * socketpair on the child's fd 3 (Node's 'pipe' stdio is a bidirectional
 * AF_UNIX socket on Unix), and speaks the host side of the protocol on it
 * with the same producer as preload.cjs: hello {role:"host"}, replace, one
 * append in flight, a bounded queue that drops the oldest items and
 * reports them. It resolves once the worker prints
 * "inspector-worker: listening on http://ADDR" (and its "open in Chrome"
 * line) on stderr, which is forwarded to this process's stderr unchanged.
 *
 * NOTE: `serve` does not read fd 3 yet (the host pipe carrier is another
 * issue). Until it does, the worker never answers the hello; the producer
 * treats that as "no acks yet": observe() fills the bounded queue, which
 * drops the oldest items, and nothing blocks or grows without bound.
 *
 * It also captures this process's fetch and node:http requests as `fetch`
 * items, like the preload under `run` (option capture:false or env
 * INSPECTOR_WORKER_CAPTURE=0: nothing is installed).
 *
 * The worker is a child of the app; it is unref'd once listening, so it
 * never keeps the app alive, and it is killed when the app exits or
 * close() is called.
 *
 * embed.mjs is generated, whole, by build.mjs: its own code is written in
 * embed.in.mjs, the modules it carries (core.mjs …) are inlined between
 * BEGIN/END comments. Edit those, never embed.mjs, then run
 * `node client/js/build.mjs` (or `go generate ./client/js/`).
 */

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import inspector from 'node:inspector';
import diagnosticsChannel from 'node:diagnostics_channel';
import events from 'node:events';
import { fileURLToPath } from 'node:url';

// build.mjs inlines core.mjs here

// build.mjs inlines bodytap.mjs here

// build.mjs inlines capture.mjs here

// build.mjs inlines nodecapture.mjs here

const LISTENING = /inspector-worker: listening on http:\/\/(\S+)/;
const FRONTEND = /inspector-worker: open in Chrome: (\S+)/;

/**
 * @typedef {object} EmbeddedWorker
 * @property {string} address host:port of the worker's DevTools endpoint
 * @property {string} frontendURL the DevTools URL the worker printed ('' if it printed none)
 * @property {string} inspectorURL this process's inspector, as given to the worker
 * @property {(name: string, data?: unknown) => boolean} observe queue an `app` item
 * @property {() => {queued:number, dropped:number, sent:number, acked:number}} stats
 * @property {() => string} bootstrapSnippet the <script> tag for pages this app serves
 * @property {() => Promise<void>} close kill the worker (and close the inspector if we opened it)
 */

/**
 * Starts inspector-worker for this process.
 *
 * capture (default true; env INSPECTOR_WORKER_CAPTURE=0 also turns it off):
 * this process's fetch and node:http requests are captured as under `run`
 * (preload.cjs; capture.mjs says what the app may rely on), each body up to
 * captureBodyBytes (default INSPECTOR_WORKER_CAPTURE_BODY_BYTES, else 1 MiB).
 * close() puts fetch back.
 * @param {{binary?: string, port?: number, timeoutMs?: number, capture?: boolean, captureBodyBytes?: number}} [opts]
 * @returns {Promise<EmbeddedWorker>}
 */
export async function startInspectorWorker({ binary = 'inspector-worker', port = 0, timeoutMs = 20000, capture = true, captureBodyBytes } = {}) {
  let inspectorURL = inspector.url();
  const opened = !inspectorURL;
  if (opened) {
    inspector.open(0, '127.0.0.1', false);
    inspectorURL = inspector.url();
  }
  if (!inspectorURL) throw new Error('inspector-worker: could not open the Node inspector');

  // stderr is piped (not inherited) so the listening line can be read; it
  // is forwarded byte for byte.
  // The page token is drawn here and handed to the worker through its
  // environment (never argv, which other local users can read).
  const token = randomBytes(32).toString('base64url');
  const child = spawn(binary, ['serve', '--host-inspector', inspectorURL, '--port', String(port), '--host-channel-fd', '3'], {
    stdio: ['ignore', 'inherit', 'pipe', 'pipe'],
    env: { ...process.env, INSPECTOR_WORKER_TOKEN: token },
  });
  const channel = /** @type {any} */ (child.stdio[3]);
  const producer = new IWCore.Producer({
    role: 'host',
    source: 'host',
    capabilities: [],
    topics: ['app', 'fetch'],
    agent: { name: 'inspector-worker-embed', version: IWCore.AGENT_VERSION },
    maxInFlight: 1,
    batchWindow: 5, // fetch items only; see preload.cjs
  });
  let active = true;
  IWCore.attachLineStream(producer, channel, () => { active = false; });
  /** @type {Array<() => void>} */
  const uncapture = [];
  if (capture && process.env.INSPECTOR_WORKER_CAPTURE !== '0') {
    const own = fileURLToPath(import.meta.url);
    const sink = {
      producer,
      isOwn: (/** @type {{url: string}} */ f) => f.url === import.meta.url || f.url === own,
      budget: IWCapture.bodyBudget(captureBodyBytes !== undefined ? captureBodyBytes : process.env.INSPECTOR_WORKER_CAPTURE_BODY_BYTES),
      enabled: () => active,
    };
    for (const install of [() => IWCapture.wrapFetch(globalThis, sink), () => IWNodeCapture.captureHTTP(diagnosticsChannel, events, sink)]) {
      try {
        const undo = install();
        if (undo) uncapture.push(undo);
      } catch (e) { /* no capture */ }
    }
  }

  const killOnExit = () => { try { child.kill(); } catch (e) { /* gone */ } };
  process.on('exit', killOnExit);
  const exited = new Promise((resolve) => child.once('exit', resolve));

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    process.removeListener('exit', killOnExit);
    active = false;
    for (const undo of uncapture.splice(0)) undo();
    if (child.exitCode === null && child.signalCode === null) {
      child.ref(); // unref'd once listening: waiting for its exit must keep us alive
      child.kill();
      await exited;
    }
    if (opened) {
      try { inspector.close(); } catch (e) { /* already closed */ }
    }
  };

  /** @type {{address:string, frontendURL:string}} */
  const found = await new Promise((resolve, reject) => {
    let address = '';
    let buf = '';
    let settled = false;
    /** @type {any} */
    let grace = null;
    const timer = setTimeout(() => fail(new Error('inspector-worker: no "listening on" line within ' + timeoutMs + ' ms')), timeoutMs);
    const done = (/** @type {string} */ frontendURL) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      child.removeListener('error', fail);
      child.removeListener('exit', onExit);
      resolve({ address, frontendURL });
    };
    const fail = (/** @type {Error} */ err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      close().then(() => reject(err), () => reject(err));
    };
    const onExit = (/** @type {number|null} */ code, /** @type {string|null} */ signal) => {
      fail(new Error('inspector-worker exited (' + (signal || code) + ') before it was listening'));
    };
    child.once('error', fail); // e.g. ENOENT: no such binary
    child.once('exit', onExit);
    /** @type {any} */ (child.stderr).on('data', (/** @type {Buffer} */ chunk) => {
      process.stderr.write(chunk);
      if (settled) return;
      buf += chunk.toString('utf8');
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let m;
        if (!address && (m = LISTENING.exec(line))) {
          address = m[1];
          // The "open in Chrome" line follows at once; do not wait long for it.
          grace = setTimeout(() => done(''), 1000);
        } else if (address && (m = FRONTEND.exec(line))) {
          done(m[1]);
          return;
        }
      }
    });
  });

  // Listening: from now on the worker must not keep the app alive.
  child.unref();
  for (const s of [child.stderr, channel]) {
    try { /** @type {any} */ (s).unref(); } catch (e) { /* not a socket */ }
  }

  return {
    address: found.address,
    frontendURL: found.frontendURL,
    inspectorURL,
    observe(name, data) {
      if (!active) return false;
      try {
        return producer.enqueueJSON('app', IWCore.appItemJSON(name, data, producer.limits));
      } catch (e) {
        return false;
      }
    },
    stats() {
      const s = producer.stats();
      return { queued: s.queued, dropped: s.dropped, sent: s.sent, acked: s.acked };
    },
    /** The <script> tag that connects a served page to this worker. */
    bootstrapSnippet() {
      const a = found.address;
      return '<script src="http://' + a + '/client.js" data-endpoint="ws://' + a + '/client" data-token="' + token + '"></script>';
    },
    close,
  };
}
