// Package realm is the registry of JavaScript realms a DevTools connection can see.
//
// A realm is the Node host or a browser page (a client realm, see
// docs/protocol.md). The registry says which realm owns an execution context
// id or unique context id; what each realm kind answers is its column of the
// worker's method table (cdpserver/methods.go), which refuses in the realm's
// words (UnsupportedError).
//
// Host (host.go) is the host realm's own connection to Node: a watcher
// inspector session that learns when the script has finished and releases
// the host's worker threads. It dials Node; the registry itself never
// touches a socket.
package realm
