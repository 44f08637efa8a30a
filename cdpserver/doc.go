// Package cdpserver is the worker's single Chrome DevTools Protocol endpoint.
//
// It owns HTTP discovery (/json/version, /json, /json/list, /json/protocol), the
// Host/Origin checks that guard every request, the DevTools WebSocket route
// /devtools/page/<id>, and one Session per DevTools connection. A Session
// answers each request by its entry in the method table (methods.go): local
// answers (the page-target scaffold in page.go and clients_session.go), named
// no-ops, deliberate refusals, or routing through the realm registry to the
// realm that owns the request's context, object or script id (the Node host,
// reached through the session's own Node inspector connection, or a client
// page). /json/protocol (protocol.go) is generated from the same table.
//
// It never evaluates anything in the host on its own initiative and never
// re-marshals a relayed message through typed structs: relayed bytes stay
// untouched except for the rewrites listed in rewrite.go.
//
// Spec: the method table itself (methods.go) and the decisions in
// docs/agent-note.md: "Relay rules", "Concurrency and bounds", "Relay cost",
// "Client pages in DevTools", "Network domain and fetch journal", "Watch
// mode" and "Page-target scaffold". The page side speaks docs/protocol.md.
package cdpserver
