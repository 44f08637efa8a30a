// Source-map fixture for the trace tests. app.js and app.js.map are tsc's
// output, committed so that no TypeScript is needed at test time:
//   npx -y -p typescript@5 tsc --target es2020 --module commonjs --sourceMap app.ts
interface Order {
  id: number;
  quantity: number;
}

function parse(raw: string): Order {
  const [id, quantity] = raw.split(":").map(Number);
  return { id, quantity };
}

function check(order: Order): void {
  console.log("checking order", order.id);
  if (order.quantity <= 0) {
    throw new RangeError(`order ${order.id}: quantity ${order.quantity} must be positive`);
  }
}

const orders: string[] = ["1:3", "2:0"];
for (const raw of orders) {
  check(parse(raw));
}
