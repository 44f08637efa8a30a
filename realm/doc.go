// Package realm is the registry of JavaScript realms a DevTools connection can see.
//
// A realm is the Node host or a browser page (a client realm, see
// docs/protocol.md). The registry says which realm owns an execution context
// id or unique context id; what each realm kind answers is its column of the
// worker's method table (cdpserver/methods.go), which refuses in the realm's
// words (UnsupportedError). The backends that serve the realms are
// elsewhere: the host's relay in cdpserver (its rewrites and watch-mode
// record in hostrealm, its Node connection in hostnode), the pages' in
// pagerealm. This package holds descriptions and
// routing tables only; it never touches a socket.
package realm
