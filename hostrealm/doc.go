// Package hostrealm is the Node host realm's per-window logic that is not
// transport: what the worker does to the messages a DevTools window
// exchanges with its own Node inspector session.
//
//   - rewrite.go: the only places a relayed message is rewritten (bare-path
//     "url"s become file:// URLs, the host's context is given the main frame
//     and the app's name, file:// breakpoint URLs match both script forms).
//   - scripts.go: the host's script URL → scriptId map the Network domain
//     links fetch initiators with (Scripts).
//   - watch.go: `run --watch`'s record of what a window enabled, set and
//     breakpointed in its Node session, replayed into the next host's
//     session, with the breakpoint id map that keeps the ids the window
//     knows (WatchState).
//
// The transport (cdpserver) calls it from its relay and hands WatchState
// the method table's watch column (WatchTable); swapping every window's host
// session (HostDown/HostUp) stays in cdpserver, with the sessions it swaps.
// Dialling and running Node is hostnode's. This package never imports
// cdpserver; the wire helpers both use are in internal/cdpwire.
//
// Spec: docs/agent-note.md "Relay rules", "Relay cost" and "Watch mode".
package hostrealm
