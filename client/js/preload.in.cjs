'use strict';
/*
 * inspector-worker host preload — the Node host's producer of the internal
 * observation protocol (docs/protocol.md), loaded by `inspector-worker run`
 * as `node --require <path>/preload.cjs app.js`.
 *
 * When env INSPECTOR_WORKER_FD names an open socket (normally "3": one end
 * of an AF_UNIX socketpair whose other end is the worker's host pipe), it
 * speaks the protocol on it, one JSON frame per line: hello {role:"host"},
 * the initial replace, then appends — EXACTLY ONE sequenced frame in
 * flight, the next one written only after the worker's ack (or reject) of
 * the previous. Observations wait in a bounded queue (10,000 items or
 * 16 MiB; the oldest are dropped and reported in the next append's
 * `dropped`), so the app is never blocked and never kept alive: the socket
 * is unref'd, and nothing here throws into the app. Without the variable,
 * or with a fd that is not a socket or breaks later, it is a no-op.
 *
 * The variable is removed from process.env once read, so child processes
 * (cluster.fork re-runs --require!) do not write into whatever their own
 * fd 3 is; a fd that is Node's IPC channel (NODE_CHANNEL_FD) is never used.
 *
 * API, on globalThis.inspectorWorker and module.exports:
 *   observe(name, data)  queue an `app` item {name, timestamp, data}; false if not queued
 *   bootstrapSnippet()   the <script> tag that loads the browser client from
 *                        this run's worker (INSPECTOR_WORKER_ENDPOINT,
 *                        INSPECTOR_WORKER_TOKEN), or '' outside a run
 *   injectResponse(res)  give one node:http response the tag by --inject's
 *                        rules (the Express middleware, wiring/express.mjs),
 *                        --inject on or off; false outside a run
 *   stats()              {queued, dropped, sent, acked}
 *
 * Injection (env INSPECTOR_WORKER_INJECT=1, set by `run --inject`, the
 * default): node:http's HTML responses get bootstrapSnippet()'s tag before
 * the page's own scripts, so pages join with no code (inject.mjs says
 * exactly which responses and how).
 *
 * Capture (on whenever the host channel is open, and in a followed child
 * process on a channel of its own, childCapture below; env
 * INSPECTOR_WORKER_CAPTURE=0 installs nothing at all): globalThis.fetch is
 * wrapped (capture.mjs) and node:http/https requests are observed through
 * diagnostics_channel (nodecapture.mjs); both queue `fetch` items on the
 * same producer. Each body keeps at most INSPECTOR_WORKER_CAPTURE_BODY_BYTES
 * (default 1 MiB) bytes. What the application gets from fetch never
 * changes: see capture.mjs.
 *
 * preload.cjs is generated, whole, by build.mjs: its own code is written in
 * preload.in.cjs, the modules it carries (core.mjs …) are inlined between
 * BEGIN/END comments. Edit those, never preload.cjs, then run
 * `node client/js/build.mjs` (or `go generate ./client/js/`).
 */

// build.mjs inlines core.mjs here

// build.mjs inlines bodytap.mjs here

// build.mjs inlines capture.mjs here

// build.mjs inlines nodecapture.mjs here

// build.mjs inlines inject.mjs here

const fs = require('node:fs');
const net = require('node:net');

const FD_ENV = 'INSPECTOR_WORKER_FD';

// The host's children must not inherit the worker's --inspect-wait (or
// --inspect-brk) through process.execArgv: a child started with fork(),
// cluster or process.execPath + execArgv would wait forever for a debugger
// nobody attaches, and the host with it (and the host's
// --inspect-publish-uid=stderr,http would put their banner back on the
// terminal). A Node child opens an inspector of its own instead and
// registers it (registerChild, below).
(function stripInspectFlags() {
  const inspectFlag = /^--(inspect|inspect-brk|inspect-wait|inspect-port|inspect-publish-uid|debug-port)(=.*)?$/;
  const takesValue = new Set(['inspect-port', 'inspect-publish-uid', 'debug-port']);
  const argv = process.execArgv;
  for (let i = argv.length - 1; i >= 0; i--) {
    const m = inspectFlag.exec(argv[i]);
    if (m === null) continue;
    const pair = m[2] === undefined && takesValue.has(m[1]) && i + 1 < argv.length;
    argv.splice(i, pair ? 2 : 1);
  }
})();
const HOST_SOURCE = 'host';

/** @type {InstanceType<typeof IWCore.Producer> | null} */
let producer = null;
let active = false;

// Package managers and launchers (PASS_ON; the same list is passOnScripts in
// cmd/inspector-worker/launch.go): a process whose script's real path ends
// with an entry (or holds an entry ending in "/") is never the host nor a
// followed child. It only passes the worker's variables, untouched, to the
// processes it starts: npm, npx, pnpm, yarn and corepack run no user code;
// next dev, nodemon, tsx and ts-node-dev run the app in a child process.
const PASS_ON = [
  '/npm/bin/npm-cli.js', '/npm/bin/npx-cli.js',
  '/pnpm/bin/pnpm.cjs', '/pnpm/bin/pnpx.cjs', '/pnpm/dist/pnpm.cjs',
  '/yarn/bin/yarn.js', '/yarn/bin/yarn.cjs', '/yarn/lib/cli.js', '/.yarn/releases/',
  '/corepack/dist/', '/corepack/v1/',
  '/next/dist/bin/next', '/nodemon/bin/nodemon.js', '/tsx/dist/cli.mjs', '/tsx/dist/cli.cjs',
  '/ts-node-dev/lib/bin.js',
];
const passOn = (function isPassOn() {
  if (!process.argv[1]) return false;
  let script = process.argv[1];
  try { script = fs.realpathSync(script); } catch (e) { /* not a file (node -e) */ }
  script = script.replace(/\\/g, '/');
  return PASS_ON.some((s) => (s.endsWith('/') ? script.includes(s) : script.endsWith(s)));
})();

// Claiming the host. `run -- CMD` with a CMD that is not `node …` (npm run
// dev, npx vite, a .bin shim) starts it as is, with this preload in
// NODE_OPTIONS and the worker's claim socket in CLAIM_ENV; nothing reaches
// fd 3 (package managers close the fds they did not open). The first Node
// process that is not PASS_ON becomes the host: it opens its inspector,
// waits for a debugger (like --inspect-wait), and a thread of its own
// claims the host on the socket. Answered "host", the worker attaches and
// lets it run; the process then connects its host channel on the same
// socket. Answered "child" (a host exists), or with no answer within
// CLAIM_TIMEOUT_MS, the thread lets it run itself and it registers as a
// child (registerChild).
const CLAIM_ENV = 'INSPECTOR_WORKER_HOST_SOCKET';
const claimSocket = process.env[CLAIM_ENV] || '';
const CLAIM_TIMEOUT_MS = 10000;

/**
 * The claim, in a thread of its own while the main thread waits: its
 * source is evaluated there, so it uses nothing from outside itself.
 * @param {{path:string, body:string, flag:Int32Array, timeoutMs:number}} d
 */
function claimPost(d) {
  let decided = false;
  /** @param {number} v 1 host, 2 not */
  const decide = (v) => {
    if (decided) return;
    decided = true;
    Atomics.store(d.flag, 0, v);
    Atomics.notify(d.flag, 0);
    if (v === 1) return; // the worker lets the main thread run
    try {
      const s = new (require('node:inspector').Session)();
      s.connectToMainThread();
      s.post('Runtime.runIfWaitingForDebugger', () => s.disconnect());
    } catch (e) { /* the main thread is not waiting */ }
  };
  const sock = require('node:net').connect(d.path);
  let text = '';
  sock.setEncoding('utf8');
  sock.on('data', (c) => {
    text += c;
    if (text.includes('\n')) { decide(text.startsWith('host\n') ? 1 : 2); sock.destroy(); }
  });
  sock.on('error', () => decide(2));
  sock.on('close', () => decide(2));
  setTimeout(() => decide(2), d.timeoutMs).unref();
  sock.write(d.body + '\n');
}

// Whether this process is the host: the one `run -- node …` started (it
// alone is given the host channel on fd 3), or the one whose claim was
// granted.
let isHost = (process.env[FD_ENV] || '') !== '';

(function claimHost() {
  if (claimSocket === '' || isHost || passOn) return;
  try {
    if (!require('node:worker_threads').isMainThread) return;
    const inspector = require('node:inspector');
    if (inspector.url() === undefined) inspector.open(0, '127.0.0.1', false);
    const url = inspector.url();
    if (!url) return;
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const body = JSON.stringify({ kind: 'claim', pid: process.pid, ppid: process.ppid, argv: process.argv, url });
    const { Worker } = require('node:worker_threads');
    new Worker('(' + claimPost.toString() + ')(require("node:worker_threads").workerData)',
      { eval: true, workerData: { path: claimSocket, body, flag, timeoutMs: CLAIM_TIMEOUT_MS } }).unref();
    inspector.waitForDebugger();
    // The worker writes "host" before it attaches, but the thread may read
    // it a moment after the release.
    Atomics.wait(flag, 0, 0, CLAIM_TIMEOUT_MS);
    if (Atomics.load(flag, 0) !== 1) return;
    isHost = true;
    // The host's own children register directly (registerChild), without
    // a claim the worker would refuse.
    delete process.env[CLAIM_ENV];
    const sock = net.connect(claimSocket);
    sock.unref(); // the worker never keeps the app alive
    sock.write(JSON.stringify({ kind: 'pipe', pid: process.pid }) + '\n');
    producer = createHostProducer();
    active = true;
    IWCore.attachLineStream(producer, sock, () => { active = false; });
    // Like a child's (registerChild): close the inspector at the end, so
    // Node never holds the process at "Waiting for the debugger to
    // disconnect..." nor prints it.
    process.on('exit', () => { try { inspector.close(); } catch (e) { /* already closed */ } });
  } catch (e) { /* no inspector: the process runs unobserved */ }
})();

// Read once: bootstrapSnippet must not depend on later env edits, and the
// token is never logged nor kept anywhere observable but the snippet. A
// process of a command run as is that is not the host has no use for it.
const endpoint = process.env.INSPECTOR_WORKER_ENDPOINT || '';
const token = passOn || (claimSocket !== '' && !isHost) ? '' : process.env.INSPECTOR_WORKER_TOKEN || '';
// The app's own child processes must not inherit the page token; a package
// manager passes it on to the app.
if (!passOn) delete process.env.INSPECTOR_WORKER_TOKEN;

/** A producer for the host pipe: role host, one frame in flight. */
function createHostProducer() {
  return new IWCore.Producer({
    role: 'host',
    source: HOST_SOURCE,
    capabilities: [],
    topics: ['app', 'fetch'],
    agent: { name: 'inspector-worker-preload', version: IWCore.AGENT_VERSION },
    maxInFlight: 1,
    // Fetch items wait up to 5 ms for company: capture queues 3–4 items per
    // call, and a frame (write + ack) per call costs the app more than the
    // capture itself. observe() items still go at once.
    batchWindow: 5,
  });
}

(function start() {
  const raw = process.env[FD_ENV];
  if (raw === undefined || raw === '') return;
  delete process.env[FD_ENV];
  const fd = Number(raw);
  if (!Number.isInteger(fd) || fd < 3) return; // never stdio
  if (process.env.NODE_CHANNEL_FD === String(fd)) return;
  try {
    if (!fs.fstatSync(fd).isSocket()) return;
    const sock = new net.Socket({ fd, readable: true, writable: true });
    sock.unref(); // the worker never keeps the app alive
    producer = createHostProducer();
    active = true;
    IWCore.attachLineStream(producer, sock, () => { active = false; });
  } catch (e) {
    active = false;
  }
})();

// Capture, read once at start: a later env edit does not turn it on or off.
const CAPTURE_ENV = 'INSPECTOR_WORKER_CAPTURE';
const BODY_BYTES_ENV = 'INSPECTOR_WORKER_CAPTURE_BODY_BYTES';
(function installCapture() {
  if (!active || !producer || process.env[CAPTURE_ENV] === '0') return;
  const p = producer;
  // Frames of this file (the wrappers) are dropped from the caller's stack.
  const isOwn = (/** @type {{url: string}} */ f) => f.url === __filename;
  const sink = {
    producer: p,
    isOwn,
    budget: IWCapture.bodyBudget(process.env[BODY_BYTES_ENV]),
    // The channel gone (worker ended): the wrappers pass straight through.
    enabled: () => active,
  };
  try { IWCapture.wrapFetch(globalThis, sink); } catch (e) { /* no capture */ }
  try { IWNodeCapture.captureHTTP(require('node:diagnostics_channel'), require('node:events'), sink); } catch (e) { /* no capture */ }
})();

// The exit report: `run` passes a pipe as INSPECTOR_WORKER_EXIT_FD and reads
// "exit N" from it. Node sometimes hangs in its inspector teardown after
// process.exit() (seen after an exit inside a DevTools evaluation); the
// worker then ends the process and still exits with the code the app asked
// for. Written synchronously: nothing asynchronous runs after 'exit'. A
// later 'exit' listener that changes process.exitCode is not seen (this one
// is registered first); the worker uses the report only for a host it had
// to end.
const EXIT_FD_ENV = 'INSPECTOR_WORKER_EXIT_FD';
(function reportExit() {
  const raw = process.env[EXIT_FD_ENV];
  if (raw === undefined || raw === '') return;
  delete process.env[EXIT_FD_ENV];
  const fd = Number(raw);
  if (!Number.isInteger(fd) || fd < 3) return; // never stdio
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFIFO() && !st.isSocket()) return; // never a file the app opened
  } catch (e) {
    return;
  }
  process.on('exit', (code) => {
    try {
      fs.writeSync(fd, 'exit ' + (Number.isInteger(code) ? code : 0) + '\n');
    } catch (e) { /* the worker is gone */ }
  });
})();

/**
 * Queues an application-defined observation (topic "app").
 * @param {string} name an identifier; other characters become "_"
 * @param {unknown} [data] any JSON value (bigints become strings, cycles "[Circular]"); too large → {truncated:true, bytes}
 * @returns {boolean} whether it was queued
 */
function observe(name, data) {
  if (!active || !producer) return false;
  try {
    return producer.enqueueJSON('app', IWCore.appItemJSON(name, data, producer.limits));
  } catch (e) {
    return false;
  }
}

/** @param {string} s */
function escapeAttr(s) {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The tag that loads the browser client from this run's worker:
 * <script src="http://HOST:PORT/client.js" data-endpoint="ws://HOST:PORT/client" data-token="…"></script>
 * '' when the app does not run under inspector-worker.
 */
function bootstrapSnippet() {
  const host = endpoint.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/.*$/, '');
  if (!host || !token) return '';
  return '<script src="http://' + escapeAttr(host) + '/client.js" data-endpoint="ws://' + escapeAttr(host) +
    '/client" data-token="' + escapeAttr(token) + '"></script>';
}

// Injection, read once at start like the token (and removed, so the app's
// children — which have no token — do not see it either). One options
// object for the prototype and every injectResponse: each hint line is
// printed once per process.
const INJECT_ENV = 'INSPECTOR_WORKER_INJECT';
const injectOptions = (function injectionOptions() {
  const snippet = bootstrapSnippet();
  if (!snippet) return null;
  const host = endpoint.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/.*$/, '');
  return {
    snippet,
    marker: 'data-endpoint="ws://' + escapeAttr(host) + '/client"',
    host,
    warn: (/** @type {string} */ line) => { try { process.stderr.write(line + '\n'); } catch (e) { /* no stderr */ } },
  };
})();
(function installInjection() {
  const on = process.env[INJECT_ENV] === '1';
  if (passOn) return;
  delete process.env[INJECT_ENV];
  if (!on || !injectOptions) return;
  try {
    IWInject.installInject(require('node:http'), injectOptions);
  } catch (e) { /* no injection */ }
})();

/**
 * The explicit wiring (wiring/express.mjs calls it for each request): this
 * response gets the tag by --inject's rules, from wrappers on the response
 * itself, which `run --inject` (the default, on the prototype) then leaves
 * to them — so a middleware after `compression` injects under both. True
 * when the response is wrapped (now or before), false outside a run.
 * @param {any} res an http.ServerResponse
 */
function injectResponse(res) {
  if (!injectOptions) return false;
  try {
    IWInject.injectResponse(res, injectOptions);
    return true;
  } catch (e) {
    return false;
  }
}

// Child processes. `run` puts the preload in NODE_OPTIONS too, so a Node
// process the host starts (fork, cluster, spawn of node) loads it; such a
// process has no host channel (the host removed the variable) but keeps
// CHILD_ENDPOINT_ENV and CHILD_TOKEN_ENV, which are left in process.env on
// purpose so that grandchildren register too. It opens its own inspector on
// a random loopback port and posts {pid, ppid, argv, url, waiting} to the
// worker's /child with the child token (a token of its own: the page token
// never reaches children). The worker attaches to that inspector; nothing
// is advertised in /json/list. A worker thread is not a child process (the
// host's threads are followed through NodeWorker), hence isMainThread.
//
// While some window asks children to wait at their start, the worker keeps
// the file CHILD_WAIT_ENV names; the child sees it before its first line
// and waits (inspector.waitForDebugger) until the worker lets it run, once
// every such window attached it and sent Runtime.runIfWaitingForDebugger:
// a child that logs one line and exits is seen whole. Its main thread is
// blocked meanwhile, so a short-lived thread posts the registration, and
// lets the child run itself when the worker refuses it, is gone, or does
// not answer within CHILD_WAIT_TIMEOUT_MS. Without the file the post is
// asynchronous and unref'd: the child is never kept alive or delayed by it,
// and one that ends before the worker attached is not seen.
const CHILD_ENDPOINT_ENV = 'INSPECTOR_WORKER_CHILD_ENDPOINT';
const CHILD_TOKEN_ENV = 'INSPECTOR_WORKER_CHILD_TOKEN';
const CHILD_WAIT_ENV = 'INSPECTOR_WORKER_CHILD_WAIT';
const CHILD_EXIT_BINDING = '__inspectorWorkerChildExit'; // childrealm.ExitBinding
// The worker answers a registration once it attached (bounded by 5 s there);
// past twice that it is taken as gone, and a waiting child runs unobserved.
const CHILD_WAIT_TIMEOUT_MS = 10000;

/**
 * Posts a child's registration. Runs in the child's main thread, or
 * (inThread) in a thread of its own while the main thread waits: its
 * source is evaluated there, so it uses nothing from outside itself.
 * @param {{host:string, port:number, token:string, body:string, pid:number, timeoutMs:number}} d
 * @param {boolean} inThread
 * @param {(followed: boolean) => void} [onAnswer] called once with whether the worker follows the child (main thread only)
 */
function childPost(d, inThread, onAnswer) {
  let answered = false;
  /** @param {string} line */
  const runUnobserved = (line) => {
    if (answered) return;
    answered = true;
    if (onAnswer) onAnswer(false);
    if (line) { try { process.stderr.write('inspector-worker: child ' + d.pid + ' not followed: ' + line + '\n'); } catch (e) { /* no stderr */ } }
    if (!inThread) return;
    try {
      const s = new (require('node:inspector').Session)();
      s.connectToMainThread();
      s.post('Runtime.runIfWaitingForDebugger', () => s.disconnect());
    } catch (e) { /* the main thread is not waiting */ }
  };
  const req = require('node:http').request({
    host: d.host, port: d.port, path: '/child', method: 'POST', agent: false,
    headers: { 'content-type': 'application/json', 'authorization': 'Bearer ' + d.token,
      'content-length': Buffer.byteLength(d.body) },
  }, (res) => {
    if (res.statusCode === 204) {
      answered = true; // followed: the worker lets a waiting child run
      res.resume();
      if (onAnswer) onAnswer(true);
      return;
    }
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c) => { if (text.length < 1024) text += c; });
    res.on('end', () => runUnobserved(text.trim()));
  });
  if (inThread) {
    setTimeout(() => runUnobserved('the worker did not answer in ' + d.timeoutMs + ' ms'), d.timeoutMs).unref();
  } else {
    req.on('socket', (s) => s.unref());
  }
  req.on('error', () => runUnobserved('')); // the worker is gone
  req.end(d.body);
}

// A followed child's fetch capture. Unless INSPECTOR_WORKER_CAPTURE=0 (the
// host's --no-capture, inherited), the child wraps fetch and node:http as
// the host does, before its first line, on a producer of its own (source
// "child-<pid>", topic fetch only: observe() stays the host's). Items wait
// in the producer's bounded queue (10,000 items or 16 MiB, oldest dropped
// and counted) until the worker followed the child; the child then opens
// GET /child/capture?pid=N on the worker's listener with the child token
// and "Upgrade: inspector-worker-lines", and after the 101 the socket
// carries the same lines as the host's pipe. The socket is unref'd (never
// keeps the child alive) and ends with the process. A refused registration
// or a refused or broken channel turns the capture off: the wrappers pass
// straight through, and nothing more is queued. Returns the function told
// whether the child is followed (it opens the channel then), or null
// without capture.
/** @param {{host:string, port:number, token:string, pid:number}} d */
function childCapture(d) {
  if (process.env[CAPTURE_ENV] === '0') return null;
  let up = true; // until the channel is refused or breaks
  const p = new IWCore.Producer({
    role: 'host',
    source: 'child-' + d.pid, // cdpserver.ChildSourcePrefix; the worker grants only this id
    capabilities: [],
    topics: ['fetch'],
    agent: { name: 'inspector-worker-preload', version: IWCore.AGENT_VERSION },
    maxInFlight: 1,
    batchWindow: 5, // as the host's (createHostProducer)
  });
  const isOwn = (/** @type {{url: string}} */ f) => f.url === __filename;
  const sink = { producer: p, isOwn, budget: IWCapture.bodyBudget(process.env[BODY_BYTES_ENV]), enabled: () => up };
  try { IWCapture.wrapFetch(globalThis, sink); } catch (e) { /* no capture */ }
  try { IWNodeCapture.captureHTTP(require('node:diagnostics_channel'), require('node:events'), sink); } catch (e) { /* no capture */ }
  let opened = false;
  const down = () => { up = false; };
  return function openChannel(followed = true) {
    if (opened) return;
    opened = true;
    if (!followed) { down(); return; }
    try {
      const req = require('node:http').request({
        host: d.host, port: d.port, path: '/child/capture?pid=' + d.pid, agent: false,
        headers: { 'connection': 'Upgrade', 'upgrade': 'inspector-worker-lines', 'authorization': 'Bearer ' + d.token },
      });
      req.on('socket', (s) => s.unref());
      req.on('upgrade', (res, sock, head) => {
        sock.unref();
        if (head && head.length) sock.unshift(head);
        IWCore.attachLineStream(p, sock, down);
      });
      req.on('response', (res) => { res.resume(); down(); }); // refused: not followed
      req.on('error', down);
      req.end();
    } catch (e) { down(); }
  };
}

(function registerChild() {
  const childEndpoint = process.env[CHILD_ENDPOINT_ENV] || '';
  const childToken = process.env[CHILD_TOKEN_ENV] || '';
  if (isHost || passOn || !childEndpoint || !childToken) return;
  try {
    if (!require('node:worker_threads').isMainThread) return;
    const inspector = require('node:inspector');
    if (inspector.url() === undefined) inspector.open(0, '127.0.0.1', false);
    const url = inspector.url();
    if (!url) return;
    const m = /^([^:/]+|\[[^\]]+\]):(\d+)$/.exec(childEndpoint);
    if (m === null) return;
    const waitFile = process.env[CHILD_WAIT_ENV] || '';
    let waiting = false;
    try { waiting = waitFile !== '' && require('node:fs').existsSync(waitFile); } catch (e) { /* no wait */ }
    const body = JSON.stringify({ pid: process.pid, ppid: process.ppid, argv: process.argv, url, waiting });
    // At its end the child says how it ended (the worker is not its parent
    // and cannot wait for it): through a binding only the worker's watcher
    // session added (CHILD_EXIT_BINDING), then it closes its inspector, so
    // Node neither holds it at "Waiting for the debugger to disconnect..."
    // nor prints that line on the terminal. Outgoing messages queued before
    // the close (its last console lines) are still sent.
    process.on('exit', (code) => {
      try {
        const said = /** @type {any} */ (globalThis)[CHILD_EXIT_BINDING];
        if (typeof said === 'function') said(String(code));
      } catch (e) { /* the binding is the worker's; nothing to do without it */ }
      try { inspector.close(); } catch (e) { /* already closed */ }
    });
    const d = { host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]), token: childToken, body, pid: process.pid,
      timeoutMs: CHILD_WAIT_TIMEOUT_MS };
    const capture = childCapture(d);
    if (!waiting) {
      childPost(d, false, capture);
      return;
    }
    const { Worker } = require('node:worker_threads');
    new Worker('(' + childPost.toString() + ')(require("node:worker_threads").workerData, true)',
      { eval: true, workerData: d }).unref();
    inspector.waitForDebugger();
    // Registered by now, or refused and running unobserved: the worker
    // then refuses the channel (404) and the capture passes through.
    if (capture) capture();
  } catch (e) { /* no inspector (e.g. --inspect disallowed): the child runs unobserved */ }
})();

/** @returns {{queued:number, dropped:number, sent:number, acked:number}} */
function stats() {
  if (!producer) return { queued: 0, dropped: 0, sent: 0, acked: 0 };
  const s = producer.stats();
  return { queued: s.queued, dropped: s.dropped, sent: s.sent, acked: s.acked };
}

const api = Object.freeze({ observe, bootstrapSnippet, injectResponse, stats });
try {
  if (!(/** @type {any} */ (globalThis)).inspectorWorker) {
    Object.defineProperty(globalThis, 'inspectorWorker', { value: api, configurable: true, writable: true, enumerable: false });
  }
} catch (e) { /* a frozen global */ }
module.exports = api;
