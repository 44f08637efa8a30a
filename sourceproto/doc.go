// Package sourceproto is the versioned internal observation protocol: frame
// types, exact decoders, limits, and the per-source sequence/generation state
// machine shared by the host pipe and the client WebSocket carriers.
//
// What it owns:
//   - the wire types of every frame family (source lifecycle, Runtime
//     unions, console lifecycle and events, chunked script reads, semantic
//     queries) and their JSON value set;
//   - decoding in two stages: a hand-written strict envelope scanner that
//     also checks the whole frame's syntax and structural limits, then the
//     easyjson-generated body decoder of the type the envelope names, then
//     the body's own rules (validate*.go);
//   - the Registry: generations, per-source sequence state, gap accounting,
//     snapshot requests, rejects, and delivery to its Consumers, in
//     order, to each of them (fanout.go);
//   - encoding (Marshal) under the same rules, and the client token.
//
// What it never touches: sockets, pipes, goroutines, timers, CDP. Carriers
// (the host pipe, ws /client) read frames and call Registry.Open and
// Source.Ingest from their read loops and send back the Result's replies;
// realm adapters implement Consumer and send worker-initiated frames with
// Registry.Send through the carrier's Outbox.
//
// The *_easyjson.go files are generated (see the go:generate line below)
// and are exempt from the file-size habit.
//
// Spec: docs/protocol.md.
package sourceproto

//go:generate go run github.com/mailru/easyjson/easyjson -disallow_unknown_fields -no_std_marshalers values.go lifecycle.go console.go observe.go script.go query.go runtime.go dom.go css.go
