// Package pagerealm is the page realms' backend: every browser page running
// the client agent (client/js), reached over sourceproto, as a DevTools
// window sees it.
//
// The Hub is the sourceproto.Consumer of the pages: one synthetic child frame
// and one execution context per page load, its console (kept for replay,
// then live), its scripts (read from the page on demand), its document, and
// the page agent's Runtime (runtime.command, correlated answers, object ids
// in the window's object table, flow control of the worker's frames to the
// page), and the pages' DOM in one tree per window (dom.go: the host's
// empty document with one frame owner per page, node ids namespaced per
// window and page load; dom_wire.go: the DOM methods; dom_search.go:
// search across pages; css.go: the CSS methods, style sheet ids namespaced
// like node ids). A window on one page's own target (NewPageWindow,
// pagetarget.go) sees that page alone, as its main frame; pageworld.go
// gives it named worlds.
//
// The transport (cdpserver) drives it through the Hub's methods and the
// method table's pages' column (Rule: the page agent's handler, a script
// read, a literal or a refusal); it sees each DevTools window through a
// Window, which reaches the window's queue through a Sink. This package
// never imports cdpserver. The wire shapes both share are in
// internal/cdpwire.
//
// Spec: docs/agent-note.md "Client pages in DevTools", "Page Runtime
// realm", "Elements: the pages' DOM in one tree", "Styles of pages" and
// "Page targets";
// the page side speaks
// docs/protocol.md.
package pagerealm
