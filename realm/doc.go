// Package realm is the registry of JavaScript realms a DevTools connection can see.
//
// Every realm exposes the same capability slots — Runtime, Console, Sources,
// Debugger — and says explicitly which members it does not support, with a
// reason the DevTools user can read. The Host realm (a Node process) supports
// its slots natively through a Node inspector session; client realms (browser
// pages, see docs/protocol.md) arrive with the observation protocol.
//
// The registry routes Runtime requests by executionContextId and by
// uniqueContextId. It never touches sockets: cdpserver owns those, and so
// the backend that serves each realm kind (cdpserver/backend.go: the host's
// relay, the pages' agent) lives there; a realm here says what its slots
// offer and refuses the rest (Check).
package realm
