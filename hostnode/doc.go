// Package hostnode starts, discovers and dials Node.js inspectors.
//
// It is the plumbing shared by `inspector-worker run`, `serve`, `demo` and
// `trace`: spawn node with --inspect=127.0.0.1:0 (or --inspect-brk) inserted
// after the executable, read the inspector URL from the FIRST
// "Debugger listening on ws://…" line of the child's stderr, recognise Node's
// failure lines, forward signals, report the exit code (128+signal when
// killed), and never leave an orphan (process group + parent-death signal).
// Dial opens a WebSocket session to Node's inspector the way Node expects it:
// Host: 127.0.0.1:PORT, no compression, no pings, single text frames, a read
// limit raised deliberately (MaxHostMessage).
//
// It owns the node child process and the TCP connections it dials. It never
// speaks CDP itself (callers do, over the *websocket.Conn that Dial returns),
// never evaluates anything in the host, and never talks to a non-loopback
// address. Unix only (process groups); the parent-death signal and
// TCP_QUICKACK are Linux-only and quietly absent elsewhere.
//
// Spec: the design note design/architecture.md, sections "Security"
// (loopback only, port 0, URL from the first stderr line) and "Performance
// targets" (Node's inspector socket and TCP_QUICKACK).
package hostnode
