// Package cdpserver is the worker's single Chrome DevTools Protocol endpoint:
// the transport and the dispatch.
//
// It owns HTTP discovery (/json/version, /json, /json/list, /json/protocol), the
// Host/Origin checks that guard every request, the DevTools WebSocket route
// /devtools/page/<id>, the browser endpoint /devtools/browser/<id> (browser.go:
// the Browser and Target domains, flat sessions multiplexed by sessionId on
// one connection), and one Session per DevTools connection or flat session,
// on a transport (transport.go). A Session
// answers each request by its entry in the method table (methods.go), which
// says per realm how the method is answered: local answers (the page-target
// scaffold in page.go), named no-ops, deliberate refusals, or routing through
// the realm registry to the realm that owns the request's context, object or
// script id. The realm backends (backend.go) are the Node host, relayed over
// the session's own Node inspector connection (the rewrites and the
// watch-mode record of each window in package hostrealm; swapping the host
// sessions of every window in watch.go), and the browser pages, package
// pagerealm, which this package drives through pagerealm.Hub and sees each
// window as a pagerealm.Window. /json/protocol (protocol.go) and
// docs/methods.md (methodsdoc.go, `go generate ./cdpserver`) are generated
// from the same table. Each connected page is also a target of its own
// (pagetarget.go, pagetarget_dispatch.go): a Session scoped to it, with no
// Node session, answered by the table's page-target column.
//
// It never evaluates anything in the host on its own initiative and never
// re-marshals a relayed message through typed structs: relayed bytes stay
// untouched except for the rewrites listed in hostrealm/rewrite.go.
//
// Spec: the method table itself (methods.go) and the decisions in
// docs/agent-note.md: "Relay rules", "Concurrency and bounds", "Relay cost",
// "Client pages in DevTools", "Network domain and fetch journal", "Watch
// mode", "Page-target scaffold", "Page targets" and "Browser endpoint". The
// page side speaks docs/protocol.md.
package cdpserver
