'use strict';
// inspector-worker trace preload (embedded by trace/preload.go; see
// docs/trace.md, "Child processes"). Node loads it with --require into the
// traced program and into every Node process the program starts (through
// the execArgv they inherit, and through the NODE_OPTIONS it gives them).
// It prints nothing on the program's output.
//
// 1. It removes the --inspect* flags from process.execArgv. Without this, a
//    child started with fork(), cluster or process.execPath + execArgv would
//    inherit --inspect-brk=127.0.0.1:0 and wait forever for a debugger.
// 2. In a child (a main thread whose inspector is not open yet, given the
//    follow variables), it opens the child's own inspector on a random
//    loopback port and registers it with the engine, authenticated by the
//    session's follow token. The child waits, BOUNDED, until the engine has
//    attached and enabled its domains, so none of the child's events is
//    missed; if the engine refuses, fails or does not answer in time, the
//    inspector is closed again and the child runs free (the engine says so).
// 3. In every traced process (the program and each followed child), it
//    reports each child process it starts, and that child's exit, through
//    the inspector console: those messages reach only the attached engine,
//    never stdout or stderr, and the engine tells them from the program's
//    own console calls by the script they come from (this file). It gives
//    each child the follow variables through the child's environment only:
//    the program's process.env never holds the token, so a program that
//    prints its environment cannot leak it.
const inspector = require('inspector');
const { isMainThread } = require('worker_threads');

const inspectFlag = /^--(inspect|inspect-brk|inspect-wait|inspect-port|inspect-publish-uid|debug-port)(=.*)?$/;
const takesValue = new Set(['inspect-port', 'inspect-publish-uid', 'debug-port']);
const argv = process.execArgv;
for (let i = argv.length - 1; i >= 0; i--) {
  const m = inspectFlag.exec(argv[i]);
  if (m === null) continue;
  const pair = m[2] === undefined && takesValue.has(m[1]) && i + 1 < argv.length;
  argv.splice(i, pair ? 2 : 1);
}

const MARK = 'inspector-worker:trace-child';
const FOLLOW_ENV = 'INSPECTOR_WORKER_TRACE_FOLLOW'; // the engine's registration address, host:port
const TOKEN_ENV = 'INSPECTOR_WORKER_TRACE_FOLLOW_TOKEN'; // the session's follow token (secret)
const WAIT_ENV = 'INSPECTOR_WORKER_TRACE_FOLLOW_WAIT_MS'; // the bound on a child's wait for the engine
const SESSION_ENV = 'INSPECTOR_WORKER_TRACE_SESSION';
const MAX_WAIT_MS = 60000;
const follow = { addr: '', token: '', wait: 10000, session: '' };
if (isMainThread) {
  follow.addr = process.env[FOLLOW_ENV] || '';
  follow.token = process.env[TOKEN_ENV] || '';
  const w = Number(process.env[WAIT_ENV]);
  if (Number.isInteger(w) && w > 0) follow.wait = Math.min(w, MAX_WAIT_MS);
  follow.session = process.env[SESSION_ENV] || '';
  delete process.env[FOLLOW_ENV];
  delete process.env[TOKEN_ENV];
  delete process.env[WAIT_ENV];
}
const report = (record) => inspector.console.debug(MARK, JSON.stringify(record));

// stderrID names this process's fd 2 (device and inode): the engine drops
// the "Debugger attached." Node prints on a child's stderr when it attaches
// to the child only when that stderr is the program's own pipe.
function stderrID() {
  try {
    const st = require('fs').fstatSync(2, { bigint: true });
    return st.dev + ':' + st.ino;
  } catch (e) {
    return '';
  }
}

// The registration runs on a worker thread while the main thread blocks in
// Atomics.wait: V8 still serves the inspector's messages during the wait,
// so the engine's Runtime.enable and Debugger.enable are answered, and no
// line of the child's own code runs before the engine listens. The state
// word decides exactly once who won: the engine (FOLLOWED), a refusal, or
// the timeout.
const PENDING = 0, FOLLOWED = 1, REFUSED = 2, GAVE_UP = 3;
const registerSource = `
const { workerData: d } = require('worker_threads');
const state = new Int32Array(d.state);
const done = (v) => { Atomics.compareExchange(state, 0, ${PENDING}, v); Atomics.notify(state, 0); };
try {
  const body = JSON.stringify({ session: d.session, pid: d.pid, ppid: d.ppid, url: d.url, argv: d.argv, stderr: d.stderr });
  const i = d.addr.lastIndexOf(':');
  const req = require('http').request({
    host: d.addr.slice(0, i), port: Number(d.addr.slice(i + 1)), path: '/follow', method: 'POST', agent: false,
    timeout: d.wait, headers: { 'content-type': 'application/json', authorization: 'Bearer ' + d.token,
      'content-length': Buffer.byteLength(body) },
  }, (res) => { res.resume(); done(res.statusCode === 204 ? ${FOLLOWED} : ${REFUSED}); });
  req.on('timeout', () => req.destroy());
  req.on('error', () => done(${REFUSED}));
  req.end(body);
} catch (e) { done(${REFUSED}); }
`;

function register() {
  try {
    inspector.open(0, '127.0.0.1', false);
  } catch (e) {
    return false; // no inspector in this node: the child runs free
  }
  const url = inspector.url();
  if (url === undefined) return false;
  const state = new Int32Array(new SharedArrayBuffer(4));
  let worker;
  try {
    const { Worker } = require('worker_threads');
    worker = new Worker(registerSource, {
      eval: true, env: {}, execArgv: [], stdout: true, stderr: true,
      workerData: { state: state.buffer, addr: follow.addr, token: follow.token, wait: follow.wait,
        session: follow.session, pid: process.pid, ppid: process.ppid, url, argv: process.argv.slice(0, 64).map(String),
        stderr: stderrID() },
    });
    worker.unref();
  } catch (e) {
    inspector.close();
    return false;
  }
  Atomics.wait(state, 0, PENDING, follow.wait);
  const outcome = Atomics.compareExchange(state, 0, PENDING, GAVE_UP);
  if (outcome === FOLLOWED) return true;
  worker.terminate(); // an unanswered registration is dropped, so the engine sees the child gave up
  inspector.close();
  return false;
}

let traced = inspector.url() !== undefined; // the program itself: the engine attached through --inspect-brk
if (traced && isMainThread && follow.addr !== '') report({ event: 'stderr', pid: process.pid, stderr: stderrID() });
const isChild = !traced && isMainThread && follow.addr !== '' && follow.token !== '';
if (isChild && register()) {
  traced = true;
  // The engine counts a child as followed only once this arrives on the
  // child's own session: a registration it answered after the child gave
  // up waiting never gets here.
  report({ event: 'followed', pid: process.pid });
  // After the program's own 'exit' listeners ran: report the exit code and
  // close the inspector, so that Node does not wait for the engine at exit
  // (it would print "Waiting for the debugger to disconnect..." on the
  // child's stderr). Not on an uncaught exception: Node emits 'exit' BEFORE
  // it reports the exception to the inspector, so the inspector stays open
  // and the engine lets the child go once its main context is destroyed.
  let fatal = false;
  process.on('uncaughtExceptionMonitor', () => {
    fatal = true;
    setImmediate(() => { fatal = false; }).unref(); // a handler caught it: the process lives on
  });
  const emit = process.emit;
  process.emit = function emitThenClose(name) {
    const result = Reflect.apply(emit, this, arguments);
    if (name === 'exit') {
      try {
        const code = process.exitCode === undefined ? arguments[1] : process.exitCode;
        report({ event: 'self-exit', pid: process.pid, code: Number(code) | 0 });
        if (!fatal) inspector.close();
      } catch (e) { /* exiting anyway */ }
    }
    return result;
  };
}

if (traced && isMainThread) {
  const { ChildProcess } = require('child_process');
  const spawn = ChildProcess.prototype.spawn;
  const preloadFlag = '--require ' + JSON.stringify(__filename);
  // Every asynchronous child (spawn, fork, exec, execFile, cluster) goes
  // through ChildProcess.prototype.spawn; the *Sync functions do not.
  ChildProcess.prototype.spawn = function spawnReported(options) {
    if (follow.addr !== '' && options !== null && typeof options === 'object' && Array.isArray(options.envPairs)) {
      options.envPairs = childEnv(options.envPairs, preloadFlag);
    }
    const result = Reflect.apply(spawn, this, arguments);
    const pid = this.pid;
    if (typeof pid === 'number') {
      const args = Array.isArray(this.spawnargs) ? this.spawnargs.slice(0, 64).map(String) : [];
      report({ event: 'spawn', pid, file: String(this.spawnfile), args });
      this.once('exit', (code, signal) => report({ event: 'exit', pid, code, signal }));
    }
    return result;
  };
}

// childEnv gives a child the follow variables and, first in its
// NODE_OPTIONS, this preload (spawn('node', …) inherits no execArgv) and
// --inspect-publish-uid=http (the child's inspector URL goes to the engine
// only, not to the program's stderr).
function childEnv(pairs, preloadFlag) {
  const out = [];
  let nodeOptions = '';
  for (const p of pairs) {
    const s = String(p);
    if (s.startsWith('NODE_OPTIONS=')) nodeOptions = s.slice('NODE_OPTIONS='.length);
    else if (!s.startsWith(FOLLOW_ENV + '=') && !s.startsWith(TOKEN_ENV + '=') && !s.startsWith(WAIT_ENV + '=')) out.push(s);
  }
  if (!nodeOptions.includes(preloadFlag)) nodeOptions = (preloadFlag + ' --inspect-publish-uid=http ' + nodeOptions).trim();
  out.push('NODE_OPTIONS=' + nodeOptions, FOLLOW_ENV + '=' + follow.addr, TOKEN_ENV + '=' + follow.token,
    WAIT_ENV + '=' + follow.wait);
  if (follow.session !== '' && !out.some((s) => s.startsWith(SESSION_ENV + '='))) out.push(SESSION_ENV + '=' + follow.session);
  return out;
}

// 4. As a node:test reporter (the engine adds --test-reporter=<this file>
//    for `trace -- node --test file.js`), it reports each failed test with
//    the position Node gives for it. A test failure is not an uncaught
//    exception: node:test catches it, so the inspector never sees it.
module.exports = async function* testFailures(source) {
  for await (const ev of source) {
    if (ev.type !== 'test:fail' || inspector.url() === undefined) continue;
    const d = ev.data;
    const err = d.details && d.details.error;
    if (err && err.failureType === 'subtestsFailed') continue; // a suite failing because of a test: reported once, by the test
    const cause = err && err.cause instanceof Error ? err.cause : err;
    inspector.console.debug('inspector-worker:trace-child', JSON.stringify({
      event: 'test-fail', name: String(d.name).slice(0, 500), file: d.file, line: d.line, column: d.column,
      message: cause ? String(cause.message).slice(0, 2000) : '', errorName: cause ? String(cause.name) : '',
      stack: cause && typeof cause.stack === 'string' ? cause.stack.slice(0, 8000) : '',
    }));
  }
};
