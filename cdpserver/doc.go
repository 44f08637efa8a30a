// Package cdpserver is the worker's single Chrome DevTools Protocol endpoint.
//
// It owns HTTP discovery (/json/version, /json, /json/list, /json/protocol), the
// Host/Origin checks that guard every request, the DevTools WebSocket route
// /devtools/page/<id>, and one Session per DevTools connection. A Session
// dispatches each request by method: methods the worker answers itself (the
// page-target scaffold in page.go and target.go, the named no-ops in noops.go)
// are answered locally; Runtime, Debugger, Profiler and HeapProfiler requests are
// routed through the realm registry to the realm that owns them (today: the
// Node host, reached through the session's own Node inspector connection).
//
// It never evaluates anything in the host on its own initiative and never
// re-marshals a relayed message through typed structs: relayed bytes stay
// untouched except for the rewrites listed in rewrite.go.
//
// Spec: docs/agent-note.md ("The DevTools side") and
// ../shared/design/devtools-methods.md.
package cdpserver
