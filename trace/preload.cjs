'use strict';
// inspector-worker trace preload (embedded by trace/preload.go; see
// docs/trace.md, "Child processes"). Node loads it with --require into the
// traced program and, through the process.execArgv they inherit, into the
// program's children. It never prints anything.
//
// 1. It removes the --inspect* flags from process.execArgv. Without this, a
//    child started with fork(), cluster or process.execPath + execArgv would
//    inherit --inspect-brk=127.0.0.1:0 and wait forever for a debugger that
//    nobody attaches. Children therefore run free (not traced).
// 2. In the traced process only (the one whose inspector is open), it
//    reports each child process it starts, and that child's exit, through
//    the inspector console: those messages reach only the attached engine,
//    never stdout or stderr, and the engine tells them from the program's
//    own console calls by the script they come from (this file).
const inspector = require('inspector');

const inspectFlag = /^--(inspect|inspect-brk|inspect-wait|inspect-port|inspect-publish-uid|debug-port)(=.*)?$/;
const takesValue = new Set(['inspect-port', 'inspect-publish-uid', 'debug-port']);
const argv = process.execArgv;
for (let i = argv.length - 1; i >= 0; i--) {
  const m = inspectFlag.exec(argv[i]);
  if (m === null) continue;
  const pair = m[2] === undefined && takesValue.has(m[1]) && i + 1 < argv.length;
  argv.splice(i, pair ? 2 : 1);
}

if (inspector.url() !== undefined) {
  const MARK = 'inspector-worker:trace-child';
  const report = (record) => inspector.console.debug(MARK, JSON.stringify(record));
  const { ChildProcess } = require('child_process');
  const spawn = ChildProcess.prototype.spawn;
  // Every asynchronous child (spawn, fork, exec, execFile, cluster) goes
  // through ChildProcess.prototype.spawn; the *Sync functions do not.
  ChildProcess.prototype.spawn = function spawnReported(options) {
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

// 3. As a node:test reporter (the engine adds --test-reporter=<this file>
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
