// inspector-worker demo host: a tiny order service that logs as it works,
// and serves a shop page that loads the inspector-worker client.
// Open the DevTools URL inspector-worker printed, then:
//   - Console: see the messages below; type `orders` or `total(orders[0])`.
//   - Sources: open app.js (under file://) and click the line number of the
//     marked line in total() to set a breakpoint; it pauses within 2 seconds.
//     Resume with F8.
//   - Open the demo page's URL (printed after the DevTools URL) in a browser:
//     the page's console messages and objects appear in the same DevTools
//     window, in its own context ("Demo shop" in the Console's context menu).
//   - Network: the host's own fetch calls (its API every 4 seconds, and a
//     health check against a port nothing listens on, which is refused) and
//     the page's fetches, in one list; click one to see its response body.
'use strict';

const http = require('node:http');
const net = require('node:net');

const orders = [];
let tick = 0;
let timer;

// Ctrl-C (forwarded by inspector-worker) ends the demo cleanly, exit code 0.
function stop(signal) {
  clearInterval(timer);
  clearInterval(fetchTimer);
  server.close();
  server.closeAllConnections(); // a browser's keep-alive connection would hold the exit
  console.log(`demo host stopping on ${signal} after ${tick} orders`);
}
process.once('SIGINT', () => stop('SIGINT'));
process.once('SIGTERM', () => stop('SIGTERM'));

function total(order) {
  let sum = 0;
  for (const item of order.items) {
    sum += item.price * item.qty; // <- set a breakpoint on this line
  }
  return Math.round(sum * 100) / 100;
}

function nextOrder() {
  tick++;
  const order = {
    id: tick,
    customer: ['ada', 'grace', 'linus', 'margaret'][tick % 4],
    items: [
      { sku: 'book', price: 12.5, qty: 1 + (tick % 3) },
      { sku: 'pen', price: 1.2, qty: tick % 5 },
    ],
  };
  orders.push(order);
  if (orders.length > 20) orders.shift();
  console.log(`order #${order.id} for ${order.customer}: total ${total(order)}`, order);
  if (tick % 5 === 0) console.warn(`${orders.length} orders kept in memory`);
}

// The demo page: its script logs objects the page owns (a cart, the orders
// it fetched from this host, a DOM element). The client script tag comes
// from the preload (bootstrapSnippet): the page reports to this run's worker.
const PAGE_SCRIPT = `// shop.js: the demo page's script (served by the demo host)
const cart = { owner: 'ada', items: [{ sku: 'book', qty: 1 }], opened: new Date() };
window.cart = cart;

function addToCart(sku) {
  cart.items.push({ sku, qty: 1 });
  console.log('page: added ' + sku + ' to the cart', cart);
}
window.addToCart = addToCart;

async function refresh() {
  const res = await fetch('/api/orders');
  const latest = await res.json();
  console.log('page: ' + latest.length + ' orders from the host', latest);
  document.getElementById('count').textContent = String(latest.length);
}

document.getElementById('add').addEventListener('click', () => addToCart('pen'));
document.getElementById('refresh').addEventListener('click', refresh);
console.log('page: loaded; the cart is', cart);
console.info('page: the heading element', document.querySelector('h1'));
refresh();
`;

function pageHTML() {
  const snippet = globalThis.inspectorWorker ? globalThis.inspectorWorker.bootstrapSnippet() : '';
  return '<!doctype html><html><head><meta charset="utf-8"><title>Demo shop</title>' + snippet + '</head><body>' +
    '<h1>Demo shop</h1><p>Orders at the host: <span id="count">?</span></p>' +
    '<button id="add">Add a pen to the cart</button> <button id="refresh">Fetch the orders</button>' +
    '<p>This page logs to the inspector-worker DevTools window, next to the host.</p>' +
    '<script src="/shop.js"></script></body></html>';
}

const server = http.createServer((req, res) => {
  const path = new URL(req.url || '/', 'http://demo').pathname;
  if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(pageHTML());
  } else if (path === '/shop.js') {
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
    res.end(PAGE_SCRIPT);
  } else if (path === '/api/orders') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(orders.slice(-5)));
  } else {
    res.writeHead(404);
    res.end();
  }
});

// The host's own outgoing traffic, for the Network panel: its API (as a
// client of itself would) and, at first and then every 20 s, a health check
// of a port nothing listens on (a refused request; its error shows its cause).
let refusedPort = 0;
let fetchTimer;
let fetches = 0;
async function hostFetches() {
  fetches++;
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    await (await fetch(`${base}/api/orders`, { headers: { accept: 'application/json' } })).json();
  } catch {
    // the server is stopping
  }
  if (fetches % 5 === 1 && refusedPort) {
    try {
      await fetch(`http://127.0.0.1:${refusedPort}/health`);
    } catch {
      // refused, as intended: the Network panel shows why
    }
  }
}

// A port that was free a moment ago: connecting to it is refused. (Ports
// such as 1 or 9 are on fetch's "bad port" list and would fail differently.)
function pickRefusedPort() {
  const probe = net.createServer();
  probe.listen(0, '127.0.0.1', () => {
    refusedPort = probe.address().port;
    probe.close();
  });
}

console.log('demo host started (pid %d); a new order every 2 seconds', process.pid);
globalThis.orders = orders;
globalThis.total = total;
timer = setInterval(nextOrder, 2000);
nextOrder();
server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}/`;
  // On stderr, not through console: it is for the terminal, next to the
  // DevTools URL, not a Console message.
  process.stderr.write(`inspector-worker demo: open the demo page in a browser: ${url}\n`);
  if (globalThis.inspectorWorker) globalThis.inspectorWorker.observe('demo-page', { url });
  pickRefusedPort();
  fetchTimer = setInterval(hostFetches, 4000);
});

