'use strict';
// The app of scripts/fetch-capture-bench.mjs, run as
//   node --require save-fetch.cjs --require ../preload.cjs bench-app.cjs
// BASE is the loopback server. It times, in interleaved rounds, Node's own
// fetch (saved before the preload wrapped it) and the wrapped fetch: from
// the call to the app's last body byte (arrayBuffer()). One JSON line out.
const plain = globalThis.__plainFetch;
const wrapped = globalThis.fetch;
const BASE = process.env.BASE;
const ROUNDS = Number(process.env.ROUNDS || 7);

async function once(f, url) {
  const t0 = process.hrtime.bigint();
  const r = await f(url);
  const b = await r.arrayBuffer();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (b.byteLength === 0) throw new Error('empty body');
  return ms;
}

async function series(f, url, n) {
  let total = 0;
  for (let i = 0; i < n; i++) total += await once(f, url);
  return total / n;
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };

(async () => {
  if (plain === wrapped) throw new Error('fetch is not wrapped: is the preload loaded with a host channel?');
  const out = {};
  for (const [label, path, n] of [['1KB', '/1k', 200], ['1MB', '/1m', 20]]) {
    const url = BASE + path;
    await series(plain, url, Math.ceil(n / 4)); // warm-up, both
    await series(wrapped, url, Math.ceil(n / 4));
    const p = [], w = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first: the second of a pair inherits the
      // first's garbage.
      if (r % 2) w.push(await series(wrapped, url, n));
      p.push(await series(plain, url, n));
      if (!(r % 2)) w.push(await series(wrapped, url, n));
    }
    out[label] = { plainMs: median(p), capturedMs: median(w), ratio: median(w) / median(p) };
  }
  out.stats = globalThis.inspectorWorker.stats();
  process.stdout.write(JSON.stringify(out) + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
