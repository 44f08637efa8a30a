// inspector-worker demo host: a tiny order service that logs as it works.
// Open the DevTools URL inspector-worker printed, then:
//   - Console: see the messages below; type `orders` or `total(orders[0])`.
//   - Sources: open app.js (under file://) and click the line number of the
//     marked line in total() to set a breakpoint; it pauses within 2 seconds.
//     Resume with F8.
'use strict';

const orders = [];
let tick = 0;
let timer;

// Ctrl-C (forwarded by inspector-worker) ends the demo cleanly, exit code 0.
function stop(signal) {
  clearInterval(timer);
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

console.log('demo host started (pid %d); a new order every 2 seconds', process.pid);
globalThis.orders = orders;
globalThis.total = total;
timer = setInterval(nextOrder, 2000);
nextOrder();

