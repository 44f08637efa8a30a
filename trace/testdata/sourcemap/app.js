function parse(raw) {
    const [id, quantity] = raw.split(":").map(Number);
    return { id, quantity };
}
function check(order) {
    console.log("checking order", order.id);
    if (order.quantity <= 0) {
        throw new RangeError(`order ${order.id}: quantity ${order.quantity} must be positive`);
    }
}
const orders = ["1:3", "2:0"];
for (const raw of orders) {
    check(parse(raw));
}
//# sourceMappingURL=app.js.map