#!/usr/bin/env node
// App-side fetch latency with vs without the host preload's capture, in the
// same process and the same run: a loopback server serves 1 KB and
// 1 MB bodies; `node --require save-fetch.cjs --require preload.cjs
// bench-app.cjs` times Node's own fetch and the wrapped one in interleaved
// rounds (median of ROUNDS rounds of a series each), from the call to the
// app's last body byte. This script plays the worker on the child's fd 3
// (welcome, an ack for every batch), so the capture does all its work:
// clones, reads, base64, frames.
//
//   node scripts/fetch-capture-bench.mjs            # ROUNDS=7
//   ROUNDS=15 node scripts/fetch-capture-bench.mjs
//   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' node scripts/fetch-capture-bench.mjs
//
// Goals: ≤ 1.05× for 1 KB, ≤ 1.25× for 1 MB (current figures:
// docs/performance.md). A figure, never a
// test assertion: the machine is shared.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const js = (p) => fileURLToPath(new URL('../client/js/' + p, import.meta.url));
const KB = Buffer.alloc(1024, 'k');
const MB = Buffer.alloc(1 << 20, 'm');

const server = http.createServer((req, res) => {
  const body = req.url === '/1m' ? MB : KB;
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
  res.end(body);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = 'http://127.0.0.1:' + server.address().port;

// BENCH_NODE_ARGS: extra node flags for the app, e.g. "--cpu-prof --cpu-prof-dir=/tmp/x".
const extra = (process.env.BENCH_NODE_ARGS || '').split(' ').filter(Boolean);
const child = spawn(process.execPath, [...extra, '--require', js('testdata/save-fetch.cjs'), '--require', js('preload.cjs'), js('testdata/bench-app.cjs')], {
  stdio: ['ignore', 'pipe', 'inherit', 'pipe'],
  env: { PATH: process.env.PATH, BASE: base, ROUNDS: process.env.ROUNDS || '7', INSPECTOR_WORKER_FD: '3' },
});
const sock = child.stdio[3];
let buf = '', items = 0, bytes = 0;
sock.setEncoding('utf8');
sock.on('error', () => {});
sock.on('data', (c) => {
  buf += c;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    bytes += line.length + 1;
    const f = JSON.parse(line);
    const reply = (x) => sock.write(JSON.stringify(x) + '\n');
    if (f.type === 'hello') reply({ v: 1, type: 'welcome', source: 'host', gen: 1, body: { capabilities: [], topics: f.body.topics, limits: { maxFrameBytes: 1048576, maxBatchItems: 512, maxStringBytes: 65536, maxChunkBytes: 49152, maxValueBytes: 262144 } } });
    else if (f.type === 'replace') reply({ v: 1, type: 'ack', source: 'host', gen: 1, seq: f.seq, body: {} });
    else if (f.type === 'append') {
      items += f.body.items.length;
      reply({ v: 1, type: 'ack', source: 'host', gen: 1, seq: f.seq + f.body.items.length - 1, body: {} });
    }
  }
});
let out = '';
child.stdout.on('data', (c) => { out += c; });
const code = await new Promise((r) => child.on('exit', r));
server.close();
if (code !== 0) { console.error('bench app failed: exit ' + code); process.exit(1); }
const r = JSON.parse(out.trim().split('\n').pop());
for (const k of ['1KB', '1MB']) {
  const x = r[k];
  console.log(`fetch ${k}: ${x.plainMs.toFixed(3)} ms plain, ${x.capturedMs.toFixed(3)} ms captured: ${x.ratio.toFixed(3)}x`);
}
console.log(`worker side: ${items} fetch items in ${(bytes / 1048576).toFixed(1)} MiB of frames; producer dropped ${r.stats.dropped}`);
