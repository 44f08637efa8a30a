// Package carrier moves sourceproto frames between producers and the
// worker's sourceproto.Registry: the host pipe (newline-framed frames on
// an AF_UNIX socketpair whose other end the Node host inherits as fd 3)
// and the client WebSocket (GET /client, one frame per text message), plus
// GET /client.js, the client bundle those pages load.
//
// What it owns: sockets, framing, read limits, the Origin allow-list, the
// per-connection goroutines and their bounded outgoing queues with written
// overflow policies, and the mapping of "why a connection ended" onto
// sourceproto close codes and WebSocket close statuses.
//
// What it never touches: protocol state (generations, sequence numbers,
// gaps, tokens' comparison — all in sourceproto.Registry), CDP, and the
// token's text (it is handed to the registry, never logged, never put in
// a close reason or an HTTP answer). Loopback binding and the Host-header
// check belong to the listener that mounts ClientHandler (cdpserver).
//
// Spec: docs/protocol.md, "Carriers and framing", "Security", and "Go API,
// and how carriers and domains plug in".
package carrier
