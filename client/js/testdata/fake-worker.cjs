'use strict';
// A stand-in for `inspector-worker serve` in embed.test.mjs. FAKE_MODE:
//   normal  print the listening lines, play the worker on fd 3 (welcome, acks)
//   silent  print the listening lines, never read fd 3 (today's real `serve`)
//   die     exit 3 at once
// Everything it sees goes to FAKE_LOG as JSON lines.
const fs = require('node:fs');
const net = require('node:net');
const log = (/** @type {any} */ x) => fs.appendFileSync(process.env.FAKE_LOG || '/dev/null', JSON.stringify(x) + '\n');
const mode = process.env.FAKE_MODE || 'normal';
log({ argv: process.argv.slice(2) });
if (mode === 'die') process.exit(3);

const url = process.argv[process.argv.indexOf('--host-inspector') + 1] || '';
const m = /^ws:\/\/([^/]+)\//.exec(url);
(async () => {
  try {
    const r = await fetch('http://' + (m ? m[1] : 'invalid') + '/json/version');
    log({ inspector: (await r.json()).Browser });
  } catch (e) {
    log({ inspector: 'unreachable: ' + e.message });
  }
  process.stderr.write('some other line\ninspector-worker: listening on http://127.0.0.1:45678\n');
  process.stderr.write('inspector-worker: open in Chrome: devtools://devtools/bundled/inspector.html?ws=127.0.0.1:45678/x\n');
})();

if (mode === 'normal') {
  const sock = new net.Socket({ fd: 3, readable: true, writable: true });
  sock.setEncoding('utf8');
  let buf = '';
  let gen = 5;
  sock.on('data', (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const f = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      log({ frame: f });
      if (f.type === 'hello') sock.write(JSON.stringify({ v: 1, type: 'welcome', source: f.source, gen, body: { capabilities: [], topics: f.body.topics, limits: { maxFrameBytes: 1048576, maxBatchItems: 512, maxStringBytes: 65536, maxChunkBytes: 49152, maxValueBytes: 262144 } } }) + '\n');
      if (f.type === 'replace') sock.write(JSON.stringify({ v: 1, type: 'ack', source: f.source, gen, seq: f.seq, body: {} }) + '\n');
      if (f.type === 'append') sock.write(JSON.stringify({ v: 1, type: 'ack', source: f.source, gen, seq: f.seq + f.body.items.length - 1, body: {} }) + '\n');
    }
  });
  sock.on('error', () => {});
}
process.on('SIGTERM', () => { log({ signal: 'SIGTERM' }); process.exit(0); });
setInterval(() => {}, 1000);
