// Driver for conformance_test.go: runs the shipped client.js in the fake
// browser, its WebSocket bridged to stdin/stdout (one frame per line), so
// the Go test can play the worker with the real sourceproto.Registry.
// Lines from stdin starting with "#" are commands, not frames:
//   #values   log one call per value kind, an uncaught error, a rejection
//   #burst N  log N numbered lines
//   #objects  log objects (handles when a session enabled console)
//   #stop     stop the client (close frame) and exit
import readline from 'node:readline';
import { fakeBrowser } from './browser.mjs';

export const SCRIPT_BYTES = new Uint8Array(100000).map((_, i) => (i * 7) % 256);

/** @type {((text: string) => void) | null} */
let deliver = null;
const b = fakeBrowser({
  attrs: { 'data-token': process.env.IW_TOKEN || '' },
  transport: { send: (t) => process.stdout.write(t + '\n'), attach: (d) => { deliver = d; } },
  fetch: async () => new Response(SCRIPT_BYTES, { headers: { 'content-type': 'text/javascript' } }),
});

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.startsWith('#')) {
    if (deliver) deliver(line);
    return;
  }
  const [cmd, arg] = line.slice(1).split(' ');
  if (cmd === 'values') {
    b.run(`
      function values() {
        console.log('s', 1, 1.5, -0, NaN, Infinity, -Infinity, 10n, -7n, undefined, null, true, false, Symbol('sym'));
        console.log(function f(a) { return a; }, [1, 'two', [3]], { a: 1, b: { c: 2 }, get g() { return 1; } },
          new Map([[1, { x: 1 }], ['k', [1]]]), new Set([1, 2]), new Date(0), /x+/gi, new TypeError('bad'),
          new Uint8Array(3), new ArrayBuffer(4), new DataView(new ArrayBuffer(2)), Promise.resolve(1), new WeakMap(), new WeakSet(),
          [1, 2].values(), (function* () {})(), Object.create(null));
        console.log('é€😀\\u0000\\n"\\\\' + 'x'.repeat(100000) + '\\ud800');
        console.log(...Array.from({ length: 100 }, (_, i) => i));
        console.log(...Array.from({ length: 64 }, (_, i) => 'y'.repeat(70000)));
        let deep = {}; for (let i = 0; i < 200; i++) deep = { deep };
        console.log(deep);
        console.info('info'); console.warn('warn'); console.error('error'); console.debug('debug');
        console.dir({ d: 1 }); console.dirxml('x'); console.table([{ a: 1 }]); console.trace('trace');
        console.group('g'); console.groupCollapsed(); console.groupEnd(); console.clear();
        console.assert(false, 'assert'); console.count(); console.count('c'); console.countReset();
        console.time('t'); console.timeLog('t', 1); console.timeEnd('t'); console.timeEnd('nope');
        return new Error('uncaught');
      }
      globalThis.__err = values();`);
    b.dispatch('error', { message: 'Uncaught Error: uncaught', error: b.run('globalThis.__err'), filename: 'http://127.0.0.1:5173/app.js', lineno: 3, colno: 7 });
    b.dispatch('unhandledrejection', { reason: b.run(`new RangeError('rejected')`) });
    b.run(`history.pushState({}, '', '/next')`);
  } else if (cmd === 'objects') {
    b.run(`console.log('objects', { a: 1, nested: { b: [1, 2] } }, new Map([[1, 2]]), Symbol('x'), function f() {}, [1, 2, 3], 'tail')`);
  } else if (cmd === 'burst') {
    b.run(`for (let i = 0; i < ${Number(arg)}; i++) console.log('burst', i)`);
  } else if (cmd === 'stop') {
    b.win.__inspectorWorkerClient.stop();
    setTimeout(() => process.exit(0), 50);
  }
});
rl.on('close', () => process.exit(0));
